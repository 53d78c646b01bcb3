//! Threads of a simulated PE: a PE's program may start threads (the C API's `pthread_create`
//! on the simulator), each a coroutine of its own inside the PE's coroutine, sharing the PE's
//! device, memory and clock.
//!
//! How they run: the PE's first thread (its `main`, thread 0) runs on the PE's coroutine; a
//! thread it starts is a corosensei coroutine nested in it, resumed only by thread 0
//! (`dispatch`). One thread of a PE runs at a time. A thread gives the PE to another when it
//! waits: for the world (a ticket, a quiet, words of memory: `PeHandle::block`), for the
//! program's own synchronisation ([`park`], which the C library's mutexes, conditions and joins
//! use), or when it yields ([`yield_now`], and at every point where its PE yields to the world
//! to let time catch up, so that a thread that never waits still lets the others run). The
//! next thread is drawn from the runnable ones by the world's one choice source: the same seed
//! gives the same interleaving.
//!
//! When no thread of a PE can run, the PE first looks whether a word one of them waits for
//! holds already (it may have changed while another thread ran), then waits in the world for
//! what any of them waits for (`world::ThreadWait`): when one of those happens (or a timed
//! wait is due), every thread that waited for the world looks again, as the world's waits
//! are loops that check their condition. A thread that spins ([`relax`]: `sched_yield`, a
//! spinning atomic load) lets the ready ones run, or sleeps a little simulated time, and the
//! world wakes a sleeping thread at its time before it calls a run stuck. A PE whose threads all wait for each other stays blocked; if the whole run
//! is then stuck, the world's deadlock report names the PE and what each of its threads waits
//! for, and every waiting thread's wait fails with it.
//!
//! When a PE ends: the threads still alive are dropped without unwinding
//! (`PeThreads::abandon`), by the executor when the PE's first thread returns or the run
//! ends. The C library's `exit` from a thread other than the first ends the PE from that
//! thread ([`end_all_but_first`], then it discards the first thread's stack: docs/c-api.md).
//!
//! The PE's call lock: the runtime's state of a PE must not be entered by two of its threads at
//! once, and a thread may give the PE away inside a call (a wait, a yield). A thread holds the
//! lock for the whole of a call ([`enter_call`], [`leave_call`]), except while it waits for
//! words of memory (a `wait_until`, a barrier), where it lets the others call, as the process
//! backend releases its lock around a sleep.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use corosensei::{Coroutine, Yielder};
use hw::{QueueError, WaitSpec};

use crate::handle::{PeHandle, Shared};
use crate::stacks::LazyStack;
use crate::world::Blocked;

/// A thread of a PE: 0 is the PE's first thread, the others are numbered as they start.
pub type ThreadId = u32;

/// Set once any PE of any run in this process starts a thread: until then no call needs the
/// call lock, and [`enter_call`] costs one load.
static STARTED: AtomicBool = AtomicBool::new(false);

/// Whether a thread was ever started on the simulator in this process.
pub fn any_started() -> bool {
    // Relaxed: set and read on the simulator's one thread.
    STARTED.load(Ordering::Relaxed)
}

/// Why a thread operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum ThreadError {
    /// No simulated PE runs on this thread.
    #[error("no simulated PE runs here")]
    NotSimulated,
    /// The thread's stack could not be mapped.
    #[error("cannot map a {bytes}-byte stack for a thread: {source}")]
    Stack {
        /// The stack's size.
        bytes: usize,
        /// Why the mapping failed.
        source: std::io::Error,
    },
    /// No thread of this PE has this number.
    #[error("thread {0} does not exist")]
    NoSuchThread(ThreadId),
    /// The thread was detached, or another thread joins it already.
    #[error("thread {0} is detached or joined already")]
    NotJoinable(ThreadId),
    /// A thread joined itself.
    #[error("thread {0} joined itself")]
    JoinSelf(ThreadId),
    /// The wait failed: the run is stuck or over.
    #[error(transparent)]
    Wait(#[from] QueueError),
}

/// How a parked thread came back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unparked {
    /// Another thread unparked it.
    Woken,
    /// Its deadline passed first.
    TimedOut,
}

/// The coroutine of a thread other than the PE's first.
type ThreadCoroutine = Coroutine<(), (), (), LazyStack>;

/// Where a thread is.
#[derive(Debug)]
enum State {
    Running,
    Ready,
    /// Waiting for the world: `what`, and for memory any of `specs`.
    World {
        what: Blocked,
        specs: Vec<WaitSpec>,
        deadline_ns: u64,
    },
    /// Parked by the program's synchronisation until unparked or `deadline_ns`.
    Parked {
        why: String,
        deadline_ns: Option<u64>,
    },
    Done,
}

/// What a waiting thread was made ready with.
#[derive(Debug)]
enum Woke {
    /// Look again (a world wait), or unparked.
    Again,
    TimedOut,
    Failed(QueueError),
}

/// One thread.
struct Thread {
    state: State,
    /// `None` for thread 0, and while the coroutine runs.
    coroutine: Option<ThreadCoroutine>,
    /// The coroutine's yielder, set when it starts; null for thread 0.
    yielder: *const Yielder<(), ()>,
    woke: Option<Woke>,
    /// What the thread returned (`pthread_exit`'s value or its start routine's).
    retval: usize,
    /// Threads parked in a join of this one.
    joiner: Option<ThreadId>,
    detached: bool,
    stack_bytes: usize,
    /// The addresses of the thread's stack (empty while unknown: thread 0 of a PE that is a
    /// shuttle task).
    stack: Range<usize>,
}

impl Thread {
    fn new(coroutine: Option<ThreadCoroutine>, stack_bytes: usize, stack: Range<usize>) -> Thread {
        Thread {
            state: State::Ready,
            coroutine,
            yielder: std::ptr::null(),
            woke: None,
            retval: 0,
            joiner: None,
            detached: false,
            stack_bytes,
            stack,
        }
    }
}

/// The addresses of `stack`.
pub(crate) fn range_of(stack: &impl corosensei::stack::Stack) -> Range<usize> {
    stack.limit().get()..stack.base().get()
}

/// The threads of one PE.
pub(crate) struct PeThreads {
    table: RefCell<Table>,
    /// The thread that runs, or last ran.
    current: Cell<ThreadId>,
    /// The thread a nested thread hands the PE to when it suspends to thread 0's dispatcher.
    handoff: Cell<Option<ThreadId>>,
    /// Threads not done, thread 0 included.
    live: Cell<u32>,
}

/// The threads, and the PE's call lock.
struct Table {
    threads: Vec<Thread>,
    /// Who holds the call lock, and how many calls deep.
    lock_owner: Option<ThreadId>,
    lock_depth: u32,
    /// Whether the holder keeps the lock while it waits for memory ([`enter_call`]).
    lock_kept: bool,
    lock_waiters: VecDeque<ThreadId>,
}

impl std::fmt::Debug for PeThreads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeThreads")
            .field("live", &self.live.get())
            .finish_non_exhaustive()
    }
}

impl PeThreads {
    /// A PE with only its first thread.
    pub(crate) fn new() -> PeThreads {
        PeThreads {
            table: RefCell::new(Table {
                threads: vec![Thread {
                    state: State::Running,
                    ..Thread::new(None, 0, 0..0)
                }],
                lock_owner: None,
                lock_depth: 0,
                lock_kept: false,
                lock_waiters: VecDeque::new(),
            }),
            current: Cell::new(0),
            handoff: Cell::new(None),
            live: Cell::new(1),
        }
    }

    /// Says where the PE's first thread's stack is (the PE's coroutine's).
    pub(crate) fn set_first_stack(&self, stack: Range<usize>) {
        self.table.borrow_mut().threads[0].stack = stack;
    }

    /// Whether another thread of the PE is still alive, so that a wait must let it run.
    pub(crate) fn several(&self) -> bool {
        self.live.get() > 1
    }

    /// Drops the coroutines of threads still alive when the PE's first thread ends, as a
    /// process's threads end with it.
    pub(crate) fn abandon(&self) {
        let coroutines: Vec<ThreadCoroutine> = self
            .table
            .borrow_mut()
            .threads
            .iter_mut()
            .filter_map(|t| t.coroutine.take())
            .collect();
        for mut coroutine in coroutines {
            if !coroutine.done() {
                // Why not unwind it (corosensei's default): its frames are C, which a Rust
                // unwind must not cross. Its objects are abandoned with its stack.
                // SAFETY: nothing refers to the coroutine's stack: its PE's program is over.
                unsafe { coroutine.force_reset() };
            }
        }
        self.live.set(1);
    }
}

thread_local! {
    /// The run whose PEs this OS thread runs now (`exec::run_pes`).
    static RUN: Cell<*const Shared> = const { Cell::new(std::ptr::null()) };
}

/// Makes `shared` the run [`running`] finds, until the returned guard drops.
pub(crate) fn enter_run(shared: &Shared) -> RunGuard {
    RunGuard(RUN.replace(shared))
}

/// Restores the run that was current before [`enter_run`].
pub(crate) struct RunGuard(*const Shared);

impl Drop for RunGuard {
    fn drop(&mut self) {
        RUN.set(self.0);
    }
}

/// The handle of the PE whose program runs now on this OS thread.
fn running() -> Result<PeHandle, ThreadError> {
    let shared = RUN.get();
    if shared.is_null() {
        return Err(ThreadError::NotSimulated);
    }
    // SAFETY: set by `enter_run` for as long as the run's `Shared` lives (the guard drops
    // before it).
    let shared = unsafe { &*shared };
    let pe = shared
        .world
        .try_borrow()
        .ok()
        .and_then(|w| w.running)
        .ok_or(ThreadError::NotSimulated)?;
    shared.handles.borrow()[pe as usize]
        .clone()
        .ok_or(ThreadError::NotSimulated)
}

/// The calling thread of the running simulated PE, or `None` outside one.
pub fn current() -> Option<ThreadId> {
    running().ok().map(|h| h.threads.current.get())
}

/// The addresses of the calling simulated thread's stack, or `None` outside a simulated PE
/// (empty where they are not known).
pub fn current_stack() -> Option<Range<usize>> {
    let h = running().ok()?;
    let table = h.threads.table.borrow();
    Some(
        table.threads[h.threads.current.get() as usize]
            .stack
            .clone(),
    )
}

/// The running PE's clock: what timed waits count in.
pub fn now_ns() -> Result<u64, ThreadError> {
    let h = running()?;
    let now = h.world().clock_ns(h.pe);
    Ok(now)
}

/// Starts a thread of the running PE that runs `body` on a stack of `stack_bytes` and ends
/// with its value. It runs when the PE's threads next give way.
///
/// # Errors
/// [`ThreadError::NotSimulated`] outside a simulated PE; [`ThreadError::Stack`].
pub fn spawn(
    body: Box<dyn FnOnce() -> usize>,
    stack_bytes: usize,
) -> Result<ThreadId, ThreadError> {
    let h = running()?;
    let stack = crate::stacks::take(stack_bytes).map_err(|source| ThreadError::Stack {
        bytes: stack_bytes,
        source,
    })?;
    let stack_range = range_of(&stack);
    let mut table = h.threads.table.borrow_mut();
    let id = table.threads.len() as ThreadId;
    let own = h.clone();
    let coroutine = Coroutine::with_stack(stack, move |yielder: &Yielder<(), ()>, ()| {
        own.threads.table.borrow_mut().threads[id as usize].yielder = std::ptr::from_ref(yielder);
        let retval = body();
        finish(&own, id, retval);
    });
    table
        .threads
        .push(Thread::new(Some(coroutine), stack_bytes, stack_range));
    h.threads.live.set(h.threads.live.get() + 1);
    STARTED.store(true, Ordering::Relaxed);
    Ok(id)
}

/// Waits until thread `id` ends and returns its value.
///
/// # Errors
/// A thread that does not exist, is detached or joined already, or is the caller; a failed
/// wait.
pub fn join(id: ThreadId) -> Result<usize, ThreadError> {
    let h = running()?;
    let me = h.threads.current.get();
    {
        let mut table = h.threads.table.borrow_mut();
        let thread = table
            .threads
            .get_mut(id as usize)
            .ok_or(ThreadError::NoSuchThread(id))?;
        if id == me {
            return Err(ThreadError::JoinSelf(id));
        }
        // Thread 0 ends its PE when it ends, so no thread outlives it to join it.
        if id == 0 || thread.detached || thread.joiner.is_some_and(|j| j != me) {
            return Err(ThreadError::NotJoinable(id));
        }
        thread.joiner = Some(me);
    }
    loop {
        {
            let mut table = h.threads.table.borrow_mut();
            let thread = &mut table.threads[id as usize];
            if matches!(thread.state, State::Done) {
                thread.detached = true;
                return Ok(thread.retval);
            }
        }
        park_on(&h, format!("waits to join thread {id}"), None)?;
    }
}

/// Lets thread `id` end without a join.
///
/// # Errors
/// A thread that does not exist, or is detached already.
pub fn detach(id: ThreadId) -> Result<(), ThreadError> {
    let h = running()?;
    let mut table = h.threads.table.borrow_mut();
    let thread = table
        .threads
        .get_mut(id as usize)
        .ok_or(ThreadError::NoSuchThread(id))?;
    if thread.detached {
        return Err(ThreadError::NotJoinable(id));
    }
    thread.detached = true;
    Ok(())
}

/// Ends the calling thread with `retval` (`pthread_exit`); it is never resumed. Returns only
/// for the PE's first thread, which must go on running the others: it waits until every other
/// thread has ended, and returns for its caller to end the PE.
///
/// # Errors
/// As [`park`], while thread 0 waits.
pub fn exit_current(retval: usize) -> Result<(), ThreadError> {
    let h = running()?;
    let me = h.threads.current.get();
    if me == 0 {
        while h.threads.several() {
            park_on(&h, "waits for the other threads to end".into(), None)?;
        }
        return Ok(());
    }
    finish(&h, me, retval);
    suspend_nested(&h, me);
    unreachable!("a thread that ended was resumed")
}

/// Ends every thread of the running PE but its first, from a thread it started that is about
/// to leave its own stack for good (the C library's `exit`, which then discards the first
/// thread's stack too and goes on where the PE's program was called): the coroutines of the
/// waiting threads are dropped without unwinding, and the PE is its first thread alone again,
/// running, holding no call lock, so that what the PE does after its program (its finalize)
/// waits and calls as a PE without threads. The calling thread's coroutine is its dispatcher's
/// to drop, on the first thread's stack.
///
/// # Errors
/// [`ThreadError::NotSimulated`] outside a simulated PE.
pub fn end_all_but_first() -> Result<(), ThreadError> {
    let h = running()?;
    h.threads.abandon();
    let mut table = h.threads.table.borrow_mut();
    for (i, thread) in table.threads.iter_mut().enumerate() {
        thread.state = if i == 0 { State::Running } else { State::Done };
        thread.woke = None;
    }
    table.lock_owner = None;
    table.lock_depth = 0;
    table.lock_kept = false;
    table.lock_waiters.clear();
    drop(table);
    h.threads.current.set(0);
    h.threads.handoff.set(None);
    Ok(())
}

/// Parks the calling thread until [`unpark`] or, with a deadline, until the PE's clock passes
/// `deadline_ns`; `why` says what it waits for in a deadlock report. It may also come back
/// woken for nothing (as a condition variable may): callers check their condition in a loop.
///
/// # Errors
/// The run is stuck (a deadlock, which the report describes) or over.
pub fn park(why: String, deadline_ns: Option<u64>) -> Result<Unparked, ThreadError> {
    let h = running()?;
    park_on(&h, why, deadline_ns)
}

/// Makes thread `id` of the running PE ready if it is parked.
pub fn unpark(id: ThreadId) {
    if let Ok(h) = running() {
        h.threads.unpark(id);
    }
}

/// Lets the other ready threads of the running PE run first.
pub fn yield_now() {
    if let Ok(h) = running() {
        let _ = h.threads.preempt(&h);
    }
}

/// Lets the other ready threads of the running PE run first; if none is ready, the calling
/// thread sleeps `sleep_ns` of simulated time (`why` says so in a deadlock report), so that
/// what the PE's threads wait for in the world, and the other PEs, go on. A loop that yields
/// until another thread or PE changes memory then ends, as it would on a CPU.
///
/// # Errors
/// As [`park`].
pub fn relax(sleep_ns: u64, why: impl FnOnce() -> String) -> Result<(), ThreadError> {
    let h = running()?;
    if h.threads.preempt(&h) {
        return Ok(());
    }
    let now_ns = h.world().clock_ns(h.pe);
    park_on(&h, why(), Some(now_ns + sleep_ns)).map(|_| ())
}

mod call_lock;
mod schedule;

pub use call_lock::{enter_call, leave_call};
use schedule::{finish, park_on, suspend_nested};
