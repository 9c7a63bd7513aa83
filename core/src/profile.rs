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
                for known in Profile::NAMES {
                    write!(f, " {known}")?;
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

impl Profile {
    /// Every single profile name, in VARIANTS.md order.
    pub const NAMES: &'static [&'static str] = &[
        "mainline",
        "ou-lone-task",
        "sugov-busy-without-uclamp",
        "sis-idle-first",
        "teo-v6.6",
        "teo-v6.10",
        "teo-v6.12",
        "teo-mainline",
        "menu",
        "pelt-hl16",
        "pelt-hl8",
        "pelt-mult2",
        "pelt-mult4",
        "util-est-pre-v6.9",
        "fair-cfs",
    ];

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

    /// Parses `name[+name...]`; each part changes one concern of mainline.
    pub fn from_name(name: &str) -> Result<Profile, ProfileError<'_>> {
        let mut p = Profile::MAINLINE;
        // Bit per concern, so `pelt-hl8+pelt-hl16` is refused rather than last-wins.
        let mut set = 0u16;
        for part in name.split('+') {
            let part = part.trim();
            let concern = match part {
                "mainline" => 0,
                "ou-lone-task" => {
                    p.overutilized = OverutilizedPolicy::IgnoreLoneTask;
                    1
                }
                "sugov-busy-without-uclamp" => {
                    p.busy_filter = BusyFilter::WithoutUclampException;
                    2
                }
                "sis-idle-first" => {
                    p.sched_idle_select = SchedIdleSelect::IdleFirst;
                    3
                }
                "teo-v6.6" | "teo-v6.10" | "teo-v6.12" | "teo-mainline" | "menu" => {
                    p.idle_governor = match part {
                        "teo-v6.6" => IdleGovernor::TeoV6_6,
                        "teo-v6.10" => IdleGovernor::TeoV6_10,
                        "teo-v6.12" => IdleGovernor::TeoV6_12,
                        "menu" => IdleGovernor::Menu,
                        _ => IdleGovernor::TeoMainline,
                    };
                    4
                }
                "pelt-hl16" | "pelt-hl8" => {
                    p.halflife = if part == "pelt-hl8" {
                        Halflife::Hl8
                    } else {
                        Halflife::Hl16
                    };
                    5
                }
                "pelt-mult2" | "pelt-mult4" => {
                    p.pelt_lshift = if part == "pelt-mult4" { 2 } else { 1 };
                    6
                }
                "util-est-pre-v6.9" => {
                    p.util_est = UtilEstVersion::PreV6_9;
                    7
                }
                "fair-cfs" => {
                    p.fair = FairClass::CfsV6_1;
                    8
                }
                _ => return Err(ProfileError::Unknown(part)),
            };
            if concern != 0 {
                if set & (1 << concern) != 0 {
                    return Err(ProfileError::Conflict(part));
                }
                set |= 1 << concern;
            }
        }
        Ok(p)
    }
}

impl fmt::Display for Profile {
    /// The canonical `+`-joined name; `mainline` when nothing differs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts = [
            (self.overutilized == OverutilizedPolicy::IgnoreLoneTask).then_some("ou-lone-task"),
            (self.busy_filter == BusyFilter::WithoutUclampException)
                .then_some("sugov-busy-without-uclamp"),
            (self.sched_idle_select == SchedIdleSelect::IdleFirst).then_some("sis-idle-first"),
            match self.idle_governor {
                IdleGovernor::TeoV6_6 => Some("teo-v6.6"),
                IdleGovernor::TeoV6_10 => Some("teo-v6.10"),
                IdleGovernor::TeoV6_12 => Some("teo-v6.12"),
                IdleGovernor::TeoMainline => None,
                IdleGovernor::Menu => Some("menu"),
            },
            match self.halflife {
                Halflife::Hl32 => None,
                Halflife::Hl16 => Some("pelt-hl16"),
                Halflife::Hl8 => Some("pelt-hl8"),
            },
            match self.pelt_lshift {
                0 => None,
                1 => Some("pelt-mult2"),
                _ => Some("pelt-mult4"),
            },
            (self.util_est == UtilEstVersion::PreV6_9).then_some("util-est-pre-v6.9"),
            (self.fair == FairClass::CfsV6_1).then_some("fair-cfs"),
        ];
        let mut first = true;
        for p in parts.into_iter().flatten() {
            if !first {
                f.write_str("+")?;
            }
            f.write_str(p)?;
            first = false;
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

    #[test]
    fn names_combine_with_plus() {
        let p = Profile::from_name("ou-lone-task+pelt-hl8").unwrap();
        assert_eq!(p.overutilized, OverutilizedPolicy::IgnoreLoneTask);
        assert_eq!(p.halflife, Halflife::Hl8);
        assert_eq!(p.idle_governor, IdleGovernor::TeoMainline);
    }

    #[test]
    fn every_single_name_parses() {
        for n in Profile::NAMES {
            assert!(Profile::from_name(n).is_ok(), "{n}");
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
}
