//! One simulated run on several threads: conservative parallel discrete-event simulation
//! with the NIC's latency as lookahead (docs/sim-parallel.md).
//!
//! The PEs are split by hosts into partitions ([`Split`]), each a world of its own that owns
//! its PEs' coroutines, memory, queues and NVLink links. Operations through a NIC leave their
//! partition at their issue event and are carried by one more world, the network, which owns
//! every link they take, and takes them in (time, partition, order sent) order: a function of
//! the partitions' own histories, whatever the threads did. Time advances in windows of the
//! lookahead: what a partition sends during a window arrives after it, so each partition runs
//! its window alone, then the network carries what was sent, then the next window starts.
//! Partitions draw their chances from streams of their own, so the run is a function of its
//! seed and the number of partitions, not of the number of threads.

mod split;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use hw::{Caps, LaunchError, PeFailure, Topology};

use crate::device::SimDevice;
use crate::exec::PeTasks;
use crate::handle::Shared;
use crate::memory::Layout;
use crate::report::{Ended, OpCounts};
use crate::world::{
    Incoming, Outgoing, PREFETCH_AHEAD, Part, Settle, WindowState, World, WorldParams,
};

pub(crate) use split::{Split, lookahead_ns};

/// How a parallel run is split and run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Parallel {
    /// Partitions: part of what the run is (its seed streams, its order of events).
    pub(crate) parts: u32,
    /// Threads that run them, 0 for one per core: only how fast.
    pub(crate) threads: u32,
}

/// How often the network, waiting for the partitions, looks whether a worker died.
const WATCH_PERIOD: Duration = Duration::from_millis(100);

/// Raises its flag if its worker thread unwinds (a bug of the simulator): the network would
/// otherwise wait for that worker's partitions forever, and the others for the network.
struct Watch<'a>(&'a AtomicBool);

impl Drop for Watch<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Release);
        }
    }
}

/// What the network tells a partition to do next.
#[derive(Debug)]
struct Command {
    /// Stop the run with this failure (another partition stopped).
    stop: Option<String>,
    incoming: Vec<Incoming>,
    /// An empty outbox to send the next window's operations in: partitions and the network
    /// hand their vectors back and forth rather than allocate new ones every window.
    spare: Vec<Outgoing>,
    settle: Settle,
    /// Run the window that ends here.
    end_ns: Option<u64>,
    /// The run is over.
    finish: bool,
}

/// What a partition says after a command.
#[derive(Debug)]
struct Report {
    part: u32,
    outbox: Vec<Outgoing>,
    /// The last command's inbox, emptied, for the network to fill again.
    spare: Vec<Incoming>,
    state: WindowState,
}

/// Everything the partitions sent, by time, ties by partition, and what one partition sent
/// at one time in the order it was sent. Each outbox is in time order already
/// (`World::take_outbox` sorts it), so a merge does; an outbox out of order is sorted first
/// all the same.
fn in_time_order(outboxes: &mut [Vec<Outgoing>]) -> impl Iterator<Item = Outgoing> + '_ {
    for outbox in outboxes.iter_mut() {
        if !outbox.is_sorted_by_key(Outgoing::at_ns) {
            outbox.sort_by_key(Outgoing::at_ns);
        }
    }
    let mut heads: BinaryHeap<Reverse<(u64, usize)>> = outboxes
        .iter()
        .enumerate()
        .filter_map(|(part, o)| o.first().map(|m| Reverse((m.at_ns(), part))))
        .collect();
    let mut drains: Vec<_> = outboxes
        .iter_mut()
        .map(|o| o.drain(..).peekable())
        .collect();
    std::iter::from_fn(move || {
        let Reverse((_, part)) = heads.pop()?;
        let next = drains[part].next();
        if let Some(m) = drains[part].peek() {
            heads.push(Reverse((m.at_ns(), part)));
        }
        next
    })
}

/// What is left of a partition's world once its run is over.
#[derive(Debug)]
struct Summary {
    counts: OpCounts,
    trace_hash: u64,
    events: u64,
    choices: u64,
    sim_time_ns: u64,
    memory_bytes_peak: u64,
    failure: Option<String>,
}

fn summary(world: &World) -> Summary {
    Summary {
        counts: world.counts,
        trace_hash: world.trace.hash,
        events: world.events_processed,
        choices: world.chooser.choices(),
        sim_time_ns: world.sim_time_ns(),
        memory_bytes_peak: world.mem.resident_bytes_peak,
        failure: world.failure.clone(),
    }
}

/// A partition's number, its PEs' results and what is left of its world.
type PartOutput<R> = (u32, Vec<Result<R, PeFailure>>, Summary);

/// What every partition's world is made of.
struct Recipe<'a> {
    topology: &'a Topology,
    n_pes: u32,
    caps: Caps,
    params: WorldParams,
    stack_bytes: usize,
    split: Arc<Split>,
}

impl Recipe<'_> {
    /// A world for partition `part` (the network when `part` is the number of partitions).
    /// Its chances come from a stream of its own.
    fn world(&self, part: u32) -> World {
        let mut params = self.params;
        let mut state =
            self.params.seed ^ (u64::from(part) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        params.seed = crate::entropy::splitmix64(&mut state);
        let topology = Rc::new(self.topology.clone());
        let mut world = World::new(
            topology,
            self.n_pes,
            self.caps.clone(),
            params,
            Layout::default(),
            None,
        );
        world.join(Part::new(part, Arc::clone(&self.split)));
        world
    }
}

/// Runs `pe_main` on every PE of a parallel run.
#[allow(clippy::too_many_arguments)] // the pieces of a `Sim`
pub(crate) fn launch<R, F>(
    parallel: Parallel,
    split: Arc<Split>,
    topology: &Topology,
    n_pes: u32,
    caps: Caps,
    params: WorldParams,
    stack_bytes: usize,
    pe_main: &F,
) -> Result<(Vec<Result<R, PeFailure>>, Ended), LaunchError>
where
    F: Fn(SimDevice) -> R + Sync,
    R: Send,
{
    let lookahead_ns = lookahead_ns(topology, params.timing.nic_ns);
    let recipe = Recipe {
        topology,
        n_pes,
        caps,
        params,
        stack_bytes,
        split,
    };
    let parts = parallel.parts;
    let threads = match parallel.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        asked => asked,
    }
    .clamp(1, parts);
    let (report_tx, report_rx) = channel();
    let (command_txs, command_rxs): (Vec<_>, Vec<_>) = (0..parts).map(|_| channel()).unzip();
    let mut command_rxs: Vec<Option<Receiver<Command>>> =
        command_rxs.into_iter().map(Some).collect();
    let mut network = recipe.world(parts);
    let died = AtomicBool::new(false);
    let outputs = std::thread::scope(|scope| {
        let mut workers = Vec::new();
        for t in 0..threads {
            let mine: Vec<(u32, Receiver<Command>)> = (t..parts)
                .step_by(threads as usize)
                .map(|p| (p, command_rxs[p as usize].take().expect("one owner")))
                .collect();
            let report_tx = report_tx.clone();
            let recipe = &recipe;
            let died = &died;
            workers.push(scope.spawn(move || {
                let _watch = Watch(died);
                run_partitions(recipe, pe_main, mine, &report_tx)
            }));
        }
        drop(report_tx);
        let coordinated = coordinate(
            &mut network,
            parts,
            lookahead_ns,
            (&report_rx, &command_txs),
            &died,
        );
        drop(command_txs);
        let mut outputs = Vec::new();
        for worker in workers {
            match worker.join() {
                Ok(output) => outputs.push(output?),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        coordinated.map(|()| outputs)
    })?;
    let mut parts_out: Vec<PartOutput<R>> = outputs.into_iter().flatten().collect();
    parts_out.sort_by_key(|(p, _, _)| *p);
    let mut merged = Ended {
        counts: OpCounts::default(),
        trace_hash: network.trace.hash,
        events: network.events_processed,
        choices: network.chooser.choices(),
        choice_trace: None,
        sim_time_ns: network.now_ns,
        memory_bytes_peak: 0,
        failure: None,
        timeline: None,
        injection: None,
    };
    let mut results = Vec::with_capacity(n_pes as usize);
    for (_, part_results, summary) in parts_out {
        results.extend(part_results);
        merged.counts.add(&summary.counts);
        merged.trace_hash = crate::trace::mix(merged.trace_hash, summary.trace_hash);
        merged.events += summary.events;
        merged.choices += summary.choices;
        merged.sim_time_ns = merged.sim_time_ns.max(summary.sim_time_ns);
        merged.memory_bytes_peak += summary.memory_bytes_peak;
        if merged.failure.is_none() {
            merged.failure = summary.failure;
        }
    }
    Ok((results, merged))
}

/// A worker thread: builds its partitions' worlds and PEs, then does what the network says
/// until the run is over.
fn run_partitions<R, F>(
    recipe: &Recipe<'_>,
    pe_main: &F,
    mine: Vec<(u32, Receiver<Command>)>,
    reports: &Sender<Report>,
) -> Result<Vec<PartOutput<R>>, LaunchError>
where
    F: Fn(SimDevice) -> R,
{
    let mut running = Vec::new();
    for (part, commands) in mine {
        let shared = Rc::new(Shared::new(recipe.world(part)));
        let pes = recipe.split.pes_of(part);
        let tasks = PeTasks::spawn(&shared, recipe.stack_bytes, pe_main, pes)?;
        let state = shared.world.borrow_mut().window_state();
        let _ = reports.send(Report {
            part,
            outbox: Vec::new(),
            spare: Vec::new(),
            state,
        });
        running.push((part, commands, shared, tasks));
    }
    let mut done = Vec::new();
    while !running.is_empty() {
        let mut i = 0;
        while i < running.len() {
            let (part, commands, shared, tasks) = &mut running[i];
            // The network is gone: it failed, and says why.
            let Ok(mut command) = commands.recv() else {
                return Ok(done);
            };
            {
                let mut world = shared.world.borrow_mut();
                if let Some(message) = command.stop {
                    world.stop_from_elsewhere(message);
                }
                world.receive(&mut command.incoming);
                world.settle(command.settle);
                if command.finish {
                    world.finish_run();
                }
            }
            if command.finish {
                let (part, _, shared, tasks) = running.remove(i);
                let results = tasks.finish();
                let world = shared.world.borrow();
                done.push((part, results, summary(&world)));
                continue;
            }
            if let Some(end_ns) = command.end_ns {
                shared.world.borrow_mut().start_window(end_ns);
                tasks.run();
            }
            let mut world = shared.world.borrow_mut();
            let _ = reports.send(Report {
                part: *part,
                outbox: world.take_outbox(command.spare),
                spare: command.incoming,
                state: world.window_state(),
            });
            i += 1;
        }
    }
    Ok(done)
}

/// The network's thread: gathers every partition's report, tells each what to do next, and
/// carries what they sent while they run the next window, until the run is over.
///
/// Windows are half the lookahead long, so that carrying one window's messages overlaps the
/// next window: what is sent during window `k` (starting at `T`) arrives at `T + lookahead`
/// or later, the end of window `k + 1` when windows follow each other, and is handed over
/// with the command for window `k + 2`. The next window starts right after the last while
/// messages are in flight, and jumps to the earliest thing anywhere when none are.
fn coordinate(
    network: &mut World,
    parts: u32,
    lookahead_ns: u64,
    (reports, commands): (&Receiver<Report>, &[Sender<Command>]),
    died: &AtomicBool,
) -> Result<(), LaunchError> {
    let window_ns = (lookahead_ns / 2).max(1);
    let mut arrivals = Vec::new();
    let mut stopped = false;
    // The end of the window the partitions ran last, and what the network carried during it.
    let mut last_end_ns = 0;
    let mut carried: Vec<Vec<Incoming>> = (0..parts).map(|_| Vec::new()).collect();
    let mut spare_outboxes: Vec<Vec<Outgoing>> = (0..parts).map(|_| Vec::new()).collect();
    let mut merged = Vec::new();
    loop {
        let mut round: Vec<Report> = Vec::with_capacity(parts as usize);
        for _ in 0..parts {
            let report = loop {
                match reports.recv_timeout(WATCH_PERIOD) {
                    Ok(report) => break report,
                    // A worker failed to start its PEs; its error is returned by its thread.
                    Err(RecvTimeoutError::Disconnected) => return Ok(()),
                    // The others wait for the network: it stops them, and the panic is
                    // raised again where the workers are joined.
                    Err(RecvTimeoutError::Timeout) if died.load(Ordering::Acquire) => {
                        return Ok(());
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                }
            };
            round.push(report);
        }
        round.sort_by_key(|r| r.part);
        let mut sent: Vec<Vec<Outgoing>> = round
            .iter_mut()
            .map(|r| std::mem::take(&mut r.outbox))
            .collect();
        let mut spare_inboxes: Vec<Vec<Incoming>> = round
            .iter_mut()
            .map(|r| std::mem::take(&mut r.spare))
            .collect();
        let in_flight = sent.iter().any(|o| !o.is_empty());
        let stop = if stopped {
            None
        } else {
            round.iter().find_map(|r| r.state.abort.clone())
        };
        stopped |= stop.is_some();
        let next_known = round
            .iter()
            .flat_map(|r| [r.state.next_event_ns, r.state.next_deadline_ns])
            .flatten()
            .chain(carried.iter().flatten().map(Incoming::at_ns))
            .min();
        let has_events = round.iter().any(|r| r.state.next_event_ns.is_some())
            || carried.iter().any(|c| !c.is_empty());
        let mut settles = vec![Settle::Nothing; parts as usize];
        let mut end_ns = None;
        let mut finish = false;
        if in_flight || has_events {
            // Nothing known comes before the last window's end; what is in flight comes at
            // its end or later.
            let start_ns = match next_known {
                Some(known_ns) if !in_flight => known_ns,
                _ => last_end_ns,
            };
            last_end_ns = start_ns + window_ns;
            end_ns = Some(last_end_ns);
        } else if let Some(r) = round
            .iter()
            .filter(|r| r.state.timed_due_ns.is_some())
            .min_by_key(|r| r.state.timed_due_ns)
        {
            // Nothing happens anywhere: a sleeping thread wakes before anything is stuck.
            settles[r.part as usize] = Settle::TimedThread;
        } else if round.iter().any(|r| r.state.blocked) {
            settles.fill(Settle::Deadlock);
        } else {
            finish = true;
        }
        let incoming = std::mem::take(&mut carried);
        let handed = commands.iter().zip(incoming).zip(spare_outboxes.drain(..));
        for (((tx, incoming), spare), settle) in handed.zip(settles) {
            let command = Command {
                stop: stop.clone(),
                incoming,
                spare,
                settle,
                end_ns,
                finish,
            };
            if tx.send(command).is_err() {
                return Ok(());
            }
        }
        if finish {
            return Ok(());
        }
        // While the partitions run that window, what they sent during the last one.
        merged.extend(in_time_order(&mut sent));
        for at in 0..merged.len() {
            if let Some(later) = merged.get(at + PREFETCH_AHEAD) {
                later.prefetch();
            }
            let outgoing = std::mem::replace(&mut merged[at], Outgoing::EMPTY);
            network.carry(outgoing, &mut spare_inboxes, &mut arrivals);
        }
        merged.clear();
        if let (Some(end_ns), Some(early)) = (
            end_ns,
            spare_inboxes.iter().flatten().map(Incoming::at_ns).min(),
        ) && early < end_ns
        {
            panic!(
                "the network carried a message to {early} ns, inside the window that ends at \
                 {end_ns} ns: the lookahead of {lookahead_ns} ns is wrong"
            );
        }
        carried = spare_inboxes;
        spare_outboxes = sent;
    }
}

#[cfg(test)]
mod tests {
    use super::in_time_order;
    use crate::world::Outgoing;

    fn arrive(at_ns: u64, pe: u32) -> Outgoing {
        Outgoing::Arrive {
            at_ns,
            pe,
            mine: Vec::new(),
        }
    }

    fn order(mut outboxes: Vec<Vec<Outgoing>>) -> Vec<(u64, u32)> {
        in_time_order(&mut outboxes)
            .map(|o| match o {
                Outgoing::Arrive { at_ns, pe, .. } => (at_ns, pe),
                _ => unreachable!(),
            })
            .collect()
    }

    /// By time; at one time, the lower partition first, and one partition's messages in
    /// the order sent; an outbox out of order is sorted, keeping that order at one time.
    #[test]
    fn what_partitions_sent_is_carried_by_time_then_partition_then_order_sent() {
        let got = order(vec![
            vec![arrive(5, 0), arrive(5, 1), arrive(9, 2)],
            vec![arrive(1, 10), arrive(5, 11)],
            vec![arrive(7, 20), arrive(5, 21), arrive(5, 22)],
        ]);
        let want = [
            (1, 10),
            (5, 0),
            (5, 1),
            (5, 11),
            (5, 21),
            (5, 22),
            (7, 20),
            (9, 2),
        ];
        assert_eq!(got, want);
    }
}
