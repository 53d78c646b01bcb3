//! A backend chosen at run time: [`AnyBackend`] wraps any backend's device and queues behind
//! trait objects.
//!
//! Why: the runtime is generic over [`Backend`] (static dispatch), which suits Rust programs
//! that name their backend. The C API cannot: one `libshmem.so` runs a program as a process
//! of the process backend, as a coroutine of the simulator or on a GPU, chosen by how the
//! program was started. It instantiates the runtime once, over [`AnyBackend`], and wraps the
//! device of whichever backend it starts ([`AnyDevice::new`]).
//!
//! Every method forwards to the wrapped device or queue, so the ordering contracts are the
//! wrapped backend's. The cost is one indirect call per operation.

use std::any::Any;
use std::fmt;

use crate::amo::{AmoOp, SignalOp};
use crate::backend::{Backend, Device, Queue, WaitSpec};
use crate::caps::Caps;
use crate::error::{DeviceError, QueueError};
use crate::exchanged::Exchanged;
use crate::topology::Topology;
use crate::types::{Copier, Instant, LocalRange, MemKind, Pe, RemoteRange, SegmentKey, Ticket};

/// The backend whose device and queues are those of a backend chosen at run time.
#[derive(Debug)]
pub enum AnyBackend {}

impl Backend for AnyBackend {
    type Device = AnyDevice;
    type Queue = AnyQueue;
}

/// A device of any backend.
pub struct AnyDevice {
    inner: Box<dyn ErasedDevice>,
}

/// A queue of any backend's device.
pub struct AnyQueue {
    inner: Box<dyn ErasedQueue>,
}

impl AnyDevice {
    /// Wraps `device`; its queues are wrapped as they are created.
    pub fn new<D>(device: D) -> AnyDevice
    where
        D: Device + 'static,
    {
        AnyDevice {
            inner: Box::new(device),
        }
    }

    /// The wrapped device, if it is a `D`: for what one backend offers beyond the contract
    /// (the process backend's bootstrap client).
    pub fn downcast_ref<D: Device + 'static>(&self) -> Option<&D> {
        self.inner.as_any().downcast_ref()
    }
}

impl AnyQueue {
    /// The wrapped queue, if it is a `Q`: for what one backend offers beyond the contract
    /// (ordering a CUDA queue with a program's own stream).
    pub fn downcast_ref<Q: Queue + 'static>(&self) -> Option<&Q> {
        self.inner.as_any().downcast_ref()
    }
}

impl fmt::Debug for AnyDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyDevice")
            .field("pe", &self.inner.pe())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for AnyQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyQueue").finish_non_exhaustive()
    }
}

/// [`Device`] with its queue type erased: what [`AnyDevice`] holds.
trait ErasedDevice {
    fn as_any(&self) -> &dyn Any;
    fn pe(&self) -> Pe;
    fn n_pes(&self) -> u32;
    fn caps(&self) -> &Caps;
    fn topology(&self) -> &Topology;
    fn now(&self) -> Instant;
    fn create_segment(&self, kind: MemKind, len_bytes: u64) -> Result<SegmentKey, DeviceError>;
    fn create_growable_segment(
        &self,
        kind: MemKind,
        len_bytes: u64,
        backed_bytes: u64,
    ) -> Result<SegmentKey, DeviceError>;
    fn grow_segment(
        &self,
        kind: MemKind,
        backed_bytes: u64,
        deadline: Instant,
    ) -> Result<(), DeviceError>;
    fn attach_buffer(
        &self,
        kind: MemKind,
        offset_bytes: u64,
        buffer_addr: u64,
        len_bytes: u64,
        deadline: Instant,
    ) -> Result<(), DeviceError>;
    fn detach_buffer(
        &self,
        kind: MemKind,
        offset_bytes: u64,
        len_bytes: u64,
    ) -> Result<(), DeviceError>;
    fn share_static_data(&self) -> Result<Option<(SegmentKey, u64)>, DeviceError>;
    fn import_segment(&self, peer: Pe, kind: MemKind, key: &SegmentKey) -> Result<(), DeviceError>;
    fn import_segments(
        &self,
        all: &Exchanged,
        offset: usize,
        kinds: &[MemKind],
    ) -> Result<(), DeviceError>;
    fn load_store_addr(&self, range: RemoteRange) -> Option<u64>;
    fn exchange(&self, mine: &[u8], deadline: Instant) -> Result<Exchanged, QueueError>;
    fn create_queue(&self) -> Result<AnyQueue, DeviceError>;
    fn note_kernel_launch(&self);
    fn set_word_names(&self, names: std::sync::Arc<crate::WordNames>);
    fn note_kernel_event(&self, event: crate::KernelEvent<'_>);
    fn note_host_thread_event(&self, event: crate::HostThreadEvent);
    fn mapped_load_addr(&self, range: RemoteRange) -> Option<u64>;
    fn note_mapped_loads(&self, pe: Pe, bytes: u64);
    fn read_local(&self, src: LocalRange, out: &mut [u8]);
    fn write_local(&self, dst: LocalRange, data: &[u8]);
    fn wait_until(&self, spec: WaitSpec, deadline: Instant) -> Result<u64, QueueError>;
    fn wait_until_any(
        &self,
        specs: &[WaitSpec],
        deadline: Instant,
    ) -> Result<(usize, u64), QueueError>;
    fn test(&self, spec: WaitSpec) -> Option<u64>;
}

/// Forwards the methods named to `self.inner` (`inner`), or in the erasing impls to the
/// wrapped type's own implementation of `$trait` (`own $trait`, spelled out because both
/// traits have methods of the same names).
macro_rules! forward {
    ((inner) $($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        $(
            fn $name(&self, $($arg: $ty),*) -> $ret {
                self.inner.$name($($arg),*)
            }
        )*
    };
    ((own $trait:ident) $($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        $(
            fn $name(&self, $($arg: $ty),*) -> $ret {
                $trait::$name(self, $($arg),*)
            }
        )*
    };
}

/// The methods [`Device`] and [`ErasedDevice`] share, with the same signature.
macro_rules! device_methods {
    ($($target:tt)*) => {
        forward! { ($($target)*)
            pe() -> Pe;
            n_pes() -> u32;
            caps() -> &Caps;
            topology() -> &Topology;
            now() -> Instant;
            create_segment(kind: MemKind, len_bytes: u64) -> Result<SegmentKey, DeviceError>;
            create_growable_segment(kind: MemKind, len_bytes: u64, backed_bytes: u64)
                -> Result<SegmentKey, DeviceError>;
            grow_segment(kind: MemKind, backed_bytes: u64, deadline: Instant)
                -> Result<(), DeviceError>;
            attach_buffer(kind: MemKind, offset_bytes: u64, buffer_addr: u64, len_bytes: u64,
                deadline: Instant) -> Result<(), DeviceError>;
            detach_buffer(kind: MemKind, offset_bytes: u64, len_bytes: u64)
                -> Result<(), DeviceError>;
            share_static_data() -> Result<Option<(SegmentKey, u64)>, DeviceError>;
            import_segment(peer: Pe, kind: MemKind, key: &SegmentKey) -> Result<(), DeviceError>;
            import_segments(all: &Exchanged, offset: usize, kinds: &[MemKind])
                -> Result<(), DeviceError>;
            load_store_addr(range: RemoteRange) -> Option<u64>;
            exchange(mine: &[u8], deadline: Instant) -> Result<Exchanged, QueueError>;
            note_kernel_launch() -> ();
            set_word_names(names: std::sync::Arc<crate::WordNames>) -> ();
            note_kernel_event(event: crate::KernelEvent<'_>) -> ();
            note_host_thread_event(event: crate::HostThreadEvent) -> ();
            mapped_load_addr(range: RemoteRange) -> Option<u64>;
            note_mapped_loads(pe: Pe, bytes: u64) -> ();
            read_local(src: LocalRange, out: &mut [u8]) -> ();
            write_local(dst: LocalRange, data: &[u8]) -> ();
            wait_until(spec: WaitSpec, deadline: Instant) -> Result<u64, QueueError>;
            wait_until_any(specs: &[WaitSpec], deadline: Instant)
                -> Result<(usize, u64), QueueError>;
            test(spec: WaitSpec) -> Option<u64>;
        }
    };
}

/// The methods [`Queue`] and [`ErasedQueue`] share.
macro_rules! queue_methods {
    ($($target:tt)*) => {
        forward! { ($($target)*)
            put(dst: RemoteRange, data: &[u8], copier: Copier) -> Result<Ticket, QueueError>;
            put_from_local(dst: RemoteRange, src: LocalRange) -> Result<Ticket, QueueError>;
            get(src: RemoteRange) -> Result<Ticket, QueueError>;
            get_now(src: RemoteRange, out: &mut [u8]) -> Result<bool, QueueError>;
            get_into(src: RemoteRange, dst: LocalRange) -> Result<Ticket, QueueError>;
            amo(dst: RemoteRange, op: AmoOp, fetch: bool) -> Result<Ticket, QueueError>;
            amo_now(dst: RemoteRange, op: AmoOp) -> Result<Option<u64>, QueueError>;
            put_signal(dst: RemoteRange, data: &[u8], signal: RemoteRange, op: SignalOp,
                value: u64, copier: Copier) -> Result<Ticket, QueueError>;
            fence() -> Result<(), QueueError>;
            serialize(deadline: Instant) -> Result<(), QueueError>;
            quiet(deadline: Instant) -> Result<(), QueueError>;
            quiet_now() -> Result<bool, QueueError>;
            wait_ticket(ticket: Ticket, deadline: Instant) -> Result<(), QueueError>;
            is_complete(ticket: Ticket) -> bool;
            take_fetched(ticket: Ticket) -> Vec<u8>;
        }
    };
}

impl<D: Device + 'static> ErasedDevice for D {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn create_queue(&self) -> Result<AnyQueue, DeviceError> {
        let queue = <D as Device>::create_queue(self)?;
        Ok(AnyQueue {
            inner: Box::new(queue),
        })
    }

    device_methods!(own Device);
}

impl Device for AnyDevice {
    type B = AnyBackend;

    fn create_queue(&self) -> Result<AnyQueue, DeviceError> {
        self.inner.create_queue()
    }

    device_methods!(inner);
}

/// [`Queue`] with its backend erased: what [`AnyQueue`] holds.
trait ErasedQueue {
    fn as_any(&self) -> &dyn Any;
    fn put(&self, dst: RemoteRange, data: &[u8], copier: Copier) -> Result<Ticket, QueueError>;
    fn put_from_local(&self, dst: RemoteRange, src: LocalRange) -> Result<Ticket, QueueError>;
    fn get(&self, src: RemoteRange) -> Result<Ticket, QueueError>;
    fn get_now(&self, src: RemoteRange, out: &mut [u8]) -> Result<bool, QueueError>;
    fn get_into(&self, src: RemoteRange, dst: LocalRange) -> Result<Ticket, QueueError>;
    fn amo(&self, dst: RemoteRange, op: AmoOp, fetch: bool) -> Result<Ticket, QueueError>;
    fn amo_now(&self, dst: RemoteRange, op: AmoOp) -> Result<Option<u64>, QueueError>;
    fn put_signal(
        &self,
        dst: RemoteRange,
        data: &[u8],
        signal: RemoteRange,
        op: SignalOp,
        value: u64,
        copier: Copier,
    ) -> Result<Ticket, QueueError>;
    fn fence(&self) -> Result<(), QueueError>;
    fn serialize(&self, deadline: Instant) -> Result<(), QueueError>;
    fn quiet(&self, deadline: Instant) -> Result<(), QueueError>;
    fn quiet_now(&self) -> Result<bool, QueueError>;
    fn wait_ticket(&self, ticket: Ticket, deadline: Instant) -> Result<(), QueueError>;
    fn is_complete(&self, ticket: Ticket) -> bool;
    fn take_fetched(&self, ticket: Ticket) -> Vec<u8>;
}

impl<Q: Queue + 'static> ErasedQueue for Q {
    fn as_any(&self) -> &dyn Any {
        self
    }

    queue_methods!(own Queue);
}

impl Queue for AnyQueue {
    type B = AnyBackend;

    queue_methods!(inner);
}

#[cfg(test)]
mod tests;
