//! What the PEs of a host run share: segments, wake-ups, the rendezvous and the clock.

use crate::caps::Caps;
use crate::sync::{Arc, Clock, Mutex, Ordering};
use crate::topology::Topology;
use crate::types::MemKind;

use super::segment::Segment;
use super::waker::Waker;
use crate::common::rendezvous::Rendezvous;

/// The orderings the backend uses where a test may weaken them to show that the model
/// checker catches it. Normal runs always use [`Strength::FULL`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Strength {
    /// The ordering of put-with-signal's signal update (AcqRel; Release is what R5 needs).
    pub(crate) signal_order: Ordering,
    /// Whether the wake-up protocol has its two `fence(SeqCst)`s.
    pub(crate) wake_fence: bool,
}

impl Strength {
    pub(crate) const FULL: Strength = Strength {
        signal_order: Ordering::AcqRel,
        wake_fence: true,
    };
}

/// One PE's shared state.
#[derive(Debug)]
pub(crate) struct PeShared {
    /// The PE's segments, by [`MemKind::index`]; set once by the owner, read by importers.
    pub(crate) segments: Mutex<[Option<Arc<Segment>>; MemKind::COUNT]>,
    pub(crate) waker: Waker,
}

/// Everything the PEs of one run share.
#[derive(Debug)]
pub(crate) struct World {
    pub(crate) n_pes: u32,
    pub(crate) caps: Caps,
    pub(crate) topology: Topology,
    /// Time zero of [`crate::Device::now`].
    pub(crate) start: Clock,
    pub(crate) pes: Vec<PeShared>,
    pub(crate) rendezvous: Rendezvous,
    pub(crate) strength: Strength,
}

impl World {
    pub(crate) fn new(topology: Topology, n_pes: u32, caps: Caps, strength: Strength) -> World {
        World {
            n_pes,
            caps,
            topology,
            start: crate::sync::clock_now(),
            pes: (0..n_pes)
                .map(|_| PeShared {
                    segments: Mutex::new([None, None, None]),
                    waker: Waker::new(),
                })
                .collect(),
            rendezvous: Rendezvous::new(n_pes),
            strength,
        }
    }
}
