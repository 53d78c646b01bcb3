//! The checking backend: launcher, device and queue types that wrap any backend's, delegate
//! every call to it, and tell the shared [`Detector`] what happened.
//!
//! An access is recorded after the wrapped call returns, so the order of the records is the
//! order the backend performed the calls in. The lock is never held across a wrapped call: a
//! call may block or hand the thread to another PE, which must be able to record meanwhile.

use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use hw::{
    AmoOp, Backend, Caps, Copier, Device, DeviceError, HostThreadEvent, Instant, KernelEvent,
    LaunchError, LaunchOutput, Launcher, LocalRange, MemKind, Pe, QueueError, RemoteRange,
    SegmentKey, SignalOp, Ticket, Topology, WaitSpec,
};

use super::detector::{Detector, Part, QueueOp};
use super::report::{AccessKind, Race};

/// The detector of one run, shared by its PEs' devices and queues.
type Shared = Arc<Mutex<Detector>>;

fn lock(detector: &Mutex<Detector>) -> MutexGuard<'_, Detector> {
    // Why recover from poison: the detector's state stays consistent between calls, and a
    // PE that panicked must not keep the others from finishing their run.
    detector.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A launcher whose runs record data races on symmetric memory; they come back in
/// [`CheckedReport::races`]. Use it in place of the launcher it wraps:
/// `rshmem::run(Checked::new(launcher), config, pe_main)`.
pub struct Checked<L> {
    inner: L,
    detector: Shared,
}

impl<L: Launcher> Checked<L> {
    /// Wraps `inner`.
    pub fn new(inner: L) -> Checked<L> {
        let detector = Arc::new(Mutex::new(Detector::new(inner.n_pes(), inner.topology())));
        Checked { inner, detector }
    }
}

impl<L: Launcher> fmt::Debug for Checked<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checked")
            .field("n_pes", &self.inner.n_pes())
            .finish_non_exhaustive()
    }
}

/// What a checked run reports: the wrapped backend's report and the races found, each
/// operation pair once, in the order they were found.
#[derive(Debug)]
pub struct CheckedReport<R> {
    /// The wrapped launcher's report.
    pub backend: R,
    /// The data races.
    pub races: Vec<Race>,
}

impl<L: Launcher> Launcher for Checked<L> {
    type B = CheckedBackend<L::B>;
    type Report = CheckedReport<L::Report>;

    fn n_pes(&self) -> u32 {
        self.inner.n_pes()
    }

    fn topology(&self) -> &Topology {
        self.inner.topology()
    }

    fn launch<R, F>(self, pe_main: F) -> Result<LaunchOutput<R, Self::Report>, LaunchError>
    where
        F: Fn(CheckedDevice<L::B>) -> R + Sync,
        R: Send,
    {
        let detector = &self.detector;
        let (results, backend) = self
            .inner
            .launch(|device| pe_main(CheckedDevice::new(device, Arc::clone(detector))))?;
        let races = lock(detector).take_races();
        Ok((results, CheckedReport { backend, races }))
    }
}

/// The backend of a checked run: `B`'s devices and queues, wrapped.
pub struct CheckedBackend<B>(PhantomData<fn() -> B>);

impl<B> fmt::Debug for CheckedBackend<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CheckedBackend")
    }
}

impl<B: Backend> Backend for CheckedBackend<B> {
    type Device = CheckedDevice<B>;
    type Queue = CheckedQueue<B>;
}

/// A device of a checked run.
pub struct CheckedDevice<B: Backend> {
    inner: B::Device,
    pe: u32,
    detector: Shared,
}

impl<B: Backend> fmt::Debug for CheckedDevice<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckedDevice")
            .field("pe", &self.pe)
            .finish_non_exhaustive()
    }
}

impl<B: Backend> CheckedDevice<B> {
    fn new(inner: B::Device, detector: Shared) -> CheckedDevice<B> {
        lock(&detector).set_semantics(inner.caps().semantics);
        CheckedDevice {
            pe: inner.pe().0,
            inner,
            detector,
        }
    }
}

impl<B: Backend> Device for CheckedDevice<B> {
    type B = CheckedBackend<B>;

    fn pe(&self) -> Pe {
        self.inner.pe()
    }

    fn n_pes(&self) -> u32 {
        self.inner.n_pes()
    }

    fn caps(&self) -> &Caps {
        self.inner.caps()
    }

    fn topology(&self) -> &Topology {
        self.inner.topology()
    }

    fn now(&self) -> Instant {
        self.inner.now()
    }

    fn create_segment(&self, kind: MemKind, len_bytes: u64) -> Result<SegmentKey, DeviceError> {
        self.inner.create_segment(kind, len_bytes)
    }

    fn create_growable_segment(
        &self,
        kind: MemKind,
        len_bytes: u64,
        backed_bytes: u64,
    ) -> Result<SegmentKey, DeviceError> {
        self.inner
            .create_growable_segment(kind, len_bytes, backed_bytes)
    }

    fn grow_segment(
        &self,
        kind: MemKind,
        backed_bytes: u64,
        deadline: Instant,
    ) -> Result<(), DeviceError> {
        self.inner.grow_segment(kind, backed_bytes, deadline)
    }

    fn attach_buffer(
        &self,
        kind: MemKind,
        offset_bytes: u64,
        buffer_addr: u64,
        len_bytes: u64,
        deadline: Instant,
    ) -> Result<(), DeviceError> {
        self.inner
            .attach_buffer(kind, offset_bytes, buffer_addr, len_bytes, deadline)
    }

    fn detach_buffer(
        &self,
        kind: MemKind,
        offset_bytes: u64,
        len_bytes: u64,
    ) -> Result<(), DeviceError> {
        self.inner.detach_buffer(kind, offset_bytes, len_bytes)
    }

    fn share_static_data(&self) -> Result<Option<(SegmentKey, u64)>, DeviceError> {
        self.inner.share_static_data()
    }

    fn import_segment(&self, peer: Pe, kind: MemKind, key: &SegmentKey) -> Result<(), DeviceError> {
        self.inner.import_segment(peer, kind, key)
    }

    fn import_segments(
        &self,
        all: &hw::Exchanged,
        offset: usize,
        kinds: &[MemKind],
    ) -> Result<(), DeviceError> {
        self.inner.import_segments(all, offset, kinds)
    }

    /// The wrapped device's answer. Loads and stores through the address bypass the
    /// detector: it sees queue operations and local reads and writes only.
    fn load_store_addr(&self, range: RemoteRange) -> Option<u64> {
        self.inner.load_store_addr(range)
    }

    fn exchange(&self, mine: &[u8], deadline: Instant) -> Result<hw::Exchanged, QueueError> {
        let round = lock(&self.detector).enter_exchange(self.pe);
        let all = self.inner.exchange(mine, deadline)?;
        lock(&self.detector).leave_exchange(self.pe, round);
        Ok(all)
    }

    fn create_queue(&self) -> Result<CheckedQueue<B>, DeviceError> {
        let inner = self.inner.create_queue()?;
        let index = lock(&self.detector).add_queue(self.pe);
        Ok(CheckedQueue {
            inner,
            pe: self.pe,
            index,
            detector: Arc::clone(&self.detector),
        })
    }

    fn note_kernel_launch(&self) {
        self.inner.note_kernel_launch();
    }

    fn set_word_names(&self, names: std::sync::Arc<hw::WordNames>) {
        self.inner.set_word_names(names);
    }

    /// Recorded for the races between the kernel's threads; the wrapped device is not told.
    fn note_kernel_event(&self, event: KernelEvent<'_>) {
        lock(&self.detector).kernels.event(self.pe, event);
    }

    /// Recorded for the races between the program's threads; the wrapped device is not told.
    fn note_host_thread_event(&self, event: HostThreadEvent) {
        lock(&self.detector).kernels.host_event(self.pe, event);
    }

    /// Never: a mapped load is no operation, so the detector would not see it; under the
    /// detector every read of a peer is a get it checks.
    fn mapped_load_addr(&self, _range: RemoteRange) -> Option<u64> {
        None
    }

    fn read_local(&self, src: LocalRange, out: &mut [u8]) {
        self.inner.read_local(src, out);
        lock(&self.detector).local(self.pe, AccessKind::LocalRead, src);
    }

    fn write_local(&self, dst: LocalRange, data: &[u8]) {
        self.inner.write_local(dst, data);
        lock(&self.detector).local(self.pe, AccessKind::LocalWrite, dst);
    }

    fn wait_until_any(
        &self,
        specs: &[WaitSpec],
        deadline: Instant,
    ) -> Result<(usize, u64), QueueError> {
        let (index, value) = self.inner.wait_until_any(specs, deadline)?;
        lock(&self.detector).poll_satisfied(self.pe, specs[index].word);
        Ok((index, value))
    }

    fn test(&self, spec: WaitSpec) -> Option<u64> {
        let value = self.inner.test(spec)?;
        lock(&self.detector).poll_satisfied(self.pe, spec.word);
        Some(value)
    }
}

/// A queue of a checked run.
pub struct CheckedQueue<B: Backend> {
    inner: B::Queue,
    pe: u32,
    /// The queue's index among its PE's queues: fence and quiet act per queue.
    index: usize,
    detector: Shared,
}

impl<B: Backend> fmt::Debug for CheckedQueue<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckedQueue")
            .field("pe", &self.pe)
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl<B: Backend> CheckedQueue<B> {
    /// Records an operation the wrapped queue accepted as `ticket`.
    fn issued(
        &self,
        ticket: Ticket,
        target: Pe,
        fenceable: bool,
        parts: &[Part],
        fetches: Option<Part>,
    ) -> Ticket {
        lock(&self.detector).issue(
            self.pe,
            QueueOp {
                queue: self.index,
                ticket,
                target: target.0,
                fenceable,
                parts,
                fetches,
            },
        );
        ticket
    }
}

impl<B: Backend> hw::Queue for CheckedQueue<B> {
    type B = CheckedBackend<B>;

    fn put(&self, dst: RemoteRange, data: &[u8], copier: Copier) -> Result<Ticket, QueueError> {
        let ticket = self.inner.put(dst, data, copier)?;
        let part = Part::remote(AccessKind::Put, dst);
        Ok(self.issued(ticket, dst.pe, true, &[part], None))
    }

    fn put_from_local(&self, dst: RemoteRange, src: LocalRange) -> Result<Ticket, QueueError> {
        let ticket = self.inner.put_from_local(dst, src)?;
        let parts = [
            Part::remote(AccessKind::Put, dst),
            Part::local(AccessKind::PutSource, self.pe, src),
        ];
        Ok(self.issued(ticket, dst.pe, true, &parts, None))
    }

    fn get(&self, src: RemoteRange) -> Result<Ticket, QueueError> {
        let ticket = self.inner.get(src)?;
        let part = Part::remote(AccessKind::Get, src);
        Ok(self.issued(ticket, src.pe, false, &[part], Some(part)))
    }

    fn get_into(&self, src: RemoteRange, dst: LocalRange) -> Result<Ticket, QueueError> {
        let ticket = self.inner.get_into(src, dst)?;
        let read = Part::remote(AccessKind::Get, src);
        let landing = Part::local(AccessKind::GetNbiLanding, self.pe, dst);
        Ok(self.issued(ticket, src.pe, false, &[read, landing], Some(read)))
    }

    fn amo(&self, dst: RemoteRange, op: AmoOp, fetch: bool) -> Result<Ticket, QueueError> {
        let ticket = self.inner.amo(dst, op, fetch)?;
        let kind = if op.writes() {
            AccessKind::AtomicUpdate
        } else {
            AccessKind::AtomicFetch
        };
        let part = Part::remote(kind, dst);
        Ok(self.issued(ticket, dst.pe, op.writes(), &[part], fetch.then_some(part)))
    }

    fn put_signal(
        &self,
        dst: RemoteRange,
        data: &[u8],
        signal: RemoteRange,
        op: SignalOp,
        value: u64,
        copier: Copier,
    ) -> Result<Ticket, QueueError> {
        let ticket = self
            .inner
            .put_signal(dst, data, signal, op, value, copier)?;
        let parts = [
            Part::remote(AccessKind::PutSignalData, dst),
            Part::remote(AccessKind::SignalUpdate, signal),
        ];
        Ok(self.issued(ticket, dst.pe, true, &parts, None))
    }

    fn fence(&self) -> Result<(), QueueError> {
        self.inner.fence()?;
        lock(&self.detector).fence(self.pe, self.index);
        Ok(())
    }

    fn quiet(&self, deadline: Instant) -> Result<(), QueueError> {
        self.inner.quiet(deadline)?;
        lock(&self.detector).quiet(self.pe, self.index, true);
        Ok(())
    }

    /// The inner queue's, recorded as a quiet without its consistency step: what follows
    /// runs after what came before completed.
    fn serialize(&self, deadline: Instant) -> Result<(), QueueError> {
        self.inner.serialize(deadline)?;
        lock(&self.detector).quiet(self.pe, self.index, false);
        Ok(())
    }

    fn wait_ticket(&self, ticket: Ticket, deadline: Instant) -> Result<(), QueueError> {
        self.inner.wait_ticket(ticket, deadline)?;
        lock(&self.detector).complete(self.pe, self.index, ticket);
        Ok(())
    }

    fn is_complete(&self, ticket: Ticket) -> bool {
        let complete = self.inner.is_complete(ticket);
        if complete {
            lock(&self.detector).complete(self.pe, self.index, ticket);
        }
        complete
    }

    fn take_fetched(&self, ticket: Ticket) -> Vec<u8> {
        self.inner.take_fetched(ticket)
    }
}
