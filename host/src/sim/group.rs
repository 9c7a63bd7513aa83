// SPDX-License-Identifier: GPL-2.0-only
//! Task groups (the cgroup `cpu` controller, `CONFIG_FAIR_GROUP_SCHED`): the group table,
//! the per-CPU group cfs_rq with its group sched_entity, and the share arithmetic of
//! kernel/sched/fair.c, which the core computes (`schedmath::fair::group`:
//! `calc_group_shares()`, `update_tg_load_avg()`).
//!
//! Each group has, per CPU, a cfs_rq holding its tasks and child-group entities, and a
//! group entity queued in the parent's cfs_rq whose weight is the group's share of
//! `tg->shares` on that CPU, in proportion of its load there against the group's load
//! everywhere. An idle group (`cpu.idle`) gets `tg->shares = scale_load(WEIGHT_IDLEPRIO)`
//! (`sched_group_set_idle()`: its configured shares are replaced), its entity is idle
//! against its siblings at wake-up, and its tasks count as SCHED_IDLE for
//! `sched_idle_rq()`.
//!
//! Simplifications: the group cfs_rq's PELT signal is built by accumulation only (its
//! `load.weight`, `h_nr_runnable` and curr at each update): a task joining or leaving does
//! not attach or detach its own averages there, and the group entity keeps no PELT signal
//! of its own (nothing propagates up the hierarchy); the root cfs_rq stays the flat sum
//! of its tasks (see [`super::rq`]). No bandwidth control (quota/throttling).

use schedmath::fair::group::TgLoadContrib;
use schedmath::math::scale_load;
use schedmath::pelt::SchedAvg;
use std::collections::BTreeMap;

use super::WEIGHT_IDLEPRIO;

/// The root task group's id.
pub const ROOT: usize = 0;

/// One group of a task's chain as a program carries it (top-level group first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimGroup {
    /// Absolute path (`/a/b`).
    pub path: String,
    /// `cpu.shares` (unscaled).
    pub shares: u32,
    /// `cpu.idle`.
    pub idle: bool,
}

/// A `task_group`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tg {
    /// Path (`/` for the root).
    pub path: String,
    /// Parent id (the root is its own parent).
    pub parent: usize,
    /// Depth of the group's cfs_rq: 0 for the root, 1 for a top-level group.
    pub depth: u32,
    /// `tg->shares` (scaled).
    pub shares: i64,
    /// `tg->idle`.
    pub idle: bool,
    /// `tg->load_avg`: the sum of the per-CPU `tg_load_avg_contrib`.
    pub load_avg: i64,
}

/// Every group of a run, the root first, parents before children.
#[derive(Debug, Clone)]
pub struct TaskGroups {
    tgs: Vec<Tg>,
    ids: BTreeMap<String, usize>,
}

impl Default for TaskGroups {
    fn default() -> Self {
        Self::new()
    }
}

impl TaskGroups {
    /// Only the root group.
    pub fn new() -> Self {
        let root = Tg {
            path: "/".to_string(),
            parent: ROOT,
            depth: 0,
            shares: scale_load(1024) as i64, // ROOT_TASK_GROUP_LOAD, never used
            idle: false,
            load_avg: 0,
        };
        TaskGroups {
            ids: BTreeMap::from([(root.path.clone(), ROOT)]),
            tgs: vec![root],
        }
    }

    /// Adds the groups of `chain` (top-level first) not known yet; returns the id of its
    /// last group (the root for an empty chain). A path seen before with other attributes
    /// is an error.
    pub fn insert_chain(&mut self, chain: &[SimGroup]) -> Result<usize, String> {
        let mut parent = ROOT;
        for g in chain {
            let shares = if g.idle {
                scale_load(WEIGHT_IDLEPRIO) as i64
            } else {
                scale_load(u64::from(g.shares)) as i64 // at most 2^18 << 10
            };
            if let Some(&id) = self.ids.get(&g.path) {
                let t = &self.tgs[id];
                if t.parent != parent || t.shares != shares || t.idle != g.idle {
                    return Err(format!("task group `{}` given twice, differently", g.path));
                }
                parent = id;
                continue;
            }
            let id = self.tgs.len();
            let depth = self.tgs[parent].depth + 1;
            self.tgs.push(Tg {
                path: g.path.clone(),
                parent,
                depth,
                shares,
                idle: g.idle,
                load_avg: 0,
            });
            self.ids.insert(g.path.clone(), id);
            parent = id;
        }
        Ok(parent)
    }

    /// Number of groups, the root included.
    pub fn len(&self) -> usize {
        self.tgs.len()
    }

    /// Only the root.
    pub fn is_empty(&self) -> bool {
        self.tgs.len() == 1
    }

    /// The group with this path.
    pub fn id(&self, path: &str) -> Option<usize> {
        self.ids.get(path).copied()
    }

    /// Group `g` (the root for an unknown id).
    pub fn tg(&self, g: usize) -> &Tg {
        self.tgs.get(g).unwrap_or(&self.tgs[ROOT])
    }

    /// `tg->load_avg` of `g`, mutable.
    pub fn load_avg_mut(&mut self, g: usize) -> Option<&mut i64> {
        self.tgs.get_mut(g).map(|t| &mut t.load_avg)
    }

    /// `g` is `level` or below it.
    pub fn is_under(&self, mut g: usize, level: usize) -> bool {
        loop {
            if g == level {
                return true;
            }
            if g == ROOT {
                return false;
            }
            g = self.tg(g).parent;
        }
    }

    /// The child group of `level` on the way down to `g`, when `g` is strictly below it.
    pub fn child_towards(&self, level: usize, mut g: usize) -> Option<usize> {
        while g != ROOT {
            let p = self.tg(g).parent;
            if p == level {
                return Some(g);
            }
            g = p;
        }
        None
    }

    /// A task of `g` counts in `h_nr_idle` of the root: some group on its path is idle.
    pub fn idle_on_path(&self, mut g: usize) -> bool {
        while g != ROOT {
            if self.tg(g).idle {
                return true;
            }
            g = self.tg(g).parent;
        }
        false
    }
}

/// A scheduling entity of a CPU's hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ent {
    /// A task's entity.
    Task(usize),
    /// A group's entity on that CPU.
    Group(usize),
}

/// One group's cfs_rq on one CPU and the group entity that stands for it in the parent.
#[derive(Debug, Clone, Default)]
pub struct GroupRq {
    /// `cfs_rq->load.weight` (scaled): the queued child entities' weights.
    pub load_weight: u64,
    /// `cfs_rq->avg`.
    pub avg: SchedAvg,
    /// `cfs_rq->nr_running`: child entities queued (running one included).
    pub nr_running: u32,
    /// `cfs_rq->h_nr_runnable`: tasks queued below (running one included).
    pub h_nr_running: u32,
    /// `cfs_rq->min_vruntime`.
    pub min_vruntime: u64,
    /// The group entity's `sum_exec_runtime` (task time its tasks ran here, ns).
    pub sum_exec: u64,
    /// Its `prev_sum_exec_runtime` (at its last `set_next_entity()`).
    pub prev_sum_exec: u64,
    /// `cfs_rq->tg_load_avg_contrib` and `last_update_tg_load_avg` (rq clock, ns).
    pub tg: TgLoadContrib,
    /// The group entity's `load.weight` (scaled).
    pub se_weight: u64,
    /// The group entity (vruntime, deadline, lag, slice, weight, queued).
    pub se: schedmath::fair::eevdf::SchedEntity,
    /// The group entity is queued in the parent.
    pub se_on_rq: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_groups_take_weight_idleprio_and_paths_resolve() {
        let mut t = TaskGroups::new();
        let g = |p: &str, shares, idle| SimGroup {
            path: p.to_string(),
            shares,
            idle,
        };
        let b = t
            .insert_chain(&[g("/a", 2048, false), g("/a/b", 2, true)])
            .unwrap();
        assert_eq!(t.tg(b).shares, 3 << 10);
        assert_eq!(t.tg(t.id("/a").unwrap()).shares, 2048 << 10);
        assert_eq!(t.tg(b).depth, 2);
        assert_eq!(t.child_towards(ROOT, b), t.id("/a"));
        assert_eq!(t.child_towards(b, b), None);
        assert!(t.idle_on_path(b) && !t.idle_on_path(t.id("/a").unwrap()));
        assert!(t.is_under(b, ROOT) && !t.is_under(ROOT, b));
        assert!(t.insert_chain(&[g("/a", 1024, false)]).is_err());
    }
}
