// SPDX-License-Identifier: GPL-2.0-only
//! The malformed-input campaign of TESTING.md: one row per input class, each run through
//! the `schedmath` binary as a user would, each asserting exit code 2, the message and
//! that no message repeats itself. The rows here and the table in TESTING.md are the same
//! list (a test checks every class is in the document).

use std::path::Path;
use std::process::Command;

/// A small valid platform: 2 CPUs, one domain, one idle state.
const PLATFORM: &str = r#"name = "p"
[[idle_state]]
name = "wfi"
exit_latency_us = 1
target_residency_us = 1
[[domain]]
name = "d"
cpus = [0, 1]
capacity = 1024
idle_states = ["wfi"]
opp = [{ khz = 1000000, power_uw = 100000 }]
"#;

/// A valid workload.
const WORKLOAD: &str = r#"{"tasks": {"t": {"loop": -1, "run": 1000, "sleep": 9000}}}"#;

/// One campaign row: class, files written to a temp dir, arguments (`{dir}` is replaced by
/// the temp dir), and the text the error must contain.
struct Row {
    class: &'static str,
    files: &'static [(&'static str, &'static str)],
    args: &'static [&'static str],
    expect: &'static str,
}

fn platform_with(extra: &str) -> String {
    PLATFORM.replace("name = \"p\"\n", &format!("name = \"p\"\n{extra}"))
}

const ROWS: &[Row] = &[
    Row {
        class: "JSON syntax",
        files: &[("w.json", r#"{"tasks": {"t": {"run": 1000,"#)],
        args: &["workload", "check", "{dir}/w.json"],
        expect: "w.json:1:",
    },
    Row {
        class: "TOML syntax",
        files: &[("p.toml", "name = \"p\"\n[[domain]\n")],
        args: &["platform", "show", "{dir}/p.toml"],
        expect: "p.toml:2:",
    },
    Row {
        class: "wrong type (JSON)",
        files: &[("w.json", r#"{"tasks": {"t": {"loop": 1, "run": "fast"}}}"#)],
        args: &["workload", "check", "{dir}/w.json"],
        expect: "tasks.t.run",
    },
    Row {
        class: "wrong type (TOML)",
        files: &[("p.toml", "name = 5\n")],
        args: &["platform", "show", "{dir}/p.toml"],
        expect: "p.toml:1:8: invalid type",
    },
    Row {
        class: "overflowing number",
        files: &[(
            "w.json",
            r#"{"tasks": {"t": {"loop": 1, "run": 99999999999999999999}}}"#,
        )],
        args: &["workload", "check", "{dir}/w.json"],
        expect: "tasks.t.run",
    },
    Row {
        class: "negative number",
        files: &[("w.json", r#"{"tasks": {"t": {"loop": 1, "run": -5}}}"#)],
        args: &["workload", "check", "{dir}/w.json"],
        expect: "tasks.t.run",
    },
    Row {
        class: "NaN / Infinity",
        files: &[("w.json", r#"{"tasks": {"t": {"loop": 1, "run": NaN}}}"#)],
        args: &["workload", "check", "{dir}/w.json"],
        expect: "w.json:1:",
    },
    Row {
        class: "NaN in TOML",
        files: &[("p.toml", "name = \"p\"\n[[domain]]\nname = \"d\"\ncpus = [0]\ncapacity = nan\n")],
        args: &["platform", "show", "{dir}/p.toml"],
        expect: "p.toml:5:",
    },
    Row {
        class: "empty file",
        files: &[("w.json", "")],
        args: &["workload", "check", "{dir}/w.json"],
        expect: "w.json:",
    },
    Row {
        class: "binary file",
        files: &[("p.toml", "name = \"p\"\n\u{0}\u{1}\u{2}")],
        args: &["platform", "show", "{dir}/p.toml"],
        expect: "p.toml:2:",
    },
    Row {
        class: "invalid UTF-8",
        files: &[],
        args: &["platform", "show", "{dir}/latin1.toml"],
        expect: "latin1.toml:2:6: invalid UTF-8 at byte 16",
    },
    Row {
        class: "deep nesting (JSON)",
        files: &[],
        args: &["workload", "check", "{dir}/deep.json"],
        expect: "nesting deeper than 64 levels",
    },
    Row {
        class: "deep nesting (TOML)",
        files: &[],
        args: &["platform", "show", "{dir}/deep.toml"],
        expect: "max recursion depth met",
    },
    Row {
        class: "file larger than MAX_INPUT_BYTES",
        files: &[],
        args: &["workload", "check", "{dir}/big.json"],
        expect: "big.json: larger than 16777216 bytes (MAX_INPUT_BYTES); refused",
    },
    Row {
        class: "device instead of a file",
        files: &[],
        args: &["platform", "show", "/dev/urandom"],
        expect: "/dev/urandom: not a regular file (a device)",
    },
    Row {
        class: "missing file",
        files: &[],
        args: &["platform", "show", "{dir}/nope.toml"],
        expect: "nope.toml: cannot read: No such file or directory",
    },
    Row {
        class: "huge loop",
        files: &[("w.json", r#"{"tasks": {"t": {"loop": 4294967296, "run": 10}}}"#)],
        args: &["workload", "check", "{dir}/w.json"],
        expect: "tasks.t.loop",
    },
    Row {
        class: "huge instance",
        files: &[("w.json", r#"{"tasks": {"t": {"instance": 10000000, "loop": 1, "run": 10}}}"#)],
        args: &["workload", "check", "{dir}/w.json"],
        expect: "instance 10000000: 0..=65536",
    },
    Row {
        class: "huge duration (file)",
        files: &[(
            "w.json",
            r#"{"global": {"duration": 1000000000}, "tasks": {"t": {"loop": -1, "run": 10, "sleep": 10}}}"#,
        )],
        args: &["workload", "check", "{dir}/w.json"],
        expect: "duration 1000000000 s is beyond the limit MAX_SIM_SECONDS = 3600 s",
    },
    Row {
        class: "huge --duration",
        files: &[("p.toml", PLATFORM), ("w.json", WORKLOAD)],
        args: &["simulate", "--platform", "{dir}/p.toml", "--workload", "{dir}/w.json", "--duration", "1000000000"],
        expect: "simulated duration 1000000000 s is beyond the limit MAX_SIM_SECONDS = 3600 s",
    },
    Row {
        class: "--hz out of range",
        files: &[("p.toml", PLATFORM), ("w.json", WORKLOAD)],
        args: &["simulate", "--platform", "{dir}/p.toml", "--workload", "{dir}/w.json", "--hz", "4294967295"],
        expect: "HZ 4294967295 is outside 1..=10000 (HZ_RANGE",
    },
    Row {
        class: "zero-time infinite loop",
        files: &[("p.toml", PLATFORM), ("w.json", r#"{"tasks": {"z": {"loop": -1, "run": 0, "sleep": 0}}}"#)],
        args: &["simulate", "--strict", "--platform", "{dir}/p.toml", "--workload", "{dir}/w.json", "--duration", "1"],
        expect: "task `z` repeats forever without an event that takes time",
    },
    Row {
        class: "locks in opposite orders",
        files: &[(
            "w.json",
            r#"{"tasks": {"a": {"loop": -1, "lock": "m1", "lock2": "m2", "run": 100, "unlock": "m2", "unlock2": "m1"},
                          "b": {"loop": -1, "lock": "m2", "lock2": "m1", "run": 100, "unlock": "m1", "unlock2": "m2"}}}"#,
        )],
        args: &["workload", "check", "--strict", "{dir}/w.json"],
        expect: "tasks `a` and `b` take mutexes `m1` and `m2` in opposite orders",
    },
    Row {
        class: "mutex locked twice",
        files: &[(
            "w.json",
            r#"{"tasks": {"a": {"loop": 1, "lock": "m", "lock2": "m", "run": 100, "unlock": "m", "unlock2": "m"}}}"#,
        )],
        args: &["workload", "check", "--strict", "{dir}/w.json"],
        expect: "locks mutex `m` while holding it",
    },
    Row {
        class: "suspend cycle",
        files: &[(
            "w.json",
            r#"{"tasks": {"a": {"loop": -1, "suspend": "a", "run": 100, "resume": "b"},
                          "b": {"loop": -1, "suspend": "b", "run": 100, "resume": "a"}}}"#,
        )],
        args: &["workload", "check", "--strict", "{dir}/w.json"],
        expect: "suspend cycle: `a` waits on `a`, `b` waits on `b`",
    },
    Row {
        class: "barrier never reached",
        files: &[("w.json", r#"{"tasks": {"a": {"loop": 1, "barrier": "b", "run": 100}}}"#)],
        args: &["workload", "check", "{dir}/w.json"],
        expect: "barrier \"b\" has 1 thread(s); a barrier synchronises at least 2",
    },
    Row {
        class: "barrier passed unequally",
        files: &[(
            "w.json",
            r#"{"tasks": {"a": {"loop": -1, "run": 100, "barrier": "b"}, "c": {"loop": 3, "run": 100, "barrier": "b"}}}"#,
        )],
        args: &["workload", "check", "--strict", "{dir}/w.json"],
        expect: "barrier `b`: task `c` passes it 3 times, task `a` without end",
    },
    Row {
        class: "timer period 0 (workload)",
        files: &[(
            "w.json",
            r#"{"tasks": {"t": {"loop": -1, "run": 100, "timer": {"ref": "tick", "period": 0}}}}"#,
        )],
        args: &["workload", "check", "{dir}/w.json"],
        expect: "timer period is 0",
    },
    Row {
        class: "timer period 0 (idle pattern)",
        files: &[("p.toml", PLATFORM)],
        args: &["idle", "--platform", "{dir}/p.toml", "--pattern", "timer:0ms"],
        expect: "pattern `timer:0ms`: a timer period must be > 0",
    },
    Row {
        class: "affinity to a missing CPU",
        files: &[("p.toml", PLATFORM), ("w.json", r#"{"tasks": {"t": {"loop": -1, "run": 100, "sleep": 100, "cpus": [7]}}}"#)],
        args: &["simulate", "--platform", "{dir}/p.toml", "--workload", "{dir}/w.json", "--duration", "1"],
        expect: "tasks.t.cpus",
    },
    Row {
        class: "util_min > util_max",
        files: &[("w.json", r#"{"tasks": {"t": {"loop": 1, "run": 100, "util_min": 800, "util_max": 200}}}"#)],
        args: &["workload", "check", "{dir}/w.json"],
        expect: "tasks.t",
    },
    Row {
        class: "uclamp above 1024",
        files: &[("w.json", r#"{"tasks": {"t": {"loop": 1, "run": 100, "util_max": 4000}}}"#)],
        args: &["workload", "check", "{dir}/w.json"],
        expect: "util_max 4000: -1 (unchanged) or 0..=1024",
    },
    Row {
        class: "taskgroup with `..`",
        files: &[("w.json", r#"{"tasks": {"t": {"loop": 1, "run": 100, "taskgroup": "/../../etc"}}}"#)],
        args: &["workload", "check", "{dir}/w.json"],
        expect: "has a `.` or `..` component",
    },
    Row {
        class: "control characters in a task name",
        files: &[("w.json", "{\"tasks\": {\"t\\u001b[2J\\n\": {\"loop\": 1, \"run\": 100}}}")],
        args: &["workload", "check", "{dir}/w.json"],
        expect: "name contains the control character \\u{1b}",
    },
    Row {
        class: "platform with 0 CPUs",
        files: &[("p.toml", "name = \"p\"\n[[domain]]\nname = \"d\"\ncpus = []\ncapacity = 1024\nopp = [{ khz = 1000 }]\n")],
        args: &["platform", "show", "{dir}/p.toml"],
        expect: "domain[0].cpus: a domain needs at least one CPU",
    },
    Row {
        class: "unsorted OPPs",
        files: &[("p.toml", "name = \"p\"\n[[domain]]\nname = \"d\"\ncpus = [0]\ncapacity = 1024\nopp = [{ khz = 2000 }, { khz = 1000 }]\n")],
        args: &["platform", "show", "{dir}/p.toml"],
        expect: "domain[0].opp[1].khz: OPP table not sorted",
    },
    Row {
        class: "zero OPP",
        files: &[("p.toml", "name = \"p\"\n[[domain]]\nname = \"d\"\ncpus = [0]\ncapacity = 1024\nopp = [{ khz = 0 }]\n")],
        args: &["platform", "show", "{dir}/p.toml"],
        expect: "domain[0].opp[0].khz: zero frequency",
    },
    Row {
        class: "OPP kHz beyond 32 bits",
        files: &[("p.toml", "name = \"p\"\n[[domain]]\nname = \"d\"\ncpus = [0]\ncapacity_dmips_mhz = 1024\nopp = [{ khz = 99999999999, uv = 800000 }]\n")],
        args: &["platform", "show", "{dir}/p.toml"],
        expect: "domain[0].opp[0].khz: 99999999999 kHz does not fit cpufreq's 32-bit kHz",
    },
    Row {
        class: "capacity 0",
        files: &[("p.toml", "name = \"p\"\n[[domain]]\nname = \"d\"\ncpus = [0]\ncapacity = 0\nopp = [{ khz = 1000 }]\n")],
        args: &["platform", "show", "{dir}/p.toml"],
        expect: "domain[0].capacity: 0 is outside 1..=1024",
    },
    Row {
        class: "capacity above 1024",
        files: &[("p.toml", "name = \"p\"\n[[domain]]\nname = \"d\"\ncpus = [0]\ncapacity = 5000\nopp = [{ khz = 1000 }]\n")],
        args: &["platform", "show", "{dir}/p.toml"],
        expect: "domain[0].capacity: 5000 is outside 1..=1024",
    },
    Row {
        class: "idle residency below exit latency",
        files: &[("p.toml", "name = \"p\"\n[[idle_state]]\nname = \"s\"\nexit_latency_us = 500\ntarget_residency_us = 100\n[[domain]]\nname = \"d\"\ncpus = [0]\ncapacity = 1024\nopp = [{ khz = 1000 }]\n")],
        args: &["platform", "show", "{dir}/p.toml"],
        expect: "idle_state[0].target_residency_us: 100 us is below the exit latency of 500 us",
    },
    Row {
        class: "duplicate idle-state names",
        files: &[("p.toml", "name = \"p\"\n[[idle_state]]\nname = \"s\"\nexit_latency_us = 1\ntarget_residency_us = 1\n[[idle_state]]\nname = \"s\"\nexit_latency_us = 1\ntarget_residency_us = 1\n[[domain]]\nname = \"d\"\ncpus = [0]\ncapacity = 1024\nopp = [{ khz = 1000 }]\n")],
        args: &["platform", "show", "{dir}/p.toml"],
        expect: "idle_state[1].name: `s` is also idle_state[0]",
    },
    Row {
        class: "12 idle states (platform show)",
        files: &[],
        args: &["platform", "show", "{dir}/idle12.toml"],
        expect: "domain[0].idle_states: 12 idle states: a CPU has 1..=10 (the kernel's CPUIDLE_STATE_MAX)",
    },
    Row {
        class: "12 idle states (simulate)",
        files: &[("w.json", WORKLOAD)],
        args: &["simulate", "--platform", "{dir}/idle12.toml", "--workload", "{dir}/w.json", "--duration", "1"],
        expect: "domain[0].idle_states: 12 idle states: a CPU has 1..=10 (the kernel's CPUIDLE_STATE_MAX)",
    },
    Row {
        class: "12 idle states (idle --states)",
        files: &[],
        args: &["idle", "--states", "a:1us/1us,b:1us/1us,c:1us/1us,d:1us/1us,e:1us/1us,f:1us/1us,g:1us/1us,h:1us/1us,i:1us/1us,j:1us/1us,k:1us/1us,l:1us/1us", "--pattern", "timer:1ms"],
        expect: "12 idle states: a CPU has 1..=10 (the kernel's CPUIDLE_STATE_MAX)",
    },
    Row {
        class: "idle --count huge",
        files: &[("p.toml", PLATFORM)],
        args: &["idle", "--platform", "{dir}/p.toml", "--pattern", "timer:1ms", "--count", "1000000000000"],
        expect: "is beyond the limit MAX_IDLE_PERIODS = 1000000",
    },
    Row {
        class: "idle phase count huge",
        files: &[("p.toml", PLATFORM)],
        args: &["idle", "--platform", "{dir}/p.toml", "--pattern", "timer:1ms*10000000000000"],
        expect: "10000000000000 periods in total is beyond the limit MAX_IDLE_PERIODS = 1000000",
    },
    Row {
        class: "idle timer period huge",
        files: &[("p.toml", PLATFORM)],
        args: &["idle", "--platform", "{dir}/p.toml", "--pattern", "timer:100000000s"],
        expect: "is beyond the limit MAX_IDLE_PERIOD_NS",
    },
    Row {
        class: "--capacity 0",
        files: &[],
        args: &["idle", "--states", "a:1us/1us", "--pattern", "timer:1ms", "--capacity", "0"],
        expect: "--capacity 0: a CPU capacity is 1..=1024",
    },
    Row {
        class: "--capacity above 1024",
        files: &[],
        args: &["idle", "--states", "a:1us/1us", "--pattern", "timer:1ms", "--capacity", "5000"],
        expect: "--capacity 5000: a CPU capacity is 1..=1024",
    },
    Row {
        class: "empty governor CSV",
        files: &[("p.toml", PLATFORM), ("u.csv", "time_ns,util_cfs\n")],
        args: &["governor", "--platform", "{dir}/p.toml", "--util", "{dir}/u.csv"],
        expect: "u.csv:1: no rows",
    },
    Row {
        class: "study: missing workload file",
        files: &[("p.toml", PLATFORM), ("s.toml", "study = \"s\"\ndescription = \"d\"\nprofiles = [\"mainline\"]\nduration_s = 1\ncolumns = [\"ou_pct\"]\n[[case]]\nlabel = \"c\"\nplatform = \"p.toml\"\nworkload = \"nope.json\"\n")],
        args: &["study", "{dir}/s.toml"],
        expect: "nope.json: cannot read: No such file or directory",
    },
    Row {
        class: "study: sweep past MAX_INSTANCES",
        files: &[("p.toml", PLATFORM), ("w.json", WORKLOAD), ("s.toml", "study = \"s\"\ndescription = \"d\"\nprofiles = [\"mainline\"]\nduration_s = 1\ncolumns = [\"ou_pct\"]\n[[case]]\nlabel = \"c\"\nplatform = \"p.toml\"\nworkload = \"w.json\"\nsweep = { task = \"t\", values = [4294967295] }\n")],
        args: &["study", "{dir}/s.toml"],
        expect: "instance count 4294967295 is beyond the limit MAX_INSTANCES = 65536",
    },
    Row {
        class: "study: unknown column",
        files: &[("p.toml", PLATFORM), ("w.json", WORKLOAD), ("s.toml", "study = \"s\"\ndescription = \"d\"\nprofiles = [\"mainline\"]\nduration_s = 1\ncolumns = [\"no_such_metric\"]\n[[case]]\nlabel = \"c\"\nplatform = \"p.toml\"\nworkload = \"w.json\"\n")],
        args: &["study", "{dir}/s.toml"],
        expect: "`no_such_metric` is no metric of any run",
    },
    Row {
        class: "study: HZ 0",
        files: &[("p.toml", PLATFORM), ("w.json", WORKLOAD), ("s.toml", "study = \"s\"\ndescription = \"d\"\nprofiles = [\"mainline\"]\nduration_s = 1\nhz = 0\ncolumns = [\"ou_pct\"]\n[[case]]\nlabel = \"c\"\nplatform = \"p.toml\"\nworkload = \"w.json\"\n")],
        args: &["study", "{dir}/s.toml"],
        expect: "hz: HZ 0 is outside 1..=10000",
    },
    Row {
        class: "fixture suite without cases",
        files: &[("k/x.jsonl", "{\"suite\":\"pelt/x\",\"schema\":1,\"variant\":\"mainline\"}\n")],
        args: &["verify", "--fixtures", "{dir}/k"],
        expect: "x.jsonl:1: no cases after the header",
    },
    Row {
        class: "fixture header of schema 2",
        files: &[("k/x.jsonl", "{\"suite\":\"pelt/x\",\"schema\":2,\"variant\":\"mainline\"}\n{\"id\":\"a\",\"fn\":\"f\",\"in\":{},\"out\":{}}\n")],
        args: &["verify", "--fixtures", "{dir}/k"],
        expect: "header: field `schema` is 2: this reader knows schema 1 only",
    },
    Row {
        class: "fixture header with an unknown field",
        files: &[("k/x.jsonl", "{\"suite\":\"pelt/x\",\"schema\":1,\"variant\":\"mainline\",\"extra\":1}\n{\"id\":\"a\",\"fn\":\"f\",\"in\":{},\"out\":{}}\n")],
        args: &["verify", "--fixtures", "{dir}/k"],
        expect: "header: unknown field `extra`",
    },
    Row {
        class: "fixture case that cannot be read",
        files: &[("k/x.jsonl", "{\"suite\":\"pelt/x\",\"schema\":1,\"variant\":\"mainline\"}\n{\"id\":\"a\",\"fn\":\n")],
        args: &["verify", "--fixtures", "{dir}/k"],
        expect: "1 case(s) could not be read or run",
    },
    Row {
        class: "directory symlink loop",
        files: &[],
        args: &["verify", "--fixtures", "{dir}/loop"],
        expect: "no fixture suites found",
    },
    Row {
        class: "trace: time going backwards",
        files: &[("t.txt", "cpus=2\n          rt-app-153   [001]  3950.176256: sched_switch: prev_comm=rt-app prev_pid=153 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n          rt-app-153   [001]  3949.176256: sched_switch: prev_comm=rt-app prev_pid=153 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n")],
        args: &["replay", "{dir}/t.txt"],
        expect: "t.txt:3: timestamp 3949.176256000 goes backwards",
    },
    Row {
        class: "trace: truncated line",
        files: &[("t.txt", "cpus=2\n          rt-app-153   [001]  3950.176256: sched_switch: prev_comm=rt-app prev_pid=153 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n          rt-app-153   [001]  3950.1762")],
        args: &["replay", "{dir}/t.txt"],
        expect: "truncated line, first at",
    },
    Row {
        class: "trace: unknown event",
        files: &[("t.txt", "cpus=2\n          rt-app-153   [001]  3950.176256: frobnicate: x=1\n")],
        args: &["replay", "{dir}/t.txt"],
        expect: "unknown event, first at",
    },
    Row {
        class: "trace: pid never switched in",
        files: &[("t.txt", "cpus=2\n          rt-app-153   [001]  3950.176256: sched_wakeup: comm=rt-app pid=153 prio=120 target_cpu=001\n          rt-app-153   [001]  3950.276256: sched_wakeup: comm=rt-app pid=153 prio=120 target_cpu=001\n")],
        args: &["replay", "{dir}/t.txt"],
        expect: "no PELT update could be replayed from 2 event(s)",
    },
];

/// Inputs too large or too binary to spell in a row.
fn write_generated(dir: &Path) {
    std::fs::write(
        dir.join("latin1.toml"),
        b"name = \"p\"\n# caf\xe9 au lait\n",
    )
    .unwrap();
    let deep = format!(
        "{{\"tasks\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    std::fs::write(dir.join("deep.json"), deep).unwrap();
    let deep = format!("a = {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    std::fs::write(dir.join("deep.toml"), deep).unwrap();
    // One byte past the limit, sparse: refused from its size before any read.
    let big = std::fs::File::create(dir.join("big.json")).unwrap();
    big.set_len(schedmath_host::limits::MAX_INPUT_BYTES + 1)
        .unwrap();
    let mut idle12 = String::from("name = \"p\"\n");
    let mut names = Vec::new();
    for i in 0..12 {
        idle12.push_str(&format!(
            "[[idle_state]]\nname = \"s{i}\"\nexit_latency_us = {}\ntarget_residency_us = {}\n",
            i + 1,
            10 * (i + 1)
        ));
        names.push(format!("\"s{i}\""));
    }
    idle12.push_str(&format!(
        "[[domain]]\nname = \"d\"\ncpus = [0, 1]\ncapacity = 1024\nidle_states = [{}]\nopp = [{{ khz = 1000000 }}]\n",
        names.join(", ")
    ));
    std::fs::write(dir.join("idle12.toml"), idle12).unwrap();
    let lp = dir.join("loop");
    std::fs::create_dir_all(&lp).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&lp, lp.join("again")).unwrap();
}

/// The first line of the error, without the `error: ` prefix.
fn run_row(row: &Row) -> (Option<i32>, String) {
    let tmp = tempfile::tempdir().unwrap();
    write_generated(tmp.path());
    for (name, text) in row.files {
        let p = tmp.path().join(name);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(p, text).unwrap();
    }
    let dir = tmp.path().display().to_string();
    let args: Vec<String> = row.args.iter().map(|a| a.replace("{dir}", &dir)).collect();
    let out = Command::new(env!("CARGO_BIN_EXE_schedmath"))
        .args(&args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// No `A: A` in a message: each cause is printed once.
fn repeats(msg: &str) -> Option<String> {
    let parts: Vec<&str> = msg
        .split(": ")
        .map(str::trim)
        .filter(|p| p.len() > 8)
        .collect();
    parts
        .iter()
        .enumerate()
        .find(|(i, p)| parts[..*i].contains(p))
        .map(|(_, p)| (*p).to_string())
}

#[test]
fn every_hostile_input_is_refused_with_exit_2_and_its_message() {
    let mut failures = Vec::new();
    for row in ROWS {
        let (code, stderr) = run_row(row);
        let error = stderr
            .lines()
            .find(|l| l.starts_with("error: "))
            .unwrap_or_default();
        // `CAMPAIGN_PRINT=1 cargo test --test campaign -- --nocapture` prints each row's
        // message for TESTING.md's table.
        if std::env::var_os("CAMPAIGN_PRINT").is_some() {
            println!("ROW\t{}\t{}", row.class, error);
        }
        if code != Some(2) || !stderr.contains(row.expect) || stderr.contains("panicked") {
            failures.push(format!(
                "{}: exit {code:?}, expected 2 and `{}` in:\n{stderr}",
                row.class, row.expect
            ));
        } else if let Some(p) = repeats(error) {
            failures.push(format!("{}: `{p}` repeats in `{error}`", row.class));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}

#[test]
fn the_generated_platforms_are_valid_but_for_the_one_fault() {
    // The template platform itself loads: each row's error is its own fault.
    let p = schedmath_host::platform::Platform::from_toml_str(PLATFORM, "p.toml");
    assert!(p.is_ok(), "{p:?}");
    assert!(platform_with("description = \"x\"\n").contains("description"));
}

#[test]
fn testing_md_lists_every_campaign_row() {
    let doc = include_str!("../../TESTING.md");
    let missing: Vec<&str> = ROWS
        .iter()
        .map(|r| r.class)
        .filter(|c| !doc.contains(&format!("| {c} |")))
        .collect();
    assert!(missing.is_empty(), "not in TESTING.md: {missing:?}");
}
