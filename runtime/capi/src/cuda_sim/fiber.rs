//! GPU threads as coroutines: the future each thread of a launch is in the runtime's kernel
//! model, and the API that device calls use from inside a thread ([`current`], [`block_on`],
//! [`fail`]).
//!
//! How a thread runs: `Shmem::launch_kernel` polls one future per GPU thread ([`Fiber`]). Its
//! first poll takes a pooled stack (`stacks.rs`) and starts a corosensei coroutine that calls
//! the kernel's trampoline with the launch's argument array; every poll points `__rsim_cur` at
//! the thread's ids, makes this fiber the running one and its block's `__shared__` bytes
//! resident, then resumes the coroutine. A device call that must wait ([`block_on`]) polls its
//! runtime future on the thread's own stack and, while it is `Pending`, suspends the coroutine:
//! the thread's poll returns `Pending` and the kernel model runs the other threads. A thread
//! that returns gives its stack back at once, so a kernel whose threads never wait runs on one
//! stack.
//!
//! Why the running fiber is a process-wide pointer and not a thread-local: `__rsim_cur`, which
//! compiled device code reads, is one per process anyway (the ABI), and kernels run on the
//! thread that launched them. On the simulator every PE runs on one OS thread, and a device
//! call can let other PEs run (their threads then become the running ones), so [`block_on`]
//! makes its own fiber running again after every poll, as `with_pe` does for the C API's slot.
//!
//! Lifetimes: [`current`] hands out the thread's `KernelThread` as `'static`. It lives in the
//! launch (`Shmem::launch_kernel` keeps every thread's until the launch returns), and the
//! running fiber is only ever the one whose coroutine is on the CPU, inside that launch: the
//! reference is valid for the whole device call that asked for it, and must not be kept past
//! its return.

use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::fmt::Display;
use std::marker::PhantomPinned;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::task::{Context, Poll, Waker};

use corosensei::{Coroutine, CoroutineResult, Yielder};
use rshmem::{Dim3, KernelThread, ShmemError};

use crate::cuda_sim::launch::Grid;
use crate::cuda_sim::stacks::{self, FiberStack};
use crate::fail::CallError;
use crate::state::Backend;

/// The ids of the GPU thread that runs now, as `struct rsim_ids` of `cuda_sim_abi.h`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RsimIds {
    /// `threadIdx`.
    pub thread_idx: [u32; 3],
    /// `blockIdx`.
    pub block_idx: [u32; 3],
    /// `blockDim`.
    pub block_dim: [u32; 3],
    /// `gridDim`.
    pub grid_dim: [u32; 3],
}

/// Where compiled device code reads `threadIdx` and friends: the running thread's ids.
///
/// Relaxed: written and read only by the thread that runs the kernel (the ABI has one per
/// process; see the module docs).
#[unsafe(no_mangle)]
pub static __rsim_cur: AtomicPtr<RsimIds> = AtomicPtr::new(std::ptr::null_mut());

/// The running [`Fiber`], lifetime erased; null outside kernels. Relaxed as [`__rsim_cur`].
static RUNNING: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// The coroutine of one GPU thread: started by its first poll, done when the kernel returns.
type ThreadCoroutine = Coroutine<(), (), (), FiberStack>;

/// One GPU thread of a launch: its future in the kernel model, and the record device calls
/// reach through [`RUNNING`] while its coroutine runs.
pub(crate) struct Fiber<'k> {
    thread: &'k KernelThread<'k, Backend>,
    grid: &'k Grid<'k>,
    ids: RsimIds,
    /// The block's rank in the grid.
    block: usize,
    coroutine: RefCell<Option<ThreadCoroutine>>,
    /// The coroutine's yielder, set by the coroutine when it starts.
    yielder: Cell<*const Yielder<(), ()>>,
    /// The waker of the poll that resumed the coroutine, for the polls inside it.
    waker: Cell<*const Waker>,
    /// How many warp and block exchanges this thread has made (`builtins.rs`).
    pub(crate) warp_exchanges: Cell<u32>,
    /// See `warp_exchanges`.
    pub(crate) block_exchanges: Cell<u32>,
    /// The coroutine reads this record by address, so it must not move once polled.
    _pinned: PhantomPinned,
}

impl<'k> Fiber<'k> {
    /// The fiber of `thread`, in `grid`.
    pub(crate) fn new(thread: &'k KernelThread<'k, Backend>, grid: &'k Grid<'k>) -> Fiber<'k> {
        let triple = |d: Dim3| [d.x, d.y, d.z];
        Fiber {
            thread,
            grid,
            ids: RsimIds {
                thread_idx: triple(thread.thread_idx()),
                block_idx: triple(thread.block_idx()),
                block_dim: triple(thread.block_dim()),
                grid_dim: triple(thread.grid_dim()),
            },
            block: thread.block_rank() as usize,
            coroutine: RefCell::new(None),
            yielder: Cell::new(std::ptr::null()),
            waker: Cell::new(std::ptr::null()),
            warp_exchanges: Cell::new(0),
            block_exchanges: Cell::new(0),
            _pinned: PhantomPinned,
        }
    }

    /// The thread in the kernel model.
    pub(crate) fn thread(&self) -> &'k KernelThread<'k, Backend> {
        self.thread
    }

    /// The launch this thread belongs to.
    pub(crate) fn grid(&self) -> &'k Grid<'k> {
        self.grid
    }

    /// The thread's rank in the launch.
    pub(crate) fn index(&self) -> usize {
        self.thread.global_rank() as usize
    }

    /// The block's rank in the grid.
    pub(crate) fn block(&self) -> usize {
        self.block
    }

    /// Makes this fiber the running one: its PE's slot current, its ids in `__rsim_cur`, its
    /// block's shared bytes in place.
    pub(crate) fn enter(&self) {
        // SAFETY: the slot was current when the launch began, so it lives as long as
        // `enter_slot` asks (slots are never freed).
        unsafe { crate::state::enter_slot(self.grid.slot) };
        RUNNING.store(
            std::ptr::from_ref(self).cast_mut().cast(),
            Ordering::Relaxed,
        );
        __rsim_cur.store(std::ptr::from_ref(&self.ids).cast_mut(), Ordering::Relaxed);
        super::mapped::enter(self.grid.mapped);
        self.grid.shared.make_resident(self.block);
    }

    /// Suspends the coroutine until the kernel model polls this thread again.
    fn suspend(&self) {
        let yielder = self.yielder.get();
        // SAFETY: set by the coroutine when it started, and this runs on that coroutine (only
        // the running fiber suspends, from a device call of its own thread), so the yielder,
        // which lives on the coroutine's stack, is alive.
        unsafe { &*yielder }.suspend(());
    }

    /// Starts the coroutine on a pooled stack.
    fn start(&self) -> Result<ThreadCoroutine, std::io::Error> {
        let stack = stacks::take()?;
        let record = std::ptr::from_ref(self) as usize;
        let (trampoline, args) = (self.grid.trampoline, self.grid.args as usize);
        Ok(Coroutine::with_stack(
            stack,
            move |yielder: &Yielder<(), ()>, ()| {
                // SAFETY: the fiber is pinned (it is !Unpin and polled through Pin) and outlives
                // its coroutine: the coroutine runs only inside the fiber's poll.
                let fiber = unsafe { &*(record as *const Fiber<'_>) };
                fiber.yielder.set(yielder);
                // SAFETY: the trampoline of the kernel this launch runs, given the argument array
                // of cudaLaunchKernel, which stays valid until the launch returns (it runs to its
                // end inside the call). No panic unwinds out of it: every Rust function it can
                // reach is an extern "C" entry that catches panics.
                unsafe { trampoline(args as *mut *mut c_void) }
            },
        ))
    }
}

impl Future for Fiber<'_> {
    type Output = Result<(), ShmemError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.into_ref().get_ref();
        let mut coroutine = this.coroutine.borrow_mut();
        if coroutine.is_none() {
            if !this.grid.residency.may_start(this.block) {
                // Its block starts once a resident one has finished (`residency.rs`).
                return match pin!(this.thread().yield_now()).poll(cx) {
                    Poll::Ready(()) => unreachable!("a yield is pending at its first poll"),
                    Poll::Pending => Poll::Pending,
                };
            }
            this.grid.residency.started(this.block);
            match this.start() {
                Ok(started) => *coroutine = Some(started),
                Err(err) => this.fail_here(
                    "cudaLaunchKernel",
                    &format!("cannot map a GPU thread's stack: {err}; launch fewer threads"),
                ),
            }
        }
        let running = coroutine.as_mut().expect("started above");
        this.waker.set(cx.waker());
        this.enter();
        let step = running.resume(());
        RUNNING.store(std::ptr::null_mut(), Ordering::Relaxed);
        __rsim_cur.store(std::ptr::null_mut(), Ordering::Relaxed);
        match step {
            CoroutineResult::Yield(()) => Poll::Pending,
            CoroutineResult::Return(()) => {
                let done = coroutine.take().expect("resumed above");
                stacks::give_back(done.into_stack());
                this.grid.residency.returned(this.block);
                this.grid.shared.thread_returned(this.block);
                Poll::Ready(Ok(()))
            }
        }
    }
}

impl Drop for Fiber<'_> {
    fn drop(&mut self) {
        if let Some(mut unfinished) = self.coroutine.get_mut().take() {
            // Why not unwind it (corosensei's default): its frames are C and C++, which a
            // Rust unwind must not cross. The launch failed and the run ends; the frames'
            // objects are abandoned with their stack, which is unmapped.
            // SAFETY: nothing refers to the coroutine's stack any more: the launch is over.
            unsafe { unfinished.force_reset() };
        }
    }
}

/// The running fiber, if a GPU thread of the current PE runs. A fiber whose PE's coroutine the
/// simulator suspended inside a device call (a wait in the backend) stays in [`RUNNING`] while
/// other PEs run their host code, so the fiber counts only while its PE's slot is current.
pub(crate) fn running() -> Option<&'static Fiber<'static>> {
    let fiber = RUNNING.load(Ordering::Relaxed);
    // SAFETY: RUNNING points at the fiber whose coroutine is on the CPU, which lives until
    // its poll returns (see the module docs for the lifetime); null otherwise.
    let fiber = (!fiber.is_null()).then(|| unsafe { &*(fiber as *const Fiber<'static>) })?;
    std::ptr::eq(fiber.grid.slot, crate::state::slot()).then_some(fiber)
}

/// The calling GPU thread in the kernel model, or `None` when no kernel thread runs (the
/// caller is host code). Valid for the device call that asked; see the module docs.
#[allow(dead_code)] // The API of the device SHMEM calls (`device_shmem.rs`), written beside this.
pub(crate) fn current() -> Option<&'static KernelThread<'static, Backend>> {
    running().map(Fiber::thread)
}

/// Runs `future` to its end on the calling GPU thread: polls it, and while it is `Pending`
/// suspends the thread's coroutine so that the other threads run. Ends the run if no GPU
/// thread calls.
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    let Some(fiber) = running() else {
        fail(
            "a device call",
            &"called outside a kernel: call device functions from __global__ code",
        )
    };
    let mut future = pin!(future);
    loop {
        // SAFETY: set by the poll that resumed this coroutine, whose waker outlives the
        // resume, and this runs inside that resume.
        let waker = unsafe { &*fiber.waker.get() };
        let polled = future.as_mut().poll(&mut Context::from_waker(waker));
        // Why: the poll may have let other PEs' threads run, each of which made itself running.
        fiber.enter();
        match polled {
            Poll::Ready(value) => return value,
            Poll::Pending => fiber.suspend(),
        }
    }
}

/// Ends the run because the device call `call` of the running GPU thread failed with `error`,
/// naming the PE, the kernel, the block and the thread: a failed device call is a GPU trap.
pub(crate) fn fail(call: &str, error: &dyn Display) -> ! {
    match running() {
        Some(fiber) => fiber.fail_here(call, error),
        None => crate::fail::fail(
            call,
            crate::state::running_pe().map(|pe| pe.shmem.my_pe()),
            &CallError::Argument(error.to_string()),
        ),
    }
}

/// The wait of the running GPU thread in `call` on `word` for `cmp value`, which saw `seen`,
/// in the format the GPU's watchdog prints too ([`hw::KernelWait`]); `None` outside kernels.
pub(crate) fn kernel_wait(
    call: &str,
    word: String,
    cmp: hw::Cmp,
    value: u64,
    seen: u64,
) -> Option<hw::KernelWait> {
    running().map(|fiber| hw::KernelWait {
        pe: fiber.grid.pe,
        kernel: fiber.grid.kernel_name(),
        block: fiber.ids.block_idx,
        thread: fiber.ids.thread_idx,
        call: call.to_owned(),
        word,
        cmp,
        value,
        seen,
    })
}

/// Ends the run for a kernel's wait that can never end or passed its deadline (`error`):
/// the wait as [`kernel_wait`] words it, then why.
pub(crate) fn fail_wait(wait: Option<hw::KernelWait>, call: &str, error: &dyn Display) -> ! {
    match wait {
        Some(wait) => crate::fail::fail(
            &wait.to_string(),
            None,
            &CallError::Argument(error.to_string()),
        ),
        None => fail(call, error),
    }
}

impl Fiber<'_> {
    /// [`fail`] for this thread.
    fn fail_here(&self, call: &str, error: &dyn Display) -> ! {
        let who = format!("{}: {call}", self.place());
        crate::fail::fail(
            &who,
            Some(self.grid.pe),
            &CallError::Argument(error.to_string()),
        )
    }

    /// Where this thread is, for messages: `kernel K: block (x,y,z) thread (x,y,z)`.
    pub(crate) fn place(&self) -> String {
        let [tx, ty, tz] = self.ids.thread_idx;
        let [bx, by, bz] = self.ids.block_idx;
        format!(
            "kernel {}: block ({bx},{by},{bz}) thread ({tx},{ty},{tz})",
            self.grid.kernel_name()
        )
    }
}
