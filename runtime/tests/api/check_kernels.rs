//! Races between the threads of one kernel launch under the race detector: a word one thread
//! writes and others read is a race without a meeting of the block, and clean with
//! `sync_threads`; across blocks, an atomic on the PE's own word orders them.

use hw::{AmoKind, Semantics};
use rshmem::check::{AccessKind, Race, RaceCause, ThreadAt};
use rshmem::{Dim3, Shmem, ShmemError};

use super::check::races_on;
use crate::common::sim_builder;

/// Runs `pe_main` on 2 PEs of `hgx8` under the detector.
fn kernel_races(
    pe_main: impl Fn(&Shmem<rshmem::check::CheckedBackend<sim::SimBackend>>) -> Result<(), ShmemError>
    + Sync,
) -> Vec<Race> {
    races_on(
        sim_builder("hgx8", 2, 0).semantics(Semantics::Nvshmem),
        pe_main,
    )
}

/// Thread 0 of a block of 64 writes a symmetric word, then every thread reads it; with
/// `sync`, the block meets in between.
fn one_writer_many_readers<B: hw::Backend>(sh: &Shmem<B>, sync: bool) -> Result<(), ShmemError> {
    let word = sh.calloc::<u64>(1)?;
    let seen = sh.launch_kernel(Dim3::linear(1), Dim3::linear(64), async |t| {
        if t.thread_rank() == 0 {
            t.set_local(word, &[7])?;
        }
        if sync {
            t.sync_threads().await?;
        }
        Ok(t.local(word)?[0])
    })?;
    if sync {
        assert!(seen.iter().all(|&v| v == 7), "{seen:?}");
    }
    Ok(())
}

#[test]
fn threads_of_a_block_race_on_a_word_without_sync_threads() {
    let races = kernel_races(|sh| one_writer_many_readers(sh, false));
    // Every PE runs the kernel: one race each, named by the kernel and the threads.
    assert_eq!(races.len(), 2, "{races:#?}");
    for race in &races {
        let RaceCause::KernelThreads { kernel, .. } = &race.cause else {
            panic!("not a race between threads: {race}");
        };
        assert!(kernel.contains("one_writer_many_readers"), "{kernel}");
        assert_eq!(
            (race.first.kind, race.second.kind),
            (AccessKind::LocalWrite, AccessKind::LocalRead)
        );
        let thread = |x| {
            Some(ThreadAt::Kernel {
                block: [0, 0, 0],
                thread: [x, 0, 0],
            })
        };
        assert_eq!(
            (race.first.thread, race.second.thread),
            (thread(0), thread(1))
        );
        assert_eq!(race.first.pe, race.second.pe);
        let text = race.to_string();
        assert!(text.contains("block (0,0,0) thread (1,0,0)"), "{text}");
    }
}

#[test]
fn sync_threads_orders_the_write_before_the_reads() {
    let races = kernel_races(|sh| one_writer_many_readers(sh, true));
    assert!(races.is_empty(), "{races:#?}");
}

/// Block 0 writes a word and then, with `atomic`, adds to a flag of this PE; block 1 waits
/// for the flag (an atomic fetch in a loop) and reads the word. Without `atomic`, block 1
/// waits on nothing and just reads.
fn across_blocks<B: hw::Backend>(sh: &Shmem<B>, atomic: bool) -> Result<(), ShmemError> {
    let data = sh.calloc::<u64>(1)?;
    let flag = sh.calloc::<u64>(1)?;
    let me = sh.my_pe();
    sh.launch_kernel(Dim3::linear(2), Dim3::linear(1), async |t| {
        if t.block_rank() == 0 {
            t.set_local(data, &[5])?;
            if atomic {
                t.atomic(flag, AmoKind::Add, 1, me, false).await?;
            }
            return Ok(0);
        }
        if atomic {
            while t.atomic(flag, AmoKind::Fetch, 0, me, true).await? == Some(0) {
                t.yield_now().await;
            }
        }
        Ok(t.local(data)?[0])
    })?;
    Ok(())
}

#[test]
fn an_atomic_on_the_pes_own_word_orders_two_blocks() {
    let races = kernel_races(|sh| across_blocks(sh, false));
    assert_eq!(races.len(), 2, "{races:#?}");
    let races = kernel_races(|sh| across_blocks(sh, true));
    assert!(races.is_empty(), "{races:#?}");
}
