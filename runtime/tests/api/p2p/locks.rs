//! Distributed locks (set_lock, test_lock, clear_lock) on the simulator.

use rshmem::{Shmem, ShmemError};
use sim::SimBackend;

use super::MACHINES;
use crate::common::run_on;

// ---- locks ---------------------------------------------------------------------------------

/// Each PE from `first` on adds one to a counter on PE 0 `rounds` times with a get and a put,
/// inside the lock; returns the final count.
fn count_under_the_lock(shmem: &Shmem<SimBackend>, first: u32, rounds: u64) -> u64 {
    let lock = shmem.calloc::<i64>(1).expect("calloc");
    let counter = shmem.calloc::<u64>(1).expect("calloc");
    let rounds = if shmem.my_pe() >= first { rounds } else { 0 };
    for _ in 0..rounds {
        shmem.set_lock(lock).expect("set_lock");
        let value = shmem.g(counter, 0).expect("g");
        shmem.p(counter, value + 1, 0).expect("p");
        shmem.clear_lock(lock).expect("clear_lock");
    }
    shmem.barrier_all().expect("barrier");
    shmem.g(counter, 0).expect("g")
}

#[test]
fn a_lock_makes_a_get_and_put_counter_exact() {
    for seed in 0..3 {
        let seen = run_on("hgx8", 8, seed, |shmem| count_under_the_lock(shmem, 0, 25));
        assert!(
            seen.iter().all(|&count| count == 8 * 25),
            "seed {seed}: {seen:?}"
        );
    }
    // The 8 PEs of the second host, with the lock's home and the counter behind a NIC. (PEs
    // of the first host would read the counter over NVLink, where a put that crossed the NIC
    // is visible only after PE 0's own consistency step: docs/ordering.md, not the lock.)
    for seed in 0..3 {
        let seen = run_on("ib-2", 16, seed, |shmem| count_under_the_lock(shmem, 8, 10));
        assert!(
            seen.iter().all(|&count| count == 8 * 10),
            "seed {seed}: {seen:?}"
        );
    }
}

#[test]
fn test_lock_fails_while_another_pe_holds_the_lock() {
    for (topology, n_pes) in MACHINES {
        let seen = run_on(topology, n_pes, 0, |shmem| {
            let me = shmem.my_pe();
            let tester = shmem.n_pes() - 1;
            let lock = shmem.calloc::<i64>(1).expect("calloc");
            let mut log = Vec::new();
            if me == 1 {
                shmem.set_lock(lock).expect("set_lock");
            }
            shmem.barrier_all().expect("barrier");
            if me == tester {
                log.push(shmem.test_lock(lock).expect("test_lock while held"));
            }
            shmem.barrier_all().expect("barrier");
            if me == 1 {
                shmem.clear_lock(lock).expect("clear_lock");
            }
            shmem.barrier_all().expect("barrier");
            if me == tester {
                log.push(shmem.test_lock(lock).expect("test_lock when free"));
                shmem.clear_lock(lock).expect("clear_lock");
            }
            shmem.barrier_all().expect("barrier");
            if me == 0 {
                // Free again, so set_lock does not wait.
                shmem.set_lock(lock).expect("set_lock");
                shmem.clear_lock(lock).expect("clear_lock");
            }
            log
        });
        assert_eq!(seen[n_pes as usize - 1], [false, true], "{topology}");
    }
}

#[test]
fn lock_misuse_is_an_error_not_a_hang() {
    run_on("hgx8", 2, 0, |shmem| {
        let me = shmem.my_pe();
        let locks = shmem.calloc::<i64>(2).expect("calloc");
        let lock = locks.at(me as usize).expect("lock");
        let err = shmem.clear_lock(lock).expect_err("not held");
        assert!(matches!(err, ShmemError::LockNotHeld { .. }), "{err}");
        assert!(err.to_string().contains("set_lock"), "{err}");
        shmem.set_lock(lock).expect("set_lock");
        let err = shmem.set_lock(lock).expect_err("held");
        assert!(
            matches!(err, ShmemError::LockAlreadyHeld { op: "set_lock", .. }),
            "{err}"
        );
        let err = shmem.test_lock(lock).expect_err("held");
        assert!(
            matches!(
                err,
                ShmemError::LockAlreadyHeld {
                    op: "test_lock",
                    ..
                }
            ),
            "{err}"
        );
        shmem.clear_lock(lock).expect("clear_lock");
        let err = shmem.set_lock(locks).expect_err("two words");
        assert!(matches!(err, ShmemError::LengthMismatch { .. }), "{err}");
        let crooked = locks.addr().byte_add(4).cast::<i64>(1);
        let err = shmem.test_lock(crooked).expect_err("misaligned");
        assert!(matches!(err, ShmemError::Misaligned { .. }), "{err}");
    });
}
