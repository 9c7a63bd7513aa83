// SPDX-License-Identifier: GPL-2.0-only
//! The one random-number generator of the host: SplitMix64 (Steele, Lea, Flood 2014), a
//! small, well-mixed deterministic generator with no floats and no dependencies, so a
//! seed gives the same draws on every host.

/// SplitMix64 state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// Stream `index` of `seed`: independent-looking streams for the tasks of one run.
    pub fn stream(seed: u64, index: u64) -> Self {
        let first = Self(seed).next_u64();
        Self(seed ^ first ^ index.wrapping_mul(0xd1b5_4a32_d192_ed03))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi` (`lo` when `hi <= lo`); the modulo bias is negligible for
    /// durations.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        match (hi - lo).checked_add(1) {
            Some(span) => lo + self.next_u64() % span,
            None => self.next_u64(), // the whole u64 range
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_output_streams_and_range_bounds() {
        // The published SplitMix64 sequence from seed 0.
        let mut g = SplitMix64::new(0);
        assert_eq!(g.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(g.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        let (mut a, mut b) = (SplitMix64::stream(7, 3), SplitMix64::stream(7, 3));
        let draws: Vec<u64> = (0..1000).map(|_| a.range(50_000, 500_000)).collect();
        assert!(draws.iter().all(|d| (50_000..=500_000).contains(d)));
        assert_eq!(
            draws,
            (0..1000)
                .map(|_| b.range(50_000, 500_000))
                .collect::<Vec<_>>()
        );
        assert_ne!(
            SplitMix64::stream(7, 4).next_u64(),
            SplitMix64::stream(7, 3).next_u64()
        );
        assert_eq!(g.range(9, 9), 9);
        assert_eq!(g.range(9, 3), 9);
        assert!((0..100)
            .map(|_| g.range(0, u64::MAX))
            .any(|d| d > u64::MAX / 2));
    }
}
