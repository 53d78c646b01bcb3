//! The race detector (`rshmem::check`) on the simulator: small SHMEM programs with and
//! without the synchronisation they need. Each runs over a few seeds, printed so a failure
//! can be replayed; a program that needs a rule must show a race on every seed without it,
//! because the detector judges the rules, not the order the simulator happened to pick.

use hw::Semantics;
use rshmem::check::{AccessKind, CheckedBackend, Race, run_checked};
use rshmem::{Cmp, Config, Shmem, ShmemError, SignalOp};
use sim::{SimBackend, SimBuilder};

use crate::common::sim_builder;

const SEEDS: std::ops::Range<u64> = 0..4;

/// Runs `pe_main` on 2 PEs of an HGX node under the detector and returns the races; panics if
/// a PE failed.
fn races(
    semantics: Semantics,
    seed: u64,
    pe_main: impl Fn(&Shmem<CheckedBackend<SimBackend>>) -> Result<(), ShmemError> + Sync,
) -> Vec<Race> {
    println!("seed {seed}, {semantics:?}");
    races_on(sim_builder("hgx8", 2, seed).semantics(semantics), pe_main)
}

/// Runs `pe_main` on the simulator `builder` makes, under the detector, and returns the
/// races; panics if a PE failed.
pub(crate) fn races_on(
    builder: SimBuilder,
    pe_main: impl Fn(&Shmem<CheckedBackend<SimBackend>>) -> Result<(), ShmemError> + Sync,
) -> Vec<Race> {
    let sim = builder.build().expect("the machine has the GPUs asked for");
    let config = Config::default().device_heap_size(1 << 20);
    let (output, races) = run_checked(sim, config, pe_main).expect("the PEs launch");
    for (pe, result) in output.results.into_iter().enumerate() {
        match result {
            Ok(Ok(())) => {}
            Ok(Err(err)) => panic!("PE {pe}: {err}"),
            Err(err) => panic!("{err}"),
        }
    }
    races
}

/// The (PE, kind) of each side of each race.
fn sides(races: &[Race]) -> Vec<((u32, AccessKind), (u32, AccessKind))> {
    races
        .iter()
        .map(|r| ((r.first.pe, r.first.kind), (r.second.pe, r.second.kind)))
        .collect()
}

/// How PE 0 separates its data put from its flag put.
#[derive(Clone, Copy, Debug)]
enum Between {
    Nothing,
    Fence,
    Quiet,
}

/// Message passing: PE 0 puts data and then a flag to PE 1; PE 1 waits for the flag and
/// reads the data.
fn message_passing(between: Between, seed: u64) -> Vec<Race> {
    races(Semantics::Nvshmem, seed, |sh| {
        let data = sh.calloc::<u64>(4)?;
        let flag = sh.calloc::<u64>(1)?;
        if sh.my_pe() == 0 {
            sh.put(data, &[1, 2, 3, 4], 1)?;
            match between {
                Between::Nothing => {}
                Between::Fence => sh.fence()?,
                Between::Quiet => sh.quiet()?,
            }
            sh.p(flag, 1, 1)?;
        } else {
            sh.wait_until(flag, Cmp::Eq, 1)?;
            sh.local(data)?;
        }
        Ok(())
    })
}

#[test]
fn message_passing_without_a_fence_is_a_race_between_the_put_and_the_read() {
    for seed in SEEDS {
        let races = message_passing(Between::Nothing, seed);
        assert_eq!(
            sides(&races),
            [((0, AccessKind::Put), (1, AccessKind::LocalRead))],
            "{races:?}"
        );
        assert_eq!(races[0].first.target, 1);
        assert_eq!(races[0].first.len_bytes, 32);
        let text = races[0].to_string();
        assert!(text.contains("PE 0: put of 32 B"), "{text}");
        assert!(text.contains("PE 1: local read of 32 B"), "{text}");
    }
}

#[test]
fn message_passing_with_a_fence_or_a_quiet_has_no_race() {
    for seed in SEEDS {
        assert_eq!(message_passing(Between::Fence, seed), []);
        assert_eq!(message_passing(Between::Quiet, seed), []);
    }
}

/// PE 0 stores data in its own memory and then sets its own flag atomically; PE 1 fetches
/// the flag until it is set, then gets the data, with a fence in between if `fence`.
fn get_reader(semantics: Semantics, fence: bool, seed: u64) -> Vec<Race> {
    races(semantics, seed, |sh| {
        let data = sh.calloc::<u64>(1)?;
        let flag = sh.calloc::<u64>(1)?;
        if sh.my_pe() == 0 {
            sh.set_local(data, &[7])?;
            sh.atomic_set(flag, 1, 0)?;
        } else {
            while sh.atomic_fetch(flag, 0)? != 1 {}
            if fence {
                sh.fence()?;
            }
            sh.get(data, 0)?;
        }
        Ok(())
    })
}

#[test]
fn nvshmem_fetches_need_a_fence_before_they_order_a_later_get() {
    for seed in SEEDS {
        assert_eq!(
            sides(&get_reader(Semantics::Nvshmem, false, seed)),
            [((0, AccessKind::LocalWrite), (1, AccessKind::Get))]
        );
        assert_eq!(get_reader(Semantics::Nvshmem, true, seed), []);
        // OpenSHMEM 1.5's blocking fetches complete in program order.
        assert_eq!(get_reader(Semantics::OpenShmem15, false, seed), []);
    }
}

/// PE 0 puts to PE 1, then both meet at `barrier_all` (or only `sync_all`, which completes
/// nothing), then PE 1 reads.
fn barrier_ordered(complete: bool, seed: u64) -> Vec<Race> {
    races(Semantics::Nvshmem, seed, |sh| {
        let data = sh.calloc::<u64>(2)?;
        if sh.my_pe() == 0 {
            sh.put(data, &[1, 2], 1)?;
        }
        if complete {
            sh.barrier_all()?;
        } else {
            sh.sync_all()?;
        }
        if sh.my_pe() == 1 {
            sh.local(data)?;
        }
        Ok(())
    })
}

#[test]
fn barrier_all_orders_data_and_sync_all_does_not() {
    for seed in SEEDS {
        assert_eq!(barrier_ordered(true, seed), []);
        assert_eq!(
            sides(&barrier_ordered(false, seed)),
            [((0, AccessKind::Put), (1, AccessKind::LocalRead))]
        );
    }
}

#[test]
fn unsynchronised_puts_from_two_pes_to_one_word_race() {
    for seed in SEEDS {
        let races = races(Semantics::Nvshmem, seed, |sh| {
            let word = sh.calloc::<u64>(1)?;
            sh.p(word, u64::from(sh.my_pe()), 1)?;
            Ok(())
        });
        assert_eq!(races.len(), 1, "{races:?}");
        let pes = [races[0].first.pe, races[0].second.pe];
        assert!(pes == [0, 1] || pes == [1, 0], "{races:?}");
        assert_eq!(races[0].first.kind, AccessKind::Put);
        assert_eq!(races[0].second.kind, AccessKind::Put);
    }
}

#[test]
fn the_signal_of_a_put_with_signal_orders_its_data() {
    for seed in SEEDS {
        let races = races(Semantics::Nvshmem, seed, |sh| {
            let data = sh.calloc::<u64>(4)?;
            let signal = sh.calloc::<u64>(1)?;
            if sh.my_pe() == 0 {
                sh.put_signal(data, &[1, 2, 3, 4], signal, 1, SignalOp::Set, 1)?;
            } else {
                sh.signal_wait_until(signal, Cmp::Eq, 1)?;
                sh.local(data)?;
            }
            Ok(())
        });
        assert_eq!(races, []);
    }
}
