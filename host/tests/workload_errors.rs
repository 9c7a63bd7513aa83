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

/// The warnings of a file that parses, as `workload check` prints them.
fn warnings(text: &str) -> Vec<String> {
    let w = Workload::from_str_with_ext(text, "w.json", Some("json")).unwrap();
    schedmath_host::workload::show::warning_lines(&w)
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
        "w.json:1:31: tasks.t.run: expected an integer, found a non-integer number: \"run\" is a run event (the key starts with \"run\"), and rt-app exits on a mismatched event"
    );
}

#[test]
fn unknown_keys_are_warnings_as_rt_app_ignores_them() {
    let text = "{\n \"tasks\" : {\n  \"t\" : {\n   \"run\" : 10,\n   \"spin\" : 10\n  }\n }\n}";
    assert_eq!(
        warnings(text),
        ["warning: w.json:5:4: tasks.t.spin: unknown task key: rt-app ignores it (not an event, not a task attribute)"]
    );
    let text = "{ \"tasks\" : { \"t\" : { \"phases\" : { \"p\" : { \"run\" : 1, \"instance\" : 2 } } } } }";
    assert_eq!(
        warnings(text),
        ["warning: w.json:1:55: tasks.t.phases.p.instance: \"instance\" is a task key: rt-app ignores it in a phase"]
    );
    let text = "{ \"global\" : { \"duration\" : 1, \"colour\" : \"red\" }, \"tasks\" : { \"t\" : { \"run\" : 1 } } }";
    assert!(warnings(text)[0]
        .starts_with("warning: w.json:1:32: global.colour: unknown global key: rt-app ignores it (it reads duration, "));
    assert_eq!(
        warnings("{ \"task\" : {}, \"tasks\" : { \"t\" : { \"run\" : 1 } } }"),
        ["warning: w.json:1:3: task: unknown top-level key: rt-app reads global, tasks and resources only and ignores it"]
    );
    assert_eq!(
        warnings("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"timer\" : { \"period\" : 5, \"ref\" : \"a\", \"phase\" : 1 } } } }"),
        ["warning: w.json:1:73: tasks.t.timer.phase: unknown key: rt-app ignores it (this event reads ref, period, mode)"]
    );
}

#[test]
fn unknown_or_mismatched_events_are_errors_as_rt_app_exits_on_them() {
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"lock_order\" : [\"m\"] } } }"),
        "w.json:1:49: tasks.t.lock_order: expected a string, found an array: \"lock_order\" is a lock event (the key starts with \"lock\"), and rt-app exits on a mismatched event"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"fork\" : \"u\" } } }"),
        "w.json:1:43: tasks.t.fork: fork of \"u\": no task object has that name (rt-app exits: \"Can't fork unknown task\")"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"memrun\" : { \"type\" : \"read\", \"size\" : 64, \"count\" : 64 } } } }"),
        "w.json:1:34: tasks.t.memrun: memrun is not modelled: its time depends on the cache and memory hierarchy (read/write/chase over a buffer), which schedmath does not simulate; use mem or run"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"sem_post\" : \"s\" } } }"),
        "w.json:1:34: tasks.t.sem_post: POSIX semaphores (sem_post/sem_wait) are not simulated yet"
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
        warnings("{ \"tasks\" : { \"t\" : { \"delay\" : -1, \"run\" : 1 } } }"),
        ["warning: w.json:1:33: tasks.t.delay: delay -1: rt-app waits only for a positive delay and starts at once"]
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
        warnings("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"phases\" : { \"p\" : { \"run\" : 2 } } } } }"),
        ["warning: w.json:1:23: tasks.t.run: event beside \"phases\": rt-app ignores it; move it into a phase"]
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
        rtapp("{ \"tasks\" : { \"t\" : { \"policy\" : \"SCHED_EDF\", \"run\" : 1 } } }"),
        "w.json:1:34: tasks.t.policy: unknown policy \"SCHED_EDF\" (rt-app knows SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR, SCHED_DEADLINE)"
    );
    assert_eq!(
        rtapp("{ \"global\" : { \"default_policy\" : \"SCHED_DEADLINE\" }, \"tasks\" : { \"t\" : { \"run\" : 1 } } }"),
        "w.json:1:67: tasks.t: SCHED_DEADLINE without dl-runtime: the kernel refuses a zero runtime (sched_setattr EINVAL), so rt-app exits"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"policy\" : \"SCHED_DEADLINE\", \"dl-runtime\" : 100, \"dl-period\" : 50, \"run\" : 1 } } }"),
        "w.json:1:15: tasks.t: SCHED_DEADLINE needs runtime <= deadline <= period (the kernel's __checkparam_dl): 100 µs, 50 µs, 50 µs"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"policy\" : \"SCHED_FIFO\", \"priority\" : 0, \"run\" : 1 } } }"),
        "w.json:1:61: tasks.t.priority: rt priority 0 out of 1..=99 for SCHED_FIFO"
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"policy\" : \"SCHED_RR\", \"taskgroup\" : \"/g\", \"run\" : 1 } } }"),
        "w.json:1:15: tasks.t: taskgroup \"/g\" with SCHED_RR: rt-app supports taskgroups for SCHED_OTHER, SCHED_BATCH and SCHED_IDLE only"
    );
}

#[test]
fn timers() {
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"timer\" : { \"ref\" : \"a\" } } } }"),
        "w.json:1:44: tasks.t.timer: timer period is 0 or missing (rt-app would never sleep; a timer needs a period > 0 µs)"
    );
    let text = "{ \"tasks\" : {\n \"a\" : { \"run\" : 1, \"timer\" : { \"ref\" : \"tick\", \"period\" : 10, \"mode\" : \"absolute\" } },\n \"b\" : { \"run\" : 1, \"timer\" : { \"ref\" : \"tick\", \"period\" : 10 } } } }";
    assert_eq!(
        rtapp(text),
        "w.json:3:21: tasks.b.timer: timer \"tick\" is relative here but absolute at line 2 (rt-app keeps one mode per timer)"
    );
    assert_eq!(
        warnings("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"timer\" : { \"period\" : 10, \"mode\" : \"periodic\" } } } }"),
        ["warning: w.json:1:70: tasks.t.timer.mode: timer mode \"periodic\": rt-app reads it as relative (absolute when it starts with \"absolute\", else relative)"]
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
        warnings("{ \"tasks\" : { \"t\" : { \"run\" : 1, \"resume\" : \"nobody\" } } }"),
        ["warning: w.json:1:34: tasks.t.resume: resumes \"nobody\" but no thread suspends on it (rt-app suspends each thread on its task object's name): the wake-up is lost"]
    );
}

#[test]
fn other_attribute_errors() {
    assert_eq!(
        warnings("{ \"tasks\" : { \"t\" : { \"loop\" : 2, \"loop\" : 3, \"run\" : 1 } } }"),
        ["warning: w.json:1:35: tasks.t.loop: duplicate key: json-c keeps one \"loop\", at the first one's place (line 1), with this last value (line 1)"]
    );
    assert_eq!(
        rtapp("{ \"tasks\" : { \"t\" : { \"loop\" : 0, \"phases\" : { \"p\" : { \"run\" : 1 } } } } }"),
        "w.json:1:32: tasks.t.loop: loop 0: rt-app starts the thread but runs none of its phases; give the task \"instance\": 0 instead"
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
        warnings("{ \"global\" : { \"duration\" : 0 }, \"tasks\" : { \"t\" : { \"run\" : 1 } } }"),
        ["warning: w.json:1:29: global.duration: duration 0: rt-app runs until every task ends (as with -1) when it is not positive"]
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
        "w.json:1:1: tasks: missing: a workload needs a \"tasks\" object (a file with only global or resources is a fragment for rt-app's doc/merge.py, not a use case rt-app runs)"
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
    let ours = std::fs::read_dir(dir().join("rtapp")).unwrap();
    for entry in std::fs::read_dir(dir()).unwrap().chain(ours) {
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
