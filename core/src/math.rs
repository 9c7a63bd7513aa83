// SPDX-License-Identifier: GPL-2.0-only
//! Fixed-point helpers — include/linux/math64.h and kernel/sched/sched.h.
//!
//! The scheduler keeps capacities and utilizations on a 1024 scale and load weights in a
//! "scaled" form with 10 extra fraction bits on 64-bit kernels. These helpers keep the C
//! widths: `unsigned long` is `u64` (64-bit kernel), products wrap, shifts truncate.

/// `SCHED_FIXEDPOINT_SHIFT`: fraction bits of load weights and averages.
pub const SCHED_FIXEDPOINT_SHIFT: u32 = 10;
/// `SCHED_CAPACITY_SHIFT`: capacity and utilization are fractions of 1 << 10.
pub const SCHED_CAPACITY_SHIFT: u32 = SCHED_FIXEDPOINT_SHIFT;
/// `SCHED_CAPACITY_SCALE`: capacity of the biggest CPU at its highest frequency.
pub const SCHED_CAPACITY_SCALE: u64 = 1 << SCHED_CAPACITY_SHIFT;
/// `NICE_0_LOAD_SHIFT` on a 64-bit kernel: weights carry 10 extra fraction bits.
pub const NICE_0_LOAD_SHIFT: u32 = 2 * SCHED_FIXEDPOINT_SHIFT;

/// `mul_u64_u32_shr()`: `(a * mul) >> shift` with the full 96-bit product.
///
/// The kernel uses an int128 multiply on 64-bit (and two 32x32 halves on 32-bit), both
/// exact; the result is truncated to u64 after the shift. `shift` is below 64 at every
/// kernel call site; a larger one yields what the 128-bit shift gives (0 for >= 128).
#[inline]
pub fn mul_u64_u32_shr(a: u64, mul: u32, shift: u32) -> u64 {
    let prod = u128::from(a) * u128::from(mul);
    prod.checked_shr(shift).unwrap_or(0) as u64 // kernel narrows the shifted product to u64
}

/// `div_u64()`: 64-by-32 unsigned division, truncating.
///
/// Trap: the kernel divides by zero (a fault); here that case is `None`.
#[inline]
pub fn div_u64(dividend: u64, divisor: u32) -> Option<u64> {
    dividend.checked_div(u64::from(divisor))
}

/// `cap_scale(v, s)`: `(v * s) >> SCHED_CAPACITY_SHIFT`; the 64-bit product wraps first.
#[inline]
pub fn cap_scale(v: u64, s: u64) -> u64 {
    v.wrapping_mul(s) >> SCHED_CAPACITY_SHIFT
}

/// `scale_load()` on a 64-bit kernel: user weight → scaled weight (`w << 10`, wrapping).
#[inline]
pub fn scale_load(w: u64) -> u64 {
    w.wrapping_shl(SCHED_FIXEDPOINT_SHIFT)
}

/// `scale_load_down()` on a 64-bit kernel: scaled weight → user weight.
///
/// Trap: a non-zero weight never scales down below 2 (`max(2, w >> 10)`), so raw weights
/// 1..=3071 all become 2; zero stays zero.
#[inline]
pub fn scale_load_down(w: u64) -> u64 {
    if w == 0 {
        0
    } else {
        core::cmp::max(2, w >> SCHED_FIXEDPOINT_SHIFT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_load_shifts_by_ten_and_wraps() {
        assert_eq!(scale_load(1024), 1_048_576);
        assert_eq!(scale_load(3), 3072); // WEIGHT_IDLEPRIO
        assert_eq!(scale_load_down(scale_load(15)), 15);
        // The 64-bit shift drops the high bits.
        assert_eq!(scale_load(1 << 60), 0);
        assert_eq!(scale_load(u64::MAX), u64::MAX << 10);
    }

    #[test]
    fn mul_u64_u32_shr_keeps_the_96_bit_product() {
        assert_eq!(
            mul_u64_u32_shr(u64::MAX, u32::MAX, 32),
            0xffff_fffe_ffff_ffff
        );
        assert_eq!(mul_u64_u32_shr(1024, 0xffff_ffff, 32), 1023);
    }

    #[test]
    fn div_u64_by_zero_is_none_not_a_trap() {
        assert_eq!(div_u64(10, 0), None);
        assert_eq!(div_u64(10, 3), Some(3));
    }

    #[test]
    fn cap_scale_wraps_the_product_before_shifting() {
        assert_eq!(cap_scale(1 << 60, 1 << 10), 0);
        assert_eq!(cap_scale(1000, 512), 500);
    }

    #[test]
    fn scale_load_down_clamps_small_weights_to_two() {
        assert_eq!(scale_load_down(0), 0);
        assert_eq!(scale_load_down(1), 2);
        assert_eq!(scale_load_down(3071), 2);
        assert_eq!(scale_load_down(3072), 3);
        assert_eq!(scale_load_down(1024 << 10), 1024);
    }
}
