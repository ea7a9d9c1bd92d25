//! The random generator behind `random` and `seed`: xoshiro256** seeded through splitmix64
//! (fast, small state, good statistical quality; not cryptographic).

/// The seed a run starts from when the script never calls `seed`, so that runs are
/// reproducible by default.
pub const DEFAULT_SEED: u64 = 0x5eed_acc0_2024_0001;

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Default for Rng {
    fn default() -> Rng {
        Rng::new(DEFAULT_SEED)
    }
}

/// One step of splitmix64: spreads a seed's bits over the state.
fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        // splitmix64 never yields four zero words, which xoshiro must not start from.
        Rng {
            s: [
                splitmix64(&mut x),
                splitmix64(&mut x),
                splitmix64(&mut x),
                splitmix64(&mut x),
            ],
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1): the top 53 bits as a multiple of 2^-53.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, 1): the top 24 bits as a multiple of 2^-24 (every value exact in f32,
    /// so 1.0 never appears by rounding).
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 * (1.0 / (1u32 << 24) as f32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xoshiro_reference_output() {
        // Reference: xoshiro256** with state [1, 2, 3, 4] (from the authors' C code).
        let mut r = Rng { s: [1, 2, 3, 4] };
        let got: Vec<u64> = (0..4).map(|_| r.next_u64()).collect();
        assert_eq!(got, [11520, 0, 1509978240, 1215971899390074240]);
    }

    #[test]
    fn splitmix_reference_output() {
        // Reference: splitmix64 from seed 0 (Vigna's splitmix64.c).
        let mut x = 0;
        assert_eq!(splitmix64(&mut x), 0xe220_a839_7b1d_cdaf);
        assert_eq!(splitmix64(&mut x), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn same_seed_same_sequence() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        let mut c = Rng::new(43);
        let xs: Vec<u64> = (0..10).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..10).map(|_| b.next_u64()).collect();
        let zs: Vec<u64> = (0..10).map(|_| c.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs, zs);
    }

    #[test]
    fn floats_in_unit_interval_and_spread() {
        let mut r = Rng::default();
        let n = 100_000;
        let (mut s64, mut s32) = (0.0, 0.0);
        for _ in 0..n {
            let x = r.next_f64();
            let y = r.next_f32();
            assert!((0.0..1.0).contains(&x));
            assert!((0.0..1.0).contains(&y));
            s64 += x;
            s32 += f64::from(y);
        }
        assert!((s64 / n as f64 - 0.5).abs() < 0.01);
        assert!((s32 / n as f64 - 0.5).abs() < 0.01);
    }
}
