//! docs/teams-and-contexts.md's conformance tests of contexts in kernels, on the simulator's kernel model
//! (docs/kernels.md):
//!
//! - T-CTX-001: the default context (Tier-0) is usable by every thread of a kernel with no
//!   creation step;
//! - T-CTX-003: a block context (Tier-1) is created collectively by the threads of a block,
//!   and every thread gets the same usable handle, backed by a queue of its own.

use std::rc::Rc;

use rshmem::{Config, Ctx, CtxOptions, Dim3, KernelError, ShmemError};
use sim::SimBackend;

use crate::common::{config, run_programs, sim, thread_error};

/// [`config`] with room for `contexts_max` contexts per team.
fn config_with_contexts(contexts_max: u32) -> Config {
    let mut config = config();
    config.contexts_max = contexts_max;
    config
}

/// The value thread `rank` of `pe` sends.
fn value(pe: u32, rank: u32) -> u64 {
    u64::from(pe) << 32 | u64::from(rank)
}

#[test]
fn t_ctx_001_default_context_usable_in_a_kernel() {
    let (results, _) = run_programs(sim("hgx8", 4, 0), config_with_contexts(32), |sh| {
        let (me, n) = (sh.my_pe(), sh.n_pes());
        let next = (me + 1) % n;
        let slots = sh.calloc::<u64>(64)?;
        let default: &Ctx<SimBackend> = sh;
        // Two blocks of 32 threads: every thread puts, gets and synchronises on the default
        // context, which nothing in the kernel created.
        let seen = sh.launch_kernel(Dim3::linear(2), Dim3::linear(32), async |t| {
            let rank = t.global_rank();
            assert!(
                std::ptr::eq(t.ctx(), default),
                "threads start on the default context"
            );
            assert!(std::ptr::eq(t.block().ctx(), default));
            assert!(t.ctx().team().same_as(sh.team_world()));
            t.p(slots.at(rank as usize)?, value(me, rank), next).await?;
            t.quiet().await?;
            // The put is complete: read it back from where it landed.
            t.g(slots.at(rank as usize)?, next).await
        })?;
        sh.barrier_all()?;
        let landed = sh.local(slots)?;
        sh.free(slots)?;
        Ok((seen, landed))
    });
    for (me, result) in results.into_iter().enumerate() {
        let (seen, landed) = result.unwrap_or_else(|e| panic!("PE {me}: {e}"));
        let me = me as u32;
        let prev = (me + 3) % 4;
        assert_eq!(
            seen,
            (0..64).map(|rank| value(me, rank)).collect::<Vec<_>>()
        );
        assert_eq!(
            landed,
            (0..64).map(|rank| value(prev, rank)).collect::<Vec<_>>()
        );
    }
}

#[test]
fn t_ctx_003_block_context_creation_is_collective() {
    let (results, _) = run_programs(sim("hgx8", 4, 0), config_with_contexts(32), |sh| {
        let (me, n) = (sh.my_pe(), sh.n_pes());
        let next = (me + 1) % n;
        let slots = sh.calloc::<u64>(64)?;
        let whole = sh.calloc::<u64>(64)?;
        let data: Vec<u64> = (0..64).map(|i| value(me, 100 + i)).collect();
        let default: &Ctx<SimBackend> = sh;
        let handles = sh.launch_kernel(Dim3::linear(1), Dim3::linear(64), async |t| {
            let ctx = t.block().ctx_create(CtxOptions::PRIVATE).await?;
            let handle = Rc::as_ptr(&ctx) as usize;
            assert!(!std::ptr::eq(&*ctx, default), "a context of its own");
            assert_eq!(ctx.options(), CtxOptions::PRIVATE);
            let rank = t.thread_rank();
            // Usable from every thread, and by the block as a whole.
            t.with_ctx(&ctx)
                .put(slots.at(rank as usize)?, &[value(me, rank)], next)
                .await?;
            t.block().with_ctx(&ctx).put(whole, &data, next).await?;
            // Its operations are its own: quiet it before the barrier, which completes only
            // the default context's.
            t.block().with_ctx(&ctx).quiet().await?;
            t.block().barrier_all().await?;
            t.block().ctx_destroy(ctx).await?;
            Ok(handle)
        })?;
        let landed = (sh.local(slots)?, sh.local(whole)?);
        sh.free(whole)?;
        sh.free(slots)?;
        Ok((handles, landed))
    });
    for (me, result) in results.into_iter().enumerate() {
        let (handles, (slots, whole)) = result.unwrap_or_else(|e| panic!("PE {me}: {e}"));
        assert!(
            handles.iter().all(|&h| h == handles[0]),
            "every thread of the block got the same handle"
        );
        let prev = (me as u32 + 3) % 4;
        assert_eq!(
            slots,
            (0..64).map(|rank| value(prev, rank)).collect::<Vec<_>>()
        );
        assert_eq!(
            whole,
            (0..64).map(|i| value(prev, 100 + i)).collect::<Vec<_>>()
        );
    }
}

#[test]
fn t_ctx_003_a_thread_that_skips_block_context_creation_fails_the_launch() {
    let (results, _) = run_programs(sim("hgx8", 1, 0), config_with_contexts(32), |sh| {
        sh.launch_kernel(Dim3::linear(1), Dim3::linear(64), async |t| {
            if t.thread_rank() != 63 {
                let ctx = t.block().ctx_create(CtxOptions::default()).await?;
                t.block().ctx_destroy(ctx).await?;
            }
            Ok(())
        })
    });
    let message = results[0]
        .as_ref()
        .expect_err("thread 63 skips it")
        .to_string();
    assert!(message.contains("can never finish ctx_create"), "{message}");
    assert!(message.contains("63 of 64 threads wait there"), "{message}");
    assert!(message.contains("thread (63, 0, 0) returned"), "{message}");
}

#[test]
fn t_ctx_003_threads_must_agree_on_the_options() {
    let (results, _) = run_programs(sim("hgx8", 1, 0), config_with_contexts(32), |sh| {
        sh.launch_kernel(Dim3::linear(1), Dim3::linear(4), async |t| {
            let options = if t.thread_rank() == 3 {
                CtxOptions::NOSTORE
            } else {
                CtxOptions::default()
            };
            t.block().ctx_create(options).await.map(drop)
        })
    });
    let err = results[0].as_ref().expect_err("options differ");
    assert!(
        matches!(
            thread_error(err),
            ShmemError::Kernel(KernelError::CallMismatch { .. })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("nostore: true"), "{err}");
}

#[test]
fn t_ctx_003_a_block_context_is_a_real_context_of_the_world_team() {
    // With room for the default context and one more, a second block context is refused by
    // the team's limit, and destroying the first gives its place back. The thread that made
    // the call for the block gets the team's error; the others, that it failed there.
    let (results, _) = run_programs(sim("hgx8", 1, 0), config_with_contexts(2), |sh| {
        sh.launch_kernel(Dim3::linear(1), Dim3::linear(8), async |t| {
            let first = t.block().ctx_create(CtxOptions::default()).await?;
            let second = t.block().ctx_create(CtxOptions::default()).await;
            let refused = match second.map(drop) {
                Err(ShmemError::ContextsExhausted { max: 2, .. }) => true,
                Err(ShmemError::Kernel(KernelError::GroupCallFailed { call, message, .. })) => {
                    call.starts_with("ctx_create") && message.contains("already has 2 contexts")
                }
                _ => false,
            };
            t.block().ctx_destroy(first).await?;
            let again = t.block().ctx_create(CtxOptions::default()).await?;
            t.block().ctx_destroy(again).await?;
            Ok(refused)
        })
    });
    let refused = results
        .into_iter()
        .next()
        .unwrap()
        .expect("the kernel runs");
    assert!(refused.iter().all(|&r| r), "{refused:?}");
}

#[test]
fn t_ctx_003_a_block_of_one_thread_and_a_lone_thread_create_contexts_too() {
    let (results, _) = run_programs(sim("hgx8", 2, 0), config_with_contexts(32), |sh| {
        sh.launch_kernel(Dim3::linear(2), Dim3::linear(1), async |t| {
            // Block 0 meets as a block of one; block 1's thread creates one for itself.
            let scope = if t.block_rank() == 0 { t.block() } else { **t };
            let ctx = scope.ctx_create(CtxOptions::default()).await?;
            scope.ctx_destroy(ctx).await
        })
    });
    for result in results {
        result.expect("both contexts are created and destroyed");
    }
}

#[test]
fn t_ctx_003_destroying_a_block_context_that_is_still_held_is_refused() {
    let (results, _) = run_programs(sim("hgx8", 1, 0), config_with_contexts(32), |sh| {
        sh.launch_kernel(Dim3::linear(1), Dim3::linear(4), async |t| {
            let ctx = t.block().ctx_create(CtxOptions::default()).await?;
            let kept = Rc::clone(&ctx);
            t.block().ctx_destroy(ctx).await?;
            drop(kept);
            Ok(())
        })
    });
    let err = results[0].as_ref().expect_err("every thread keeps a clone");
    assert!(
        matches!(
            thread_error(err),
            ShmemError::Kernel(KernelError::ContextInUse { .. })
        ),
        "{err}"
    );
}
