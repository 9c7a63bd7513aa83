// SPDX-License-Identifier: GPL-2.0-only
//! Behaviour profiles: which kernel version or patch each concern follows.
//!
//! A study compares a patch with its base on one workload; both sides run the same code,
//! and the differences live in one `match` at the point where the kernels differ. The
//! names are the ones in docs/VARIANTS.md and combine with `+`
//! (`ou-lone-task+pelt-hl8`); `mainline` is every concern as in the fixtures' mainline.

use core::fmt;

/// PELT halflife (`LOAD_AVG_PERIOD`): which decay table is used (VARIANTS.md §5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Halflife {
    /// 32 ms, mainline.
    #[default]
    Hl32,
    /// 16 ms.
    Hl16,
    /// 8 ms.
    Hl8,
}

/// util_est_update() shape (kernel/sched/fair.c).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum UtilEstVersion {
    /// Since v6.9: single u32 with the UTIL_AVG_UNCHANGED flag, runnable check.
    #[default]
    Mainline,
    /// v6.6-era: `enqueued`/`ewma` pair, within_margin tests, UTIL_EST_FASTUP.
    PreV6_9,
}

/// When a CPU counts as overutilized (VARIANTS.md §1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum OverutilizedPolicy {
    /// Any CPU whose utilization does not fit its capacity.
    #[default]
    Mainline,
    /// Patch: a max-capacity CPU running exactly one task at full capacity is exempt.
    IgnoreLoneTask,
}

/// schedutil's single-CPU busy filter (VARIANTS.md §2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum BusyFilter {
    /// Mainline since 2021: no hold while the rq is capped by uclamp_max.
    #[default]
    UclampException,
    /// Before the fix: the busy filter holds the frequency even when capped.
    WithoutUclampException,
}

/// How wake-up CPU selection treats CPUs running only SCHED_IDLE tasks (VARIANTS.md §3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum SchedIdleSelect {
    /// Base: a SCHED_IDLE-only CPU is as good as an idle one in fast and slow paths.
    #[default]
    SchedIdleAsIdle,
    /// Patch: the slow path prefers truly idle / least-loaded CPUs.
    IdleFirst,
}

/// cpuidle governor and, for teo, its version (VARIANTS.md §4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum IdleGovernor {
    /// teo as released in v6.6.
    TeoV6_6,
    /// teo in v6.10: util-awareness and recent intercepts.
    TeoV6_10,
    /// teo in v6.12: both removed, no counting of impossible intercepts.
    TeoV6_12,
    /// teo as in current mainline.
    #[default]
    TeoMainline,
    /// The menu governor.
    Menu,
}

/// The fair class's scheduling policy (VARIANTS.md §6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum FairClass {
    /// EEVDF (v6.6+) with delayed dequeue (v6.12), as in the fixtures' mainline.
    #[default]
    Eevdf,
    /// The pre-EEVDF CFS of Linux 6.1 (`sched_slice`, GENTLE_FAIR_SLEEPERS placement,
    /// wake-up granularity; no `group_smt_balance`, no rate limit on tg load updates).
    CfsV6_1,
}

/// Every behaviour switch of the model. `Profile::default()` is mainline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Profile {
    /// PELT decay table.
    pub halflife: Halflife,
    /// PELT multiplier patch: clock_pelt advances `1 << pelt_lshift` times faster (0 = off).
    pub pelt_lshift: u8,
    /// util_est_update() version.
    pub util_est: UtilEstVersion,
    /// Overutilized rule.
    pub overutilized: OverutilizedPolicy,
    /// schedutil busy filter.
    pub busy_filter: BusyFilter,
    /// SCHED_IDLE treatment in wake-up selection.
    pub sched_idle_select: SchedIdleSelect,
    /// cpuidle governor.
    pub idle_governor: IdleGovernor,
    /// Fair class: EEVDF or the 6.1 CFS.
    pub fair: FairClass,
}

/// A profile name that is not in VARIANTS.md, or two names that set the same concern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfileError<'a> {
    /// The part of the name that is not a known profile.
    Unknown(&'a str),
    /// Two parts that both choose the same concern (e.g. `pelt-hl8+pelt-hl16`).
    Conflict(&'a str),
}

impl fmt::Display for ProfileError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unknown(n) => {
                write!(f, "unknown profile `{n}` (known:")?;
                for known in Profile::VARIANTS {
                    write!(f, " {}", known.name)?;
                }
                f.write_str(")")
            }
            Self::Conflict(n) => write!(
                f,
                "profile `{n}` sets a concern an earlier part already set"
            ),
        }
    }
}

/// The concerns a profile sets, one per field of [`Profile`]; two names of one `+`
/// combination may not set the same concern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Concern {
    /// `mainline` sets nothing.
    None,
    /// [`Profile::overutilized`].
    Overutilized,
    /// [`Profile::busy_filter`].
    BusyFilter,
    /// [`Profile::sched_idle_select`].
    SchedIdleSelect,
    /// [`Profile::idle_governor`].
    IdleGovernor,
    /// [`Profile::halflife`].
    Halflife,
    /// [`Profile::pelt_lshift`].
    PeltMultiplier,
    /// [`Profile::util_est`].
    UtilEst,
    /// [`Profile::fair`].
    Fair,
}

impl Concern {
    /// Copies this concern's field from `from` into `to`.
    fn copy(self, from: &Profile, to: &mut Profile) {
        match self {
            Concern::None => {}
            Concern::Overutilized => to.overutilized = from.overutilized,
            Concern::BusyFilter => to.busy_filter = from.busy_filter,
            Concern::SchedIdleSelect => to.sched_idle_select = from.sched_idle_select,
            Concern::IdleGovernor => to.idle_governor = from.idle_governor,
            Concern::Halflife => to.halflife = from.halflife,
            Concern::PeltMultiplier => to.pelt_lshift = from.pelt_lshift,
            Concern::UtilEst => to.util_est = from.util_est,
            Concern::Fair => to.fair = from.fair,
        }
    }

    /// Do `a` and `b` agree on this concern?
    fn same(self, a: &Profile, b: &Profile) -> bool {
        let mut c = *b;
        self.copy(a, &mut c);
        c == *b
    }
}

/// One profile name: the concern it sets, the value it sets it to, where it comes from,
/// and the `variant` a kernel fixture suite's header gives the same behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    /// The name (CLI, study files, JSON).
    pub name: &'static str,
    /// What it sets.
    pub concern: Concern,
    /// [`Profile::MAINLINE`] with that concern set.
    pub profile: Profile,
    /// One line for `--help` and the docs.
    pub about: &'static str,
    /// The fixture suites' `variant` for this behaviour, when a suite has one.
    pub fixture_variant: Option<&'static str>,
}

const M: Profile = Profile::MAINLINE;

impl Profile {
    /// Mainline behaviour for every concern.
    pub const MAINLINE: Profile = Profile {
        halflife: Halflife::Hl32,
        pelt_lshift: 0,
        util_est: UtilEstVersion::Mainline,
        overutilized: OverutilizedPolicy::Mainline,
        busy_filter: BusyFilter::UclampException,
        sched_idle_select: SchedIdleSelect::SchedIdleAsIdle,
        idle_governor: IdleGovernor::TeoMainline,
        fair: FairClass::Eevdf,
    };

    /// Every single profile name, in VARIANTS.md order: the one table parsing, printing,
    /// `--help`, the README list and the fixture-variant mapping are generated from.
    pub const VARIANTS: &'static [Variant] = &[
        Variant {
            name: "mainline",
            concern: Concern::None,
            profile: M,
            about: "every concern as in the fixtures' mainline",
            fixture_variant: Some("mainline"),
        },
        Variant {
            name: "ou-lone-task",
            concern: Concern::Overutilized,
            profile: Profile {
                overutilized: OverutilizedPolicy::IgnoreLoneTask,
                ..M
            },
            about: "overutilized ignores a lone task on a max-capacity CPU (VARIANTS §1)",
            fixture_variant: Some("ou-lone-task"),
        },
        Variant {
            name: "sugov-busy-without-uclamp",
            concern: Concern::BusyFilter,
            profile: Profile {
                busy_filter: BusyFilter::WithoutUclampException,
                ..M
            },
            about: "schedutil's busy filter before the 2021 uclamp_max fix (VARIANTS §2)",
            fixture_variant: Some("busy-filter-without-uclamp-exception"),
        },
        Variant {
            name: "sis-idle-first",
            concern: Concern::SchedIdleSelect,
            profile: Profile {
                sched_idle_select: SchedIdleSelect::IdleFirst,
                ..M
            },
            about: "the fork walk prefers truly idle CPUs to SCHED_IDLE ones (VARIANTS §3)",
            fixture_variant: None,
        },
        Variant {
            name: "teo-v6.6",
            concern: Concern::IdleGovernor,
            profile: Profile {
                idle_governor: IdleGovernor::TeoV6_6,
                ..M
            },
            about: "cpuidle teo as in v6.6 (VARIANTS §4)",
            fixture_variant: Some("v6.6"),
        },
        Variant {
            name: "teo-v6.10",
            concern: Concern::IdleGovernor,
            profile: Profile {
                idle_governor: IdleGovernor::TeoV6_10,
                ..M
            },
            about: "teo with util-awareness and recent intercepts (v6.10)",
            fixture_variant: Some("v6.10"),
        },
        Variant {
            name: "teo-v6.12",
            concern: Concern::IdleGovernor,
            profile: Profile {
                idle_governor: IdleGovernor::TeoV6_12,
                ..M
            },
            about: "teo after the mid-2024 fixes (v6.12)",
            fixture_variant: Some("v6.12"),
        },
        Variant {
            name: "teo-mainline",
            concern: Concern::IdleGovernor,
            profile: Profile {
                idle_governor: IdleGovernor::TeoMainline,
                ..M
            },
            about: "teo as in current mainline (the default)",
            fixture_variant: Some("mainline"),
        },
        Variant {
            name: "menu",
            concern: Concern::IdleGovernor,
            profile: Profile {
                idle_governor: IdleGovernor::Menu,
                ..M
            },
            about: "the menu cpuidle governor",
            fixture_variant: None,
        },
        Variant {
            name: "pelt-hl16",
            concern: Concern::Halflife,
            profile: Profile {
                halflife: Halflife::Hl16,
                ..M
            },
            about: "PELT halflife 16 ms (VARIANTS §5)",
            fixture_variant: Some("hl16"),
        },
        Variant {
            name: "pelt-hl8",
            concern: Concern::Halflife,
            profile: Profile {
                halflife: Halflife::Hl8,
                ..M
            },
            about: "PELT halflife 8 ms",
            fixture_variant: Some("hl8"),
        },
        Variant {
            name: "pelt-mult2",
            concern: Concern::PeltMultiplier,
            profile: Profile {
                pelt_lshift: 1,
                ..M
            },
            about: "PELT multiplier: clock_pelt runs 2x",
            fixture_variant: None,
        },
        Variant {
            name: "pelt-mult4",
            concern: Concern::PeltMultiplier,
            profile: Profile {
                pelt_lshift: 2,
                ..M
            },
            about: "PELT multiplier: clock_pelt runs 4x",
            fixture_variant: None,
        },
        Variant {
            name: "util-est-pre-v6.9",
            concern: Concern::UtilEst,
            profile: Profile {
                util_est: UtilEstVersion::PreV6_9,
                ..M
            },
            about: "util_est's enqueued/ewma pair before v6.9",
            fixture_variant: None,
        },
        Variant {
            name: "fair-cfs",
            concern: Concern::Fair,
            profile: Profile {
                fair: FairClass::CfsV6_1,
                ..M
            },
            about: "the pre-EEVDF CFS of Linux 6.1 (VARIANTS §6)",
            fixture_variant: Some("cfs-v6.1"),
        },
    ];

    /// The row of a single name.
    pub fn variant(name: &str) -> Option<&'static Variant> {
        Self::VARIANTS.iter().find(|v| v.name == name)
    }

    /// Parses `name[+name...]`; each part changes one concern of mainline.
    pub fn from_name(name: &str) -> Result<Profile, ProfileError<'_>> {
        let mut p = Profile::MAINLINE;
        // Each concern once, so `pelt-hl8+pelt-hl16` is refused rather than last-wins.
        let mut set: [Concern; 9] = [Concern::None; 9];
        let mut n = 0;
        for part in name.split('+') {
            let part = part.trim();
            let v = Self::variant(part).ok_or(ProfileError::Unknown(part))?;
            if v.concern != Concern::None {
                if set.iter().take(n).any(|c| *c == v.concern) {
                    return Err(ProfileError::Conflict(part));
                }
                if let Some(slot) = set.get_mut(n) {
                    *slot = v.concern;
                    n += 1;
                }
            }
            v.concern.copy(&v.profile, &mut p);
        }
        Ok(p)
    }

    /// The profile a kernel fixture suite's header `variant` names (`mainline`, `v6.10`,
    /// `hl16`, `busy-filter-without-uclamp-exception`, ...), for suites of `concern`.
    pub fn from_fixture_variant(concern: Concern, variant: &str) -> Option<Profile> {
        Self::VARIANTS
            .iter()
            .find(|v| {
                v.fixture_variant == Some(variant)
                    && (v.concern == concern || v.concern == Concern::None)
            })
            .map(|v| v.profile)
    }

    /// The single name this profile has for `concern` (`teo-mainline` for the default
    /// idle governor), or None when the table has none.
    pub fn name_of(&self, concern: Concern) -> Option<&'static str> {
        Self::VARIANTS
            .iter()
            .find(|v| v.concern == concern && concern.same(&v.profile, self))
            .map(|v| v.name)
    }
}

impl IdleGovernor {
    /// The profile name of this governor (`teo-v6.10`, `menu`, ...).
    pub fn name(self) -> &'static str {
        Profile {
            idle_governor: self,
            ..Profile::MAINLINE
        }
        .name_of(Concern::IdleGovernor)
        .unwrap_or("teo-mainline")
    }
}

impl fmt::Display for Profile {
    /// The canonical `+`-joined name; `mainline` when nothing differs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for v in Self::VARIANTS {
            let differs = !v.concern.same(self, &Profile::MAINLINE);
            if v.concern != Concern::None && differs && v.concern.same(&v.profile, self) {
                if !first {
                    f.write_str("+")?;
                }
                f.write_str(v.name)?;
                first = false;
            }
        }
        if first {
            f.write_str("mainline")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::fmt::Write as _;

    fn text(p: &Profile) -> heapless::String<96> {
        let mut s = heapless::String::new();
        let _ = write!(s, "{p}");
        s
    }

    #[test]
    fn names_combine_with_plus() {
        let p = Profile::from_name("ou-lone-task+pelt-hl8").unwrap();
        assert_eq!(p.overutilized, OverutilizedPolicy::IgnoreLoneTask);
        assert_eq!(p.halflife, Halflife::Hl8);
        assert_eq!(p.idle_governor, IdleGovernor::TeoMainline);
    }

    #[test]
    fn every_single_name_parses() {
        for v in Profile::VARIANTS {
            assert_eq!(Profile::from_name(v.name), Ok(v.profile), "{}", v.name);
            if v.concern != Concern::None && v.profile != Profile::MAINLINE {
                assert_eq!(text(&v.profile), v.name);
            }
        }
        assert_eq!(Profile::from_name("mainline"), Ok(Profile::default()));
    }

    #[test]
    fn unknown_and_conflicting_names_are_refused() {
        assert_eq!(
            Profile::from_name("pelt-hl4"),
            Err(ProfileError::Unknown("pelt-hl4"))
        );
        assert_eq!(
            Profile::from_name("pelt-hl8+pelt-hl16"),
            Err(ProfileError::Conflict("pelt-hl16"))
        );
        assert_eq!(
            Profile::from_name("menu+teo-v6.6"),
            Err(ProfileError::Conflict("teo-v6.6"))
        );
    }

    #[test]
    fn display_is_the_canonical_combination() {
        let p = Profile::from_name("pelt-hl8+ou-lone-task+teo-mainline").unwrap();
        assert_eq!(text(&p), "ou-lone-task+pelt-hl8");
        assert_eq!(text(&Profile::MAINLINE), "mainline");
        assert_eq!(IdleGovernor::TeoMainline.name(), "teo-mainline");
        assert_eq!(IdleGovernor::TeoV6_10.name(), "teo-v6.10");
        assert_eq!(Profile::MAINLINE.name_of(Concern::Halflife), None);
    }

    #[test]
    fn fixture_variants_map_to_profiles() {
        let old = Profile::from_name("sugov-busy-without-uclamp").unwrap();
        assert_eq!(
            Profile::from_fixture_variant(
                Concern::BusyFilter,
                "busy-filter-without-uclamp-exception"
            ),
            Some(old)
        );
        assert_eq!(
            Profile::from_fixture_variant(Concern::IdleGovernor, "v6.10").map(|p| p.idle_governor),
            Some(IdleGovernor::TeoV6_10)
        );
        assert_eq!(
            Profile::from_fixture_variant(Concern::IdleGovernor, "mainline"),
            Some(Profile::MAINLINE)
        );
        assert_eq!(
            Profile::from_fixture_variant(Concern::Halflife, "v6.10"),
            None
        );
    }
}
