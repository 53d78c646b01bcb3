//! How a PE sleeps until a peer process writes its memory, and how the writer wakes it.
//!
//! Each PE has a control block: a small memfd, shared at join like a segment, holding a 32-bit
//! futex word `wake_seq` and a count `sleepers`. A waiter first spins (a bounded number of
//! checks, then a bounded number of `sched_yield`s: two PEs on two cores see each other's
//! stores within a microsecond and never enter the kernel), then sleeps on `wake_seq` with
//! `FUTEX_WAIT`. A writer to the PE's memory wakes it with `FUTEX_WAKE` only if a sleeper
//! registered, so a write costs one fence and one load when nobody sleeps. The futex is a
//! shared one (no `FUTEX_PRIVATE_FLAG`): the word lies in memory of several processes, and the
//! kernel keys shared futexes by the page, not the address.
//!
//! **The handshake** is the store-buffering shape. The writer does `store data;
//! fence(SeqCst); load sleepers`, the waiter `store sleepers (+1); fence(SeqCst); load seq;
//! load data`. Of two SeqCst fences one comes first in their single total order, and the
//! load after the later fence sees the store before the earlier one:
//!
//! - the writer's fence first: the waiter's check sees the data and it does not sleep;
//! - the waiter's fence first: the writer sees `sleepers > 0`, bumps `wake_seq` (Release) and
//!   wakes. If the waiter read `wake_seq` after the bump, its Acquire load synchronises with
//!   the bump, so its check sees the data; if before, `FUTEX_WAIT` (which compares the word
//!   with the value read, atomically with going to sleep) either returns at once because the
//!   word moved or sleeps and is woken by the writer's `FUTEX_WAKE`, which follows the bump.
//!
//! Either way no wake-up is lost. Stores that wake nobody (a store through `shmem_ptr`, or
//! by another thread of the process into its own memory) are still seen, because a sleep
//! lasts at most [`MAX_NAP`]: the waiter looks again at least that often.

use std::sync::atomic::{AtomicU32, Ordering, fence};
use std::time::{Duration, Instant};

use super::AroundSleep;
use super::memory::Mapping;

/// The bytes of a control block: a page.
pub(crate) const CONTROL_BYTES: usize = 4096;
/// Where `wake_seq` lies in a control block.
const WAKE_SEQ_OFFSET: u64 = 0;
/// Where `sleepers` lies: a cache line away from `wake_seq`, which writers bump.
const SLEEPERS_OFFSET: u64 = 64;

/// How many checks a waiter makes with a `spin_loop` hint between them before it yields.
const SPIN_CHECKS: u32 = 256;
/// How many checks a waiter makes with a `sched_yield` between them before it sleeps.
const YIELD_CHECKS: u32 = 64;
/// The longest a waiter sleeps before it looks at its words again.
pub(crate) const MAX_NAP: Duration = Duration::from_millis(2);

/// One PE's control block, as mapped in this process.
#[derive(Debug)]
pub(crate) struct Control {
    mapping: Mapping,
}

impl Control {
    /// The control block in `mapping`, which is [`CONTROL_BYTES`] long.
    pub(crate) fn new(mapping: Mapping) -> Control {
        assert_eq!(mapping.len(), CONTROL_BYTES, "a control block is a page");
        Control { mapping }
    }

    fn word(&self, offset: u64) -> &AtomicU32 {
        let ptr = self.mapping.span(offset, 4, "control block").cast::<u32>();
        // SAFETY: the word is inside the mapping, 4-aligned (the mapping is page-aligned and
        // the offsets are multiples of 4), lives as long as `self`, and every process
        // accesses it only atomically.
        unsafe { AtomicU32::from_ptr(ptr) }
    }

    fn wake_seq(&self) -> &AtomicU32 {
        self.word(WAKE_SEQ_OFFSET)
    }

    fn sleepers(&self) -> &AtomicU32 {
        self.word(SLEEPERS_OFFSET)
    }

    /// Called by a writer after its stores to the owner's memory: wakes the owner's sleepers,
    /// if any (the writer's half of the handshake in the module docs).
    #[inline]
    pub(crate) fn notify(&self) {
        // Orders the caller's stores before the load of `sleepers` (store buffering).
        fence(Ordering::SeqCst);
        // Relaxed: the fence above orders it; a stale non-zero only costs a wake of nobody.
        if self.sleepers().load(Ordering::Relaxed) != 0 {
            self.wake_all();
        }
    }

    #[cold]
    fn wake_all(&self) {
        // Release: a waiter whose Acquire load reads the new value sees the caller's stores.
        self.wake_seq().fetch_add(1, Ordering::Release);
        futex(self.wake_seq(), libc::FUTEX_WAKE, i32::MAX as u32, None);
    }

    /// Runs `check` until it returns `Some`, spinning, then yielding, then sleeping at most
    /// `nap` at a time (the waiter's half of the handshake); `None` once `deadline` passes
    /// (never, for `None`). Every sleep runs inside `around_sleep`.
    pub(crate) fn wait_for<T>(
        &self,
        mut check: impl FnMut() -> Option<T>,
        deadline: Option<Instant>,
        nap: Duration,
        around_sleep: &AroundSleep,
    ) -> Option<T> {
        for _ in 0..SPIN_CHECKS {
            if let Some(found) = check() {
                return Some(found);
            }
            std::hint::spin_loop();
        }
        for _ in 0..YIELD_CHECKS {
            if let Some(found) = check() {
                return Some(found);
            }
            // SAFETY: sched_yield takes no arguments and cannot fail on Linux.
            unsafe { libc::sched_yield() };
        }
        loop {
            // Relaxed: the fence below orders it before the loads that follow.
            self.sleepers().fetch_add(1, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            // Acquire: pairs with the writer's Release bump (see the module docs).
            let seq = self.wake_seq().load(Ordering::Acquire);
            let found = check();
            let now = Instant::now();
            let left = match deadline {
                Some(deadline) => deadline.saturating_duration_since(now),
                None => nap,
            };
            if found.is_some() || left.is_zero() {
                // Relaxed: a writer that still sees this sleeper only wakes nobody.
                self.sleepers().fetch_sub(1, Ordering::Relaxed);
                return found;
            }
            let nap = left.min(nap);
            around_sleep(&mut || futex(self.wake_seq(), libc::FUTEX_WAIT, seq, Some(nap)));
            self.sleepers().fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// One futex call on `word`: `FUTEX_WAIT` while it holds `value` (at most `timeout`), or
/// `FUTEX_WAKE` of up to `value` waiters. Shared, not private: the word is in memory that
/// several processes map. Its result is not needed: a wait that returns early (woken,
/// interrupted, the word already moved, timed out) is followed by a fresh check.
fn futex(word: &AtomicU32, op: libc::c_int, value: u32, timeout: Option<Duration>) {
    let timespec = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs() as libc::time_t,
        tv_nsec: libc::c_long::from(t.subsec_nanos() as i32),
    });
    let timespec_ptr = timespec
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a live, aligned 32-bit word; the timeout, when given, points to a
    // timespec that outlives the call; the remaining arguments are unused by WAIT and WAKE.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            value,
            timespec_ptr,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    use super::*;
    use crate::process::memory::shared_memory;

    fn control() -> Control {
        let (_fd, mapping) = shared_memory(c"rshmem-test-control", CONTROL_BYTES).expect("memfd");
        Control::new(mapping)
    }

    fn plain_sleep() -> AroundSleep {
        Arc::new(|sleep: &mut dyn FnMut()| sleep())
    }

    /// A writer that comes long after the waiter went to sleep must wake it: with naps of
    /// 30 s, a lost wake-up would hold the waiter far past the test's bound.
    #[test]
    fn a_notify_wakes_a_sleeping_waiter_at_once() {
        let control = control();
        let flag = AtomicU32::new(0);
        let naps = Arc::new(AtomicUsize::new(0));
        let around: AroundSleep = {
            let naps = Arc::clone(&naps);
            Arc::new(move |sleep: &mut dyn FnMut()| {
                naps.fetch_add(1, Ordering::Relaxed);
                sleep()
            })
        };
        let started = Instant::now();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(100));
                flag.store(1, Ordering::Relaxed);
                control.notify();
            });
            let check = || (flag.load(Ordering::Relaxed) == 1).then_some(());
            let found = control.wait_for(check, None, Duration::from_secs(30), &around);
            assert_eq!(found, Some(()));
        });
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the waiter slept through the notify: {:?}",
            started.elapsed()
        );
        assert!(naps.load(Ordering::Relaxed) >= 1, "the waiter never slept");
    }

    #[test]
    fn a_wait_gives_up_at_its_deadline() {
        let control = control();
        let deadline = Instant::now() + Duration::from_millis(30);
        let found: Option<()> = control.wait_for(|| None, Some(deadline), MAX_NAP, &plain_sleep());
        assert_eq!(found, None);
        assert!(Instant::now() >= deadline);
    }

    /// A store that notifies nobody is still seen within a nap.
    #[test]
    fn a_store_without_notify_is_seen_after_a_nap() {
        let control = control();
        let flag = AtomicU32::new(0);
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(20));
                flag.store(1, Ordering::Relaxed);
            });
            let check = || (flag.load(Ordering::Relaxed) == 1).then_some(());
            assert_eq!(
                control.wait_for(check, None, MAX_NAP, &plain_sleep()),
                Some(())
            );
        });
    }
}
