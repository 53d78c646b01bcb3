//! The rules between threads on hand-built event sequences.

use hw::{HostThreadEvent, KernelEvent, KernelMemory, SyncObject, ThreadAccess};

use super::Kernels;
use crate::check::report::{AccessKind, RaceCause, ThreadAt};

/// A launch of `blocks` blocks of 64 threads on PE 0.
fn launch(blocks: u32) -> Kernels {
    let mut kernels = Kernels::new(1);
    kernels.event(
        0,
        KernelEvent::Launch {
            name: "k",
            grid: [blocks, 1, 1],
            block: [64, 1, 1],
        },
    );
    kernels
}

fn access(k: &mut Kernels, thread: u32, memory: KernelMemory, at: u64, access: ThreadAccess) {
    k.event(0, KernelEvent::Run { thread });
    k.event(
        0,
        KernelEvent::Access {
            memory,
            at,
            len_bytes: 4,
            access,
        },
    );
}

const SHARED: KernelMemory = KernelMemory::Shared;
const GLOBAL: KernelMemory = KernelMemory::Global;

#[test]
fn a_write_and_a_read_of_two_threads_race_without_a_meeting() {
    let mut k = launch(1);
    access(&mut k, 0, SHARED, 0, ThreadAccess::Write);
    access(&mut k, 33, SHARED, 0, ThreadAccess::Read);
    let races = k.take_races();
    assert_eq!(races.len(), 1, "{races:?}");
    let race = &races[0];
    assert_eq!(
        (race.first.kind, race.second.kind),
        (AccessKind::LocalWrite, AccessKind::LocalRead)
    );
    assert_eq!(
        race.second.thread,
        Some(ThreadAt::Kernel {
            block: [0, 0, 0],
            thread: [33, 0, 0]
        })
    );
    assert!(
        matches!(&race.cause, RaceCause::KernelThreads { kernel, memory: KernelMemory::Shared } if kernel == "k")
    );
    let text = race.to_string();
    assert!(
        text.contains("thread (33,0,0)") && text.contains("kernel k"),
        "{text}"
    );
}

#[test]
fn a_block_meeting_orders_its_threads_and_a_warp_meeting_its_warp_only() {
    let mut k = launch(1);
    access(&mut k, 0, SHARED, 0, ThreadAccess::Write);
    k.event(0, KernelEvent::Meet { first: 0, end: 64 });
    access(&mut k, 40, SHARED, 0, ThreadAccess::Read);
    assert_eq!(k.take_races(), []);
    access(&mut k, 1, SHARED, 8, ThreadAccess::Write);
    k.event(0, KernelEvent::Meet { first: 0, end: 32 });
    access(&mut k, 31, SHARED, 8, ThreadAccess::Read);
    assert_eq!(k.take_races(), []);
    access(&mut k, 32, SHARED, 8, ThreadAccess::Read);
    assert_eq!(k.take_races().len(), 1, "thread 32 is in the next warp");
}

#[test]
fn each_block_has_its_own_shared_memory_and_all_share_global_memory() {
    let mut k = launch(2);
    access(&mut k, 0, SHARED, 0, ThreadAccess::Write);
    access(&mut k, 64, SHARED, 0, ThreadAccess::Write);
    assert_eq!(k.take_races(), []);
    access(&mut k, 0, GLOBAL, 0x1000, ThreadAccess::Write);
    k.event(0, KernelEvent::Meet { first: 0, end: 64 });
    access(&mut k, 64, GLOBAL, 0x1000, ThreadAccess::Read);
    assert_eq!(
        k.take_races().len(),
        1,
        "block 0's meeting does not order block 1"
    );
}

#[test]
fn an_atomic_releases_and_a_fetching_atomic_acquires() {
    let flag = |k: &mut Kernels, thread, fetch| {
        access(k, thread, GLOBAL, 0x2000, ThreadAccess::Atomic { fetch });
    };
    let mut k = launch(2);
    access(&mut k, 3, GLOBAL, 0x1000, ThreadAccess::Write);
    flag(&mut k, 3, false);
    flag(&mut k, 70, true);
    access(&mut k, 70, GLOBAL, 0x1000, ThreadAccess::Read);
    // What thread 70 learned reaches its block through a meeting.
    k.event(
        0,
        KernelEvent::Meet {
            first: 64,
            end: 128,
        },
    );
    access(&mut k, 100, GLOBAL, 0x1000, ThreadAccess::Read);
    assert_eq!(k.take_races(), []);
    // A write of thread 3 after its release is not ordered.
    access(&mut k, 3, GLOBAL, 0x1000, ThreadAccess::Write);
    assert_eq!(k.take_races().len(), 1);
    // Atomics and volatile accesses do not race with each other.
    flag(&mut k, 5, true);
    access(&mut k, 90, GLOBAL, 0x2000, ThreadAccess::VolatileRead);
    assert_eq!(k.take_races(), []);
}

#[test]
fn a_race_is_reported_once_per_pair_of_accesses_not_per_pair_of_threads() {
    let mut k = launch(1);
    access(&mut k, 0, SHARED, 0, ThreadAccess::Write);
    for thread in 1..64 {
        access(&mut k, thread, SHARED, 0, ThreadAccess::Read);
    }
    assert_eq!(k.take_races().len(), 1);
    k.event(0, KernelEvent::End);
    access(&mut k, 5, SHARED, 0, ThreadAccess::Write);
    assert_eq!(k.take_races(), [], "no launch runs");
}

/// An access of 4 bytes of global memory at `at` by thread `thread` of PE 0's program.
fn host_access(k: &mut Kernels, thread: u32, at: u64, access: ThreadAccess) {
    k.host_event(
        0,
        HostThreadEvent::Access {
            thread,
            memory: GLOBAL,
            at,
            len_bytes: 4,
            access,
        },
    );
}

/// PE 0's program with threads 1 and 2 started by its first thread.
fn host_threads() -> Kernels {
    let mut k = Kernels::new(1);
    for child in [1, 2] {
        k.host_event(0, HostThreadEvent::Start { parent: 0, child });
    }
    k
}

#[test]
fn two_program_threads_race_on_a_word_without_synchronisation() {
    let mut k = host_threads();
    host_access(&mut k, 1, 0x1000, ThreadAccess::Write);
    host_access(&mut k, 2, 0x1000, ThreadAccess::Read);
    let races = k.take_races();
    assert_eq!(races.len(), 1, "{races:?}");
    let race = &races[0];
    assert_eq!(race.first.thread, Some(ThreadAt::Host { thread: 1 }));
    assert_eq!(race.second.thread, Some(ThreadAt::Host { thread: 2 }));
    assert!(matches!(
        race.cause,
        RaceCause::HostThreads {
            memory: KernelMemory::Global
        }
    ));
    let text = race.to_string();
    assert!(
        text.contains("by thread 2") && text.contains("pthread_create"),
        "{text}"
    );
}

#[test]
fn a_start_orders_the_parents_past_and_a_join_the_childs() {
    let mut k = Kernels::new(1);
    host_access(&mut k, 0, 0x10, ThreadAccess::Write);
    k.host_event(
        0,
        HostThreadEvent::Start {
            parent: 0,
            child: 1,
        },
    );
    host_access(&mut k, 1, 0x10, ThreadAccess::Read);
    host_access(&mut k, 1, 0x20, ThreadAccess::Write);
    let end = SyncObject::ThreadEnd(1);
    k.host_event(
        0,
        HostThreadEvent::Release {
            thread: 1,
            object: end,
        },
    );
    k.host_event(
        0,
        HostThreadEvent::Acquire {
            thread: 0,
            object: end,
        },
    );
    host_access(&mut k, 0, 0x20, ThreadAccess::Read);
    assert_eq!(k.take_races(), []);
    // What the parent does after the start is not ordered before the child.
    k.host_event(
        0,
        HostThreadEvent::Start {
            parent: 0,
            child: 2,
        },
    );
    host_access(&mut k, 0, 0x30, ThreadAccess::Write);
    host_access(&mut k, 2, 0x30, ThreadAccess::Read);
    assert_eq!(k.take_races().len(), 1);
}

#[test]
fn a_mutex_orders_what_was_done_under_it_and_nothing_after_the_unlock() {
    let mut k = host_threads();
    let mutex = SyncObject::Address(0x5000);
    k.host_event(
        0,
        HostThreadEvent::Acquire {
            thread: 1,
            object: mutex,
        },
    );
    host_access(&mut k, 1, 0x40, ThreadAccess::Write);
    k.host_event(
        0,
        HostThreadEvent::Release {
            thread: 1,
            object: mutex,
        },
    );
    host_access(&mut k, 1, 0x44, ThreadAccess::Write);
    k.host_event(
        0,
        HostThreadEvent::Acquire {
            thread: 2,
            object: mutex,
        },
    );
    host_access(&mut k, 2, 0x40, ThreadAccess::Write);
    assert_eq!(k.take_races(), []);
    host_access(&mut k, 2, 0x44, ThreadAccess::Read);
    assert_eq!(
        k.take_races().len(),
        1,
        "the write after the unlock is unordered"
    );
}

#[test]
fn an_atomic_flag_orders_the_data_before_it_and_atomics_never_race() {
    let mut k = host_threads();
    host_access(&mut k, 1, 0x80, ThreadAccess::Write);
    host_access(&mut k, 1, 0x90, ThreadAccess::VolatileWrite);
    host_access(&mut k, 2, 0x90, ThreadAccess::VolatileRead);
    host_access(&mut k, 2, 0x80, ThreadAccess::Read);
    host_access(&mut k, 2, 0x90, ThreadAccess::Atomic { fetch: true });
    assert_eq!(k.take_races(), []);
    // A plain read of the flag word races with the atomic store of another thread.
    host_access(&mut k, 0, 0x90, ThreadAccess::Read);
    let races = k.take_races();
    assert_eq!(races.len(), 1, "{races:?}");
    assert_eq!(races[0].first.kind, AccessKind::AtomicUpdate);
}
