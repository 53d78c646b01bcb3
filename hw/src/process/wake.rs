//! How a PE sleeps until a peer process writes the words it waits for, and how the writer
//! wakes it.
//!
//! Each PE has a control block: a page of memfd, shared at join like a segment. It holds a
//! 32-bit futex word `wake_seq`, a count `sleepers`, a flag `wake_pending`, a count
//! `watch_all` and [`WATCH_SLOTS`] watch slots. A waiter first spins (a bounded number of
//! checks, then a few `sched_yield`s: two PEs on two cores see each other's stores within a
//! microsecond and never enter the kernel), then publishes which words it waits for and sleeps
//! on `wake_seq` with `FUTEX_WAIT`.
//!
//! **What a waiter publishes.** Each word it waits on takes one slot, claimed with a
//! compare-and-swap (other threads of the process may wait at the same time): the word's
//! segment kind and its 8-byte granule. A wait on more words than there are free slots
//! (or more than [`MAX_WATCHED_WORDS`]) counts itself in `watch_all` instead: every write wakes
//! it. Slots and `watch_all` are held for the whole wait; `sleepers` counts the waiters
//! between publishing and the end of their sleep.
//!
//! **What a writer does.** After its stores, `fence(SeqCst)`, then one load of `sleepers`:
//! zero (nobody sleeps) ends it, so a write costs one fence and one load. Otherwise it wakes
//! only if `watch_all` is non-zero or a slot's granule overlaps the bytes it wrote, and then
//! only if `wake_pending` was clear: it sets the flag (swap), bumps `wake_seq` (Release) and
//! `FUTEX_WAKE`s. So a put to a PE that sleeps in a barrier costs no syscall, and of many
//! writes to a watched word during one sleep only the first enters the kernel. The futex is
//! a shared one (no `FUTEX_PRIVATE_FLAG`): the word lies in memory of several processes.
//!
//! **The handshake** (why no wake-up is lost). The waiter, before each sleep: `load seq`
//! (Acquire); `store wake_pending = 0`; slots, `watch_all` and `sleepers += 1` (all before the
//! fence); `fence(SeqCst)`; `check` the words; `FUTEX_WAIT(seq)`. The writer: `store data;
//! fence(SeqCst); load sleepers, watch_all, slots, wake_pending`. This is the
//! store-buffering shape. Of the two SeqCst fences one comes first in their single total
//! order, and each load after the later fence sees the store before the earlier one (or a
//! later store to that location):
//!
//! - the writer's fence first: the waiter's check sees the data and it does not sleep;
//! - the waiter's fence first: the writer sees the waiter counted in `sleepers` and its
//!   published words (the slots and `watch_all` keep them until the wait ends; a later wait's
//!   values are judged by that wait's own handshake). If the words overlap what it wrote:
//!   - it reads `wake_pending == 0`, wins the swap, bumps `wake_seq` and wakes;
//!   - or it reads 1 (or loses the swap). That 1 is a swap made after this sleep's clear
//!     (the writer's load comes after the waiter's fence, so it sees the clear or a later
//!     value), by a writer that then bumps `wake_seq` and wakes. That bump is not what the
//!     waiter's `load seq` read: if it were, the swap would happen before the clear it
//!     reads from (Release bump, Acquire load, the clear sequenced after the load), which
//!     coherence forbids.
//!
//!   Either way `wake_seq` moves after the waiter read it, and `FUTEX_WAIT` (which compares
//!   the word with the value read, atomically with going to sleep) returns at once or is
//!   woken by the `FUTEX_WAKE` that follows the bump. The waiter then looks again.
//!
//! Stores that wake nobody (a store through `shmem_ptr`, or by another thread of the process
//! into its own memory) are still seen, because a sleep lasts at most [`MAX_NAP`]: the waiter
//! looks again at least that often.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};
use std::time::{Duration, Instant};

use crate::types::MemKind;

use super::AroundSleep;
use crate::common::memfd::Mapping;

/// The bytes of a control block: a page.
pub(crate) const CONTROL_BYTES: usize = 4096;
/// Where `wake_seq` lies in a control block; `wake_pending` shares its line, since both are
/// written only by a writer that wakes.
const WAKE_SEQ_OFFSET: u64 = 0;
const WAKE_PENDING_OFFSET: u64 = 4;
/// Where `sleepers` and `watch_all` lie: a cache line away from `wake_seq`, so that writers
/// that only look do not share a line with writers that wake.
const SLEEPERS_OFFSET: u64 = 64;
const WATCH_ALL_OFFSET: u64 = 68;
/// Where the watch slots start: 64-bit words after `watch_all`, on the same line, so a
/// writer's look is one or two cache lines.
const SLOTS_OFFSET: u64 = 72;
/// How many words sleeping waiters of one PE can publish at once.
pub(crate) const WATCH_SLOTS: usize = 7;
/// The most words one wait publishes; a wait on more watches everything.
pub(crate) const MAX_WATCHED_WORDS: usize = 4;

/// How a waiter spends its time before it sleeps.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SpinPolicy {
    /// Checks with a `spin_loop` hint between them.
    pub(crate) spins: u32,
    /// Checks with a `sched_yield` between them, after the spins.
    pub(crate) yields: u32,
}

impl SpinPolicy {
    /// The policy for `n_pes` PEs on this machine. With a core for each PE a peer's store
    /// arrives while the waiter spins, so it spins long (a few microseconds) and never enters
    /// the kernel. With more PEs than cores the peer it waits for may be waiting for this
    /// core: spinning burns the time slice it needs, so the waiter yields a little and then
    /// sleeps, which hands the core over until the store wakes it.
    pub(crate) fn for_pes(n_pes: u32) -> SpinPolicy {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if n_pes as usize <= cores {
            SpinPolicy {
                spins: 1024,
                yields: 64,
            }
        } else {
            SpinPolicy {
                spins: 32,
                yields: 8,
            }
        }
    }
}

/// The longest a waiter sleeps before it looks at its words again.
pub(crate) const MAX_NAP: Duration = Duration::from_millis(2);

/// A word a waiter waits on, as it publishes it: its segment kind and 8-byte granule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Watched {
    /// The word's segment.
    pub(crate) kind: MemKind,
    /// The word's offset in its segment.
    pub(crate) offset: u64,
}

impl Watched {
    /// The slot's value: never 0 (an empty slot), since the kind's index is stored plus one.
    fn encode(self) -> u64 {
        ((self.kind.index() as u64 + 1) << 56) | (self.offset >> 3)
    }
}

/// Whether the slot value `slot` names a granule of `kind` that bytes `offset..offset + len`
/// touch.
#[inline]
fn overlaps(slot: u64, kind: MemKind, offset: u64, len: u64) -> bool {
    if slot >> 56 != kind.index() as u64 + 1 || len == 0 {
        return false;
    }
    let granule = slot & ((1 << 56) - 1);
    let first = offset >> 3;
    let last = offset.saturating_add(len - 1) >> 3;
    (first..=last).contains(&granule)
}

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

    fn slot(&self, index: usize) -> &AtomicU64 {
        let offset = SLOTS_OFFSET + 8 * index as u64;
        let ptr = self.mapping.span(offset, 8, "control block").cast::<u64>();
        // SAFETY: as in `word`, for an 8-aligned 64-bit word (SLOTS_OFFSET is a multiple of 8).
        unsafe { AtomicU64::from_ptr(ptr) }
    }

    fn wake_seq(&self) -> &AtomicU32 {
        self.word(WAKE_SEQ_OFFSET)
    }

    fn wake_pending(&self) -> &AtomicU32 {
        self.word(WAKE_PENDING_OFFSET)
    }

    fn sleepers(&self) -> &AtomicU32 {
        self.word(SLEEPERS_OFFSET)
    }

    fn watch_all(&self) -> &AtomicU32 {
        self.word(WATCH_ALL_OFFSET)
    }

    /// Called by a writer after it stored bytes `offset..offset + len` of the owner's `kind`
    /// segment: wakes the owner's sleepers if one waits for those bytes (the writer's half
    /// of the handshake in the module docs).
    #[inline]
    pub(crate) fn notify(&self, kind: MemKind, offset: u64, len: u64) {
        // Orders the caller's stores before the loads below (store buffering).
        fence(Ordering::SeqCst);
        // Relaxed, here and in `wanted`: the fence above orders them; a stale value only
        // costs a wake of nobody or a look at the slots.
        if self.sleepers().load(Ordering::Relaxed) != 0 && self.wanted(kind, offset, len) {
            self.wake();
        }
    }

    /// Whether a sleeper watches everything or a granule of the written bytes.
    #[cold]
    fn wanted(&self, kind: MemKind, offset: u64, len: u64) -> bool {
        self.watch_all().load(Ordering::Relaxed) != 0
            || (0..WATCH_SLOTS)
                .any(|i| overlaps(self.slot(i).load(Ordering::Relaxed), kind, offset, len))
    }

    /// Wakes the sleepers, once per sleep.
    #[cold]
    fn wake(&self) {
        let pending = self.wake_pending();
        // Relaxed load first: a set flag (another writer wakes them) costs no RMW. AcqRel
        // swap: the handshake's argument reads the flag's modification order.
        if pending.load(Ordering::Relaxed) != 0 || pending.swap(1, Ordering::AcqRel) != 0 {
            return;
        }
        // Release: a waiter whose Acquire load reads the new value sees the caller's stores.
        self.wake_seq().fetch_add(1, Ordering::Release);
        futex(self.wake_seq(), libc::FUTEX_WAKE, i32::MAX as u32, None);
    }

    /// Publishes `words` for a wait (`None`: every word): claims a slot for each, or counts
    /// the wait in `watch_all` when there are more than [`MAX_WATCHED_WORDS`] or the slots
    /// run out. Relaxed: the handshake's fence, after this and before the first sleep, orders
    /// the stores.
    fn publish(&self, words: Option<&[Watched]>) -> Published {
        let mut claimed = [usize::MAX; MAX_WATCHED_WORDS];
        if let Some(words) = words.filter(|w| w.len() <= MAX_WATCHED_WORDS) {
            let mut next_free = 0;
            for (n, word) in words.iter().enumerate() {
                let value = word.encode();
                let free = (next_free..WATCH_SLOTS).find(|&i| {
                    self.slot(i)
                        .compare_exchange(0, value, Ordering::Relaxed, Ordering::Relaxed)
                        .is_ok()
                });
                let Some(i) = free else { break };
                claimed[n] = i;
                next_free = i + 1;
            }
            if claimed[..words.len()].iter().all(|&i| i != usize::MAX) {
                return Published::Slots(claimed);
            }
        }
        self.unpublish(Published::Slots(claimed));
        self.watch_all().fetch_add(1, Ordering::Relaxed);
        Published::All
    }

    /// Frees what [`Control::publish`] claimed. Relaxed: a writer that still sees the words
    /// only wakes nobody.
    fn unpublish(&self, published: Published) {
        match published {
            Published::Slots(claimed) => {
                for i in claimed.into_iter().filter(|&i| i != usize::MAX) {
                    self.slot(i).store(0, Ordering::Relaxed);
                }
            }
            Published::All => {
                self.watch_all().fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    /// Runs `check` until it returns `Some`, spinning, then yielding, then sleeping at most
    /// `nap` at a time with `words` published (`None`: every word; the waiter's half of the
    /// handshake); `None` once `deadline` passes (never, for `None`). `check` reads only the
    /// words of `words`: others' writes wake it only by chance or after a nap. Every sleep
    /// runs inside `around_sleep`.
    pub(crate) fn wait_for<T>(
        &self,
        words: Option<&[Watched]>,
        mut check: impl FnMut() -> Option<T>,
        policy: SpinPolicy,
        deadline: Option<Instant>,
        nap: Duration,
        around_sleep: &AroundSleep,
    ) -> Option<T> {
        for _ in 0..policy.spins {
            if let Some(found) = check() {
                return Some(found);
            }
            std::hint::spin_loop();
        }
        for _ in 0..policy.yields {
            if let Some(found) = check() {
                return Some(found);
            }
            // SAFETY: sched_yield takes no arguments and cannot fail on Linux.
            unsafe { libc::sched_yield() };
        }
        let published = self.publish(words);
        let found = loop {
            // Acquire, before the clear: pairs with a writer's Release bump (module docs).
            let seq = self.wake_seq().load(Ordering::Acquire);
            // Relaxed: the fence below orders it before the loads that follow.
            self.wake_pending().store(0, Ordering::Relaxed);
            self.sleepers().fetch_add(1, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            let found = check();
            let left = match deadline {
                Some(deadline) => deadline.saturating_duration_since(Instant::now()),
                None => nap,
            };
            if found.is_some() || left.is_zero() {
                // Relaxed: a writer that still sees this sleeper only looks at the slots.
                self.sleepers().fetch_sub(1, Ordering::Relaxed);
                break found;
            }
            let nap = left.min(nap);
            around_sleep(&mut || futex(self.wake_seq(), libc::FUTEX_WAIT, seq, Some(nap)));
            self.sleepers().fetch_sub(1, Ordering::Relaxed);
        };
        self.unpublish(published);
        found
    }
}

/// What a wait published: the slots it claimed (unused entries `usize::MAX`), or a count in
/// `watch_all`.
enum Published {
    Slots([usize; MAX_WATCHED_WORDS]),
    All,
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
    use crate::common::memfd::shared_memory;

    fn control() -> Control {
        let (_fd, mapping) = shared_memory(c"rshmem-test-control", CONTROL_BYTES).expect("memfd");
        Control::new(mapping)
    }

    /// A policy that sleeps at once, so that the tests exercise the handshake.
    const SLEEP_AT_ONCE: SpinPolicy = SpinPolicy {
        spins: 0,
        yields: 0,
    };

    const FLAG: Watched = Watched {
        kind: MemKind::Host,
        offset: 64,
    };

    /// An around-sleep hook that counts the sleeps.
    fn counting() -> (AroundSleep, Arc<AtomicUsize>) {
        let naps = Arc::new(AtomicUsize::new(0));
        let around: AroundSleep = {
            let naps = Arc::clone(&naps);
            Arc::new(move |sleep: &mut dyn FnMut()| {
                naps.fetch_add(1, Ordering::Relaxed);
                sleep()
            })
        };
        (around, naps)
    }

    /// Waits for `flag` to be 1 with `words` published, sleeping at once, in naps of 30 s: a
    /// lost wake-up holds the waiter far past the tests' bounds.
    fn wait_long(
        control: &Control,
        words: Option<&[Watched]>,
        flag: &AtomicU32,
        around: &AroundSleep,
    ) {
        let check = || (flag.load(Ordering::Relaxed) == 1).then_some(());
        let found = control.wait_for(
            words,
            check,
            SLEEP_AT_ONCE,
            None,
            Duration::from_secs(30),
            around,
        );
        assert_eq!(found, Some(()));
    }

    /// Waits (naps of 30 s: a lost wake-up holds the waiter far past the test's bound) for
    /// `flag` to be 1 with `words` published, while `writer` runs on another thread; returns
    /// how many times the waiter slept.
    fn wait_with(
        control: &Control,
        words: Option<&[Watched]>,
        flag: &AtomicU32,
        writer: impl FnOnce() + Send,
    ) -> usize {
        let (around, naps) = counting();
        let started = Instant::now();
        std::thread::scope(|s| {
            s.spawn(writer);
            wait_long(control, words, flag, &around);
        });
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the waiter slept through the notify: {:?}",
            started.elapsed()
        );
        naps.load(Ordering::Relaxed)
    }

    /// A writer that comes long after the waiter went to sleep wakes it.
    #[test]
    fn a_write_to_a_watched_word_wakes_the_sleeper_at_once() {
        let control = control();
        let flag = AtomicU32::new(0);
        let naps = wait_with(&control, Some(&[FLAG]), &flag, || {
            std::thread::sleep(Duration::from_millis(100));
            flag.store(1, Ordering::Relaxed);
            control.notify(MemKind::Host, 60, 8);
        });
        assert!(naps >= 1, "the waiter never slept");
    }

    /// Writes to other words, or to the same offset of another segment, do not wake the
    /// sleeper: it sleeps once, until the write it waits for.
    #[test]
    fn writes_to_other_words_do_not_wake_the_sleeper() {
        let control = control();
        let flag = AtomicU32::new(0);
        let naps = wait_with(&control, Some(&[FLAG]), &flag, || {
            std::thread::sleep(Duration::from_millis(50));
            for _ in 0..100 {
                control.notify(MemKind::Host, 0, 64);
                control.notify(MemKind::Host, 72, 8);
                control.notify(MemKind::Static, 64, 8);
            }
            std::thread::sleep(Duration::from_millis(50));
            flag.store(1, Ordering::Relaxed);
            control.notify(MemKind::Host, 64, 4);
        });
        assert_eq!(naps, 1, "a write to another word woke the sleeper");
    }

    /// A wait on more words than it may publish watches everything, and is woken by any
    /// write; its slots are free again afterwards.
    #[test]
    fn a_wait_on_many_words_is_woken_by_any_write() {
        let control = control();
        let flag = AtomicU32::new(0);
        let many: Vec<Watched> = (0..MAX_WATCHED_WORDS as u64 + 1)
            .map(|i| Watched {
                kind: MemKind::Host,
                offset: 1024 + 8 * i,
            })
            .collect();
        wait_with(&control, Some(&many), &flag, || {
            std::thread::sleep(Duration::from_millis(50));
            flag.store(1, Ordering::Relaxed);
            control.notify(MemKind::Device, 0, 1);
        });
        assert_eq!(control.watch_all().load(Ordering::Relaxed), 0);
        assert!((0..WATCH_SLOTS).all(|i| control.slot(i).load(Ordering::Relaxed) == 0));
    }

    /// Waiters on several threads take a slot each; when the slots run out the last ones
    /// watch everything, and every waiter is woken by its own write.
    #[test]
    fn concurrent_waiters_each_get_their_wake() {
        let control = control();
        let waiters = WATCH_SLOTS + 2;
        let flags: Vec<AtomicU32> = (0..waiters).map(|_| AtomicU32::new(0)).collect();
        let (around, _naps) = counting();
        std::thread::scope(|s| {
            for (i, flag) in flags.iter().enumerate() {
                let (control, around) = (&control, &around);
                s.spawn(move || {
                    let word = Watched {
                        kind: MemKind::Host,
                        offset: 8 * i as u64,
                    };
                    wait_long(control, Some(&[word]), flag, around);
                });
            }
            std::thread::sleep(Duration::from_millis(100));
            for (i, flag) in flags.iter().enumerate() {
                flag.store(1, Ordering::Relaxed);
                control.notify(MemKind::Host, 8 * i as u64, 8);
                std::thread::sleep(Duration::from_millis(5));
            }
        });
    }

    /// The race itself: many rounds of a write that lands while the waiter goes to sleep,
    /// with the writer's nap varied so that it falls on every step of the waiter's handshake.
    /// A lost wake-up costs a 30 s nap and fails the bound.
    #[test]
    fn no_wake_up_is_lost_in_many_close_races() {
        let control = control();
        let (around, _naps) = counting();
        let started = Instant::now();
        for round in 0..400u32 {
            let flag = AtomicU32::new(0);
            std::thread::scope(|s| {
                s.spawn(|| {
                    for _ in 0..(round % 40) * 25 {
                        std::hint::spin_loop();
                    }
                    flag.store(1, Ordering::Relaxed);
                    control.notify(MemKind::Host, 64, 8);
                });
                wait_long(&control, Some(&[FLAG]), &flag, &around);
            });
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "a wake-up was lost: {:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_wait_gives_up_at_its_deadline() {
        let control = control();
        let deadline = Instant::now() + Duration::from_millis(30);
        let (around, _naps) = counting();
        let found: Option<()> = control.wait_for(
            Some(&[FLAG]),
            || None,
            SLEEP_AT_ONCE,
            Some(deadline),
            MAX_NAP,
            &around,
        );
        assert_eq!(found, None);
        assert!(Instant::now() >= deadline);
    }

    /// A store that notifies nobody is still seen within a nap.
    #[test]
    fn a_store_without_notify_is_seen_after_a_nap() {
        let control = control();
        let flag = AtomicU32::new(0);
        let (around, _naps) = counting();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(20));
                flag.store(1, Ordering::Relaxed);
            });
            let check = || (flag.load(Ordering::Relaxed) == 1).then_some(());
            let found =
                control.wait_for(Some(&[FLAG]), check, SLEEP_AT_ONCE, None, MAX_NAP, &around);
            assert_eq!(found, Some(()));
        });
    }

    #[test]
    fn a_write_overlaps_the_granules_it_touches() {
        let slot = FLAG.encode();
        assert!(overlaps(slot, MemKind::Host, 64, 1));
        assert!(overlaps(slot, MemKind::Host, 71, 1));
        assert!(overlaps(slot, MemKind::Host, 0, 65));
        assert!(!overlaps(slot, MemKind::Host, 0, 64));
        assert!(!overlaps(slot, MemKind::Host, 72, 8));
        assert!(!overlaps(slot, MemKind::Host, 64, 0));
        assert!(!overlaps(slot, MemKind::Device, 64, 8));
        assert!(!overlaps(0, MemKind::Host, 0, u64::MAX));
    }
}
