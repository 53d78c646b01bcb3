//! What the PEs of a CUDA run share: the GPUs, the segments, the rendezvous and the clock.

use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::CudaStream;

use super::device_api::state::SYNC_BYTES;
use super::driver::Gpu;
use super::error::{DriverCallError, During};
use super::memory::{Segment, Vmm};
use crate::caps::Caps;
use crate::error::DeviceError;
use crate::host::rendezvous::Rendezvous;
use crate::host::world::kind_index;
use crate::sync::{self, Clock};
use crate::topology::Topology;
use crate::types::{MemKind, Pe};

/// Everything the PEs of one run share.
#[derive(Debug)]
pub(crate) struct World {
    pub(crate) n_pes: u32,
    pub(crate) caps: Caps,
    pub(crate) topology: Topology,
    /// Time zero of [`crate::Device::now`].
    pub(crate) start: Clock,
    pub(crate) rendezvous: Rendezvous,
    /// PE `i`'s GPU.
    pub(crate) gpus: Vec<Arc<Gpu>>,
    /// PE `i`'s stream for its own synchronous copies (local reads, writes and waits).
    pub(crate) local_streams: Vec<Arc<CudaStream>>,
    /// Every PE's segments by [`kind_index`]. The world owns them so that they are freed only
    /// when the run is over: a PE that returns early must not unmap memory a peer still writes.
    segments: Mutex<Vec<[Option<Segment>; 2]>>,
    /// Every PE's synchronisation memory of the device-side API, by PE, made by the first
    /// kernel launch of the run: most runs launch none.
    device_sync: OnceLock<Result<Vec<Vmm>, DriverCallError>>,
}

impl World {
    /// The shared state of a run of one PE per GPU of `gpus`.
    pub(crate) fn new(
        topology: Topology,
        caps: Caps,
        gpus: Vec<Arc<Gpu>>,
    ) -> Result<World, DriverCallError> {
        let local_streams = gpus
            .iter()
            .map(|gpu| gpu.ctx.new_stream().during("cuStreamCreate"))
            .collect::<Result<Vec<_>, _>>()?;
        let n_pes = gpus.len() as u32;
        Ok(World {
            n_pes,
            caps,
            topology,
            start: sync::clock_now(),
            rendezvous: Rendezvous::new(n_pes),
            segments: Mutex::new((0..n_pes).map(|_| [None, None]).collect()),
            gpus,
            local_streams,
            device_sync: OnceLock::new(),
        })
    }

    /// The base address of every PE's synchronisation memory for the device-side API
    /// ([`SYNC_BYTES`] of zeroed device memory on the PE's GPU, mapped for every GPU of the
    /// run), made on first use. `caller`'s context is current again when this returns.
    ///
    /// # Errors
    /// The driver call that failed making it; the error is kept for the run.
    pub(crate) fn device_sync_bases(&self, caller: &Gpu) -> Result<Vec<u64>, DriverCallError> {
        let made = self.device_sync.get_or_init(|| {
            let access = self.ordinals();
            self.gpus
                .iter()
                .zip(&self.local_streams)
                .map(|(gpu, stream)| Vmm::new(&gpu.ctx, SYNC_BYTES, &access, stream))
                .collect()
        });
        // Making the memory bound each GPU's context to this thread in turn.
        caller.ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        made.as_ref()
            .map(|memory| memory.iter().map(Vmm::addr).collect())
            .map_err(Clone::clone)
    }

    /// The ordinals of the run's GPUs: who may access a segment.
    pub(crate) fn ordinals(&self) -> Vec<u32> {
        let mut ordinals: Vec<u32> = self.gpus.iter().map(|gpu| gpu.ordinal).collect();
        // PEs may share a GPU; an access list names each GPU once.
        ordinals.sort_unstable();
        ordinals.dedup();
        ordinals
    }

    /// Whether `pe` already has a segment of `kind`.
    pub(crate) fn has_segment(&self, pe: Pe, kind: MemKind) -> bool {
        self.segments.lock().unwrap_or_else(|e| e.into_inner())[pe.idx()][kind_index(kind)]
            .is_some()
    }

    /// Keeps `pe`'s new segment of `kind` until the run ends.
    ///
    /// # Errors
    /// [`DeviceError::Lost`] if `pe` has one already.
    pub(crate) fn keep_segment(
        &self,
        pe: Pe,
        kind: MemKind,
        segment: Segment,
    ) -> Result<(), DeviceError> {
        let mut segments = self.segments.lock().unwrap_or_else(|e| e.into_inner());
        let slot = &mut segments[pe.idx()][kind_index(kind)];
        if slot.is_some() {
            return Err(already_has(pe, kind));
        }
        *slot = Some(segment);
        Ok(())
    }
}

/// The error of a second segment of one kind.
pub(crate) fn already_has(pe: Pe, kind: MemKind) -> DeviceError {
    DeviceError::Lost(format!("{pe} already has a {kind:?} segment"))
}
