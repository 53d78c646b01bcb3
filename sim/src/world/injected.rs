//! Injected faults in the world (`crate::injection`, docs/faults.md): slow PEs' clocks, crashes
//! at their time, and operations lost at a crashed PE. Link changes live in the network.
//!
//! A crash takes effect at its time in the event order, like a deadline: a crashed PE is not
//! live (deadlock reports count it as failed), is never resumed, and what it posted for after
//! its crash never enters the network. An operation that reaches a crashed PE is lost, and the
//! queue that posted it is broken, as an InfiniBand queue pair goes to its error state: the
//! wait that needed it, and every later wait on that queue that cannot be satisfied at once,
//! fails with [`QueueError::Lost`] naming the operation and the crash.

use std::collections::BTreeMap;
use std::rc::Rc;

use hw::QueueError;

use crate::injection::{CheckedPlan, CrashOutcome, Factor, InjectionReport, Interval, Time};

use super::{Blocked, World};

/// How long after the GPUs' start-up a random crash or stall may start: about the length of the
/// built-in workloads on a single host, so most random crashes land while PEs still run.
const RANDOM_WINDOW_NS: u64 = 100_000;

/// The world's state of injected faults; empty in a run without a plan.
#[derive(Debug, Default)]
pub(crate) struct Injected {
    /// Per PE, how many times as long its own time takes; empty when no PE is slow.
    slowdown: Vec<Factor>,
    /// Crashes still to come, `(at_ns, pe)`, latest first: the next one is at the end.
    pending: Vec<(u64, u32)>,
    /// Per PE, when it crashed; empty when no crash is planned.
    crashed_at_ns: Vec<Option<u64>>,
    /// Queues that lost an operation, and the message their failed waits carry.
    broken: BTreeMap<u32, String>,
    report: Option<InjectionReport>,
}

impl Injected {
    /// `ns` of `pe`'s own time, as long as the PE's slowdown makes it.
    #[inline]
    pub(super) fn scale_pe_ns(&self, pe: u32, ns: u64) -> u64 {
        if self.slowdown.is_empty() {
            ns
        } else {
            self.slowdown[pe as usize].apply(ns)
        }
    }

    /// When the next crash is due.
    #[inline]
    pub(super) fn next_crash_ns(&self) -> Option<u64> {
        self.pending.last().map(|&(at_ns, _)| at_ns)
    }

    #[inline]
    fn crashed(&self, pe: u32) -> Option<u64> {
        self.crashed_at_ns.get(pe as usize).copied().flatten()
    }

    /// What the run's report says of the injections; `None` without a plan.
    pub(crate) fn take_report(&mut self) -> Option<InjectionReport> {
        self.report.take()
    }
}

impl World {
    /// Applies `plan` before the first event, drawing its random parts from the run's choice
    /// source; random times fall in the [`RANDOM_WINDOW_NS`] after the GPUs' start-up.
    pub(crate) fn inject(&mut self, plan: &CheckedPlan) {
        let topology = Rc::clone(&self.topology);
        let startup_ns = self.params.timing.startup_ns;
        let window = Interval {
            from_ns: startup_ns,
            to_ns: startup_ns + RANDOM_WINDOW_NS,
        };
        let resolved = plan.draw(&topology, window, &mut |n| self.injection_draw(n));
        tracing::info!(target: crate::TRACING_TARGET, seed = self.params.seed, faults = %resolved.drawn, "injecting faults");
        self.net.inject(&resolved.link_scales, &resolved.stalls);
        let injected = &mut self.injected;
        injected.slowdown = resolved.pe_slowdown;
        injected.pending = resolved.crashes.iter().rev().copied().collect();
        if !resolved.crashes.is_empty() {
            injected.crashed_at_ns = vec![None; self.n_pes as usize];
        }
        injected.report = Some(InjectionReport {
            drawn: resolved.drawn,
            crashes: resolved
                .crashes
                .iter()
                .map(|&(at_ns, pe)| CrashOutcome {
                    pe,
                    at_ns,
                    happened: false,
                })
                .collect(),
            lost_ops: 0,
        });
    }

    /// Carries out the next crash if it comes no later than the next deadline and the event
    /// at `event_ns`; returns whether it did.
    pub(super) fn crash_due(&mut self, event_ns: u64) -> bool {
        let Some(&(at_ns, pe)) = self.injected.pending.last() else {
            return false;
        };
        let deadline_ns = self.deadlines.first().map_or(u64::MAX, |(t, _)| t);
        if at_ns > event_ns.min(deadline_ns) {
            return false;
        }
        self.injected.pending.pop();
        self.now_ns = self.now_ns.max(at_ns);
        if !self.is_live(pe) {
            // It finished first: the report says so.
            return true;
        }
        self.injected.crashed_at_ns[pe as usize] = Some(at_ns);
        if let Some(report) = &mut self.injected.report {
            for crash in report.crashes.iter_mut().filter(|c| c.pe == pe) {
                crash.happened = true;
            }
        }
        tracing::warn!(target: crate::TRACING_TARGET, seed = self.params.seed, pe, at_ns, "PE {pe} crashes (injected)");
        self.crash_pe(pe, format!("crashed at {} (injected)", Time(at_ns)));
        true
    }

    /// Whether the operation in `slot`, entering the network, was posted after its PE crashed:
    /// it never leaves, and its slot is freed.
    pub(super) fn dropped_at_crashed_source(&mut self, slot: u32) -> bool {
        if self.injected.crashed_at_ns.is_empty() {
            return false;
        }
        let src = self.source_of(
            self.ops[slot as usize]
                .as_ref()
                .expect("an issued op is in flight"),
        );
        if self.injected.crashed(src).is_none() {
            return false;
        }
        self.forget_op(slot);
        true
    }

    /// Whether the operation in `slot`, arriving, found its target crashed: it is lost, its
    /// queue broken, and a wait of the queue's owner on that queue fails.
    pub(super) fn lost_at_crashed_target(&mut self, slot: u32) -> bool {
        if self.injected.crashed_at_ns.is_empty() {
            return false;
        }
        let flight = self.ops[slot as usize]
            .as_ref()
            .expect("an arriving op is in flight");
        let Some(crashed_ns) = self.injected.crashed(flight.dst) else {
            return false;
        };
        let message = format!(
            "the {} to PE {} (ticket {}) was lost: PE {} crashed at {}",
            flight.kind.code().name(),
            flight.dst,
            flight.ticket,
            flight.dst,
            Time(crashed_ns)
        );
        let queue = flight.queue;
        self.forget_op(slot);
        if let Some(report) = &mut self.injected.report {
            report.lost_ops += 1;
        }
        self.injected
            .broken
            .entry(queue)
            .or_insert_with(|| message.clone());
        let owner = self.queues[queue as usize].owner;
        if self.is_blocked(owner) && self.waits_on_queue(owner, queue) {
            self.wake(owner, self.now_ns, Err(QueueError::Lost(message)));
        }
        true
    }

    /// The failure of a wait on a broken queue: `pe` is about to block, and a queue it waits
    /// for lost an operation, so the wait can never be satisfied.
    pub(super) fn broken_queue_error(&self, pe: u32) -> Option<QueueError> {
        if self.injected.broken.is_empty() {
            return None;
        }
        self.waits_of(pe).find_map(|what| {
            let queue = queue_of(what)?;
            let message = self.injected.broken.get(&queue)?;
            Some(QueueError::Lost(message.clone()))
        })
    }

    /// Whether `pe` waits for operations of `queue`.
    fn waits_on_queue(&self, pe: u32, queue: u32) -> bool {
        self.waits_of(pe).any(|what| queue_of(what) == Some(queue))
    }
}

/// The queue whose operations a wait for `what` waits for, if it waits for some.
fn queue_of(what: Blocked) -> Option<u32> {
    match what {
        Blocked::Ticket { queue, .. } | Blocked::Quiet { queue } => Some(queue),
        Blocked::Memory | Blocked::Exchange | Blocked::Threads => None,
    }
}
