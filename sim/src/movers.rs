//! Who copies a put's bytes, and when each mover is free: the pacing of puts by the
//! topology's copy curves (`Timing::copy`).
//!
//! Each mover is a first-come first-served server of its own: the puts of one warp follow one
//! another while two warps copy side by side, and each queue's copy engine works through its
//! puts in order, as a CUDA stream does. A put's bytes cannot land before its mover has
//! copied them, nor before the links have carried them (`World::issue` takes the later of
//! the two). With free curves, the default, no put waits for its mover.

use crate::costs::{CopyCurve, CopyTimes};
use hw::Copier;

/// The mover of one put.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Mover {
    /// SMs of the issuing GPU: the whole GPU, a block, a warp or a thread.
    Sm(Copier),
    /// The copy engine serving a queue's stream.
    Engine {
        /// The queue.
        queue: u32,
    },
}

/// Per (PE, mover): the end of its last copy, in ns.
// Why a hash map in the simulator (sim/clippy.toml bans it): it is only looked up by key,
// never iterated, so its order cannot reach a run; `Copier` has no order for a BTreeMap.
#[allow(
    clippy::disallowed_types,
    reason = "looked up by key and never iterated: its random order cannot reach a run"
)]
type FreeAt = std::collections::HashMap<(u32, Mover), u64>;

/// When each mover that has copied something is free again.
#[derive(Debug)]
pub(crate) struct Movers {
    times: CopyTimes,
    free_at_ns: FreeAt,
}

impl Movers {
    pub(crate) fn new(times: CopyTimes) -> Movers {
        Movers {
            times,
            free_at_ns: FreeAt::new(),
        }
    }

    fn curve(&self, mover: Mover) -> &CopyCurve {
        match mover {
            Mover::Sm(copier) => self.times.of(copier),
            Mover::Engine { .. } => &self.times.engine,
        }
    }

    /// Books `pe`'s `mover` for a copy of `bytes` posted at `posted_ns` and returns when the
    /// copy ends: after the mover's earlier copies, its curve's time for `bytes`. 0 (no
    /// pacing) when the mover's curve is free.
    pub(crate) fn copy(&mut self, pe: u32, mover: Mover, posted_ns: u64, bytes: u64) -> u64 {
        let curve = *self.curve(mover);
        if curve.is_free() {
            return 0;
        }
        let free_at_ns = self.free_at_ns.entry((pe, mover)).or_insert(0);
        let ends_ns = (*free_at_ns).max(posted_ns) + curve.ns(bytes);
        *free_at_ns = ends_ns;
        ends_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times() -> CopyTimes {
        CopyTimes {
            warp: CopyCurve::new(&[(1000, 100)]).unwrap(),
            ..CopyTimes::FREE
        }
    }

    #[test]
    fn the_copies_of_one_mover_follow_one_another_and_two_movers_work_side_by_side() {
        let mut movers = Movers::new(times());
        let warp = |i| Mover::Sm(Copier::Warp(i));
        assert_eq!(movers.copy(0, warp(0), 10, 1000), 110);
        assert_eq!(movers.copy(0, warp(0), 20, 2000), 310);
        assert_eq!(movers.copy(0, warp(1), 20, 1000), 120);
        assert_eq!(movers.copy(1, warp(0), 20, 1000), 120);
        assert_eq!(movers.copy(0, warp(0), 1000, 1000), 1100);
    }

    #[test]
    fn a_free_mover_paces_nothing() {
        let mut movers = Movers::new(times());
        assert_eq!(movers.copy(0, Mover::Sm(Copier::Device), 10, 1 << 30), 0);
        assert_eq!(movers.copy(0, Mover::Engine { queue: 3 }, 10, 1 << 30), 0);
    }
}
