// SPDX-License-Identifier: GPL-2.0-only
//! One test per error class: each message names file, line:column and the key path.
//! And no input — truncated, mutated, garbage — makes the readers panic.

use std::path::{Path, PathBuf};

use schedmath_host::workload::Workload;

fn rtapp(text: &str) -> String {
    Workload::from_str_with_ext(text, "w.json", Some("json"))
        .unwrap_err()
        .to_string()
}

fn periodic(text: &str) -> String {
    Workload::from_str_with_ext(text, "w.toml", Some("toml"))
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_json_names_the_line() {
    let text =
        "{\n  \"tasks\" : {\n    \"t\" : { \"run\" : 10 }\n    \"u\" : { \"run\" : 10 }\n  }\n}";
    assert_eq!(
        rtapp(text),
        "w.json:4:5: expected ',' or '}' after a member, found '\"'"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"run\" : 1.5 } } }"),
        "w.json:1:31: tasks.t.run: expected an integer, found a non-integer number"
    );
}

#[test]
fn unknown_event_or_key() {
    let text = "{\n \"tasks\" : {\n  \"t\" : {\n   \"run\" : 10,\n   \"spin\" : 10\n  }\n }\n}";
    assert_eq!(
        rtapp(text),
        "w.json:5:4: tasks.t.spin: unknown task key \"spin\" (not an rt-app event or task attribute)"
    );
    let text = "{ \"tasks\" : { \"t\" : { \"phases\" : { \"p\" : { \"run\" : 1, \"instance\" : 2 } } } } }";
    assert_eq!(
        rtapp(text),
        "w.json:1:55: tasks.t.phases.p.instance: unknown phase key \"instance\" (not an rt-app event or phase attribute)"
    );
    let text = "{ \"global\" : { \"duration\" : 1, \"colour\" : \"red\" }, \"tasks\" : { \"t\" : { \"run\" : 1 } } }";
    assert!(rtapp(text)
        .starts_with("w.json:1:32: global.colour: unknown global key (rt-app knows duration, "));
    assert_eq!(
        rtapp("{ \"task\" : {} }"),
        "w.json:1:3: task: unknown top-level key (rt-app knows global, tasks, resources; schedmath adds schedmath)"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"fork\" : \"t\" } } }"),
        "w.json:1:34: tasks.t.fork: fork events are not modelled by schedmath (give the task instances instead)"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"timer\" : { \"period\" : 5, \"ref\" : \"a\", \"phase\" : 1 } } } }"),
        "w.json:1:73: tasks.t.timer.phase: unknown key (this event has ref, period, mode)"
    );
}

#[test]
fn negative_and_overflowing_durations() {
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"run\" : 10, \"sleep\" : -5 } } }"),
        "w.json:1:45: tasks.t.sleep: negative duration: -5 µs"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"run\" : 2147483648 } } }"),
        "w.json:1:31: tasks.t.run: 2147483648 does not fit rt-app's C int (-2147483648..=2147483647)"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"delay\" : -1, \"run\" : 1 } } }"),
        "w.json:1:33: tasks.t.delay: negative duration: -1 µs"
    );
}

#[test]
fn empty_phases_and_phases_without_events() {
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"phases\" : {} } } }"),
        "w.json:1:23: tasks.t.phases: no phases: a task needs at least one"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"phases\" : { \"p\" : { \"loop\" : 2 } } } } }"),
        "w.json:1:36: tasks.t.phases.p: no events (rt-app: a task must have events or it is useless)"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"phases\" : { \"p\" : { \"run\" : 2 } } } } }"),
        "w.json:1:23: tasks.t.run: events beside \"phases\" are ignored by rt-app; move them into a phase"
    );
}

#[test]
fn affinity_beyond_the_platform() {
    let text = "{ \"tasks\" : { \"t\" : {\n \"phases\" : { \"p\" : {\n \"cpus\" : [1, 4], \"run\" : 1 } } } } }";
    let w = Workload::from_str_with_ext(text, "w.json", Some("json")).unwrap();
    assert!(w.validate(5).is_ok());
    assert_eq!(
        w.validate(4).unwrap_err().to_string(),
        "w.json:3:2: tasks.t.phases.p.cpus: CPU 4 does not exist: the platform has 4 CPUs (0..=3)"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"cpus\" : [], \"run\" : 1 } } }"),
        "w.json:1:32: tasks.t.cpus: empty CPU list (the kernel rejects an empty affinity mask)"
    );
}

#[test]
fn unknown_or_unmodelled_policy() {
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"policy\" : \"SCHED_BATCH\", \"run\" : 1 } } }"),
        "w.json:1:34: tasks.t.policy: unknown policy \"SCHED_BATCH\" (rt-app knows SCHED_OTHER, SCHED_IDLE, SCHED_FIFO, SCHED_RR, SCHED_DEADLINE)"
    );
    assert_eq!(
        rtapp("{ \"global\" : { \"default_policy\" : \"SCHED_DEADLINE\" }, \"tasks\" : { \"t\" : { \"run\" : 1 } } }"),
        "w.json:1:35: global.default_policy: SCHED_DEADLINE is not modelled by schedmath (the simulator has no deadline class)"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"dl-runtime\" : 100, \"run\" : 1 } } }"),
        "w.json:1:23: tasks.t.dl-runtime: SCHED_DEADLINE parameters (and the EEVDF custom slice that dl-runtime sets on SCHED_OTHER) are not modelled by schedmath"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"policy\" : \"SCHED_FIFO\", \"priority\" : 0, \"run\" : 1 } } }"),
        "w.json:1:61: tasks.t.priority: rt priority 0 out of 1..=99 for SCHED_FIFO"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"policy\" : \"SCHED_RR\", \"taskgroup\" : \"/g\", \"run\" : 1 } } }"),
        "w.json:1:15: tasks.t: taskgroup \"/g\" with SCHED_RR: rt-app supports taskgroups for SCHED_OTHER and SCHED_IDLE only"
    );
}

#[test]
fn timers() {
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"timer\" : { \"ref\" : \"a\" } } } }"),
        "w.json:1:44: tasks.t.timer: timer period is 0 or missing (a timer needs a period > 0 µs)"
    );
    let text = "{ \"tasks\" : {\n \"a\" : { \"run\" : 1, \"timer\" : { \"ref\" : \"tick\", \"period\" : 10, \"mode\" : \"absolute\" } },\n \"b\" : { \"run\" : 1, \"timer\" : { \"ref\" : \"tick\", \"period\" : 10 } } } }";
    assert_eq!(
        rtapp(text),
        "w.json:3:21: tasks.b.timer: timer \"tick\" is relative here but absolute at line 2 (rt-app keeps one mode per timer)"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"timer\" : { \"period\" : 10, \"mode\" : \"periodic\" } } } }"),
        "w.json:1:70: tasks.t.timer.mode: unknown timer mode \"periodic\" (relative or absolute)"
    );
}

#[test]
fn unknown_references() {
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"unlock\" : \"m\" } } }"),
        "w.json:1:34: tasks.t.unlock: unlock of mutex \"m\" that this task never locks"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"lock\" : \"m\", \"run\" : 1 } } }"),
        "w.json:1:23: tasks.t.lock: mutex \"m\" is locked but never unlocked by this task"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"lock\" : \"m\", \"wait\" : { \"ref\" : \"c\", \"mutex\" : \"m\" }, \"unlock\" : \"m\" } } }"),
        "w.json:1:37: tasks.t.wait: waits on \"c\" but no task signals, broadcasts or syncs it"
    );
    // A signal nobody waits for is harmless, as in rt-app.
    assert!(Workload::from_str_with_ext(
        "{ \"tasks\" : { \"t\" : { \"run\" : 1, \"signal\" : \"c\" } } }",
        "w.json",
        Some("json")
    )
    .is_ok());
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"barrier\" : \"b\" } } }"),
        "w.json:1:34: tasks.t.barrier: barrier \"b\" has 1 thread(s); a barrier synchronises at least 2"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"resume\" : \"nobody\" } } }"),
        "w.json:1:34: tasks.t.resume: resumes \"nobody\" but no task suspends on it"
    );
}

#[test]
fn other_attribute_errors() {
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"loop\" : 2, \"loop\" : 3, \"run\" : 1 } } }"),
        "w.json:1:35: tasks.t.loop: duplicate key (first at line 1)"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"loop\" : 0, \"run\" : 1 } } }"),
        "w.json:1:32: tasks.t.loop: loop 0: -1 (forever) or at least 1"
    );
    assert_eq!(
        rtapp(
            "{ \"tasks\" : { \"t\" : { \"util_min\" : 600, \"util_max\" : 300, \"run\" : 1 } } }"
        ),
        "w.json:1:15: tasks.t: util_min 600 above util_max 300 (the kernel rejects it)"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"util_max\" : 1025, \"run\" : 1 } } }"),
        "w.json:1:36: tasks.t.util_max: util_max 1025: -1 (unchanged) or 0..=1024"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"taskgroup\" : \"tg\", \"run\" : 1 } } }"),
        "w.json:1:37: tasks.t.taskgroup: taskgroup \"tg\" has to start with /"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"run\" : 1 } }, \"schedmath\" : { \"taskgroups\" : { \"/g\" : { \"shares\" : 1 } } } }"),
        "w.json:1:91: schedmath.taskgroups./g.shares: shares 1 out of the kernel's 2..=262144"
    );
    assert_eq!(
        rtapp("{ \"global\" : { \"duration\" : 0 }, \"tasks\" : { \"t\" : { \"run\" : 1 } } }"),
        "w.json:1:29: global.duration: duration 0: -1 (until every task ends) or a positive number of seconds"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"instance\" : 2000000000, \"run\" : 1 } } }"),
        "w.json:1:36: tasks.t.instance: instance 2000000000: 0..=65536"
    );
    assert_eq!(
        periodic("[[task]]\nname = \"a\"\nduty_cycle_pct = 5\nperiod_us = 16000\nduration_us = 16000\ncount = 4000000000\n"),
        "w.toml:6:9: task[0].count: count 4000000000: 0..=65536"
    );
    assert_eq!(
        rtapp("{ \"global\" : {} }"),
        "w.json:1:1: tasks: missing: a workload needs a \"tasks\" object"
    );
}

#[test]
fn periodic_form_errors_name_the_line() {
    assert_eq!(
        periodic("[[task]]\nname = \"a\"\nduty_cycle_pct = 5\nperiod_us = 16000\nduration_us = 16000\nspeed = 3\n"),
        "w.toml:6:1: unknown field `speed`, expected one of `name`, `duty_cycle_pct`, `period_us`, `duration_us`, `count`, `cpus`, `nice`, `policy`, `util_min`, `util_max`, `delay_us`"
    );
    assert_eq!(
        periodic("[[task]]\nname = \"a\"\nduty_cycle_pct = 105\nperiod_us = 16000\nduration_us = 16000\n"),
        "w.toml:3:18: task[0].duty_cycle_pct: 105 % is above 100 %"
    );
    assert_eq!(
        periodic("[[task]]\nname = \"a\"\nduty_cycle_pct = 5\nperiod_us = 16000\nduration_us = 20000\n"),
        "w.toml:5:15: task[0].duration_us: 20000 µs is not a whole, non-zero number of periods (16000 µs)"
    );
    assert_eq!(
        periodic(
            "[[task]]\nname = \"a\"\nduty_cycle_pct = 5\nperiod_us = 16000\nduration_us = -1\n"
        ),
        "w.toml:5:15: invalid value: integer `-1`, expected u64"
    );
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/workloads")
}

#[test]
fn truncated_and_mutated_files_are_errors_never_panics() {
    let mut parsed = 0usize;
    for entry in std::fs::read_dir(dir()).unwrap() {
        let path = entry.unwrap().path();
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_string);
        if !matches!(ext.as_deref(), Some("json" | "toml")) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let end = text.trim_end().len();
        for cut in (0..end).filter(|&c| text.is_char_boundary(c)) {
            let r = Workload::from_str_with_ext(&text[..cut], "cut", ext.as_deref());
            if ext.as_deref() == Some("json") {
                assert!(r.is_err(), "{} cut at {cut} parsed", path.display());
            }
            parsed += 1;
        }
        // Deterministic mutations: each character in turn replaced by garbage.
        for (i, (at, _)) in text.char_indices().enumerate() {
            let bad = ["\"", "}", "-", "9999999999", "/*", "\u{0}", "é"][i % 7];
            let mut t = text.clone();
            let len = t[at..].chars().next().map_or(0, char::len_utf8);
            t.replace_range(at..at + len, bad);
            let _ = Workload::from_str_with_ext(&t, "mut", ext.as_deref()).map(|w| w.validate(1));
            parsed += 1;
        }
    }
    assert!(parsed > 5_000);
    for garbage in [
        "",
        "null",
        "[]",
        "42",
        "\"tasks\"",
        "{\"tasks\": []}",
        "\u{feff}{}",
        "{\"tasks\": {\"t\": 5}}",
    ] {
        assert!(
            Workload::from_str_with_ext(garbage, "g", Some("json")).is_err(),
            "{garbage:?}"
        );
    }
}

#[test]
fn a_program_longer_than_u64_ns_is_an_error() {
    // 2^31-1 task loops × 2^31-1 phase loops × 2147 s does not fit 2^64 ns.
    let text = "{ \"tasks\" : { \"t\" : { \"loop\" : 2147483647, \"phases\" : { \"p\" : { \"loop\" : 2147483647, \"sleep\" : 2147483647 } } } } }";
    assert_eq!(
        rtapp(text),
        "w.json:1:15: tasks.t: delay + loops × durations overflows 2^64 ns (584 years)"
    );
}
