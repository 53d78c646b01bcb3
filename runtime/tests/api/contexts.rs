//! Contexts on the simulator (docs/teams-and-contexts.md): explicit creation and destruction, per-context
//! isolation of quiet, team contexts, NOSTORE, and running out of contexts.
//! T-CTX-001 and T-CTX-003 need a kernel and live in contexts_in_kernels.rs.

use crate::common::{config, run_all, run_ok};
use rshmem::{CtxOptions, ShmemError, TeamConfig};

/// T-CTX-002: a context is created and destroyed on the host, and works in between; creating
/// and destroying many in turn never runs out.
#[test]
fn t_ctx_002_explicit_create_and_destroy_on_host() {
    let seen = run_ok("hgx8", 4, |shmem| {
        let slot = shmem.calloc::<u64>(1).unwrap();
        let next = (shmem.my_pe() + 1) % shmem.n_pes();
        for round in 1..=100u64 {
            let ctx = shmem.ctx_create(CtxOptions::PRIVATE).unwrap();
            assert!(ctx.team().same_as(shmem.team_world()));
            ctx.p(slot, round, next).unwrap();
            ctx.quiet().unwrap();
            shmem.ctx_destroy(ctx).unwrap();
        }
        shmem.barrier_all().unwrap();
        shmem.local(slot).unwrap()[0]
    });
    assert_eq!(seen, [100; 4]);
}

/// T-CTX-004: quiet on one context completes that context's operations without waiting for
/// another's. A 16 MiB put across InfiniBand (to PE 8) is in flight on context B while
/// context A puts 8 bytes over NVLink (to PE 1, so the two share no link) and quiets: A's
/// quiet returns long before B's put can have arrived.
#[test]
fn t_ctx_004_contexts_are_isolated() {
    const BIG_BYTES: usize = 16 << 20;
    let results = run_all("ib-2", 16, config().device_heap_size(32 << 20), |shmem| {
        let big = shmem.malloc::<u8>(BIG_BYTES).unwrap();
        let small = shmem.calloc::<u64>(1).unwrap();
        if shmem.my_pe() != 0 {
            return None;
        }
        let a = shmem.ctx_create(CtxOptions::default()).unwrap();
        let b = shmem.ctx_create(CtxOptions::default()).unwrap();
        let start_ns = shmem.now_ns();
        b.put(big, &vec![7u8; BIG_BYTES], 8).unwrap();
        a.p(small, 1, 1).unwrap();
        a.quiet().unwrap();
        let a_done_ns = shmem.now_ns() - start_ns;
        b.quiet().unwrap();
        let b_done_ns = shmem.now_ns() - start_ns;
        shmem.ctx_destroy(a).unwrap();
        shmem.ctx_destroy(b).unwrap();
        Some((a_done_ns, b_done_ns))
    });
    let (a_done_ns, b_done_ns) = results
        .into_iter()
        .next()
        .unwrap()
        .unwrap()
        .expect("PE 0 measures");
    println!("quiet on A after {a_done_ns} ns, on B after {b_done_ns} ns");
    // 16 MiB at 50 GB/s takes over 300 µs; an 8-byte put over NVLink about a µs.
    assert!(b_done_ns > 300_000, "B's put took {b_done_ns} ns");
    assert!(
        a_done_ns * 20 < b_done_ns,
        "A waited {a_done_ns} ns of B's {b_done_ns} ns"
    );
}

#[test]
fn a_team_context_takes_the_teams_pe_numbers() {
    let seen = run_ok("hgx8", 8, |shmem| {
        let slot = shmem.calloc::<u32>(1).unwrap();
        let odd = shmem
            .team_split_strided(shmem.team_world(), 1, 2, 4, TeamConfig::default())
            .unwrap();
        if let Some(odd) = odd {
            let ctx = shmem.team_create_ctx(&odd, CtxOptions::default()).unwrap();
            assert!(ctx.team().same_as(&odd));
            // Team PE 0 is world PE 1: every odd PE writes its world number there... on a
            // distinct word, so use an atomic add of it instead.
            ctx.atomic_add(slot, shmem.my_pe(), 0).unwrap();
            shmem.ctx_destroy(ctx).unwrap();
        }
        shmem.barrier_all().unwrap();
        shmem.local(slot).unwrap()[0]
    });
    assert_eq!(seen, [0, 1 + 3 + 5 + 7, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn nostore_contexts_refuse_stores_and_allow_loads() {
    let seen = run_ok("hgx8", 2, |shmem| {
        let word = shmem.calloc::<u64>(1).unwrap();
        shmem
            .set_local(word, &[u64::from(shmem.my_pe()) + 40])
            .unwrap();
        shmem.barrier_all().unwrap();
        let ctx = shmem
            .ctx_create(CtxOptions::NOSTORE.with(CtxOptions::SERIALIZED))
            .unwrap();
        let other = 1 - shmem.my_pe();
        let refused = [
            ctx.p(word, 1, other).unwrap_err(),
            ctx.atomic_add(word, 1, other).unwrap_err(),
            ctx.put_signal(word, &[1], word, 1, rshmem::SignalOp::Set, other)
                .unwrap_err(),
        ];
        let read = ctx.g(word, other).unwrap();
        let fetched = ctx.atomic_fetch(word, other).unwrap();
        shmem.ctx_destroy(ctx).unwrap();
        (refused.map(|err| err.to_string()), read, fetched)
    });
    for (pe, (refused, read, fetched)) in (0u64..).zip(seen) {
        for message in refused {
            assert!(message.contains("NOSTORE"), "{message}");
        }
        assert_eq!((read, fetched), (41 - pe, 41 - pe));
    }
}

#[test]
fn running_out_of_contexts_is_an_error_and_destroying_one_frees_it() {
    let results = run_all("hgx8", 1, config().contexts_max(3), |shmem| {
        // The default context is one of the three.
        let a = shmem.ctx_create(CtxOptions::default())?;
        let b = shmem.ctx_create(CtxOptions::default())?;
        let err = shmem.ctx_create(CtxOptions::default()).unwrap_err();
        shmem.ctx_destroy(a)?;
        let c = shmem.ctx_create(CtxOptions::default())?;
        shmem.ctx_destroy(b)?;
        shmem.ctx_destroy(c)?;
        Ok::<_, ShmemError>(err)
    });
    let err = results.into_iter().next().unwrap().unwrap().unwrap();
    assert!(
        matches!(err, ShmemError::ContextsExhausted { max: 3, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("RSHMEM_CONTEXTS_MAX"), "{err}");
}
