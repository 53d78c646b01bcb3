//! The fuzzer's one source of chance: SplitMix64, so that a seed gives the same inputs on every
//! machine and every build (no dependency whose stream could change under us).

/// A seeded pseudo-random stream.
#[derive(Clone, Debug)]
pub(crate) struct Rng {
    state: u64,
}

impl Rng {
    /// The stream of `seed` for the target called `name`, so that targets draw independently.
    pub(crate) fn new(seed: u64, name: &str) -> Rng {
        let mut state = seed;
        for byte in name.bytes() {
            state = (state ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
        Rng { state }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`; 0 when `n` is 0.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `1 / n`.
    pub(crate) fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// One element of a non-empty slice.
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A small number most of the time, an extreme one sometimes: what numeric fields need.
    pub(crate) fn number(&mut self) -> String {
        if self.one_in(8) {
            return (*self.pick(super::mutate::NUMBERS)).to_string();
        }
        let bound = if self.one_in(4) { 100_000 } else { 10 };
        self.below(bound).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_one_stream_and_targets_differ() {
        let draw = |seed, name| {
            let mut rng = Rng::new(seed, name);
            (0..4).map(|_| rng.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(7, "litmus"), draw(7, "litmus"));
        assert_ne!(draw(7, "litmus"), draw(8, "litmus"));
        assert_ne!(draw(7, "litmus"), draw(7, "cli"));
    }
}
