// SPDX-License-Identifier: GPL-2.0-only
//! CPU capacity from the device tree, frequency scale and capacity pressure —
//! drivers/base/arch_topology.c (plus `cpufreq_update_pressure()` of
//! drivers/cpufreq/cpufreq.c, which computes its pressure the same way).
//!
//! Each CPU's raw capacity is its `capacity-dmips-mhz` times its reference (max)
//! frequency; the largest product becomes 1024 and every CPU gets its share of it
//! (`cpu_scale`). Frequency invariance scales by `cur / max` in the same 1024 fixed
//! point. A frequency cap (thermal or a cpufreq policy max) becomes a "pressure": the
//! capacity lost to it, via the kernel's overflow-avoiding `mult_frac()`.

use crate::math::SCHED_CAPACITY_SHIFT;

/// The largest CPU count the fixed-size tables here hold (the kernel's `NR_CPUS` is a
/// build option; asymmetric-capacity systems, where these tables matter, have 6..16 CPUs).
///
/// 64 covers every shipped platform (12 CPUs at most) and today's big.LITTLE and hybrid
/// parts four times over, at 8 bytes a CPU per table on a microcontroller. More CPUs are
/// refused with [`TopologyError::TooManyCpus`], naming this limit.
pub const NR_CPUS: usize = 64;

/// Why a topology could not be normalised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TopologyError {
    /// More than [`NR_CPUS`] CPUs.
    TooManyCpus,
    /// `capacity_dmips_mhz` and `capacity_freq_ref` have different lengths.
    LengthMismatch,
}

/// `topology_normalize_cpu_scale()`: per-CPU `cpu_scale` from each CPU's
/// `capacity-dmips-mhz` (a u32) and reference frequency (kHz).
///
/// Each CPU's product is `dmips * (freq_ref ?: 1)` (64-bit, wrapping); the scale is the
/// largest product, at least 1; each CPU gets `(product << 10) / scale`.
/// Traps: a 0 reference frequency counts as 1 (not 0); the `<< 10` is done in 64 bits and
/// can wrap for products above 2^54, giving a capacity far below 1024 even for the
/// biggest CPU; a 0 dmips gives capacity 0.
pub fn topology_normalize_cpu_scale(
    capacity_dmips_mhz: &[u32],
    capacity_freq_ref: &[u64],
) -> Result<heapless::Vec<u64, NR_CPUS>, TopologyError> {
    if capacity_dmips_mhz.len() != capacity_freq_ref.len() {
        return Err(TopologyError::LengthMismatch);
    }
    if capacity_dmips_mhz.len() > NR_CPUS {
        return Err(TopologyError::TooManyCpus);
    }
    let raw = |i: usize| -> u64 {
        let dmips = u64::from(capacity_dmips_mhz.get(i).copied().unwrap_or(0));
        let freq = capacity_freq_ref.get(i).copied().unwrap_or(0);
        dmips.wrapping_mul(if freq == 0 { 1 } else { freq })
    };
    let n = capacity_dmips_mhz.len();
    let capacity_scale = (0..n).map(raw).fold(1, core::cmp::max);
    let mut out = heapless::Vec::new();
    for i in 0..n {
        // capacity_scale >= 1, so the division cannot fail.
        let cap = (raw(i) << SCHED_CAPACITY_SHIFT) / capacity_scale;
        out.push(cap).map_err(|_| TopologyError::TooManyCpus)?;
    }
    Ok(out)
}

/// `topology_set_freq_scale()`: the new per-CPU `arch_freq_scale`,
/// `(cur_freq << 10) / max_freq`.
///
/// Traps: a 0 `cur_freq` or `max_freq` (a kernel WARN), or frequency-invariance counters
/// being in charge (`scale_freq_counters`), keep the previous scale; `cur_freq > max_freq`
/// gives a scale above 1024, kept as is; the shift wraps in 64 bits.
pub fn topology_set_freq_scale(
    prev_freq_scale: u64,
    cur_freq: u64,
    max_freq: u64,
    scale_freq_counters: bool,
) -> u64 {
    if cur_freq == 0 || max_freq == 0 || scale_freq_counters {
        return prev_freq_scale;
    }
    (cur_freq << SCHED_CAPACITY_SHIFT) / max_freq
}

/// `mult_frac(x, n, d)` (include/linux/math.h): `x * n / d` computed as
/// `(x / d) * n + (x % d) * n / d` to avoid the big product; both products wrap.
/// A 0 `d` (a kernel trap) yields `None`.
#[inline]
pub fn mult_frac(x: u64, n: u64, d: u64) -> Option<u64> {
    let q = x.checked_div(d)?;
    let r = x.checked_rem(d)?;
    Some(q.wrapping_mul(n).wrapping_add(r.wrapping_mul(n) / d))
}

/// Capacity left when the CPU is capped at `capped_freq`: `mult_frac(cap, capped, ref)`,
/// or the whole capacity when the cap is at or above the reference frequency.
///
/// The reference frequency is read into a `u32`, as both callers do
/// (`arch_scale_freq_ref()` stored into a `u32 max_freq`).
fn capped_capacity(capacity_orig: u64, capacity_freq_ref: u64, capped_freq: u64) -> u64 {
    let max_freq = u64::from(capacity_freq_ref as u32); // kernel keeps a u32 copy
    if max_freq <= capped_freq {
        return capacity_orig;
    }
    // max_freq > capped_freq >= 0, so the divisor is not zero.
    mult_frac(capacity_orig, capped_freq, max_freq).unwrap_or(capacity_orig)
}

/// `topology_update_hw_pressure()`: the hardware (thermal) pressure of a CPU capped at
/// `capped_freq` kHz: `capacity_orig - mult_frac(capacity_orig, capped, freq_ref)`.
///
/// Traps: the reference frequency is truncated to 32 bits first; a cap at or above it
/// (boost frequencies) gives 0, and so does a 0 reference.
pub fn topology_update_hw_pressure(
    capacity_orig: u64,
    capacity_freq_ref: u64,
    capped_freq: u64,
) -> u64 {
    capacity_orig.wrapping_sub(capped_capacity(
        capacity_orig,
        capacity_freq_ref,
        capped_freq,
    ))
}

/// `cpufreq_update_pressure()` (drivers/cpufreq/cpufreq.c): the pressure of a cpufreq
/// policy whose max is `policy_max` kHz, computed exactly as
/// [`topology_update_hw_pressure`] (u32 reference, 0 at or above it).
pub fn cpufreq_update_pressure(capacity_orig: u64, capacity_freq_ref: u64, policy_max: u32) -> u64 {
    topology_update_hw_pressure(capacity_orig, capacity_freq_ref, u64::from(policy_max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_rk3399_gives_381_and_1024() {
        let cap = topology_normalize_cpu_scale(
            &[485, 485, 485, 485, 1024, 1024],
            &[
                1_416_000, 1_416_000, 1_416_000, 1_416_000, 1_800_000, 1_800_000,
            ],
        )
        .unwrap();
        assert_eq!(cap.as_slice(), &[381, 381, 381, 381, 1024, 1024]);
    }

    #[test]
    fn normalize_zero_freq_ref_counts_as_one() {
        // Products 512*1 and 1024*1: plain dmips ratio.
        let cap = topology_normalize_cpu_scale(&[512, 1024], &[0, 0]).unwrap();
        assert_eq!(cap.as_slice(), &[512, 1024]);
        // A CPU without a reference counts as 1 kHz, dwarfed by one with: 1024 * 1024 / 2e6.
        let cap = topology_normalize_cpu_scale(&[1024, 1], &[0, 2_000_000]).unwrap();
        assert_eq!(cap.as_slice(), &[0, 1024]);
    }

    #[test]
    fn normalize_shift_overflow_wraps() {
        // u32::MAX * 5 GHz ~ 2^54.2: the << 10 loses the top bits.
        let cap = topology_normalize_cpu_scale(&[u32::MAX], &[5_000_000]).unwrap();
        let p = u64::from(u32::MAX) * 5_000_000;
        assert_eq!(cap.as_slice(), &[(p << 10) / p]);
        assert!(cap[0] < 1024);
    }

    #[test]
    fn normalize_zero_dmips_gives_zero_and_scale_at_least_one() {
        let cap = topology_normalize_cpu_scale(&[0, 0], &[1_000_000, 0]).unwrap();
        assert_eq!(cap.as_slice(), &[0, 0]);
    }

    #[test]
    fn normalize_refuses_mismatched_and_oversized_inputs() {
        assert_eq!(
            topology_normalize_cpu_scale(&[1], &[]),
            Err(TopologyError::LengthMismatch)
        );
        assert_eq!(
            topology_normalize_cpu_scale(&[1; NR_CPUS + 1], &[1; NR_CPUS + 1]),
            Err(TopologyError::TooManyCpus)
        );
    }

    #[test]
    fn set_freq_scale_keeps_previous_on_zero_or_counters() {
        assert_eq!(
            topology_set_freq_scale(700, 1_000_000, 2_000_000, false),
            512
        );
        assert_eq!(topology_set_freq_scale(700, 0, 2_000_000, false), 700);
        assert_eq!(topology_set_freq_scale(700, 1_000_000, 0, false), 700);
        assert_eq!(
            topology_set_freq_scale(700, 1_000_000, 2_000_000, true),
            700
        );
    }

    #[test]
    fn set_freq_scale_above_max_frequency_exceeds_1024() {
        assert_eq!(
            topology_set_freq_scale(1024, 3_000_000, 2_000_000, false),
            1536
        );
    }

    #[test]
    fn hw_pressure_uses_mult_frac_and_a_u32_reference() {
        // 1024 capped at 1.5 GHz of 2 GHz: 1024 - 768 = 256.
        assert_eq!(topology_update_hw_pressure(1024, 2_000_000, 1_500_000), 256);
        // mult_frac(381, 1000000, 1416000) = 0*1000000 + 381*1000000/1416000 = 269.
        assert_eq!(topology_update_hw_pressure(381, 1_416_000, 1_000_000), 112);
        // At or above the reference: no pressure; a 0 reference: no pressure.
        assert_eq!(topology_update_hw_pressure(1024, 2_000_000, 2_500_000), 0);
        assert_eq!(topology_update_hw_pressure(1024, 0, 0), 0);
        // Reference 2^32 + 1000 truncates to 1000.
        assert_eq!(
            topology_update_hw_pressure(1024, (1 << 32) + 1000, 500),
            512
        );
    }

    #[test]
    fn cpufreq_pressure_saturates_at_the_reference() {
        assert_eq!(cpufreq_update_pressure(1024, 2_000_000, 1_000_000), 512);
        assert_eq!(cpufreq_update_pressure(1024, 2_000_000, 2_000_000), 0);
    }

    #[test]
    fn mult_frac_avoids_the_big_product_and_refuses_zero() {
        assert_eq!(
            mult_frac(u64::MAX, 3, 4),
            Some(u64::MAX / 4 * 3 + 3 * 3 / 4)
        );
        assert_eq!(mult_frac(5, 3, 0), None);
    }
}
