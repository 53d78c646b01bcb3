//! One collective call on one member, after agreement, and the moves its algorithms are made
//! of: pushes that signal, notes, reads of peers' memory, waits on this member's counters, and
//! plain access to its own memory. Members are named by team index throughout.

use hw::{Backend, Cmp, Copier, Device, Pe, Queue, SignalOp};

use crate::collectives::Kind;
use crate::collectives::plan::{Reach, Shape};
use crate::error::ShmemError;
use crate::memory::allocator::Span;
use crate::memory::sym::{Element, as_bytes, as_bytes_mut};
use crate::p2p::wait::word_spec;
use crate::pe::{local, remote};
use crate::shmem::Shmem;
use crate::team::{Members, Team};

/// A collective call every member agreed to make.
pub(crate) struct Call<'a, B: Backend> {
    pub(crate) shmem: &'a Shmem<B>,
    pub(crate) team: &'a Team,
    pub(crate) members: &'a Members,
    pub(crate) kind: Kind,
    /// This member's team index.
    pub(crate) me: u32,
    /// The team's size.
    pub(crate) n: u32,
    pub(crate) reach: Reach,
    /// How many consecutive members, from team PE 0 on, share a host.
    pub(crate) node_run: u32,
    /// Each member's element count (they differ only in collect).
    pub(crate) lens: Vec<u64>,
}

/// This member's collective counter `index`, with the arrivals earlier calls reserved on it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Counter {
    index: u32,
    base: u64,
}

impl<B: Backend> Call<'_, B> {
    /// The plan's inputs when each member moves `bytes`.
    pub(crate) fn shape(&self, bytes: u64) -> Shape {
        Shape {
            n_pes: self.n,
            reach: self.reach,
            node_run: self.node_run,
            bytes,
        }
    }

    /// The member `k` places ahead of this one (wrapping).
    pub(crate) fn ahead(&self, k: u32) -> u32 {
        ((u64::from(self.me) + u64::from(k)) % u64::from(self.n)) as u32
    }

    /// The member `k` places behind this one (wrapping).
    pub(crate) fn behind(&self, k: u32) -> u32 {
        self.ahead(self.n - k % self.n)
    }

    fn pe(&self, member: u32) -> Pe {
        Pe(self.members.world_pe(member))
    }

    /// Counter `index`, on which this call will wait for `arrivals` arrivals in all.
    pub(crate) fn counter(&self, index: u32, arrivals: u64) -> Counter {
        Counter {
            index,
            base: self.team.reserve_arrivals(index, arrivals),
        }
    }

    /// Waits until `arrivals` of this call's arrivals on `counter` are in; their data is
    /// then visible to this member.
    pub(crate) fn wait(&self, counter: Counter, arrivals: u64) -> Result<(), ShmemError> {
        let word = local(self.team.area().collective_counter(counter.index));
        let spec = word_spec::<u64>(word, Cmp::Ge, counter.base + arrivals, self.kind.name());
        self.shmem.device.wait_until(spec, self.shmem.deadline())?;
        Ok(())
    }

    /// Writes each `(span, bytes)` piece into member `to`'s heap, then adds 1 to its counter
    /// `index`: once the target sees the count, every piece is there (a fence orders the
    /// pieces before the one that signals). With no bytes to send, it only signals.
    pub(crate) fn send(
        &self,
        to: u32,
        pieces: &[(Span, &[u8])],
        index: u32,
    ) -> Result<(), ShmemError> {
        let pe = self.pe(to);
        let queue = &self.shmem.queue;
        let signal = remote(self.team.area().collective_counter(index), pe);
        let mut pieces = pieces.iter().filter(|(span, _)| span.len_bytes > 0);
        let last = pieces.next_back();
        let mut earlier = false;
        for (span, data) in pieces {
            debug_assert_eq!(span.len_bytes, data.len() as u64);
            queue.put(remote(*span, pe), data, Copier::Device)?;
            earlier = true;
        }
        match last {
            Some((span, data)) => {
                debug_assert_eq!(span.len_bytes, data.len() as u64);
                if earlier {
                    queue.fence()?;
                }
                queue.put_signal(
                    remote(*span, pe),
                    data,
                    signal,
                    SignalOp::Add,
                    1,
                    Copier::Device,
                )?;
            }
            None => {
                queue.amo(signal, SignalOp::Add.as_amo(1), false)?;
            }
        }
        Ok(())
    }

    /// Adds 1 to member `to`'s counter `index`.
    pub(crate) fn notify(&self, to: u32, index: u32) -> Result<(), ShmemError> {
        self.send(to, &[], index)
    }

    /// Orders this member's earlier sends before its later ones, per target.
    pub(crate) fn fence(&self) -> Result<(), ShmemError> {
        Ok(self.shmem.queue.fence()?)
    }

    /// Reads `span` from each `(member, span)` (all in flight at once), then tells each of
    /// those members, on its counter `done`, that this member has finished reading it.
    pub(crate) fn pull<T: Element>(
        &self,
        reads: &[(u32, Span)],
        done: u32,
    ) -> Result<Vec<Vec<T>>, ShmemError> {
        let queue = &self.shmem.queue;
        let tickets = reads
            .iter()
            .map(|&(member, span)| queue.get(remote(span, self.pe(member))))
            .collect::<Result<Vec<_>, _>>()?;
        let mut fetched = Vec::with_capacity(reads.len());
        for ticket in tickets {
            queue.wait_ticket(ticket, self.shmem.deadline())?;
            fetched.push(elements(&queue.take_fetched(ticket)));
        }
        for &(member, _) in reads {
            self.notify(member, done)?;
        }
        Ok(fetched)
    }

    /// This member's own `span`, as elements.
    pub(crate) fn read<T: Element>(&self, span: Span) -> Vec<T> {
        let mut out = vec![T::zeroed(); count::<T>(span.len_bytes)];
        self.shmem
            .device
            .read_local(local(span), as_bytes_mut(&mut out));
        out
    }

    /// Stores `values` into this member's own `span`.
    pub(crate) fn write<T: Element>(&self, span: Span, values: &[T]) {
        debug_assert_eq!(span.len_bytes, as_bytes(values).len() as u64);
        if span.len_bytes > 0 {
            self.shmem.device.write_local(local(span), as_bytes(values));
        }
    }
}

/// How many `T` fit in `len_bytes` (none for a zero-sized `T`, which has no bytes to move).
fn count<T>(len_bytes: u64) -> usize {
    len_bytes
        .checked_div(std::mem::size_of::<T>() as u64)
        .unwrap_or(0) as usize
}

/// `bytes` as elements; copied, since a byte vector need not be aligned for `T`.
fn elements<T: Element>(bytes: &[u8]) -> Vec<T> {
    let mut out = vec![T::zeroed(); count::<T>(bytes.len() as u64)];
    as_bytes_mut(&mut out).copy_from_slice(bytes);
    out
}
