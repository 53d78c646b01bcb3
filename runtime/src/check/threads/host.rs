//! Races between the threads a PE's program starts (`pthread_create` on the simulator), from
//! what the program's side tells the detector ([`hw::HostThreadEvent`]).
//!
//! They reuse a kernel launch's bookkeeping with a block of one thread per thread, so that no
//! meeting orders them. Happens-before between them has the sources a C program has:
//!
//! - a start orders what the parent did before it before everything the child does;
//! - a release into an object (a mutex unlocked, a barrier reached, a thread's end, a SHMEM
//!   call returning) orders what the thread did before it before everything a thread that
//!   later acquires the object (the mutex locked, the barrier left, the join, a SHMEM call
//!   entered) does after; releases into one object accumulate;
//! - an atomic store or read-modify-write releases into its word and an atomic load or
//!   read-modify-write acquires from it, as acquire-release (the conservative reading).

use std::collections::HashMap;

use hw::{HostThreadEvent, KernelMemory, SyncObject, ThreadAccess};

use super::{Kernels, Knowledge, Launch};
use crate::check::report::AccessKind;

/// The threads of one PE's program.
#[derive(Debug)]
pub(crate) struct HostThreads {
    threads: Launch,
    /// What the releases into each object released, joined.
    objects: HashMap<SyncObject, Knowledge>,
}

impl HostThreads {
    fn new() -> HostThreads {
        let mut threads = Launch::new("the PE's threads", [1, 1, 1], [1, 1, 1]);
        threads.host = true;
        HostThreads {
            threads,
            objects: HashMap::new(),
        }
    }

    /// Makes room for thread `thread`: threads are told of as they start, but an event of a
    /// thread started before the PE's device existed may come first.
    fn make_room(&mut self, thread: u32) {
        let launch = &mut self.threads;
        while launch.epochs.len() <= thread as usize {
            launch.epochs.push(1);
            launch.knowledge.push(Default::default());
            launch.block_meetings.push(0);
            launch.warp_meetings.push(0);
            launch.grid[0] = launch.epochs.len() as u32;
        }
    }
}

impl Kernels {
    /// What a thread of `pe`'s program did.
    pub(crate) fn host_event(&mut self, pe: u32, event: HostThreadEvent) {
        let host = self.hosts[pe as usize].get_or_insert_with(HostThreads::new);
        match event {
            HostThreadEvent::Start { parent, child } => {
                host.make_room(parent.max(child));
                let released = host.threads.release(parent);
                host.threads.acquire(child, &released);
            }
            HostThreadEvent::Release { thread, object } => {
                host.make_room(thread);
                let released = host.threads.release(thread);
                host.objects.entry(object).or_default().join(&released);
            }
            HostThreadEvent::Acquire { thread, object } => {
                host.make_room(thread);
                if let Some(learned) = host.objects.get(&object).cloned() {
                    host.threads.acquire(thread, &learned);
                }
            }
            HostThreadEvent::Access {
                thread,
                memory,
                at,
                len_bytes,
                access,
            } => {
                host.make_room(thread);
                // (kind, acquires, releases): an atomic load is told as a volatile read and an
                // atomic store as a volatile write (C's volatile orders nothing, so the
                // program's side tells those as plain accesses).
                let (kind, sync) = match access {
                    ThreadAccess::Read => (AccessKind::LocalRead, (false, false)),
                    ThreadAccess::Write => (AccessKind::LocalWrite, (false, false)),
                    ThreadAccess::VolatileRead => (AccessKind::AtomicFetch, (true, false)),
                    ThreadAccess::VolatileWrite => (AccessKind::AtomicUpdate, (false, true)),
                    ThreadAccess::Atomic { fetch } => (AccessKind::AtomicUpdate, (fetch, true)),
                };
                let memory = match memory {
                    KernelMemory::Shared => KernelMemory::Global,
                    other => other,
                };
                let place = (memory, 0);
                let found = host
                    .threads
                    .access_as(thread, place, (at, len_bytes), kind, sync);
                for (first, second, conflict) in found {
                    self.found
                        .report(pe, &host.threads, place, (&first, &second), conflict);
                }
            }
        }
    }
}
