//! The kernel model (`Shmem::launch_kernel`, docs/kernels.md) on the simulator: thread ids,
//! how threads interleave at scoped calls, the errors of groups whose threads disagree or
//! never arrive, scoped RMA as one transfer per group, the collectives over every PE and on a
//! split team, and what simulated time means for a kernel. Runs are deterministic (seed 0).

use std::future::poll_fn;
use std::task::Poll;

use rshmem::{Cmp, Dim3, KernelError, Shmem, ShmemError, SignalOp, TeamConfig, run};
use sim::{SimBackend, SimReport};

use crate::common::{config, run_programs, sim, thread_error};

/// Runs `pe_main` on `n_pes` PEs of an 8-GPU NVSwitch node and returns every PE's value and
/// the report; panics on any error.
fn run_kernels_ok<R: Send>(
    n_pes: u32,
    pe_main: impl Fn(&Shmem<SimBackend>) -> Result<R, ShmemError> + Sync,
) -> (Vec<R>, SimReport) {
    let (values, report) = run_programs(sim("hgx8", n_pes, 0), config(), pe_main);
    let values = values
        .into_iter()
        .enumerate()
        .map(|(pe, r)| r.unwrap_or_else(|e| panic!("PE {pe}: {e}")))
        .collect();
    (values, report)
}

#[test]
fn ids_cover_the_grid_and_block_with_x_fastest() {
    let (values, _) = run_kernels_ok(1, |sh| {
        sh.launch_kernel(Dim3::plane(2, 2), Dim3::linear(40), async |t| {
            Ok((
                t.block_idx(),
                t.thread_idx(),
                t.block_rank(),
                t.thread_rank(),
                t.global_rank(),
                t.warp_id(),
                t.lane_id(),
                (t.grid_dim(), t.block_dim(), t.grid_threads()),
            ))
        })
    });
    let ids = &values[0];
    assert_eq!(ids.len(), 160);
    for (rank, &(block, thread, block_rank, thread_rank, global, warp, lane, sizes)) in
        ids.iter().enumerate()
    {
        let rank = rank as u32;
        assert_eq!(global, rank);
        assert_eq!(block_rank, rank / 40);
        assert_eq!(block, Dim3::new(block_rank % 2, block_rank / 2, 0));
        assert_eq!(thread_rank, rank % 40);
        assert_eq!(thread, Dim3::new(thread_rank, 0, 0));
        assert_eq!((warp, lane), (thread_rank / 32, thread_rank % 32));
        assert_eq!(sizes, (Dim3::plane(2, 2), Dim3::linear(40), 160));
    }
}

#[test]
fn sync_threads_separates_the_phases_of_a_block() {
    let (values, _) = run_kernels_ok(1, |sh| {
        let slots = sh.calloc::<u64>(64)?;
        let seen = sh.launch_kernel(Dim3::linear(1), Dim3::linear(64), async |t| {
            let rank = t.thread_rank() as usize;
            t.set_local(slots.at(rank)?, &[rank as u64 + 1])?;
            t.sync_threads().await?;
            // Threads are polled in rank order: without the meeting, thread 0 would read
            // thread 1's slot before thread 1 wrote it.
            Ok(t.local(slots.at((rank + 1) % 64)?)?[0])
        })?;
        sh.free(slots)?;
        Ok(seen)
    });
    let want: Vec<u64> = (0..64).map(|rank| (rank + 1) % 64 + 1).collect();
    assert_eq!(values[0], want);
}

#[test]
fn a_thread_that_returns_before_sync_threads_fails_the_launch() {
    let (values, _) = run_programs(sim("hgx8", 1, 0), config(), |sh| {
        sh.launch_kernel(Dim3::linear(1), Dim3::linear(8), async |t| {
            if t.thread_rank() != 5 {
                t.sync_threads().await?;
            }
            Ok(())
        })
    });
    let err = values[0].as_ref().expect_err("thread 5 never syncs");
    assert!(
        matches!(
            err,
            ShmemError::Kernel(KernelError::NeverArrived {
                arrived: 7,
                size: 8,
                ..
            })
        ),
        "{err}"
    );
    let message = err.to_string();
    assert!(message.contains("sync_threads"), "{message}");
    assert!(message.contains("thread (5, 0, 0) returned"), "{message}");
}

#[test]
fn a_thread_stuck_in_another_group_is_named() {
    let (values, _) = run_programs(sim("hgx8", 1, 0), config(), |sh| {
        sh.launch_kernel(Dim3::linear(1), Dim3::linear(64), async |t| {
            if t.warp_id() == 0 {
                t.sync_threads().await?;
            } else {
                t.sync_warp().await?;
                if t.lane_id() != 0 {
                    t.sync_warp().await?;
                }
            }
            Ok(())
        })
    });
    let message = values[0]
        .as_ref()
        .expect_err("warp 1 never syncs")
        .to_string();
    assert!(
        message.contains("block (0, 0, 0) can never finish sync_threads"),
        "{message}"
    );
    assert!(
        message.contains("waits at sync_warp of warp 1"),
        "{message}"
    );
}

#[test]
fn threads_of_a_group_that_make_different_calls_are_refused() {
    let (values, _) = run_programs(sim("hgx8", 2, 0), config(), |sh| {
        let dst = sh.calloc::<u64>(4)?;
        let outcome = sh.launch_kernel(Dim3::linear(1), Dim3::linear(4), async |t| {
            // Each thread its own data: a block-scoped put must send one buffer's contents.
            let data = [u64::from(t.thread_rank()); 4];
            t.block().put(dst, &data, 1 - t.my_pe()).await
        });
        sh.free(dst)?;
        outcome
    });
    for value in &values {
        let err = value.as_ref().expect_err("the threads' data differ");
        let message = err.to_string();
        assert!(
            matches!(
                thread_error(err),
                ShmemError::Kernel(KernelError::CallMismatch { .. })
            ),
            "{message}"
        );
        assert!(message.contains("with other data"), "{message}");
    }

    let (values, _) = run_programs(sim("hgx8", 1, 0), config(), |sh| {
        sh.launch_kernel(Dim3::linear(1), Dim3::linear(4), async |t| {
            if t.thread_rank() == 2 {
                t.block().quiet().await
            } else {
                t.sync_threads().await
            }
        })
    });
    let message = values[0].as_ref().expect_err("calls differ").to_string();
    assert!(
        message.contains("thread (0, 0, 0) called sync_threads, thread (2, 0, 0) called quiet"),
        "{message}"
    );
}

#[test]
fn a_waiting_thread_lets_the_others_of_its_pe_run() {
    let (values, _) = run_kernels_ok(1, |sh| {
        let data = sh.calloc::<u64>(1)?;
        let flag = sh.calloc::<u64>(1)?;
        let seen = sh.launch_kernel(Dim3::linear(1), Dim3::linear(2), async |t| {
            if t.thread_rank() == 0 {
                // Thread 1 sends only after thread 0 has started waiting.
                t.signal_wait_until(flag, Cmp::Eq, 1).await?;
                Ok(t.local(data)?[0])
            } else {
                t.put_signal(data, &[42], flag, 1, SignalOp::Set, 0).await?;
                Ok(0)
            }
        })?;
        sh.free(flag)?;
        sh.free(data)?;
        Ok(seen)
    });
    assert_eq!(values[0], vec![42, 0]);
}

#[test]
fn sender_and_receiver_threads_wait_on_different_words_without_deadlock() {
    // Each PE's thread 0 pings its peer and waits for the pong; its thread 1 waits for the
    // peer's ping and answers. The two threads wait on different words at once, which the
    // backend cannot block on together: the PE polls both (docs/kernels.md).
    let (values, _) = run_kernels_ok(2, |sh| {
        let ping = sh.calloc::<u64>(1)?;
        let pong = sh.calloc::<u64>(1)?;
        let peer = 1 - sh.my_pe();
        let seen = sh.launch_kernel(Dim3::linear(1), Dim3::linear(2), async |t| {
            if t.thread_rank() == 0 {
                t.p(ping, 1, peer).await?;
                t.wait_until(pong, Cmp::Eq, 1).await
            } else {
                let got = t.wait_until(ping, Cmp::Eq, 1).await?;
                t.p(pong, 1, peer).await?;
                Ok(got)
            }
        })?;
        sh.free(pong)?;
        sh.free(ping)?;
        Ok(seen)
    });
    assert_eq!(values, vec![vec![1, 1], vec![1, 1]]);
}

#[test]
fn a_signal_nobody_sends_is_reported_not_hung() {
    let output = run(sim("hgx8", 2, 0), config(), |sh| {
        let flag = sh.calloc::<u64>(1)?;
        sh.launch_kernel(Dim3::linear(1), Dim3::linear(32), async |t| {
            if t.my_pe() == 0 && t.thread_rank() == 0 {
                t.signal_wait_until(flag, Cmp::Eq, 1).await?;
            }
            Ok(())
        })
    })
    .expect("the PEs launch");
    // PE 0's thread waits for ever and PE 1 waits for PE 0 in finalize: the simulator ends
    // both waits with a deadlock report.
    let pe0 = output.results[0].as_ref().expect("PE 0's program returns");
    let err = pe0.as_ref().expect_err("nobody sends the signal");
    assert!(
        matches!(
            thread_error(err),
            ShmemError::Queue(hw::QueueError::Deadlock { .. })
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("signal_wait_until in a kernel"),
        "{err}"
    );
    assert!(output.results[1].is_err(), "PE 1's finalize fails");
    assert!(output.report.failure.is_some());
}

#[test]
fn a_block_or_warp_scoped_put_is_one_transfer() {
    let (values, report) = run_kernels_ok(2, |sh| {
        let dst = sh.calloc::<u64>(64 + 2 * 4)?;
        let peer = 1 - sh.my_pe();
        let whole: Vec<u64> = (0..64).map(|i| i * 10).collect();
        sh.launch_kernel(Dim3::linear(1), Dim3::linear(64), async |t| {
            t.block().put(dst.slice(..64)?, &whole, peer).await?;
            let warp = t.warp_id() as usize;
            let part = dst.slice(64 + 4 * warp..64 + 4 * (warp + 1))?;
            t.warp().put(part, &[warp as u64 + 1; 4], peer).await?;
            t.block().barrier_all().await
        })?;
        let got = sh.local(dst)?;
        sh.free(dst)?;
        Ok(got)
    });
    for got in values {
        let mut want: Vec<u64> = (0..64).map(|i| i * 10).collect();
        want.extend([1, 1, 1, 1, 2, 2, 2, 2]);
        assert_eq!(got, want);
    }
    // Per PE: one put for the block, one for each of its two warps.
    assert_eq!(report.ops.puts, 2 * 3);
}

#[test]
fn collectives_over_every_pe_from_a_block() {
    for n in [1u32, 3, 8] {
        let (values, _) = run_kernels_ok(n, |sh| {
            let (me, n) = (sh.my_pe(), sh.n_pes() as usize);
            let source = sh.calloc::<i64>(4 * n)?;
            let dest = sh.calloc::<i64>(4 * n)?;
            let mine: Vec<i64> = (0..4 * n as i64)
                .map(|i| 1000 * i64::from(me) + i)
                .collect();
            sh.set_local(source, &mine)?;
            let results = sh.launch_kernel(Dim3::linear(1), Dim3::linear(32), async |t| {
                let block = t.block();
                block.broadcast(dest, source, n as u32 - 1).await?;
                let broadcast = t.local(dest)?;
                block.fcollect(dest, source.slice(..4)?).await?;
                let fcollect = t.local(dest)?;
                block.alltoall(dest, source).await?;
                let alltoall = t.local(dest)?;
                block.sum_reduce(dest, source).await?;
                let sum = t.local(dest)?;
                // In place: `dest` is `source`.
                block.sum_reduce(source, source).await?;
                let in_place = t.local(source)?;
                block.barrier_all().await?;
                Ok((broadcast, fcollect, alltoall, sum, in_place))
            })?;
            sh.free(dest)?;
            sh.free(source)?;
            Ok(results.into_iter().next().expect("thread 0"))
        });
        let n_i = n as i64;
        let len = 4 * n as i64;
        let value = |pe: i64, i: i64| 1000 * pe + i;
        let sum: Vec<i64> = (0..len)
            .map(|i| (0..n_i).map(|pe| value(pe, i)).sum())
            .collect();
        for (me, (broadcast, fcollect, alltoall, got_sum, in_place)) in
            values.into_iter().enumerate()
        {
            let me = me as i64;
            assert_eq!(
                broadcast,
                (0..len).map(|i| value(n_i - 1, i)).collect::<Vec<_>>()
            );
            assert_eq!(
                fcollect,
                (0..n_i)
                    .flat_map(|pe| (0..4).map(move |i| value(pe, i)))
                    .collect::<Vec<_>>()
            );
            assert_eq!(
                alltoall,
                (0..n_i)
                    .flat_map(|pe| (0..4).map(move |i| value(pe, 4 * me + i)))
                    .collect::<Vec<_>>(),
                "{n} PEs, PE {me}"
            );
            assert_eq!(got_sum, sum);
            assert_eq!(in_place, sum);
        }
    }
}

/// The odd PEs of 5 split a team; a block of each member runs the collectives on it, in the
/// team's numbering, and its barrier meets the members' host syncs of that team.
#[test]
fn collectives_on_a_split_team_from_a_block() {
    let (values, _) = run_kernels_ok(5, |sh| {
        let world = sh.team_world();
        let odd = sh.team_split_strided(world, 1, 2, 2, TeamConfig::default())?;
        let source = sh.calloc::<i64>(4)?;
        let dest = sh.calloc::<i64>(4)?;
        let Some(odd) = odd else {
            sh.barrier_all()?;
            return Ok(None);
        };
        let me = i64::from(odd.my_pe()?);
        sh.set_local(source, &[10 * me, 10 * me + 1, 10 * me + 2, 10 * me + 3])?;
        let team = &odd;
        let results = sh.launch_kernel(Dim3::linear(1), Dim3::linear(32), async |t| {
            let block = t.block();
            block.barrier(team).await?;
            block.team_alltoall(team, dest, source).await?;
            let alltoall = t.local(dest)?;
            block
                .team_reduce(team, dest, source, "max", i64::max)
                .await?;
            let max = t.local(dest)?;
            block.team_broadcast(team, dest, source, 1).await?;
            Ok((alltoall, max, t.local(dest)?))
        })?;
        sh.team_sync(&odd)?;
        sh.team_destroy(&odd)?;
        sh.barrier_all()?;
        Ok(results.into_iter().next())
    });
    for (pe, got) in values.into_iter().enumerate() {
        if pe % 2 == 0 {
            assert_eq!(got, None, "PE {pe} is in no team");
            continue;
        }
        let me = (pe / 2) as i64;
        let (alltoall, max, broadcast) = got.expect("a member's results");
        assert_eq!(
            alltoall,
            vec![2 * me, 2 * me + 1, 10 + 2 * me, 11 + 2 * me],
            "PE {pe}"
        );
        assert_eq!(max, vec![10, 11, 12, 13], "PE {pe}");
        assert_eq!(broadcast, vec![10, 11, 12, 13], "PE {pe}");
    }
}

#[test]
fn host_and_kernel_barriers_are_the_same_barrier() {
    let (values, _) = run_kernels_ok(4, |sh| {
        let slot = sh.calloc::<u64>(1)?;
        let next = (sh.my_pe() + 1) % sh.n_pes();
        sh.put(slot, &[u64::from(sh.my_pe()) + 1], next)?;
        if sh.my_pe() % 2 == 0 {
            sh.barrier_all()?;
        } else {
            sh.launch_kernel(Dim3::linear(1), Dim3::linear(1), async |t| {
                // The host's put is on the default context, which this barrier completes.
                t.barrier_all().await
            })?;
        }
        let got = sh.local(slot)?[0];
        sh.free(slot)?;
        Ok(got)
    });
    assert_eq!(values, vec![4, 1, 2, 3]);
}

#[test]
fn collectives_from_two_blocks_of_one_launch_are_refused() {
    let (values, _) = run_programs(sim("hgx8", 1, 0), config(), |sh| {
        sh.launch_kernel(Dim3::linear(2), Dim3::linear(4), async |t| {
            t.block().barrier_all().await
        })
    });
    let err = values[0].as_ref().expect_err("two blocks call barrier_all");
    assert!(
        matches!(
            thread_error(err),
            ShmemError::Kernel(KernelError::WorldCollectiveGroups { .. })
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("block (0, 0, 0) and from block (1, 0, 0)"),
        "{err}"
    );
}

#[test]
fn sizes_that_cannot_be_launched_are_refused() {
    let (values, _) = run_programs(sim("hgx8", 1, 0), config(), |sh| {
        let too_big = sh.launch_kernel(Dim3::linear(1), Dim3::plane(64, 32), async |_| Ok(()));
        let empty = sh.launch_kernel(Dim3::new(1, 0, 1), Dim3::linear(1), async |_| Ok(()));
        Ok((too_big.map(drop), empty.map(drop)))
    });
    let (too_big, empty) = values.into_iter().next().unwrap().unwrap();
    for (err, needle) in [(too_big, "at most 1024 threads"), (empty, "at least 1")] {
        let err = err.expect_err("refused");
        assert!(
            matches!(err, ShmemError::Kernel(KernelError::InvalidDims { .. })),
            "{err}"
        );
        assert!(err.to_string().contains(needle), "{err}");
    }
}

#[test]
fn awaiting_something_other_than_a_kernel_call_is_an_error() {
    let (values, _) = run_programs(sim("hgx8", 1, 0), config(), |sh| {
        sh.launch_kernel(Dim3::linear(1), Dim3::linear(1), async |_| {
            poll_fn(|_| Poll::<()>::Pending).await;
            Ok(())
        })
    });
    let err = values[0].as_ref().expect_err("a foreign future");
    assert!(
        matches!(err, ShmemError::Kernel(KernelError::ForeignAwait { .. })),
        "{err}"
    );
}

#[test]
fn gets_of_many_threads_overlap_in_simulated_time() {
    // One thread's g waits a round trip; 64 threads' gets are in flight together, so 64 of
    // them take far less than 64 round trips.
    let (values, _) = run_kernels_ok(2, |sh| {
        let word = sh.calloc::<u64>(1)?;
        let peer = 1 - sh.my_pe();
        let mut times_ns = Vec::new();
        for threads in [1, 64] {
            sh.barrier_all()?;
            let start_ns = sh.now_ns();
            sh.launch_kernel(Dim3::linear(1), Dim3::linear(threads), async |t| {
                t.g(word, peer).await
            })?;
            times_ns.push(sh.now_ns() - start_ns);
        }
        sh.free(word)?;
        Ok(times_ns)
    });
    let (one, many) = (values[0][0], values[0][1]);
    assert!(one > 0, "a get takes time");
    assert!(many < 8 * one, "64 gets took {many} ns, one took {one} ns");
}

#[test]
fn a_yielding_thread_lets_the_others_run_and_the_pe_block_in_their_waits() {
    let (values, _) = run_kernels_ok(1, |sh| {
        let data = sh.calloc::<u64>(1)?;
        let done = std::cell::Cell::new(false);
        let spins = std::cell::Cell::new(0u32);
        let seen = sh.launch_kernel(Dim3::linear(1), Dim3::linear(2), async |t| {
            if t.thread_rank() == 0 {
                // Spins with a back-off until thread 1's get has landed: the PE must block
                // in that get, not spin on the yield forever.
                while !done.get() {
                    spins.set(spins.get() + 1);
                    t.yield_now().await;
                }
                Ok(0)
            } else {
                let value = t.g(data, 0).await?;
                done.set(true);
                Ok(value + 7)
            }
        })?;
        sh.free(data)?;
        Ok((seen, spins.get()))
    });
    let (seen, spins) = &values[0];
    assert_eq!(seen, &vec![0, 7]);
    assert!(*spins >= 1, "thread 0 ran before the get completed");
}
