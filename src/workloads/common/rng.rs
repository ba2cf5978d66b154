//! xoroshiro128+, the generator sysbench uses for its random choices
//! (which mutex, which word of a block). Using the same generator keeps
//! the per-event work the same as sysbench's; it is not for cryptography.

/// A small, fast pseudo-random generator (xoroshiro128+ by Blackman and
/// Vigna, public domain), seeded per thread.
#[derive(Debug, Clone)]
pub struct Xoroshiro128Plus {
    s0: u64,
    s1: u64,
}

impl Xoroshiro128Plus {
    /// Seeds from `seed` through splitmix64, as the authors recommend, so
    /// that nearby seeds give unrelated streams.
    pub fn seeded(seed: u64) -> Self {
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let s0 = next();
        let s1 = next();
        Xoroshiro128Plus { s0, s1 }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let mut s1 = self.s1;
        let result = s0.wrapping_add(s1);
        s1 ^= s0;
        // The original (2016) constants a=55, b=14, c=36, which sysbench
        // 1.0.20 uses, not the 2018 revision's 24, 16, 37.
        self.s0 = s0.rotate_left(55) ^ s1 ^ (s1 << 14);
        self.s1 = s1.rotate_left(36);
        result
    }

    /// A uniform double in [0, 1) from the top 52 bits (sysbench's method).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        f64::from_bits((0x3FF << 52) | (self.next_u64() >> 12)) - 1.0
    }

    /// A uniform integer in `0..n` (n > 0), computed as sysbench does:
    /// `floor(uniform_double * n)`.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        (self.next_f64() * n as f64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_stay_in_range_and_cover_it() {
        let mut rng = Xoroshiro128Plus::seeded(7);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            let f = rng.next_f64();
            assert!((0.0..1.0).contains(&f));
            seen[rng.below(10) as usize] += 1;
        }
        // Each bucket expects 1000; a correct generator is far from 0.
        assert!(seen.iter().all(|&c| c > 800 && c < 1200), "{seen:?}");
    }

    #[test]
    fn different_seeds_give_different_streams() {
        let a: Vec<u64> = {
            let mut r = Xoroshiro128Plus::seeded(1);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Xoroshiro128Plus::seeded(2);
            (0..4).map(|_| r.next_u64()).collect()
        };
        assert_ne!(a, b);
    }
}
