//! The executor under shuttle (`--cfg rshmem_shuttle`): each PE is a shuttle task, and shuttle's
//! scheduler (PCT, DFS, random, replay) decides what the virtual-time order leaves open.
//!
//! The world still decides *when* a PE runs: it processes events in time order and resumes
//! PEs in rounds ([`World::next_round`](crate::world::World::next_round)). A round is every
//! PE whose resume is due at the same nanosecond. The coroutine executor runs them one after
//! the other in queue order; here they are released together, and each PE offers shuttle a
//! switch point before every operation it posts while another PE of its round still runs, so
//! shuttle interleaves the posts of the round in any order. When every PE of the round has
//! given control back, the scheduling task (the one that called `launch`) computes the next
//! round.
//!
//! Why posts only: within a round no PE can see another's effects (memory changes only when
//! the world processes events between rounds), so what the interleaving decides is the order
//! of same-time posts in the event queue (which is delivered first, which draws which
//! choice) and, through the next event's time, when a PE must yield. Offering no switch
//! point where nothing can differ keeps DFS's schedule count small enough to finish.
//!
//! What stays the simulator's: timing and the weak-ordering choices come from the world's
//! choice source (seeded as usual; pass a seed drawn from `shuttle::rand` to let a shuttle
//! schedule string replay it too). What shuttle adds: the order of same-time operations of
//! different PEs, and the executor's own hand-offs, checked for lost wake-ups and deadlocks.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use hw::{LaunchError, Pe, PeFailure};
use shuttle::sync::mpsc::{Receiver, Sender, channel};

use crate::device::SimDevice;
use crate::exec::panic_message;
use crate::handle::{PeHandle, Shared};

/// Which PEs may run now. Tasks block on shuttle channels: a message to a PE releases it, a
/// message to the scheduling task says the round is over. (Channel waits never wake
/// spuriously; `park` may, and DFS would explore every spurious wake-up.) The state itself is
/// in cells, which every task may touch because shuttle runs them all on one OS thread and
/// switches only inside its own calls (see `OnShuttleThread`); so the hand-offs add no switch
/// points besides the sends and receives they need, and DFS spends its schedules on the
/// orders that matter.
pub(crate) struct Rounds {
    released: Vec<Cell<bool>>,
    /// Whether each PE's program has returned.
    finished: Vec<Cell<bool>>,
    /// PEs released and not yet given back.
    active: Cell<usize>,
    release_tx: Vec<Sender<()>>,
    release_rx: Vec<Receiver<()>>,
    idle_tx: Sender<()>,
    idle_rx: Receiver<()>,
}

impl std::fmt::Debug for Rounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rounds")
            .field("active", &self.active.get())
            .finish_non_exhaustive()
    }
}

impl Rounds {
    fn new(n_pes: usize) -> Rounds {
        let (release_tx, release_rx) = (0..n_pes).map(|_| channel()).unzip();
        let (idle_tx, idle_rx) = channel();
        Rounds {
            released: (0..n_pes).map(|_| Cell::new(false)).collect(),
            finished: (0..n_pes).map(|_| Cell::new(false)).collect(),
            active: Cell::new(0),
            release_tx,
            release_rx,
            idle_tx,
            idle_rx,
        }
    }

    /// A point where shuttle may switch to another PE of the round, if one still runs.
    pub(crate) fn switch_point(&self) {
        if self.active.get() > 1 {
            shuttle::thread::yield_now();
        }
    }

    /// Gives control back and blocks until `pe` is released again. Panics (unwinding the
    /// PE's program) if the run ended meanwhile.
    pub(crate) fn suspend(&self, pe: u32) {
        self.give_back(pe);
        self.wait_released(pe);
    }

    fn give_back(&self, pe: u32) {
        assert!(
            self.released[pe as usize].get(),
            "a device or queue of PE {pe} was used outside that PE's program"
        );
        self.released[pe as usize].set(false);
        self.active.set(self.active.get() - 1);
        if self.active.get() == 0 {
            self.idle_tx
                .send(())
                .expect("the scheduling task outlives the round");
        }
    }

    fn wait_released(&self, pe: u32) {
        self.release_rx[pe as usize]
            .recv()
            .expect("the scheduling task outlives the PEs");
        if !self.released[pe as usize].get() {
            panic!("never finished: the run ended while PE {pe} was suspended");
        }
    }

    /// Releases `round` and waits until each of its PEs has given control back.
    fn run_round(&self, round: &[u32]) {
        for &pe in round {
            self.released[pe as usize].set(true);
        }
        self.active.set(round.len());
        for &pe in round {
            self.release_tx[pe as usize]
                .send(())
                .expect("a PE's task outlives its program");
        }
        self.idle_rx
            .recv()
            .expect("a released PE gives control back");
    }

    /// Unwinds every PE still suspended (none, when the world ended the run normally).
    fn end(&self) {
        for (pe, tx) in self.release_tx.iter().enumerate() {
            if !self.finished[pe].get() {
                tx.send(()).expect("a PE's task outlives its program");
            }
        }
    }
}

/// Moves a value into a shuttle task.
struct OnShuttleThread<T>(T);

impl<T> OnShuttleThread<T> {
    /// Takes the value out (a method, so that a closure captures the whole wrapper).
    fn into_inner(self) -> T {
        self.0
    }
}

// SAFETY: `Rc` and `RefCell` are not `Send` because two OS threads could touch them at once.
// Shuttle runs every task of a test on the one OS thread that runs the test (its continuations
// are "never shared across threads", shuttle's `runtime/thread/continuation.rs`) and switches
// tasks only inside its own calls, so the world and its handles are used by one OS thread,
// as under the coroutine executor.
unsafe impl<T> Send for OnShuttleThread<T> {}

/// Runs `pe_main` once per PE as shuttle tasks until every PE has returned. Must be called
/// inside a shuttle test (`shuttle::check_pct`, `check_dfs`, `replay`, ...).
pub(crate) fn run_pes<R, F>(
    shared: &Rc<Shared>,
    pe_main: &F,
) -> Result<Vec<Result<R, PeFailure>>, LaunchError>
where
    F: Fn(SimDevice) -> R + Sync,
    R: Send,
{
    let n_pes = shared.world.borrow().n_pes;
    let rounds = Rc::new(Rounds::new(n_pes as usize));
    let results = shuttle::thread::scope(|scope| {
        let tasks: Vec<_> = (0..n_pes)
            .map(|pe| {
                let moved = OnShuttleThread((Rc::clone(shared), Rc::clone(&rounds)));
                scope.spawn(move || {
                    let (shared, rounds) = moved.into_inner();
                    run_task(&shared, &rounds, pe, pe_main)
                })
            })
            .collect();
        loop {
            let round = shared.world.borrow_mut().next_round();
            if round.is_empty() {
                break;
            }
            rounds.run_round(&round);
        }
        rounds.end();
        tasks
            .into_iter()
            .map(|task| task.join().expect("a PE task catches its program's panics"))
            .collect()
    });
    Ok(results)
}

/// One PE's task: waits for its first round, runs its program, reports how it ended.
fn run_task<R, F>(
    shared: &Rc<Shared>,
    rounds: &Rc<Rounds>,
    pe: u32,
    pe_main: &F,
) -> Result<R, PeFailure>
where
    F: Fn(SimDevice) -> R,
{
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        rounds.wait_released(pe);
        let handle = PeHandle::for_shuttle_task(Rc::clone(shared), pe, Rc::clone(rounds));
        pe_main(SimDevice::new(handle))
    }));
    let outcome = outcome.map_err(|p| PeFailure {
        pe: Pe(pe),
        message: panic_message(p),
    });
    if rounds.released[pe as usize].get() {
        let failure = outcome.as_ref().err().map(|f| f.message.clone());
        shared.world.borrow_mut().finish(pe, failure);
        rounds.give_back(pe);
    }
    outcome
}
