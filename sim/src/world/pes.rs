//! The PEs as the world sees them: running, blocked on something, finished or failed; how
//! a wait blocks and wakes, its deadline, and the reports of a missed deadline, a deadlock
//! or the time limit, which name every PE and what it waits for.

use hw::{MemKind, Pe, QueueError, RemoteRange, WaitReport, WaitSpec, waiting_for_any};

use crate::events::Event;
use crate::trace::Record;

use super::World;

/// Where a PE is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Status {
    /// A resume event is queued, or the PE is running.
    Runnable,
    Blocked,
    Finished,
    Failed,
}

/// What a blocked PE waits for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Blocked {
    Memory,
    Ticket {
        queue: u32,
        ticket: u64,
    },
    Quiet {
        queue: u32,
    },
    Exchange,
    /// A PE with several threads, each waiting for something (`PeState::thread_waits`).
    Threads,
}

/// What one thread of a PE with several threads waits for (`crate::threads`).
#[derive(Clone, Debug)]
pub(crate) enum ThreadWait {
    /// A wait of the world's: a ticket, a quiet, or any of the words `specs` to hold.
    World {
        thread: u32,
        what: Blocked,
        specs: Vec<WaitSpec>,
    },
    /// A thread held by the program's own synchronisation (a mutex, a condition, a join);
    /// `timed` if it also wakes at a deadline (a timed wait, a sleep).
    Parked {
        thread: u32,
        why: String,
        timed: bool,
    },
}

/// One PE as the world sees it.
#[derive(Debug)]
pub(super) struct PeState {
    pub(super) clock_ns: u64,
    pub(super) status: Status,
    pub(super) blocked: Option<Blocked>,
    /// What a PE blocked on [`Blocked::Memory`] waits for: any of these words to hold. Kept
    /// between waits, so a wait allocates nothing.
    pub(super) watching: Vec<WaitSpec>,
    /// Set while the PE yielded just before a wait on the words in `watching`: the wait's
    /// deadline. The world then tests those words when it resumes the PE, and blocks the PE
    /// there if none holds, instead of resuming it only for it to block
    /// ([`World::reschedule_to_test`]).
    test_at_resume: Option<u64>,
    wake: Option<Result<(), QueueError>>,
    pub(super) exchange_result: Option<hw::Exchanged>,
    /// What each thread of a PE blocked on [`Blocked::Threads`] waits for; the words of
    /// their memory waits are in `watching`.
    pub(super) thread_waits: Vec<ThreadWait>,
    failure: Option<String>,
    /// Which kinds of segment this PE imported of every PE at once (`import_segments`).
    imported_of_all: [bool; MemKind::COUNT],
    /// Which peers' segments this PE imported one by one: bit `MemKind::COUNT * peer +
    /// kind`; empty until the first, so that a run whose PEs import every PE at once holds
    /// no `n²` bits.
    imported: Vec<u64>,
    /// This PE's words in the program's terms, for the reports of its waits.
    pub(super) names: Option<std::sync::Arc<hw::WordNames>>,
}

impl PeState {
    /// A PE about to start its program at `startup_ns`, in a world of `n_pes`.
    pub(super) fn new(startup_ns: u64) -> PeState {
        PeState {
            clock_ns: startup_ns,
            status: Status::Runnable,
            blocked: None,
            watching: Vec::new(),
            test_at_resume: None,
            wake: None,
            exchange_result: None,
            thread_waits: Vec::new(),
            failure: None,
            imported_of_all: [false; MemKind::COUNT],
            imported: Vec::new(),
            names: None,
        }
    }
}

impl World {
    /// Names `pe`'s words in its reports ([`hw::Device::set_word_names`]).
    pub(crate) fn set_word_names(&mut self, pe: u32, names: std::sync::Arc<hw::WordNames>) {
        self.pes[pe as usize].names = Some(names);
    }

    pub(crate) fn block(&mut self, pe: u32, what: Blocked, deadline_ns: u64) {
        self.blocked_bits[pe as usize / 64] |= 1 << (pe % 64);
        let state = &mut self.pes[pe as usize];
        state.status = Status::Blocked;
        state.blocked = Some(what);
        state.wake = None;
        if deadline_ns < u64::MAX {
            self.deadlines.insert(deadline_ns.max(self.now_ns), pe);
        }
        // A queue that lost an operation at a crashed PE can never satisfy the wait.
        if let Some(err) = self.broken_queue_error(pe) {
            self.wake(pe, self.now_ns, Err(err));
        }
    }

    /// Marks `pe` blocked until any of `specs` holds, or until `deadline_ns`.
    pub(crate) fn block_on_words(&mut self, pe: u32, specs: &[WaitSpec], deadline_ns: u64) {
        let watching = &mut self.pes[pe as usize].watching;
        watching.clear();
        watching.extend_from_slice(specs);
        self.block_on_watched(pe, deadline_ns);
    }

    /// Marks `pe` blocked until any of the words in its `watching` holds, or `deadline_ns`.
    fn block_on_watched(&mut self, pe: u32, deadline_ns: u64) {
        self.block(pe, Blocked::Memory, deadline_ns);
        self.watch_all(pe);
    }

    /// Queues `pe`, which is about to wait until any of `specs` holds (or `deadline_ns`), to
    /// continue at its own clock, where the world tests the words before resuming it: if none
    /// holds, `pe` blocks right there ([`World::test_at_resume`]).
    ///
    /// Why this changes nothing a run does: a PE resumed at its clock would do exactly that
    /// first (bring its memory up to its clock, test the words, block), with nothing else
    /// happening in between; the world doing it saves two switches of the PE's coroutine per
    /// wait, most of the waits of a big barrier.
    pub(crate) fn reschedule_to_test(&mut self, pe: u32, specs: &[WaitSpec], deadline_ns: u64) {
        let state = &mut self.pes[pe as usize];
        state.watching.clear();
        state.watching.extend_from_slice(specs);
        state.test_at_resume = Some(deadline_ns);
        self.reschedule(pe);
    }

    /// At the resume of `pe`, the test that [`World::reschedule_to_test`] asked for: blocks
    /// `pe` and returns `true` if none of its words holds.
    pub(super) fn test_at_resume(&mut self, pe: u32) -> bool {
        let Some(deadline_ns) = self.pes[pe as usize].test_at_resume.take() else {
            return false;
        };
        // A stopped run resumes the PE to unwind it (`PeHandle::suspend`).
        if self.abort.is_some() {
            return false;
        }
        self.observe(pe);
        let state = &self.pes[pe as usize];
        if state
            .watching
            .iter()
            .any(|spec| self.evaluate(pe, spec).is_some())
        {
            return false;
        }
        self.block_on_watched(pe, deadline_ns);
        true
    }

    /// Marks `pe`, whose threads all wait, blocked until what any of them waits for happens,
    /// or until `deadline_ns`; the threads then look again (`crate::threads`).
    pub(crate) fn block_threads(&mut self, pe: u32, waits: Vec<ThreadWait>, deadline_ns: u64) {
        let state = &mut self.pes[pe as usize];
        state.watching.clear();
        for wait in &waits {
            if let ThreadWait::World {
                what: Blocked::Memory,
                specs,
                ..
            } = wait
            {
                state.watching.extend_from_slice(specs);
            }
        }
        state.thread_waits = waits;
        self.block(pe, Blocked::Threads, deadline_ns);
        self.watch_all(pe);
    }

    /// Schedules the drains of every word in `pe`'s `watching` ([`World::watch`]).
    fn watch_all(&mut self, pe: u32) {
        for i in 0..self.pes[pe as usize].watching.len() {
            let spec = self.pes[pe as usize].watching[i];
            self.watch(pe, &spec);
        }
    }

    /// Every wait of the world's that blocked `pe` has: its own, or its threads'.
    pub(super) fn waits_of(&self, pe: u32) -> impl Iterator<Item = Blocked> + '_ {
        let state = &self.pes[pe as usize];
        let own = state.blocked.filter(|b| !matches!(b, Blocked::Threads));
        let threads = state
            .blocked
            .filter(|b| matches!(b, Blocked::Threads))
            .into_iter()
            .flat_map(|_| state.thread_waits.iter())
            .filter_map(|wait| match wait {
                ThreadWait::World { what, .. } => Some(*what),
                ThreadWait::Parked { .. } => None,
            });
        own.into_iter().chain(threads)
    }

    /// The error of a thread's wait for `what` that passed its deadline, recorded as a
    /// failure of the run as [`World::miss_deadline`] records a PE's.
    pub(crate) fn thread_deadline_error(
        &mut self,
        pe: u32,
        what: Blocked,
        specs: &[WaitSpec],
    ) -> QueueError {
        let err = QueueError::Deadline {
            pe: Pe(pe),
            waiting_for: self.describe_blocked(pe, what, specs),
            deadline: hw::Instant(self.now_ns),
        };
        self.trace.record(Record::Deadline {
            pe,
            at_ns: self.now_ns,
        });
        self.record_failure(format!("{err}"));
        err
    }

    /// What a blocked PE was woken with.
    pub(crate) fn take_wake(&mut self, pe: u32) -> Result<(), QueueError> {
        self.pes[pe as usize].wake.take().unwrap_or(Ok(()))
    }

    pub(super) fn is_blocked(&self, pe: u32) -> bool {
        self.blocked_bits[pe as usize / 64] & (1 << (pe % 64)) != 0
    }

    pub(super) fn wake(&mut self, pe: u32, at_ns: u64, result: Result<(), QueueError>) {
        self.blocked_bits[pe as usize / 64] &= !(1 << (pe % 64));
        let state = &mut self.pes[pe as usize];
        debug_assert_eq!(state.status, Status::Blocked);
        state.status = Status::Runnable;
        state.blocked = None;
        state.wake = Some(result);
        self.deadlines.remove(pe);
        self.events.push(at_ns, Event::Resume { pe });
    }

    pub(crate) fn finish(&mut self, pe: u32, failure: Option<String>) {
        let state = &mut self.pes[pe as usize];
        state.status = if failure.is_some() {
            Status::Failed
        } else {
            Status::Finished
        };
        state.failure = failure;
        self.trace.record(Record::Finish {
            pe,
            clock_ns: state.clock_ns,
        });
    }

    /// Whether `pe` still runs its program (runnable or blocked).
    pub(super) fn is_live(&self, pe: u32) -> bool {
        matches!(
            self.pes[pe as usize].status,
            Status::Runnable | Status::Blocked
        )
    }

    /// Ends `pe` for good where it stands (an injected crash, `injected.rs`): its wait is
    /// dropped, it is never resumed, and reports list it as failed with `message`.
    pub(super) fn crash_pe(&mut self, pe: u32, message: String) {
        self.blocked_bits[pe as usize / 64] &= !(1 << (pe % 64));
        let state = &mut self.pes[pe as usize];
        state.status = Status::Failed;
        state.blocked = None;
        state.wake = None;
        state.failure = Some(message);
        self.deadlines.remove(pe);
        self.trace.record(Record::Finish {
            pe,
            clock_ns: self.now_ns,
        });
    }

    pub(crate) fn mark_imported(&mut self, pe: u32, peer: u32, kind: MemKind) {
        let bit = MemKind::COUNT * peer as usize + kind.index();
        let n_words = (MemKind::COUNT * self.n_pes as usize).div_ceil(64);
        let imported = &mut self.pes[pe as usize].imported;
        imported.resize(n_words, 0);
        imported[bit / 64] |= 1 << (bit % 64);
    }

    /// Marks every PE's segment of `kind` imported by `pe`.
    pub(crate) fn mark_imported_of_all(&mut self, pe: u32, kind: MemKind) {
        self.pes[pe as usize].imported_of_all[kind.index()] = true;
    }

    pub(crate) fn assert_imported(&self, pe: u32, range: &RemoteRange) {
        let state = &self.pes[pe as usize];
        let bit = MemKind::COUNT * range.pe.idx() + range.kind.index();
        let one_by_one = || {
            state
                .imported
                .get(bit / 64)
                .is_some_and(|w| w & (1 << (bit % 64)) != 0)
        };
        assert!(
            state.imported_of_all[range.kind.index()] || one_by_one(),
            "PE {pe} accessed {}'s {:?} segment without importing it (contract violation)",
            range.pe,
            range.kind
        );
    }

    /// Ends `pe`'s wait with [`QueueError::Deadline`].
    pub(super) fn miss_deadline(&mut self, pe: u32) {
        if matches!(self.pes[pe as usize].blocked, Some(Blocked::Threads)) {
            // A thread's timed wait is due: the threads look again, and one whose own wait
            // passed its deadline fails it (`crate::threads`).
            self.wake(pe, self.now_ns, Ok(()));
            return;
        }
        let waiting_for = self.describe_wait(pe);
        let err = QueueError::Deadline {
            pe: Pe(pe),
            waiting_for,
            deadline: hw::Instant(self.now_ns),
        };
        self.trace.record(Record::Deadline {
            pe,
            at_ns: self.now_ns,
        });
        self.record_failure(format!("{err}"));
        self.wake(pe, self.now_ns, Err(err));
    }

    fn record_failure(&mut self, message: String) {
        tracing::warn!(target: crate::TRACING_TARGET, seed = self.params.seed, "{message}");
        self.failure.get_or_insert(message);
    }

    /// The earliest deadline of a PE one of whose threads sleeps or waits with a timeout: a
    /// wake-up, not a failure, so it comes before a deadlock is declared.
    pub(super) fn timed_thread_due(&self) -> Option<(u64, u32)> {
        self.deadlines.live().find(|&(_, pe)| {
            let state = &self.pes[pe as usize];
            matches!(state.blocked, Some(Blocked::Threads))
                && state
                    .thread_waits
                    .iter()
                    .any(|w| matches!(w, ThreadWait::Parked { timed: true, .. }))
        })
    }

    /// If every live PE is blocked and nothing is in flight, wakes them all with a
    /// [`QueueError::Deadlock`] naming who waits for what. Returns whether it did.
    pub(super) fn resolve_deadlock(&mut self) -> bool {
        let blocked: Vec<u32> = (0..self.n_pes)
            .filter(|&p| self.pes[p as usize].status == Status::Blocked)
            .collect();
        if blocked.is_empty() {
            return false;
        }
        let report = WaitReport {
            waits: blocked
                .iter()
                .map(|&p| (Pe(p), self.describe_wait(p)))
                .collect(),
            failed: (0..self.n_pes)
                .filter_map(|p| {
                    let s = &self.pes[p as usize];
                    s.failure
                        .clone()
                        .map(|message| hw::PeFailure { pe: Pe(p), message })
                })
                .collect(),
            finished: (0..self.n_pes)
                .filter(|&p| self.pes[p as usize].status == Status::Finished)
                .map(Pe)
                .collect(),
        };
        let err = QueueError::Deadlock { report };
        self.record_failure(format!("{err}"));
        for p in blocked {
            self.wake(p, self.now_ns, Err(err.clone()));
        }
        true
    }

    pub(super) fn stop_at_time_limit(&mut self) {
        let message = format!(
            "stopped at the simulated time limit of {} ns; a PE may be spinning (raise the limit \
             with --time-limit-ms if the program is just long)",
            self.params.time_limit_ns
        );
        self.stop(message);
    }

    /// Stops the run at the first read of bytes a dropped payload wrote: what it read is not
    /// what the program wrote, so nothing after it can be trusted.
    pub(super) fn stop_at_unkept_read(&mut self, read: crate::memory::UnkeptRead) {
        if self.abort.is_some() {
            return;
        }
        let from = self.params.drop_payloads_from.unwrap_or(0);
        let message = format!(
            "PE {} read {} bytes at offset {:#x} of its {:?} segment, which a put of at least \
             {from} bytes wrote without its bytes (the range {:#x}..{:#x}): payloads that large \
             are dropped in this run. Keep them (no --drop-payloads-from, or a larger size) to \
             read them back",
            read.pe, read.len, read.offset, read.kind, read.dropped.0, read.dropped.1
        );
        self.stop(message);
    }

    /// Ends the run: records `message` as its failure and unwinds every PE.
    pub(super) fn stop(&mut self, message: String) {
        self.record_failure(message.clone());
        self.abort = Some(message.clone());
        for p in 0..self.n_pes {
            if self.pes[p as usize].status == Status::Blocked {
                self.wake(p, self.now_ns, Err(QueueError::Lost(message.clone())));
            }
        }
    }

    pub(crate) fn describe_wait(&self, pe: u32) -> String {
        let state = &self.pes[pe as usize];
        match state.blocked {
            Some(Blocked::Threads) => {
                let waits: Vec<String> = state
                    .thread_waits
                    .iter()
                    .map(|wait| match wait {
                        ThreadWait::World {
                            thread,
                            what,
                            specs,
                        } => format!(
                            "thread {thread} waits for {}",
                            self.describe_blocked(pe, *what, specs)
                        ),
                        ThreadWait::Parked { thread, why, .. } => {
                            format!("thread {thread} {why}")
                        }
                    })
                    .collect();
                format!("its threads: {}", waits.join("; "))
            }
            Some(what) => self.describe_blocked(pe, what, &state.watching),
            None => "nothing".to_string(),
        }
    }

    /// What `pe` waits for when it waits for `what`: for a memory wait, any of `watching`.
    fn describe_blocked(&self, pe: u32, what: Blocked, watching: &[WaitSpec]) -> String {
        match what {
            Blocked::Memory => {
                let holds: Vec<u64> = watching
                    .iter()
                    .map(|spec| {
                        let w = spec.word;
                        self.mem.read_word(pe, w.kind, w.offset, spec.width.bytes())
                    })
                    .collect();
                waiting_for_any(watching, &holds, self.pes[pe as usize].names.as_deref())
            }
            Blocked::Ticket { queue, ticket } => {
                let peer = self
                    .ops
                    .iter()
                    .flatten()
                    .find(|f| f.queue == queue && f.ticket == ticket);
                let acked = self.events.iter().find_map(|e| match e {
                    Event::Ack {
                        op,
                        queue: q,
                        ticket: t,
                    } if q == queue && t == ticket => Some(op),
                    _ => None,
                });
                match (peer, acked) {
                    (Some(f), _) => format!(
                        "the {} to PE {} (ticket {ticket}) to complete",
                        f.kind.code().name(),
                        f.dst
                    ),
                    (None, Some(op)) => format!(
                        "the acknowledgement of the {} of ticket {ticket} to come back",
                        op.name()
                    ),
                    (None, None) => format!("ticket {ticket} of queue {queue} to complete"),
                }
            }
            Blocked::Quiet { queue } => format!(
                "quiet: {} operations of queue {queue} to complete",
                self.queues[queue as usize].tickets.incomplete()
            ),
            Blocked::Exchange => format!(
                "a bootstrap exchange ({} of {} PEs arrived)",
                self.exchange.arrived, self.n_pes
            ),
            Blocked::Threads => self.describe_wait(pe),
        }
    }
}
