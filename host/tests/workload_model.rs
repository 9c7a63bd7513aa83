// SPDX-License-Identifier: GPL-2.0-only
//! The shipped workloads parse into the model the simulator will run, value by value.

use std::path::{Path, PathBuf};

use schedmath_host::workload::json::Loc;
use schedmath_host::workload::{
    Event, Format, Loops, Policy, Sched, TaskGroup, TimerMode, Uclamp, Workload,
};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/workloads")
}

fn load(name: &str) -> Workload {
    let text = std::fs::read_to_string(dir().join(name)).unwrap();
    let ext = Path::new(name).extension().and_then(|e| e.to_str());
    Workload::from_str_with_ext(&text, &format!("fixtures/workloads/{name}"), ext).unwrap()
}

fn events(w: &Workload, task: usize, phase: usize) -> Vec<(&str, Event)> {
    w.tasks[task].phases[phase]
        .events
        .iter()
        .map(|e| (e.key.as_str(), e.event.clone()))
        .collect()
}

/// A per-thread relative timer, as the periodic form and rt-app examples write it.
fn unique_timer(period_ns: u64) -> Event {
    Event::Timer {
        name: "unique".into(),
        per_thread: true,
        period_ns,
        mode: TimerMode::Relative,
    }
}

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

#[test]
fn every_shipped_workload_is_valid_on_a_6_cpu_platform() {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json") || n.ends_with(".toml"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "idle-group.json",
            "periodic.toml",
            "phases.json",
            "small-and-busy.json",
            "sync.json"
        ]
    );
    for n in &names {
        load(n).validate(6).unwrap();
    }
}

#[test]
fn small_periodic_task_and_busy_task() {
    let w = load("small-and-busy.json");
    assert_eq!(w.format, Format::RtApp);
    assert_eq!(w.global.duration_ns, Some(2_000 * MS));
    assert_eq!(w.global.default_policy, Policy::Other);
    let small = &w.tasks[0];
    assert_eq!(small.name, "small");
    assert_eq!(small.at, Loc { line: 8, column: 3 });
    assert_eq!(small.instances, ["small-0"]);
    // A task without phases: its loop repeats the single phase, then the task ends.
    assert_eq!(small.loops, Loops::Count(1));
    assert_eq!(small.phases[0].loops, Loops::Count(125));
    assert_eq!(
        events(&w, 0, 0),
        [
            ("run", Event::Run { work_ns: 800 * US }),
            ("timer", unique_timer(16 * MS)),
        ]
    );
    let busy = &w.tasks[1];
    assert_eq!(busy.loops, Loops::Forever);
    assert_eq!(busy.phases[0].loops, Loops::Count(1));
    assert_eq!(busy.cpus.as_ref().unwrap().cpus, [4, 5]);
    assert_eq!(events(&w, 1, 0), [("run", Event::Run { work_ns: 10 * MS })]);
    let ignored: Vec<&str> = w.ignored_keys().iter().map(|k| k.path.as_str()).collect();
    assert_eq!(
        ignored,
        [
            "global.calibration",
            "global.pi_enabled",
            "global.lock_pages",
            "global.logdir",
            "global.log_basename",
            "global.ftrace",
            "global.gnuplot"
        ]
    );
}

#[test]
fn phases_keep_events_in_order_and_apply_attribute_changes() {
    let w = load("phases.json");
    assert_eq!(w.global.duration_ns, Some(5_000 * MS));
    let ramp = &w.tasks[0];
    assert_eq!(ramp.instances, ["ramp-0", "ramp-1"]);
    assert_eq!(ramp.delay_ns, MS);
    assert_eq!(ramp.loops, Loops::Count(3));
    assert_eq!(ramp.cpus.as_ref().unwrap().cpus, [0, 1, 2, 3]);
    assert_eq!(
        ramp.uclamp,
        Uclamp {
            min: None,
            max: Some(512)
        }
    );
    let names: Vec<_> = ramp.phases.iter().map(|p| p.name.as_deref()).collect();
    assert_eq!(names, [Some("light"), Some("bursty"), Some("heavy")]);
    assert_eq!(ramp.phases[1].loops, Loops::Count(5));
    assert_eq!(
        ramp.phases[1].sched,
        Some(Sched {
            policy: Policy::Other,
            priority: -5
        })
    );
    assert_eq!(
        events(&w, 0, 1),
        [
            ("run0", Event::Run { work_ns: 2 * MS }),
            ("sleep0", Event::Sleep { ns: MS }),
            ("run1", Event::Run { work_ns: 3 * MS }),
            ("sleep1", Event::Sleep { ns: 4 * MS }),
        ]
    );
    let heavy = &ramp.phases[2];
    assert_eq!(heavy.cpus.as_ref().unwrap().cpus, [4, 5]);
    assert_eq!(
        heavy.cpus.as_ref().unwrap().at,
        Loc {
            line: 34,
            column: 6
        }
    );
    assert_eq!(
        heavy.uclamp,
        Uclamp {
            min: Some(256),
            max: None
        }
    );
    assert_eq!(
        events(&w, 0, 2)[..2],
        [
            ("runtime", Event::Runtime { wall_ns: 6 * MS }),
            (
                "run1",
                Event::Run {
                    work_ns: 2_500 * US
                }
            ),
        ]
    );
    let frames = &w.tasks[1];
    assert_eq!(
        frames.sched,
        Sched {
            policy: Policy::Fifo,
            priority: 50
        }
    );
    assert_eq!(frames.loops, Loops::Forever);
    assert_eq!(frames.phases[0].loops, Loops::Forever);
    assert_eq!(
        events(&w, 1, 0)[1],
        (
            "timer0",
            Event::Timer {
                name: "vsync".into(),
                per_thread: false,
                period_ns: 16_667 * US,
                mode: TimerMode::Absolute
            }
        )
    );
}

#[test]
fn synchronisation_events_name_their_resources() {
    let w = load("sync.json");
    assert_eq!(w.nr_threads(), 5);
    assert_eq!(
        events(&w, 1, 0),
        [
            (
                "lock",
                Event::Lock {
                    mutex: "queue_mutex".into()
                }
            ),
            (
                "wait",
                Event::Wait {
                    cond: "queue_cond".into(),
                    mutex: "queue_mutex".into()
                }
            ),
            (
                "unlock",
                Event::Unlock {
                    mutex: "queue_mutex".into()
                }
            ),
            ("run", Event::Run { work_ns: 500 * US }),
            ("iorun", Event::IoRun { bytes: 4096 }),
        ]
    );
    assert_eq!(
        events(&w, 2, 0),
        [
            ("run", Event::Run { work_ns: 2 * MS }),
            (
                "barrier",
                Event::Barrier {
                    name: "step".into()
                }
            ),
            ("mem", Event::Mem { bytes: 65_536 }),
            ("yield", Event::Yield),
        ]
    );
    // An empty suspend is the task's own name (what workgen writes in).
    assert_eq!(
        events(&w, 3, 0)[0],
        (
            "suspend",
            Event::Suspend {
                name: "controller".into()
            }
        )
    );
    assert_eq!(w.tasks[0].phases[0].loops, Loops::Forever);
}

#[test]
fn sched_idle_task_in_an_idle_group() {
    let w = load("idle-group.json");
    assert_eq!(
        w.groups,
        [
            TaskGroup {
                path: "/background".into(),
                parent: "/".into(),
                shares: 2,
                idle: true
            },
            TaskGroup {
                path: "/background/batch".into(),
                parent: "/background".into(),
                shares: 1024,
                idle: false
            },
            TaskGroup {
                path: "/foreground".into(),
                parent: "/".into(),
                shares: 4096,
                idle: false
            },
        ]
    );
    let batch = &w.tasks[0];
    assert_eq!(
        batch.sched,
        Sched {
            policy: Policy::Idle,
            priority: 0
        }
    );
    assert_eq!(batch.group, "/background/batch");
    let ui = &w.tasks[1];
    assert_eq!(ui.group, "/foreground");
    assert_eq!(ui.uclamp.min, Some(128));
    assert_eq!(ui.phases[0].group, None);
    assert_eq!(ui.phases[1].group.as_deref(), Some("/"));
    let ignored: Vec<_> = w
        .ignored_keys()
        .iter()
        .map(|k| (k.path.as_str(), k.at.line))
        .collect();
    assert_eq!(
        ignored,
        [
            ("tasks.batch.nodes_membind", 9),
            ("global.cumulative_slack", 36)
        ]
    );
}

#[test]
fn periodic_form_becomes_run_plus_timer() {
    let w = load("periodic.toml");
    assert_eq!(w.format, Format::Periodic);
    assert_eq!(w.global.duration_ns, Some(2_000 * MS));
    let small = &w.tasks[0];
    assert_eq!(small.instances, ["small-0", "small-1"]);
    // Its program: see rtapp_and_periodic_forms_of_the_small_task_are_the_same_program.
    let busy = &w.tasks[1];
    assert_eq!(busy.phases[0].loops, Loops::Count(200));
    assert_eq!(
        events(&w, 1, 0)[0],
        ("run", Event::Run { work_ns: 10 * MS })
    );
    assert_eq!(busy.uclamp.max, Some(800));
    let bg = &w.tasks[2];
    assert_eq!(
        bg.sched,
        Sched {
            policy: Policy::Idle,
            priority: 19
        }
    );
    assert_eq!(bg.delay_ns, 500 * MS);
    assert_eq!(
        events(&w, 2, 0)[0],
        ("run", Event::Run { work_ns: 30 * MS })
    );
}

#[test]
fn rtapp_and_periodic_forms_of_the_small_task_are_the_same_program() {
    let a = load("small-and-busy.json");
    let b = load("periodic.toml");
    let strip = |w: &Workload| -> Vec<(Loops, Vec<Event>)> {
        w.tasks[0]
            .phases
            .iter()
            .map(|p| (p.loops, p.events.iter().map(|e| e.event.clone()).collect()))
            .collect()
    };
    assert_eq!(strip(&a), strip(&b));
}

fn parse(text: &str) -> Result<Workload, String> {
    Workload::from_str_with_ext(text, "w.json", Some("json")).map_err(|e| e.to_string())
}

#[test]
fn events_are_recognised_by_key_prefix_in_rtapp_order() {
    let w = parse(
        "{ \"tasks\" : { \"t\" : { \"runtime2\" : 5, \"run_b\" : 6, \"sleepy\" : 7, \"memory\" : 8, \"yield_now\" : \"\" } } }",
    )
    .unwrap();
    assert_eq!(
        events(&w, 0, 0),
        [
            ("runtime2", Event::Runtime { wall_ns: 5 * US }),
            ("run_b", Event::Run { work_ns: 6 * US }),
            ("sleepy", Event::Sleep { ns: 7 * US }),
            ("memory", Event::Mem { bytes: 8 }),
            ("yield_now", Event::Yield),
        ]
    );
    // rt-app's tutorial spells it membind_nodes, but its parser reads nodes_membind:
    // "membind_nodes" starts with "mem", so rt-app takes it for a mem event.
    assert_eq!(
        parse("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"membind_nodes\" : [0] } } }").unwrap_err(),
        "w.json:1:52: tasks.t.membind_nodes: expected an integer, found an array: \"membind_nodes\" is a mem event (the key starts with \"mem\"), and rt-app exits on a mismatched event"
    );
    // "memrun" is tested before "mem": its own event, which schedmath refuses.
    assert!(parse("{ \"tasks\" : { \"t\" : { \"memrun\" : 8 } } }")
        .unwrap_err()
        .starts_with("w.json:1:23: tasks.t.memrun: memrun is not modelled"));
}

#[test]
fn phase_attributes_apply_over_what_is_in_effect() {
    let w = parse(
        "{ \"tasks\" : { \"t\" : { \"policy\" : \"SCHED_FIFO\", \"priority\" : 50, \"phases\" : {
            \"a\" : { \"priority\" : 60, \"run\" : 1 },
            \"b\" : { \"policy\" : \"SCHED_OTHER\", \"run\" : 1 },
            \"c\" : { \"priority\" : 5, \"util_max\" : 100, \"run\" : 1 },
            \"d\" : { \"run\" : 1 } } } } }",
    )
    .unwrap();
    let scheds: Vec<Option<Sched>> = w.tasks[0].phases.iter().map(|p| p.sched).collect();
    let s = |policy, priority| Some(Sched { policy, priority });
    assert_eq!(
        scheds,
        [
            s(Policy::Fifo, 60),
            s(Policy::Other, 0),
            s(Policy::Other, 5),
            None
        ]
    );
    assert_eq!(w.tasks[0].phases[2].uclamp.max, Some(100));
    assert_eq!(w.tasks[0].phases[3].uclamp, Uclamp::default());
}

#[test]
fn nominal_length_of_finite_and_endless_tasks() {
    let w = load("small-and-busy.json");
    // small: 125 × (800 µs run + 16 ms timer period) — nominal, not simulated.
    assert_eq!(
        w.tasks[0].nominal_ns(),
        Some(Some(125 * (800 * US + 16 * MS)))
    );
    assert_eq!(w.tasks[1].nominal_ns(), Some(None));
    let w = load("phases.json");
    // ramp: 1 ms delay + 3 × (10 × 10 ms + 5 × 10 ms + 4 × 18.5 ms).
    assert_eq!(
        w.tasks[0].nominal_ns(),
        Some(Some(MS + 3 * (100 * MS + 50 * MS + 4 * 18_500 * US)))
    );
}
