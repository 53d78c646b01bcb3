//! The process-global PE state behind the C API, and the one way every exported function
//! reaches it ([`with_pe`]).
//!
//! Why one global: the C API carries no handle, so the PE this process runs is state of the
//! process, set up by `shmem_init` and kept until the process ends. It is never dropped, not
//! even by `shmem_finalize`: the program's static data stays mapped over the shared memory the
//! backend made for it, and a program may still read its symmetric objects after finalize.
//!
//! Threads: the runtime's PE handle belongs to one thread at a time (it is neither `Send` nor
//! `Sync`). Under `SHMEM_THREAD_SINGLE`, `FUNNELED` and `SERIALIZED` the program promises that
//! calls never overlap, so a call takes no lock. Under `SHMEM_THREAD_MULTIPLE` every call holds
//! one process-wide lock ([`Serial`]), and the backend releases it while the calling thread
//! sleeps in a wait (`around_sleep`), so a thread that waits for another thread's put does not
//! keep that put from happening. Between two SHMEM calls of one thread the lock is free.

use std::cell::{Cell, RefCell, UnsafeCell};
use std::ffi::c_int;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard};

use hw::process::ProcessDevice;

use rshmem::{Ctx, Element, Shmem, Sym, SymAddr, Team};

use crate::fail::{CallError, fail};
use crate::handles::Handles;
use crate::start::Provided;

/// The backend C programs run on: whichever `start.rs` picked at init, behind
/// `hw::any` so that one library serves them all.
pub(crate) type Backend = hw::any::AnyBackend;

/// `SHMEM_THREAD_SINGLE` .. `SHMEM_THREAD_MULTIPLE`, the values `shmem.h` defines.
pub mod thread_level {
    use std::ffi::c_int;

    /// Only one thread of the process calls SHMEM.
    pub const SINGLE: c_int = 0;
    /// Only the thread that called `shmem_init_thread` calls SHMEM.
    pub const FUNNELED: c_int = 1;
    /// Any thread calls SHMEM, never two at once.
    pub const SERIALIZED: c_int = 2;
    /// Any thread calls SHMEM at any time.
    pub const MULTIPLE: c_int = 3;
}

/// The PE this process runs, as the C API sees it.
pub(crate) struct Pe {
    /// The runtime's handle: the default context, teams and heaps.
    pub(crate) shmem: Shmem<Backend>,
    /// The contexts and teams the program created.
    pub(crate) handles: Handles,
    /// The thread level `shmem_init_thread` granted.
    pub(crate) thread_level: c_int,
    /// The teams of the deprecated collectives' active sets, made on first use.
    pub(crate) active_sets: crate::active_set::ActiveSetTeams,
    /// NVSHMEM's int32 team handles of this PE (`nvshmem.h`).
    pub(crate) nvshmem_teams: crate::nvshmem_teams::NvshmemTeams,
    /// How many symmetric objects the program allocated: the number of the next one's name
    /// in reports of waits (`memory.rs`).
    pub(crate) objects_made: std::sync::atomic::AtomicU64,
}

/// Where the library is in its life.
mod life {
    /// `shmem_init` has not been called.
    pub(super) const NEW: u8 = 0;
    /// Between `shmem_init` and `shmem_finalize`.
    pub(super) const RUNNING: u8 = 1;
    /// After `shmem_finalize`.
    pub(super) const FINALIZED: u8 = 2;
}

/// One PE as the C API holds it: where it is in its life and, while it runs, its state.
///
/// A process holds one slot ([`PROCESS_SLOT`]), except the host of a simulated run, where
/// every PE is a coroutine running its own copy of the program and has a slot of its own.
pub(crate) struct Slot {
    life: AtomicU8,
    pe: UnsafeCell<Option<Pe>>,
    provided: Provided,
    /// The `getopt` variables of the program copy a simulated PE runs.
    getopt: crate::sim_host::PeGetopt,
}

// SAFETY: `pe` is written once, by `shmem_init` before `life` becomes RUNNING (with Release),
// and only read after a call saw RUNNING (with Acquire). Reads from several threads happen
// only under `SHMEM_THREAD_MULTIPLE`, where every call holds `SERIAL` (see `Serial`), or when
// the program promised that calls do not overlap (the other thread levels), which is the
// OpenSHMEM contract for those levels. `provided` is used only by the host of a simulated
// run and by `shmem_init` in it, on that run's one OS thread.
unsafe impl Sync for Slot {}

impl Slot {
    /// A slot before `shmem_init`.
    pub(crate) const fn new() -> Slot {
        Slot {
            life: AtomicU8::new(life::NEW),
            pe: UnsafeCell::new(None),
            provided: Provided::new(),
            getopt: crate::sim_host::PeGetopt::new(),
        }
    }

    /// The `getopt` variables of this slot's PE (set on the simulator only).
    pub(crate) fn getopt(&self) -> &crate::sim_host::PeGetopt {
        &self.getopt
    }

    /// What the host of a simulated run provided for this slot's PE.
    pub(crate) fn provided(&self) -> &Provided {
        &self.provided
    }
}

/// The slot of a process that runs one PE.
static PROCESS_SLOT: Slot = Slot::new();

/// The slot calls act on: [`PROCESS_SLOT`], or in a simulated run the slot of the PE whose
/// coroutine runs ([`enter_slot`]).
///
/// Relaxed everywhere: it changes only in a simulated run, on its one thread.
static CURRENT: AtomicPtr<Slot> = AtomicPtr::new(std::ptr::addr_of!(PROCESS_SLOT).cast_mut());

/// Set by the host of a simulated run: every call must come from its thread.
static SIMULATED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Whether this thread is the one that runs a simulated run's PEs.
    static SIMULATOR_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Marks this thread as the one that runs every PE of a simulated run: a call from any other
/// thread then ends the run with a message, instead of racing with the simulator.
pub(crate) fn simulate_on_this_thread() {
    SIMULATOR_THREAD.set(true);
    // Relaxed: threads the program starts later synchronise with this one when started.
    SIMULATED.store(true, Ordering::Relaxed);
}

/// Whether this process hosts a simulated run.
pub(crate) fn simulated() -> bool {
    SIMULATED.load(Ordering::Relaxed)
}

/// Ends the run if a thread other than the simulator's makes the C call `call`.
#[cold]
fn on_simulator_thread(call: &'static str) {
    if !SIMULATOR_THREAD.get() {
        fail(
            call,
            None,
            &CallError::Argument(
                "an OS thread the simulator does not run called SHMEM; on the simulator, \
                 start the threads that call SHMEM with pthread_create (or std::thread), not \
                 C11 thrd_create or clone, or run the program with oshrun without --sim"
                    .into(),
            ),
        );
    }
}

/// Holds the running simulated PE's call lock for one call, once any simulated PE started a
/// thread: the simulated equivalent of [`SERIAL`], which blocks the simulated thread, not the
/// OS thread, and which the simulator releases while the thread waits for memory
/// (`sim::threads`).
struct SimCall {
    locked: bool,
}

impl SimCall {
    #[inline]
    fn enter(call: &'static str, slot: &Slot) -> SimCall {
        if !SIMULATED.load(Ordering::Relaxed) {
            return SimCall { locked: false };
        }
        on_simulator_thread(call);
        if !sim::threads::any_started() {
            return SimCall { locked: false };
        }
        // Why a distributed lock's calls keep it through their waits: the runtime queues a PE
        // once per lock, so two threads of a PE must not be in a lock's queue at once.
        let keep = matches!(
            call,
            "shmem_set_lock" | "shmem_test_lock" | "shmem_clear_lock"
        );
        let taken = sim::threads::enter_call(keep);
        // Why: waiting for the lock let other threads and PEs run.
        // SAFETY: `slot` was current at entry, so it lives as long as `enter_slot` promised.
        unsafe { enter_slot(slot) };
        if let Err(err) = taken {
            let pe = running_pe().map(|pe| pe.shmem.my_pe());
            fail(call, pe, &CallError::Argument(err.to_string()));
        }
        call_lock_event(false);
        SimCall { locked: true }
    }
}

impl Drop for SimCall {
    fn drop(&mut self) {
        if self.locked {
            call_lock_event(true);
            sim::threads::leave_call();
        }
    }
}

/// Tells the race detector that the calling thread took the call lock, or, at the end of its
/// call (`leaving`), took it again (it may have let it go while it waited) and released it.
/// Why every call: a thread's call may be what another thread of its PE waits for (a put to
/// the PE's own word), and the lock orders them as it orders the runtime's state; a race
/// between two threads that both call SHMEM between their accesses is therefore not seen.
fn call_lock_event(leaving: bool) {
    use hw::{HostThreadEvent, SyncObject};
    let object = SyncObject::CallLock;
    crate::sim_host::check::thread_event(|thread| HostThreadEvent::Acquire { thread, object });
    if leaving {
        crate::sim_host::check::thread_event(|thread| HostThreadEvent::Release { thread, object });
    }
}

/// Makes `slot` the one calls act on, from now until the next switch: the host of a
/// simulated run calls it before it starts a PE's program.
///
/// # Safety
/// `slot` must outlive every call made while it is current, and every call after it.
pub(crate) unsafe fn enter_slot(slot: &Slot) {
    CURRENT.store(std::ptr::from_ref(slot).cast_mut(), Ordering::Relaxed);
}

/// The `getopt` variables of the simulated PE that runs now, if one does.
pub(crate) fn running_getopt() -> Option<&'static crate::sim_host::PeGetopt> {
    SIMULATED.load(Ordering::Relaxed).then(|| slot().getopt())
}

/// The slot calls act on now: a kernel launch keeps it, to make it current again whenever
/// one of its GPU threads resumes.
pub(crate) fn slot() -> &'static Slot {
    // SAFETY: CURRENT points at PROCESS_SLOT or at a slot the host keeps for the whole run
    // (`enter_slot`'s contract).
    unsafe { &*CURRENT.load(Ordering::Relaxed) }
}

/// Whether calls must take [`SERIAL`]: the program asked for `SHMEM_THREAD_MULTIPLE`.
static MULTIPLE: AtomicBool = AtomicBool::new(false);
/// The lock that serialises calls under `SHMEM_THREAD_MULTIPLE`.
static SERIAL: Mutex<()> = Mutex::new(());

thread_local! {
    /// The guard of [`SERIAL`] while this thread is inside a call.
    static HELD: RefCell<Option<MutexGuard<'static, ()>>> = const { RefCell::new(None) };
    /// Whether this thread is inside a call (a nested entry takes no lock).
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// Holds [`SERIAL`] for one call when the program runs `SHMEM_THREAD_MULTIPLE`.
struct Serial {
    locked: bool,
}

impl Serial {
    #[inline]
    fn enter() -> Serial {
        // Relaxed: MULTIPLE is set once, before init returns to the program, and a thread
        // that calls SHMEM was made after that or synchronised with the thread that inited.
        // On the simulator every thread is the one OS thread: `SimCall` serialises them.
        if !MULTIPLE.load(Ordering::Relaxed) || SIMULATED.load(Ordering::Relaxed) {
            // Why a separate branch: the other levels must not pay for the thread-local
            // lookups (`__tls_get_addr` in a shared library) that the lock needs.
            return Serial { locked: false };
        }
        Serial::lock()
    }

    #[cold]
    fn lock() -> Serial {
        let wanted = !INSIDE.get();
        if wanted {
            let guard = SERIAL.lock().unwrap_or_else(|poison| poison.into_inner());
            HELD.with_borrow_mut(|held| *held = Some(guard));
            INSIDE.set(true);
        }
        Serial { locked: wanted }
    }
}

impl Drop for Serial {
    fn drop(&mut self) {
        if self.locked {
            INSIDE.set(false);
            HELD.with_borrow_mut(|held| *held = None);
        }
    }
}

/// Runs `sleep` with [`SERIAL`] released if this thread holds it: what the backend calls
/// around every blocking sleep.
pub(crate) fn around_sleep(sleep: &mut dyn FnMut()) {
    let guard = HELD.with_borrow_mut(Option::take);
    let held = guard.is_some();
    drop(guard);
    sleep();
    if held {
        let guard = SERIAL.lock().unwrap_or_else(|poison| poison.into_inner());
        HELD.with_borrow_mut(|slot| *slot = Some(guard));
    }
}

/// Runs `body` with this process's PE on behalf of the C function `call`. An error, a panic
/// of the runtime, or a call before `shmem_init` ends the process with a message naming the
/// call, the PE and the fix (`fail.rs`).
pub(crate) fn with_pe<R>(call: &'static str, body: impl FnOnce(&Pe) -> Result<R, CallError>) -> R {
    // A store through `nvshmem_ptr`'s view is a put that precedes the call.
    crate::cuda_sim::peer_views::flush();
    let _serial = Serial::enter();
    let _in_call = crate::rank_status::InCall::enter(call);
    let slot = slot();
    let _sim_call = SimCall::enter(call, slot);
    let pe = current(call);
    let outcome = catch_unwind(AssertUnwindSafe(|| body(pe)));
    // Why: in a simulated run the call may have let other PEs' coroutines run, each of which
    // made its own slot current; this PE's program goes on with its own.
    // SAFETY: `slot` was current at entry, so it lives as long as `enter_slot` promised.
    unsafe { enter_slot(slot) };
    match outcome {
        Ok(Ok(value)) => value,
        Ok(Err(err)) => fail(call, Some(pe.shmem.my_pe()), &err),
        Err(payload) => fail(
            call,
            Some(pe.shmem.my_pe()),
            &CallError::Internal(panic_text(payload.as_ref())),
        ),
    }
}

/// The PE, or the end of the process if the library is not running.
fn current(call: &'static str) -> &'static Pe {
    match (slot().life.load(Ordering::Acquire), running_pe()) {
        (_, Some(pe)) => pe,
        (life::FINALIZED, None) => fail(call, None, &CallError::Finalized),
        (_, None) => fail(call, None, &CallError::NotInitialized),
    }
}

/// The PE, if the library is running.
pub(crate) fn running_pe() -> Option<&'static Pe> {
    let slot = slot();
    if slot.life.load(Ordering::Acquire) != life::RUNNING {
        return None;
    }
    // SAFETY: RUNNING was seen with Acquire, so the write of `pe` by init is visible, and no
    // one writes it again (see `Slot`).
    unsafe { &*slot.pe.get() }.as_ref()
}

/// Whether `shmem_init` has run and `shmem_finalize` has not (`shmem_query_initialized`).
pub(crate) fn is_running() -> bool {
    slot().life.load(Ordering::Acquire) == life::RUNNING
}

/// Whether `shmem_finalize` has run (`shmem_query_finalized`).
pub(crate) fn is_finalized() -> bool {
    slot().life.load(Ordering::Acquire) == life::FINALIZED
}

/// Sets up this process's PE at thread level `requested` (`shmem_init`, `shmem_init_thread`):
/// joins the launcher's bootstrap (or runs as a single PE without one), shares the program's
/// static data and the heaps with every PE. A second call while running does nothing.
///
/// Returns the thread level granted: every level is granted as asked.
pub(crate) fn init(call: &'static str, requested: c_int) -> c_int {
    let slot = slot();
    match slot.life.load(Ordering::Acquire) {
        life::NEW => {}
        life::RUNNING => return with_pe(call, |pe| Ok(pe.thread_level)),
        _ => fail(call, None, &CallError::InitAfterFinalize),
    }
    let _in_call = crate::rank_status::InCall::enter(call);
    let multiple = requested >= thread_level::MULTIPLE;
    let level = requested.clamp(thread_level::SINGLE, thread_level::MULTIPLE);
    let started = crate::start::start(slot, around_sleep);
    // Why: in a simulated run, starting let the other PEs' coroutines run (init exchanges
    // with every PE), each of which made its own slot current.
    // SAFETY: `slot` was current at entry, so it lives as long as `enter_slot` promised.
    unsafe { enter_slot(slot) };
    let shmem = match started {
        Ok(shmem) => shmem,
        Err(err) => fail(call, None, &err),
    };
    // SAFETY: the slot's life is NEW, so no call reads `pe` yet, and only this thread
    // initialises (a program calls shmem_init once, on one thread, before other threads call
    // SHMEM).
    unsafe {
        *slot.pe.get() = Some(Pe {
            shmem,
            handles: Handles::default(),
            thread_level: level,
            active_sets: Default::default(),
            nvshmem_teams: Default::default(),
            objects_made: Default::default(),
        });
    }
    MULTIPLE.store(multiple, Ordering::Relaxed);
    slot.life.store(life::RUNNING, Ordering::Release);
    level
}

/// Tears the PE down (`shmem_finalize`): completes its operations and waits for every PE.
/// A call before init or a second call does nothing.
pub(crate) fn finalize(call: &'static str) {
    if !is_running() {
        return;
    }
    with_pe(call, |pe| Ok(pe.shmem.finalize()?));
    slot().life.store(life::FINALIZED, Ordering::Release);
}

impl Pe {
    /// The context `handle` names (`SHMEM_CTX_DEFAULT` is the default context).
    ///
    /// # Errors
    /// [`CallError::InvalidContext`] for a handle that no live context has.
    pub(crate) fn ctx(
        &self,
        handle: crate::handles::shmem_ctx_t,
    ) -> Result<&Ctx<Backend>, CallError> {
        self.handles.ctx(&self.shmem, handle)
    }

    /// The team `handle` names.
    ///
    /// # Errors
    /// [`CallError::InvalidTeam`] for a handle that no live team has.
    pub(crate) fn team(&self, handle: crate::handles::shmem_team_t) -> Result<&Team, CallError> {
        self.handles.team(&self.shmem, handle)
    }

    /// The symmetric address of the pointer `ptr` of this process.
    ///
    /// # Errors
    /// [`rshmem::ShmemError::NotSymmetric`] if `ptr` is in no heap and not static data.
    pub(crate) fn addr<T>(&self, ptr: *const T) -> Result<SymAddr, CallError> {
        Ok(self.shmem.symmetric_addr(ptr as u64)?)
    }

    /// The `count` elements of `T` at `ptr` as a symmetric view (checked at use).
    ///
    /// # Errors
    /// As [`Pe::addr`].
    pub(crate) fn sym<T: Element>(&self, ptr: *const T, count: usize) -> Result<Sym<T>, CallError> {
        Ok(self.addr(ptr)?.cast(count))
    }

    /// The pointer of this process to this PE's part of `sym`, or null if the backend maps
    /// no memory for it here.
    pub(crate) fn ptr_of<T: Element>(&self, sym: Sym<T>) -> *mut T {
        self.shmem
            .local_addr(sym.addr())
            .map_or(std::ptr::null_mut(), |addr| addr as *mut T)
    }
}

/// The message of a panic payload.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Ends the job with `status` (`shmem_global_exit`): tells the launcher, which ends every
/// other PE at once and exits with `status`, then ends this process. Without a launcher (a
/// single PE) there is no one else to tell.
pub(crate) fn global_exit(status: c_int) -> ! {
    // No lock: the process ends here whatever another thread is doing.
    let process = running_pe().and_then(|pe| pe.shmem.device().downcast_ref::<ProcessDevice>());
    if let Some(client) = process.and_then(ProcessDevice::bootstrap) {
        // Why ignore a failure: the launcher also sees this process exit with `status`, and
        // ends the others then (after its grace period instead of at once).
        let _ = client.global_exit(status);
    }
    let who = running_pe().map_or_else(
        || "a PE".to_owned(),
        |pe| format!("PE {}", pe.shmem.my_pe()),
    );
    crate::sim_host::note_why(format!("{who} called shmem_global_exit({status})"));
    std::process::exit(status)
}
