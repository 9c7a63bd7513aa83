// SPDX-License-Identifier: GPL-2.0-only
//! Sched domains of a platform — the ideas of `build_sched_domains()` and
//! `cpu_attach_domain()` (kernel/sched/topology.c) for the levels the simulator's fork
//! path walks.
//!
//! Levels, bottom-up, each spanning for CPU `c`:
//! * **SMT**: `c` and its `smt_siblings` (`SD_SHARE_CPUCAPACITY`, `imbalance_pct` 110);
//! * **MC**: `c`'s cluster (the platform's `clusters`, default one per frequency domain;
//!   `SD_SHARE_LLC`, `imbalance_pct` 117). On arm64 with `CONFIG_SCHED_CLUSTER` this is
//!   the CLS level (the DT `cpu-map` cluster) and MC then spans the package; without
//!   cache nodes in the DT the package is every CPU, which is our PKG below — the groups
//!   come out the same;
//! * **PKG**: every CPU (`imbalance_pct` 117).
//!
//! A level is dropped for `c` when it spans only `c` (`sd_degenerate()`) or the same CPUs
//! as the level below (`sd_parent_degenerate()`). A kept level's groups are the spans of
//! the level below (single CPUs under the lowest), listed from the group of `c` onwards
//! in CPU order, wrapping (`build_sched_groups()` walks `for_each_cpu_wrap(i, span, c)`).
//! Every level carries `SD_BALANCE_FORK`; `SD_ASYM_CPUCAPACITY` is set on a level whose
//! span holds more than one `arch_scale_cpu_capacity()` value
//! (`asym_cpu_capacity_classify()`). No NUMA, no `SD_ASYM_PACKING`, no overlapping groups.

use schedmath::fair::lb::sd_init_imbalance_pct;

use crate::platform::Platform;

/// One sched domain of one CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedDomain {
    /// Level name: "SMT", "MC" or "PKG".
    pub name: &'static str,
    /// `sched_domain_span()`, sorted.
    pub span: Vec<usize>,
    /// `sd->groups` in list order: the owner CPU's group first.
    pub groups: Vec<Vec<usize>>,
    /// `sd->imbalance_pct`.
    pub imbalance_pct: u32,
    /// `sd->flags & SD_ASYM_CPUCAPACITY`.
    pub asym_cpucapacity: bool,
}

/// Every CPU's domains, bottom-up (`for_each_domain()` order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchedDomains {
    /// Indexed by CPU.
    pub per_cpu: Vec<Vec<SchedDomain>>,
}

/// The three levels' names and whether their CPUs share capacity
/// (`SD_SHARE_CPUCAPACITY`, which sets `sd_init()`'s imbalance percentage).
const LEVELS: [(&str, bool); 3] = [("SMT", true), ("MC", false), ("PKG", false)];

impl SchedDomains {
    /// The hierarchy of `platform` (see the module doc).
    pub fn of(platform: &Platform) -> SchedDomains {
        let n = platform.cpus.len();
        let span = |level: usize, c: usize| -> Vec<usize> {
            let mut s = match level {
                0 => {
                    let mut s = platform
                        .cpus
                        .get(c)
                        .map_or_else(Vec::new, |cpu| cpu.smt_siblings.clone());
                    s.push(c);
                    s
                }
                1 => platform
                    .cpus
                    .get(c)
                    .and_then(|cpu| platform.clusters.get(cpu.cluster))
                    .cloned()
                    .unwrap_or_else(|| vec![c]),
                _ => (0..n).collect(),
            };
            s.sort_unstable();
            s
        };
        let cap = |c: usize| platform.cpus.get(c).map_or(0, |cpu| cpu.capacity_orig);
        let per_cpu = (0..n)
            .map(|c| {
                let mut doms = Vec::new();
                let mut below = vec![c];
                for (level, &(name, share_cpucapacity)) in LEVELS.iter().enumerate() {
                    let s = span(level, c);
                    if s.len() > 1 && s != below {
                        let child =
                            |i: usize| level.checked_sub(1).map_or_else(|| vec![i], |l| span(l, i));
                        let split = s.partition_point(|&i| i < c);
                        let mut groups: Vec<Vec<usize>> = Vec::new();
                        for &i in s[split..].iter().chain(&s[..split]) {
                            if !groups.iter().any(|g| g.contains(&i)) {
                                groups.push(child(i));
                            }
                        }
                        let asym_cpucapacity = s.iter().any(|&i| cap(i) != cap(c));
                        doms.push(SchedDomain {
                            name,
                            span: s.clone(),
                            groups,
                            imbalance_pct: sd_init_imbalance_pct(share_cpucapacity),
                            asym_cpucapacity,
                        });
                    }
                    below = s;
                }
                doms
            })
            .collect();
        SchedDomains { per_cpu }
    }

    /// `cpu`'s domains, bottom-up (empty for a single-CPU platform or a bad CPU).
    pub fn of_cpu(&self, cpu: usize) -> &[SchedDomain] {
        self.per_cpu.get(cpu).map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(name: &str) -> Platform {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/platforms")
            .join(format!("{name}.toml"));
        Platform::load(&path).expect("shipped platform")
    }

    fn shape(d: &SchedDomains, cpu: usize) -> Vec<(&'static str, Vec<Vec<usize>>, u32, bool)> {
        d.of_cpu(cpu)
            .iter()
            .map(|s| {
                (
                    s.name,
                    s.groups.clone(),
                    s.imbalance_pct,
                    s.asym_cpucapacity,
                )
            })
            .collect()
    }

    #[test]
    fn laptop_smt_then_one_llc() {
        let d = SchedDomains::of(&load("laptop-2c4t"));
        // CPU 1's SMT domain {1,3}; MC spans the 4 CPUs with the cores as groups, CPU 1's
        // core first; PKG spans the same CPUs and is dropped.
        assert_eq!(
            shape(&d, 1),
            vec![
                ("SMT", vec![vec![1], vec![3]], 110, false),
                ("MC", vec![vec![1, 3], vec![0, 2]], 117, false),
            ]
        );
        assert_eq!(d.of_cpu(2)[0].groups, vec![vec![2], vec![0]]);
    }

    #[test]
    fn rk3399_clusters_under_pkg() {
        let d = SchedDomains::of(&load("rk3399"));
        assert_eq!(
            shape(&d, 5),
            vec![
                ("MC", vec![vec![5], vec![4]], 117, false),
                ("PKG", vec![vec![4, 5], vec![0, 1, 2, 3]], 117, true),
            ]
        );
        assert_eq!(
            d.of_cpu(2)[0].groups,
            vec![vec![2], vec![3], vec![0], vec![1]]
        );
    }

    #[test]
    fn orion_o6_is_one_cluster_of_single_cpu_groups() {
        let d = SchedDomains::of(&load("orion-o6"));
        let doms = d.of_cpu(3);
        assert_eq!(doms.len(), 1);
        assert_eq!(doms[0].name, "MC");
        assert!(doms[0].asym_cpucapacity);
        let order: Vec<usize> = doms[0].groups.iter().flatten().copied().collect();
        assert_eq!(order, vec![3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 2]);
        assert!(doms[0].groups.iter().all(|g| g.len() == 1));
    }

    #[test]
    fn pixel6_clusters_are_its_frequency_domains() {
        let d = SchedDomains::of(&load("pixel6"));
        assert_eq!(
            shape(&d, 6),
            vec![
                ("MC", vec![vec![6], vec![7]], 117, false),
                (
                    "PKG",
                    vec![vec![6, 7], vec![0, 1, 2, 3], vec![4, 5]],
                    117,
                    true
                ),
            ]
        );
    }
}
