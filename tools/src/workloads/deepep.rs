//! DeepEP-like expert parallelism as one kernel per PE: dispatch every token to the PEs of its
//! top-k experts, each expert answers every token it received (combine), and each PE sums the
//! answers to its tokens with the gate's weights; every (expert, source) count, every answer
//! and every sum is checked. `MoeShape` says how many tokens, how large, and where they go.
//!
//! `deepep-ll` has the shape of DeepEP's low-latency kernels: every token goes straight to its
//! expert's PE (over NVLink inside a node, InfiniBand between nodes, as the topology routes
//! it) into a slot per (local expert, source, token), so no PE needs to know counts before
//! it sends; a put-with-signal per PE then carries the counts and adds one to an arrival
//! counter, after a fence that orders it behind the tokens. The combine is the mirror image:
//! each answer goes into its token's slot for that top-k position at the source, and a
//! put-with-signal per PE says how many answers were sent.

use std::cell::{Cell, OnceCell};

use hw::Backend;
use rshmem::{Cmp, Dim3, Shmem, ShmemError, SignalOp};

use super::PeOutcome;
use super::moe_shape::MoeShape;
use super::moe_token::{answer, combined, token_of, weight, word};
use super::scatter::{Scatter, Send};

/// Warps of the block; warp `w` does the sends `w, w + WARPS, ...`.
const WARPS: u32 = 4;

/// The low-latency shape (module docs).
pub(super) fn low_latency<B: Backend>(
    sh: &Shmem<B>,
    shape: &MoeShape,
) -> Result<PeOutcome, ShmemError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let (experts, per_pe) = (shape.experts(n), shape.experts_per_pe(n));
    let (tokens, top_k, words) = (shape.tokens, shape.top_k(n) as usize, shape.words());
    // The receive slots of (local expert, source, slot), each `words` long.
    let slot_at = |local: u32, src: u32, slot: u64| {
        ((local * n + src) as usize * tokens as usize + slot as usize) * words
    };
    let recv = sh.malloc::<u64>(slot_at(per_pe, 0, 0))?;
    // counts[src * per_pe + local]: the tokens `src` sent to local expert `local`.
    let counts = sh.calloc::<u64>((n * per_pe) as usize)?;
    // back[(token * top_k + k) * words ..]: the answer of a token's k-th expert.
    let back = sh.malloc::<u64>(tokens as usize * top_k * words)?;
    // answered[pe]: how many answers PE `pe` sent here.
    let answered = sh.calloc::<u64>(n as usize)?;
    // Arrival counters: [0] dispatch, [1] combine.
    let arrivals = sh.calloc::<u64>(2)?;

    // The plan, the same in every thread.
    let routes: Vec<Vec<u32>> = (0..tokens).map(|t| shape.route(me, t, n)).collect();
    let mut sends = Vec::new();
    let mut sent = vec![0u64; experts as usize];
    let mut answers_due = vec![0u64; n as usize];
    for (token, route) in (0..tokens).zip(&routes) {
        for &expert in route {
            let (pe, local) = (expert / per_pe, expert % per_pe);
            let slot = &mut sent[expert as usize];
            sends.push(Send {
                token,
                pe,
                at: slot_at(local, me, *slot),
            });
            *slot += 1;
            answers_due[pe as usize] += 1;
        }
    }
    let payloads: Vec<Vec<u64>> = (0..tokens)
        .map(|token| (0..words).map(|i| word(me, token, i)).collect())
        .collect();
    let threads = WARPS * rshmem::WARP_SIZE;
    let per_pe_words = per_pe as usize;

    // Thread 0 notes when each phase ended; the layer starts at the launch.
    let started_ns = sh.now_ns();
    let ended_ns = [Cell::new(0), Cell::new(0)];
    // The counts every PE sent here, read once by thread 0 into the block's shared memory
    // once they all arrived, as DeepEP's warp reads a count with one lane and shares it.
    // Why not a read per lane: every lane of every warp would read the count of every
    // (local expert, source) pair, 32 reads of `n` words a PE where one does.
    let counts_got = OnceCell::new();
    // Dispatch: the tokens, then (fenced behind them) each PE's counts with a signal.
    let scatter = Scatter {
        warps: WARPS,
        sends: &sends,
        tokens: &payloads,
        recv,
        sent: &sent,
        per_pe: per_pe_words,
        counts: counts.slice(me as usize * per_pe_words..(me as usize + 1) * per_pe_words)?,
        arrivals: arrivals.at(0)?,
    };
    let wrong = sh.launch_kernel(Dim3::linear(1), Dim3::linear(threads), async |t| {
        scatter.run(t).await?;
        if t.thread_rank() == 0 {
            t.signal_wait_until(arrivals.at(0)?, Cmp::Eq, u64::from(n))
                .await?;
            ended_ns[0].set(sh.now_ns());
            let read = t.local(counts)?;
            counts_got.get_or_init(|| read);
        }
        t.sync_threads().await?;
        let counts_got = counts_got
            .get()
            .expect("thread 0 read the counts before the block's sync");

        // Combine: warp w answers the (local expert, source) pairs w, w + WARPS, ...
        let mut wrong = 0;
        for pair in (t.warp_id()..per_pe * n).step_by(WARPS as usize) {
            let (local, src) = (pair / n, pair % n);
            let expert = me * per_pe + local;
            let count = counts_got[(src * per_pe + local) as usize];
            for slot in 0..count.min(u64::from(tokens)) {
                let at = slot_at(local, src, slot);
                let got = t.local(recv.slice(at..at + words)?)?;
                let token = token_of(got[0]);
                let k = (token < tokens)
                    .then(|| shape.route(src, token, n))
                    .and_then(|route| route.iter().position(|&e| e == expert));
                let Some(k) = k else {
                    // A token its source did not route here: the dispatch went wrong.
                    wrong += usize::from(t.lane_id() == 0);
                    continue;
                };
                let reply: Vec<u64> = got.iter().map(|&w| answer(w, expert)).collect();
                let to = (token as usize * top_k + k) * words;
                t.warp()
                    .put_nbi(back.slice(to..to + words)?, &reply, src)
                    .await?;
            }
        }
        t.block().fence().await?;
        for pe in (t.thread_rank()..n).step_by(threads as usize) {
            let first = pe as usize * per_pe_words;
            let total: u64 = counts_got[first..first + per_pe_words].iter().sum();
            t.put_signal(
                answered.at(me as usize)?,
                &[total],
                arrivals.at(1)?,
                1,
                SignalOp::Add,
                pe,
            )
            .await?;
        }
        if t.thread_rank() == 0 {
            t.signal_wait_until(arrivals.at(1)?, Cmp::Eq, u64::from(n))
                .await?;
            ended_ns[1].set(sh.now_ns());
        }
        t.sync_threads().await?;

        // The check: thread r takes tokens r, r + threads, ... and PEs likewise.
        for pe in (t.thread_rank()..n).step_by(threads as usize) {
            let got = t.local(answered.at(pe as usize)?)?[0];
            wrong += usize::from(got != answers_due[pe as usize]);
        }
        for token in (t.thread_rank()..tokens).step_by(threads as usize) {
            let start = token as usize * top_k * words;
            let answers = t.local(back.slice(start..start + top_k * words)?)?;
            let route = &routes[token as usize];
            let right = (0..words).all(|i| {
                let got = (0..top_k).fold(0u64, |acc, k| {
                    acc.wrapping_add(weight(k).wrapping_mul(answers[k * words + i]))
                });
                got == combined(me, token, i, route)
            });
            wrong += usize::from(!right);
        }
        Ok(wrong)
    })?;
    let wrong: usize = wrong.into_iter().sum();
    sh.free(arrivals)?;
    sh.free(answered)?;
    sh.free(back)?;
    sh.free(counts)?;
    sh.free(recv)?;
    let [dispatched_ns, combined_ns] = ended_ns.map(Cell::into_inner);
    Ok(PeOutcome {
        phases_ns: vec![
            ("dispatch", dispatched_ns - started_ns),
            ("combine", combined_ns - dispatched_ns),
        ],
        ..PeOutcome::checked(
            wrong == 0,
            format!("PE {me}: {wrong} wrong (answer counts, dispatched tokens or combined tokens)"),
        )
    })
}
