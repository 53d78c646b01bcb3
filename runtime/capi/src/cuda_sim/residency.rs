//! How many blocks of a launch have threads started at once.
//!
//! Why a limit: a GPU thread that suspends (a get, a wait, a barrier) holds its stack, and a
//! stack is a mapping; a launch of 2^20 threads that all park in their first `g` (the guide's
//! matrix multiplication with `--exact`) would need a million mappings, far past what the
//! kernel grants a process. A GPU also runs only so many blocks at once. So a thread of a block
//! that has no thread running starts only while fewer than [`RESIDENT_THREADS`] threads' worth
//! of blocks are resident; until then it steps aside (`yield_now`), and starts once a block
//! has finished. Blocks are resident whole, so `__syncthreads` always finds its block's
//! threads started. A kernel whose resident blocks wait for a block that has not started
//! cannot finish here (as on a GPU with too few SMs): its waits end in the deadlock report.

use std::cell::Cell;

/// Threads' worth of blocks a launch keeps resident (at least one block).
pub(crate) const RESIDENT_THREADS: usize = 2048;

/// The resident blocks of one launch.
#[derive(Debug)]
pub(crate) struct Residency {
    /// Started, unfinished threads of each block.
    live: Vec<Cell<u32>>,
    resident_blocks: Cell<usize>,
    max_blocks: usize,
}

impl Residency {
    pub(crate) fn new(n_blocks: usize, block_threads: u32) -> Residency {
        Residency {
            live: (0..n_blocks).map(|_| Cell::new(0)).collect(),
            resident_blocks: Cell::new(0),
            max_blocks: (RESIDENT_THREADS / block_threads.max(1) as usize).max(1),
        }
    }

    /// Whether a thread of `block` may start now.
    pub(crate) fn may_start(&self, block: usize) -> bool {
        self.live[block].get() > 0 || self.resident_blocks.get() < self.max_blocks
    }

    /// A thread of `block` started.
    pub(crate) fn started(&self, block: usize) {
        let live = &self.live[block];
        if live.get() == 0 {
            self.resident_blocks.set(self.resident_blocks.get() + 1);
        }
        live.set(live.get() + 1);
    }

    /// A thread of `block` returned.
    pub(crate) fn returned(&self, block: usize) {
        let live = &self.live[block];
        live.set(live.get() - 1);
        if live.get() == 0 {
            self.resident_blocks.set(self.resident_blocks.get() - 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_start_whole_up_to_the_limit() {
        let r = Residency::new(4, 1024);
        assert!(r.may_start(0));
        r.started(0);
        r.started(1);
        assert!(!r.may_start(2), "two blocks of 1024 fill 2048 threads");
        assert!(r.may_start(1), "a resident block's other threads start");
        r.returned(0);
        assert!(r.may_start(2));
        let big = Residency::new(2, 4096);
        assert!(big.may_start(0), "one block is always resident");
    }
}
