// SPDX-License-Identifier: GPL-2.0-only
//! The Energy Model — kernel/power/energy_model.c and include/linux/energy_model.h.
//!
//! A performance domain's table lists its OPPs (frequency kHz, power µW). Each state's
//! performance is the CPU capacity scaled linearly by frequency,
//! `capacity * f / f_max`, and its cost `10 * power / performance` is the energy per unit
//! of work (×10 for resolution); walking from the top state down, a state that costs at
//! least as much as some faster state is *inefficient* — never worth picking. EAS
//! estimates a domain's energy as the cost of the state schedutil would pick for its
//! busiest CPU times the domain's summed utilization.

/// Largest number of performance states a table here holds.
///
/// The kernel has no such limit (it allocates `nr_states` entries); real CPU tables have
/// 5..32 OPPs (RK3399 6 and 8, Pixel 6 up to 17, MediaTek Dimensity parts 32). One
/// state per OPP of the largest cpufreq table here, [`crate::cpufreq::CPUFREQ_TABLE_MAX`]
/// = 64, twice the largest real table, at 40 bytes a state (2.5 KiB a table) on a
/// microcontroller. A longer table is refused by its reader, naming this limit.
pub const EM_MAX_PERF_STATES: usize = crate::cpufreq::CPUFREQ_TABLE_MAX;

/// `EM_MAX_POWER`: the largest power a state may have, in µW (64 W).
pub const EM_MAX_POWER: u64 = 64_000_000;

/// `EM_PERF_STATE_INEFFICIENT`: state flag, a faster state costs no more.
pub const EM_PERF_STATE_INEFFICIENT: u64 = 1 << 0;

/// `EM_PERF_DOMAIN_MICROWATTS`: domain flag, power values are µW.
pub const EM_PERF_DOMAIN_MICROWATTS: u64 = 1 << 0;

/// `EM_PERF_DOMAIN_SKIP_INEFFICIENCIES`: domain flag, never pick an inefficient state.
pub const EM_PERF_DOMAIN_SKIP_INEFFICIENCIES: u64 = 1 << 1;

/// `struct em_perf_state`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct EmPerfState {
    /// `performance`: capacity at this frequency.
    pub performance: u64,
    /// `frequency` in kHz.
    pub frequency: u64,
    /// `power` in µW.
    pub power: u64,
    /// `cost`: `10 * power / performance`.
    pub cost: u64,
    /// `flags` ([`EM_PERF_STATE_INEFFICIENT`]).
    pub flags: u64,
}

/// A performance domain's table.
pub type EmTable = heapless::Vec<EmPerfState, EM_MAX_PERF_STATES>;

/// `struct em_perf_domain` with its table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct EmPerfDomain {
    /// `em_table->state[]`, ascending frequency.
    pub table: EmTable,
    /// `flags` ([`EM_PERF_DOMAIN_MICROWATTS`], [`EM_PERF_DOMAIN_SKIP_INEFFICIENCIES`]).
    pub flags: u64,
    /// `min_perf_state`: lowest state allowed by the frequency limits.
    pub min_perf_state: usize,
    /// `max_perf_state`: highest state allowed.
    pub max_perf_state: usize,
}

/// Why a table was refused (the kernel's -EINVAL, with the reason and state index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum EmError {
    /// No state at all.
    Empty,
    /// State `i`'s frequency is not above the previous one (the first must be above 0).
    NonIncreasingFreq(usize),
    /// State `i`'s power is 0 or above [`EM_MAX_POWER`].
    InvalidPower(usize),
    /// State `i`'s performance is 0, so its cost would divide by zero (a kernel trap).
    ZeroPerformance(usize),
    /// Frequency limits not found in the table, or max below min.
    InvalidLimits,
}

impl EmError {
    /// The kernel's return value for every refusal, `-EINVAL`.
    pub const EINVAL: i32 = -22;
}

/// `em_init_performance()`: `performance = max_cap * frequency / f_max` for every state,
/// `f_max` the last state's frequency (64-bit, the product wraps). An empty table or a
/// zero `f_max` leaves the table as is.
pub fn em_init_performance(table: &mut [EmPerfState], max_cap: u64) {
    let Some(fmax) = table.last().map(|s| s.frequency) else {
        return;
    };
    for s in table.iter_mut() {
        if let Some(p) = max_cap.wrapping_mul(s.frequency).checked_div(fmax) {
            s.performance = p;
        }
    }
}

/// `em_compute_costs()`: `cost = power * 10 / performance`, from the highest state down,
/// marking inefficient states.
///
/// Traps: a cost *equal* to the lowest cost above is inefficient too (cost ties); an
/// inefficient state's flag word is *assigned* [`EM_PERF_STATE_INEFFICIENT`], losing any
/// other bit, while an efficient state keeps its flags untouched (a stale inefficient bit
/// is never cleared); performance 0 is refused ([`EmError::ZeroPerformance`]) where the
/// kernel would divide by zero.
pub fn em_compute_costs(table: &mut [EmPerfState]) -> Result<(), EmError> {
    let mut prev_cost = u64::MAX;
    for (i, s) in table.iter_mut().enumerate().rev() {
        let power_res = s.power.wrapping_mul(10);
        s.cost = power_res
            .checked_div(s.performance)
            .ok_or(EmError::ZeroPerformance(i))?;
        if s.cost >= prev_cost {
            s.flags = EM_PERF_STATE_INEFFICIENT;
        } else {
            prev_cost = s.cost;
        }
    }
    Ok(())
}

/// `em_create_perf_table()`: validate the states (frequency, power and prior flags filled
/// in, as the driver callback and the copied table give them), then compute performance
/// for a CPU of capacity `cpu_capacity` and the costs.
///
/// Validation walks up from state 0 and stops at the first bad state; for each, the
/// frequency test (`frequency <= previous`, previous starting at 0) comes before the power
/// test (0 or above [`EM_MAX_POWER`]).
pub fn em_create_perf_table(table: &mut [EmPerfState], cpu_capacity: u64) -> Result<(), EmError> {
    if table.is_empty() {
        return Err(EmError::Empty);
    }
    let mut prev_freq = 0;
    for (i, s) in table.iter().enumerate() {
        if s.frequency <= prev_freq {
            return Err(EmError::NonIncreasingFreq(i));
        }
        if s.power == 0 || s.power > EM_MAX_POWER {
            return Err(EmError::InvalidPower(i));
        }
        prev_freq = s.frequency;
    }
    em_init_performance(table, cpu_capacity);
    em_compute_costs(table)
}

/// `em_pd_get_efficient_state()`: the first state in `[min_perf_state, max_perf_state]`
/// whose performance reaches `max_util`, skipping inefficient states when the domain says
/// so; `max_perf_state` when none does.
///
/// Trap: the fallback is `max_perf_state` even when it is inefficient or beyond the table.
#[inline] // static inline in include/linux/energy_model.h
pub fn em_pd_get_efficient_state(pd: &EmPerfDomain, max_util: u64) -> usize {
    efficient_state(pd, max_util).0
}

/// [`em_pd_get_efficient_state`] with the chosen state's entry (`None` past the table),
/// so [`em_cpu_energy`] reads its cost without indexing the table again.
#[inline(always)]
fn efficient_state(pd: &EmPerfDomain, max_util: u64) -> (usize, Option<&EmPerfState>) {
    let skip = pd.flags & EM_PERF_DOMAIN_SKIP_INEFFICIENCIES != 0;
    // States min..=max that exist in the table, as one slice (no per-state bounds check).
    let end = core::cmp::min(pd.max_perf_state.saturating_add(1), pd.table.len());
    if let Some(states) = pd.table.get(pd.min_perf_state..end) {
        for (k, ps) in states.iter().enumerate() {
            if ps.performance >= max_util {
                if skip && ps.flags & EM_PERF_STATE_INEFFICIENT != 0 {
                    continue;
                }
                return (pd.min_perf_state + k, Some(ps));
            }
        }
    }
    (pd.max_perf_state, pd.table.get(pd.max_perf_state))
}

/// What [`em_cpu_energy`] returns: the energy and the state it used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct EmCpuEnergy {
    /// The kernel's return value: `cost * sum_util` (64-bit, wrapping).
    pub energy: u64,
    /// The chosen state; `None` when `sum_util` is 0 (no state is looked up).
    pub perf_state: Option<usize>,
}

/// `em_cpu_energy()`: estimated energy of a performance domain whose busiest CPU has
/// `max_util` (with headroom already applied by the caller) and whose CPUs sum to
/// `sum_util`, with performance capped at `allowed_cpu_cap`.
///
/// Traps: 0 without looking anything up when `sum_util` is 0; `max_util` is clamped to
/// `allowed_cpu_cap` before the lookup; `cost * sum_util` wraps. A chosen state beyond the
/// table (bad limits) gives energy 0 here where the kernel would read past it.
#[inline] // static inline in include/linux/energy_model.h
pub fn em_cpu_energy(
    pd: &EmPerfDomain,
    max_util: u64,
    sum_util: u64,
    allowed_cpu_cap: u64,
) -> EmCpuEnergy {
    if sum_util == 0 {
        return EmCpuEnergy::default();
    }
    let max_util = core::cmp::min(max_util, allowed_cpu_cap);
    let (i, ps) = efficient_state(pd, max_util);
    EmCpuEnergy {
        energy: ps.map_or(0, |ps| ps.cost.wrapping_mul(sum_util)),
        perf_state: Some(i),
    }
}

/// `em_update_performance_limits()`: set the domain's allowed state range from frequency
/// limits that must match table frequencies exactly.
///
/// Traps: the scan keeps overwriting, so with a repeated frequency the *last* matching
/// index wins; a missing limit or max below min is refused and changes nothing.
pub fn em_update_performance_limits(
    pd: &mut EmPerfDomain,
    freq_min_khz: u64,
    freq_max_khz: u64,
) -> Result<(), EmError> {
    let mut min_ps = None;
    let mut max_ps = None;
    for (i, s) in pd.table.iter().enumerate() {
        if freq_min_khz == s.frequency {
            min_ps = Some(i);
        }
        if freq_max_khz == s.frequency {
            max_ps = Some(i);
        }
    }
    match (min_ps, max_ps) {
        (Some(lo), Some(hi)) if hi >= lo => {
            pd.min_perf_state = lo;
            pd.max_perf_state = hi;
            Ok(())
        }
        _ => Err(EmError::InvalidLimits),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn states(freq: &[u64], power: &[u64]) -> EmTable {
        freq.iter()
            .zip(power)
            .map(|(&frequency, &power)| EmPerfState {
                frequency,
                power,
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn rk3399_a53_lowest_opp_is_inefficient() {
        let mut t = states(
            &[408_000, 600_000, 816_000, 1_008_000, 1_200_000, 1_416_000],
            &[27_769, 40_837, 58_956, 86_247, 120_000, 179_212],
        );
        em_create_perf_table(&mut t, 381).unwrap();
        let perf: heapless::Vec<u64, 8> = t.iter().map(|s| s.performance).collect();
        let cost: heapless::Vec<u64, 8> = t.iter().map(|s| s.cost).collect();
        let flags: heapless::Vec<u64, 8> = t.iter().map(|s| s.flags).collect();
        assert_eq!(perf.as_slice(), &[109, 161, 219, 271, 322, 381]);
        assert_eq!(cost.as_slice(), &[2547, 2536, 2692, 3182, 3726, 4703]);
        assert_eq!(flags.as_slice(), &[1, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn cost_ties_are_inefficient() {
        // Both states cost 10 * 100 / 512 = 1 and 10 * 200 / 1024 = 1: the lower ties.
        let mut t = states(&[1_000, 2_000], &[100, 200]);
        em_create_perf_table(&mut t, 1024).unwrap();
        assert_eq!((t[0].cost, t[1].cost), (1, 1));
        assert_eq!((t[0].flags, t[1].flags), (EM_PERF_STATE_INEFFICIENT, 0));
    }

    #[test]
    fn inefficient_flag_is_assigned_efficient_flags_kept() {
        // perf 341/682/1024, costs 8/5/8: state 0 is inefficient, 1 and 2 efficient.
        let mut t = states(&[1_000, 2_000, 3_000], &[300, 400, 900]);
        t[0].flags = 0xf0;
        t[1].flags = 0x0f; // stale inefficient bit on an efficient state stays
        em_create_perf_table(&mut t, 1024).unwrap();
        assert_eq!([t[0].flags, t[1].flags, t[2].flags], [1, 0x0f, 0]);
    }

    #[test]
    fn create_checks_frequency_before_power_state_by_state() {
        let mut t = states(&[1_000, 1_000], &[0, 0]);
        assert_eq!(
            em_create_perf_table(&mut t, 1024),
            Err(EmError::InvalidPower(0))
        );
        let mut t = states(&[1_000, 900], &[10, 0]);
        assert_eq!(
            em_create_perf_table(&mut t, 1024),
            Err(EmError::NonIncreasingFreq(1))
        );
        let mut t = states(&[0], &[10]);
        assert_eq!(
            em_create_perf_table(&mut t, 1024),
            Err(EmError::NonIncreasingFreq(0))
        );
        let mut t = states(&[1_000], &[EM_MAX_POWER + 1]);
        assert_eq!(
            em_create_perf_table(&mut t, 1024),
            Err(EmError::InvalidPower(0))
        );
        let mut t = states(&[1_000], &[EM_MAX_POWER]);
        assert_eq!(em_create_perf_table(&mut t, 1024), Ok(()));
    }

    #[test]
    fn zero_performance_is_an_error_not_a_trap() {
        // capacity 1: the 1 kHz state of a 2 kHz table has performance 0.
        let mut t = states(&[1, 2], &[10, 20]);
        assert_eq!(
            em_create_perf_table(&mut t, 1),
            Err(EmError::ZeroPerformance(0))
        );
    }

    fn pd() -> EmPerfDomain {
        let mut table = states(&[500, 1_000, 1_500, 2_000], &[100, 150, 400, 900]);
        em_create_perf_table(&mut table, 1024).unwrap();
        EmPerfDomain {
            table,
            flags: EM_PERF_DOMAIN_MICROWATTS,
            min_perf_state: 0,
            max_perf_state: 3,
        }
    }

    #[test]
    fn em_pd_get_efficient_state_first_state_covering_util_in_limits() {
        let mut pd = pd(); // performance 256, 512, 768, 1024
        assert_eq!(em_pd_get_efficient_state(&pd, 0), 0);
        assert_eq!(em_pd_get_efficient_state(&pd, 256), 0);
        assert_eq!(em_pd_get_efficient_state(&pd, 257), 1);
        assert_eq!(em_pd_get_efficient_state(&pd, 5000), 3);
        pd.min_perf_state = 2;
        assert_eq!(em_pd_get_efficient_state(&pd, 10), 2);
        // A max_perf_state past the table is still the fallback (the kernel's trap).
        pd.max_perf_state = 7;
        assert_eq!(em_pd_get_efficient_state(&pd, 5000), 7);
    }

    #[test]
    fn em_cpu_energy_zero_sum_util_returns_zero_without_state() {
        assert_eq!(em_cpu_energy(&pd(), 500, 0, 1024), EmCpuEnergy::default());
    }

    #[test]
    fn em_cpu_energy_clamps_max_util_to_allowed_capacity() {
        let pd = pd();
        // 900 needs state 3 (1024), but the cap 600 allows state 2 (768).
        let e = em_cpu_energy(&pd, 900, 100, 600);
        assert_eq!(e.perf_state, Some(2));
        assert_eq!(e.energy, pd.table[2].cost * 100);
    }

    #[test]
    fn em_cpu_energy_skips_inefficient_only_with_domain_flag() {
        let mut pd = pd();
        pd.table[1].flags = EM_PERF_STATE_INEFFICIENT;
        assert_eq!(em_cpu_energy(&pd, 400, 1, 1024).perf_state, Some(1));
        pd.flags |= EM_PERF_DOMAIN_SKIP_INEFFICIENCIES;
        assert_eq!(em_cpu_energy(&pd, 400, 1, 1024).perf_state, Some(2));
    }

    #[test]
    fn em_cpu_energy_falls_back_to_max_perf_state() {
        let mut pd = pd();
        pd.max_perf_state = 1;
        assert_eq!(em_cpu_energy(&pd, 1000, 1, 1024).perf_state, Some(1));
    }

    #[test]
    fn em_cpu_energy_product_wraps() {
        let mut pd = pd();
        pd.table[0].cost = u64::MAX / 2;
        let e = em_cpu_energy(&pd, 1, 3, 1024);
        assert_eq!(e.energy, (u64::MAX / 2).wrapping_mul(3));
    }

    #[test]
    fn performance_limits_last_duplicate_wins_and_bad_limits_change_nothing() {
        let mut pd = EmPerfDomain {
            table: states(&[500, 1_000, 500, 1_000], &[1, 1, 1, 1]),
            max_perf_state: 3,
            ..Default::default()
        };
        assert_eq!(em_update_performance_limits(&mut pd, 500, 1_000), Ok(()));
        assert_eq!((pd.min_perf_state, pd.max_perf_state), (2, 3));
        assert_eq!(
            em_update_performance_limits(&mut pd, 1_000, 500),
            Err(EmError::InvalidLimits)
        );
        assert_eq!(
            em_update_performance_limits(&mut pd, 501, 1_000),
            Err(EmError::InvalidLimits)
        );
        assert_eq!((pd.min_perf_state, pd.max_perf_state), (2, 3));
    }
}
