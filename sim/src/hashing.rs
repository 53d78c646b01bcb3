//! A fixed hasher for the simulator's few hash maps (sim/clippy.toml bans them otherwise):
//! the same inserts give the same table in every run, and the maps that use it are looked up
//! by key or swept in ways whose result does not depend on their order.

use std::hash::Hasher;

/// Fibonacci hashing's multiplier: 2^64 divided by the golden ratio, odd.
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// Hashes small integers (PE numbers, line numbers) with one multiplication per word: the
/// keys are chosen by the program, not by an adversary.
#[derive(Debug, Default)]
pub(crate) struct IntHasher(u64);

impl Hasher for IntHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(GOLDEN);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ u64::from(n)).wrapping_mul(GOLDEN);
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(GOLDEN);
    }

    fn finish(&self) -> u64 {
        // The table takes its bucket from the low bits, which a product mixes least.
        self.0 ^ (self.0 >> 32)
    }
}
