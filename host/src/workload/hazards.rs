// SPDX-License-Identifier: GPL-2.0-only
//! Deadlocks and zero-progress loops, found in the workload before it runs.
//!
//! rt-app runs such a file and hangs (or spins) on the board; the simulator ends the
//! blocked or spinning threads at once and would report zero work without a word. So the
//! patterns that cannot make progress are warnings naming the tasks and resources
//! (errors under `--strict`):
//! * a task that repeats forever without any event that takes time (`run`, `runtime`,
//!   `sleep`, a timer, `iorun`, `mem`): `run 0 / sleep 0` or a bare `lock`/`unlock` loop;
//! * a mutex locked again by the task that holds it (pthread mutexes are not recursive);
//! * two mutexes taken in opposite orders by two tasks (the classic ABBA deadlock);
//! * `suspend`s that only tasks themselves suspended first can `resume` (a cycle), or
//!   that no task resumes at all;
//! * a barrier its users reach a different number of times: rt-app counts a barrier's
//!   threads at start, so once the first user is done the others wait at it forever.

use std::collections::{BTreeMap, BTreeSet};

use super::json::Loc;
use super::model::{Event, Loops, TaskSpec, Workload};

/// One hazard: where it starts (the task) and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hazard {
    /// The task's position in the file.
    pub at: Loc,
    /// The key path (`tasks.NAME`).
    pub path: String,
    /// What cannot progress, naming the tasks and resources.
    pub msg: String,
}

fn takes_time(e: &Event) -> bool {
    match e {
        Event::Run { work_ns } => *work_ns > 0,
        Event::Runtime { wall_ns } => *wall_ns > 0,
        Event::Sleep { ns } => *ns > 0,
        Event::Timer { period_ns, .. } => *period_ns > 0,
        Event::IoRun { bytes } | Event::Mem { bytes } => *bytes > 0,
        _ => false,
    }
}

fn forever(t: &TaskSpec) -> bool {
    t.loops == Loops::Forever || t.phases.iter().any(|p| p.loops == Loops::Forever)
}

fn events(t: &TaskSpec) -> impl Iterator<Item = &Event> {
    t.phases
        .iter()
        .flat_map(|p| p.events.iter().map(|e| &e.event))
}

/// Every hazard of `w`, in task order.
pub fn hazards(w: &Workload) -> Vec<Hazard> {
    let mut out = Vec::new();
    let at = |t: &TaskSpec, msg: String| Hazard {
        at: t.at,
        path: format!("tasks.{}", t.name),
        msg,
    };
    // (first, second) lock order → the first task taking it.
    let mut orders: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    let mut inversions: BTreeSet<(String, String, String, String)> = BTreeSet::new();
    for t in &w.tasks {
        if forever(t) && !events(t).any(takes_time) {
            out.push(at(
                t,
                format!(
                    "task `{}` repeats forever without an event that takes time (run, runtime, sleep, timer, iorun, mem): it makes no progress",
                    t.name
                ),
            ));
        }
        let mut held: Vec<&str> = Vec::new();
        for e in events(t) {
            match e {
                Event::Lock { mutex } => {
                    if held.contains(&mutex.as_str()) {
                        out.push(at(
                            t,
                            format!(
                                "task `{}` locks mutex `{mutex}` while holding it: a pthread mutex is not recursive, the task deadlocks itself",
                                t.name
                            ),
                        ));
                    }
                    for &h in &held {
                        if h == mutex {
                            continue;
                        }
                        if let Some(&other) = orders.get(&(mutex.as_str(), h)) {
                            if other != t.name {
                                inversions.insert((
                                    other.to_string(),
                                    t.name.clone(),
                                    mutex.clone(),
                                    h.to_string(),
                                ));
                            }
                        }
                        orders.entry((h, mutex.as_str())).or_insert(&t.name);
                    }
                    held.push(mutex);
                }
                Event::Unlock { mutex } => {
                    if let Some(i) = held.iter().rposition(|h| h == mutex) {
                        held.remove(i);
                    }
                }
                _ => {}
            }
        }
    }
    for (a, b, m1, m2) in inversions {
        if let Some(t) = w.tasks.iter().find(|t| t.name == b) {
            out.push(at(
                t,
                format!(
                    "tasks `{a}` and `{b}` take mutexes `{m1}` and `{m2}` in opposite orders: they can deadlock"
                ),
            ));
        }
    }
    out.extend(suspend_cycles(w, &at));
    out.extend(uneven_barriers(w, &at));
    out
}

/// How often one thread of `t` passes barrier `name`: `None` = without end.
fn barrier_passes(t: &TaskSpec, name: &str) -> Option<u128> {
    let times = |l: Loops| match l {
        Loops::Forever => None,
        Loops::Count(n) => Some(u128::from(n)),
    };
    let mut per_loop = Some(0u128);
    for p in &t.phases {
        let here = p
            .events
            .iter()
            .filter(|e| matches!(&e.event, Event::Barrier { name: n } if n == name))
            .count() as u128;
        if here > 0 {
            per_loop = per_loop.zip(times(p.loops)).map(|(sum, n)| sum + here * n);
        }
    }
    per_loop.zip(times(t.loops)).map(|(a, n)| a * n)
}

/// Barriers whose users pass them unequally often (see the module doc).
fn uneven_barriers(w: &Workload, at: &dyn Fn(&TaskSpec, String) -> Hazard) -> Vec<Hazard> {
    let mut users: BTreeMap<&str, Vec<(&TaskSpec, Option<u128>)>> = BTreeMap::new();
    for t in &w.tasks {
        let mut seen = BTreeSet::new();
        for e in events(t) {
            if let Event::Barrier { name } = e {
                if seen.insert(name.as_str()) {
                    users
                        .entry(name)
                        .or_default()
                        .push((t, barrier_passes(t, name)));
                }
            }
        }
    }
    let show = |n: Option<u128>| n.map_or("without end".to_string(), |n| format!("{n} times"));
    let mut out = Vec::new();
    for (name, list) in users {
        // `None` (without end) sorts first with Option's order: compare finite ones first.
        let fewest = list.iter().filter_map(|(_, n)| *n).min();
        let Some(fewest) = fewest else { continue };
        if let Some((t, n)) = list.iter().find(|(_, n)| *n != Some(fewest)) {
            let (first, _) = list
                .iter()
                .find(|(_, n)| *n == Some(fewest))
                .unwrap_or(&list[0]);
            out.push(at(
                t,
                format!(
                    "barrier `{name}`: task `{}` passes it {}, task `{}` {}; rt-app counts a barrier's threads at start, so after {fewest} passes `{}` waits at it forever",
                    first.name,
                    show(Some(fewest)),
                    t.name,
                    show(*n),
                    t.name
                ),
            ));
        }
    }
    out
}

/// `suspend` names each task waits on before its first `resume`, and the names each task
/// resumes.
fn suspend_cycles(w: &Workload, at: &dyn Fn(&TaskSpec, String) -> Hazard) -> Vec<Hazard> {
    let mut first_wait: BTreeMap<&str, &str> = BTreeMap::new();
    let mut resumers: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut waited: BTreeSet<&str> = BTreeSet::new();
    for t in &w.tasks {
        let mut resumed_yet = false;
        for e in events(t) {
            match e {
                Event::Suspend { name } => {
                    waited.insert(name);
                    if !resumed_yet {
                        first_wait.entry(&t.name).or_insert(name);
                    }
                }
                Event::Resume { name } => {
                    resumed_yet = true;
                    resumers.entry(name).or_default().insert(&t.name);
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    for name in &waited {
        if !resumers.contains_key(name) {
            for t in w
                .tasks
                .iter()
                .filter(|t| events(t).any(|e| matches!(e, Event::Suspend { name: n } if n == name)))
            {
                out.push(at(
                    t,
                    format!(
                        "task `{}` suspends on `{name}`, which no task resumes: it blocks forever",
                        t.name
                    ),
                ));
            }
        }
    }
    // Tasks blocked first whose resumers are all blocked first too: none can start.
    let mut stuck: BTreeSet<&str> = first_wait.keys().copied().collect();
    loop {
        let keep: BTreeSet<&str> = stuck
            .iter()
            .copied()
            .filter(|t| {
                let name = first_wait.get(t).copied().unwrap_or_default();
                resumers
                    .get(name)
                    .is_some_and(|r| !r.is_empty() && r.iter().all(|x| stuck.contains(x)))
            })
            .collect();
        if keep.len() == stuck.len() {
            break;
        }
        stuck = keep;
    }
    if let Some(first) = stuck
        .iter()
        .find_map(|n| w.tasks.iter().find(|t| t.name == *n))
    {
        let list: Vec<String> = stuck
            .iter()
            .map(|t| {
                format!(
                    "`{t}` waits on `{}`",
                    first_wait.get(t).copied().unwrap_or_default()
                )
            })
            .collect();
        out.push(at(
            first,
            format!(
                "suspend cycle: {}, and each is resumed only by a task of the cycle after its own suspend: they deadlock",
                list.join(", ")
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msgs(json: &str) -> Vec<String> {
        let w = crate::workload::rtapp::parse_str(json, "w.json").unwrap();
        hazards(&w).into_iter().map(|h| h.msg).collect()
    }

    #[test]
    fn zero_time_loops_are_hazards() {
        assert_eq!(
            msgs(r#"{"tasks": {"z": {"loop": -1, "run": 0, "sleep": 0}}}"#),
            ["task `z` repeats forever without an event that takes time (run, runtime, sleep, timer, iorun, mem): it makes no progress"]
        );
        assert!(msgs(r#"{"tasks": {"z": {"loop": -1, "run": 10, "sleep": 0}}}"#).is_empty());
    }

    #[test]
    fn opposite_lock_orders_and_relocking_are_hazards() {
        let m = msgs(
            r#"{"tasks": {
            "a": {"loop": -1, "lock": "m1", "lock2": "m2", "run": 100, "unlock": "m2", "unlock2": "m1"},
            "b": {"loop": -1, "lock": "m2", "lock2": "m1", "run": 100, "unlock": "m1", "unlock2": "m2"}}}"#,
        );
        assert_eq!(
            m,
            ["tasks `a` and `b` take mutexes `m1` and `m2` in opposite orders: they can deadlock"]
        );
        assert_eq!(
            msgs(r#"{"tasks": {"a": {"loop": 1, "lock": "m", "lock2": "m", "run": 100, "unlock": "m", "unlock2": "m"}}}"#),
            ["task `a` locks mutex `m` while holding it: a pthread mutex is not recursive, the task deadlocks itself"]
        );
    }

    #[test]
    fn barriers_passed_unequally_are_hazards() {
        assert_eq!(
            msgs(
                r#"{"tasks": {"a": {"loop": -1, "run": 100, "barrier": "b"},
                              "c": {"loop": 3, "run": 100, "barrier": "b", "sleep": 10}}}"#
            ),
            ["barrier `b`: task `c` passes it 3 times, task `a` without end; rt-app counts a barrier's threads at start, so after 3 passes `a` waits at it forever"]
        );
        // Two phases, two passes per loop, against one pass per loop twice as often.
        assert_eq!(
            msgs(
                r#"{"tasks": {"a": {"loop": 4, "phases": {"p1": {"run": 100, "barrier": "b"}, "p2": {"loop": 2, "barrier": "b", "sleep": 10}}},
                              "c": {"loop": 12, "run": 100, "barrier": "b"}}}"#
            ),
            Vec::<String>::new()
        );
        assert!(msgs(
            r#"{"tasks": {"a": {"loop": -1, "run": 100, "barrier": "b"},
                          "c": {"loop": -1, "run": 100, "barrier": "b", "sleep": 10}}}"#
        )
        .is_empty());
    }

    #[test]
    fn suspend_cycles_are_hazards() {
        let m = msgs(
            r#"{"tasks": {"a": {"loop": -1, "suspend": "a", "run": 100, "resume": "b"},
                          "b": {"loop": -1, "suspend": "b", "run": 100, "resume": "a"}}}"#,
        );
        assert_eq!(
            m,
            ["suspend cycle: `a` waits on `a`, `b` waits on `b`, and each is resumed only by a task of the cycle after its own suspend: they deadlock"]
        );
        // One side resumes first: no cycle.
        assert!(msgs(
            r#"{"tasks": {"a": {"loop": -1, "suspend": "a", "run": 100, "resume": "b"},
                          "b": {"loop": -1, "resume": "a", "suspend": "b", "run": 100}}}"#,
        )
        .is_empty());
    }
}
