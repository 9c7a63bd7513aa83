// SPDX-License-Identifier: GPL-2.0-only
//! An rt-app file split for the lab guest: Debian's rt-app 1.0 has no `taskgroup`, so
//! the lab starts one rt-app per cgroup. Tasks name their group with the task-level
//! `taskgroup` key and groups get their attributes from the project's `schedmath`
//! object (fixtures/workloads/README.md), exactly as the simulator reads them:
//! `shares` becomes cgroup v2 `cpu.weight` (the kernel's conversion,
//! `weight * 1024 / 100`, must give back the same shares), `idle` becomes `cpu.idle`.
//!
//! What the guest cannot run is refused with the reason: uclamp keys (Debian's kernels
//! lack CONFIG_UCLAMP_TASK), `fork` (not in rt-app 1.0), a task changing group in a
//! phase, and `schedmath` keys the lab cannot reproduce.

use std::fmt;

use anyhow::{anyhow, bail, Context};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// A JSON object with its keys in file order, repeats kept (rt-app's event lists).
#[derive(Debug)]
pub struct Ordered(pub Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Ordered, A::Error> {
                let mut v = Vec::new();
                while let Some((k, val)) = m.next_entry::<String, Box<RawValue>>()? {
                    v.push((k, val));
                }
                Ok(Ordered(v))
            }
        }
        d.deserialize_map(V)
    }
}

impl Ordered {
    fn to_json(&self) -> String {
        let body: Vec<String> = self
            .0
            .iter()
            .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), v.get()))
            .collect();
        format!("{{{}}}", body.join(", "))
    }
    fn get(&self, key: &str) -> Option<&RawValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| &**v)
    }
}

/// Replaced by the guest with rt-app's measured ns per loop (xtask/lab/init.sh).
pub const CALIBRATION_TOKEN: &str = "__SCHEDMATH_CALIBRATION__";

/// One rt-app instance of the guest: its cgroup and its own rt-app file.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// cgroup v2 path, `/` for the root.
    pub path: String,
    /// `cpu.weight` (1..=10000; 100 = shares 1024).
    pub weight: u32,
    pub idle: bool,
    pub tasks: Vec<String>,
    /// rt-app JSON of this instance.
    pub json: String,
}

#[derive(Debug)]
pub struct Split {
    pub groups: Vec<Group>,
    /// global.duration as run, seconds.
    pub duration_s: u32,
}

const UCLAMP: &str = "uclamp: Debian's kernels are built without CONFIG_UCLAMP_TASK";

/// The first key of a task the guest cannot run, with the reason.
fn find_refused(v: &Value, path: &str, top: bool) -> Option<String> {
    let Value::Object(m) = v else {
        return None;
    };
    for (k, sub) in m {
        let here = format!("{path}.{k}");
        if k == "util_min" || k == "util_max" {
            return Some(format!("{here}: {UCLAMP}"));
        }
        // rt-app recognises events by key prefix (fork, fork1, ...)
        if k.starts_with("fork") {
            return Some(format!("{here}: Debian's rt-app 1.0 has no fork event"));
        }
        if k == "taskgroup" && !top {
            return Some(format!(
                "{here}: a task changing group is not supported (Debian's rt-app 1.0 has no taskgroup key; the lab starts one rt-app per cgroup)"
            ));
        }
        if let Some(r) = find_refused(sub, &here, false) {
            return Some(r);
        }
    }
    None
}

/// cgroup v2 `cpu.weight` for cgroup v1 `shares`, when the kernel maps it back exactly
/// (kernel/sched/core.c converts weight to shares as `weight * 1024 / 100`, rounded).
pub fn weight_of_shares(shares: u64) -> Option<u32> {
    let w = (shares * 100 + 512) / 1024;
    let back = (w * 1024 + 50) / 100;
    ((1..=10000).contains(&w) && back == shares).then_some(w as u32)
}

fn valid_cgroup(p: &str) -> bool {
    p == "/"
        || (p.starts_with('/')
            && !p.ends_with('/')
            && p[1..].split('/').all(|s| {
                !s.is_empty()
                    && s != "."
                    && s != ".."
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            }))
}

/// Split `text` (strict JSON) into one rt-app file per cgroup.
pub fn split(text: &str, file: &str, duration: Option<u32>) -> anyhow::Result<Split> {
    let top: Ordered = serde_json::from_str(text).with_context(|| {
        format!("{file}: the lab reads strict JSON (no comments or trailing commas)")
    })?;
    let tasks: Ordered = serde_json::from_str(
        top.get("tasks")
            .ok_or_else(|| anyhow!("{file}: no \"tasks\" object"))?
            .get(),
    )
    .with_context(|| format!("{file}: tasks"))?;
    let mut attrs: Vec<(String, u32, bool)> = Vec::new();
    if let Some(sm) = top.get("schedmath") {
        let sm: Value = serde_json::from_str(sm.get())?;
        let Value::Object(sm) = sm else {
            bail!("{file}: schedmath: not an object");
        };
        for (k, v) in &sm {
            if k != "taskgroups" {
                bail!("{file}: schedmath.{k}: the lab cannot reproduce it in the guest");
            }
            let Value::Object(groups) = v else {
                bail!("{file}: schedmath.taskgroups: not an object");
            };
            for (path, g) in groups {
                if !valid_cgroup(path) {
                    bail!("{file}: schedmath.taskgroups.{path}: not a cgroup path like /a/b");
                }
                let shares = g.get("shares").map_or(Some(1024), Value::as_u64);
                let shares = shares.ok_or_else(|| {
                    anyhow!("{file}: schedmath.taskgroups.{path}.shares: not an integer")
                })?;
                let weight = weight_of_shares(shares).ok_or_else(|| {
                    anyhow!(
                        "{file}: schedmath.taskgroups.{path}.shares={shares}: no cgroup v2 cpu.weight gives these shares back (use a multiple of 256, e.g. {})",
                        (shares / 256).max(1) * 256
                    )
                })?;
                let idle = g.get("idle").and_then(Value::as_bool).unwrap_or(false);
                attrs.push((path.clone(), weight, idle));
            }
        }
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut task_lists: Vec<Vec<(String, String)>> = Vec::new();
    for (name, raw) in &tasks.0 {
        let v: Value = serde_json::from_str(raw.get())?;
        if let Some(r) = find_refused(&v, &format!("tasks.{name}"), true) {
            bail!("{file}: {r}");
        }
        let task: Ordered = serde_json::from_str(raw.get())?;
        let path = match task.get("taskgroup") {
            None => "/".to_string(),
            Some(p) => serde_json::from_str::<String>(p.get())
                .ok()
                .filter(|p| valid_cgroup(p))
                .ok_or_else(|| {
                    anyhow!("{file}: tasks.{name}.taskgroup: not a cgroup path like /a/b")
                })?,
        };
        let kept = Ordered(
            task.0
                .into_iter()
                .filter(|(k, _)| k != "taskgroup")
                .collect(),
        );
        let i = match groups.iter().position(|g| g.path == path) {
            Some(i) => i,
            None => {
                let (weight, idle) = attrs
                    .iter()
                    .find(|(p, _, _)| *p == path)
                    .map_or((100, false), |(_, w, i)| (*w, *i));
                groups.push(Group {
                    path: path.clone(),
                    weight,
                    idle,
                    tasks: Vec::new(),
                    json: String::new(),
                });
                task_lists.push(Vec::new());
                groups.len() - 1
            }
        };
        groups[i].tasks.push(name.clone());
        task_lists[i].push((name.clone(), kept.to_json()));
    }
    if groups.is_empty() {
        bail!("{file}: no tasks");
    }
    // global, with the duration override
    let mut global = match top.get("global") {
        Some(g) => serde_json::from_str::<Ordered>(g.get())?,
        None => Ordered(Vec::new()),
    };
    let file_duration = global
        .get("duration")
        .and_then(|d| serde_json::from_str::<i64>(d.get()).ok());
    let duration_s = match (duration, file_duration) {
        (Some(d), _) if d > 0 => d,
        (None, Some(d)) if d > 0 => d as u32,
        _ => bail!("{file}: global.duration must be > 0 seconds (or give --duration): the guest run needs an end"),
    };
    global.0.retain(|(k, _)| k != "duration");
    // a number stays; otherwise the guest writes its measured ns per loop here
    if global
        .get("calibration")
        .is_none_or(|c| serde_json::from_str::<u64>(c.get()).is_err())
    {
        global.0.retain(|(k, _)| k != "calibration");
        global.0.push((
            "calibration".into(),
            RawValue::from_string(format!("\"{CALIBRATION_TOKEN}\""))?,
        ));
    }
    global.0.push((
        "duration".into(),
        RawValue::from_string(duration_s.to_string())?,
    ));
    let others: Vec<&(String, Box<RawValue>)> = top
        .0
        .iter()
        .filter(|(k, _)| !["tasks", "global", "schedmath"].contains(&k.as_str()))
        .collect();
    for (g, list) in groups.iter_mut().zip(task_lists) {
        let tasks: Vec<String> = list
            .iter()
            .map(|(n, j)| format!("{}: {j}", Value::String(n.clone())))
            .collect();
        let mut parts = vec![format!("\"tasks\": {{{}}}", tasks.join(", "))];
        parts.extend(
            others
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), v.get())),
        );
        parts.push(format!("\"global\": {}", global.to_json()));
        g.json = format!("{{{}}}\n", parts.join(", "));
    }
    Ok(Split { groups, duration_s })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_map_to_exact_weights() {
        assert_eq!(weight_of_shares(1024), Some(100));
        assert_eq!(weight_of_shares(2048), Some(200));
        assert_eq!(weight_of_shares(256), Some(25));
        assert_eq!(weight_of_shares(2), None);
        assert_eq!(weight_of_shares(1000), None);
    }

    #[test]
    fn groups_split_with_event_order_kept() {
        let w = r#"{"tasks": {"a": {"run": 1000, "sleep": 2000, "run1": 5},
                               "b": {"taskgroup": "/bg", "run": 7}},
                    "schedmath": {"taskgroups": {"/bg": {"shares": 512}}},
                    "global": {"duration": 2, "calibration": "CPU0"}}"#;
        let s = split(w, "w.json", None).unwrap();
        assert_eq!(s.duration_s, 2);
        assert_eq!(s.groups.len(), 2);
        assert_eq!(s.groups[0].path, "/");
        assert_eq!(s.groups[1].path, "/bg");
        assert_eq!(s.groups[1].weight, 50);
        assert_eq!(
            s.groups[0].json,
            "{\"tasks\": {\"a\": {\"run\": 1000, \"sleep\": 2000, \"run1\": 5}}, \"global\": {\"calibration\": \"__SCHEDMATH_CALIBRATION__\", \"duration\": 2}}\n"
        );
        assert!(!s.groups[1].json.contains("taskgroup"));
    }

    #[test]
    fn refusals_say_why() {
        let e = split(
            r#"{"tasks": {"a": {"util_min": 10, "run": 1}}, "global": {"duration": 1}}"#,
            "w",
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("CONFIG_UCLAMP_TASK"), "{e}");
        let e = split(r#"{"tasks": {"a": {"phases": {"p": {"taskgroup": "/x", "run": 1}}}}, "global": {"duration": 1}}"#, "w", None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("changing group"), "{e}");
        let e = split(r#"{"tasks": {"a": {"run": 1}}}"#, "w", None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("duration"), "{e}");
        let e = split(
            r#"{"tasks": {"a": {"fork1": {}}}, "global": {"duration": 1}}"#,
            "w",
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("fork"), "{e}");
    }
}
