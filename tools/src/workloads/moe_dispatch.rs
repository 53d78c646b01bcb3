//! A DeepEP-like MoE dispatch as a kernel. Each PE holds `TOKENS` tokens of `HIDDEN` words
//! and `EXPERTS_PER_PE` experts; each token goes to its top-2 experts. The warps of one block
//! scatter the tokens with `put_nbi_warp` straight into per-source slots at each expert's PE,
//! the block fences, and each thread sends some PEs this PE's token counts with a
//! put-with-signal that adds one to the PE's arrival counter. Thread 0 waits until every PE
//! has signalled; then every thread checks that its share of (expert, source) slots holds
//! exactly the tokens routed there, in order.

use hw::Backend;
use rshmem::{Cmp, Dim3, Shmem, ShmemError};

use super::PeOutcome;
use super::scatter::{Scatter, Send};

/// Tokens each PE dispatches.
const TOKENS: u32 = 16;
/// Words per token.
const HIDDEN: usize = 8;
/// Experts on each PE.
const EXPERTS_PER_PE: u32 = 2;
/// Experts each token is routed to.
const TOP_K: u32 = 2;
/// Warps of the block; warp `w` sends the sends `w, w + WARPS, ...`.
const WARPS: u32 = 4;

/// The experts token `token` of PE `pe` goes to: two distinct ones (one if there is one).
fn route(pe: u32, token: u32, experts: u32) -> impl Iterator<Item = u32> {
    let mut h = u64::from(pe) << 32 | u64::from(token);
    // splitmix64's finaliser: routes spread over every expert, and are the same on every PE.
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^= h >> 31;
    let first = (h % u64::from(experts)) as u32;
    let second = (first + 1 + ((h >> 32) % u64::from(experts.max(2) - 1)) as u32) % experts;
    [first, second]
        .into_iter()
        .take(TOP_K.min(experts) as usize)
}

/// Word `i` of token `token` of PE `pe`.
fn word(pe: u32, token: u32, i: usize) -> u64 {
    (u64::from(pe) << 40) | (u64::from(token) << 16) | (i as u64 + 1)
}

/// The tokens PE `src` routes to `expert`, in the order of its slots there.
fn routed(src: u32, expert: u32, experts: u32) -> Vec<u32> {
    (0..TOKENS)
        .filter(|&token| route(src, token, experts).any(|e| e == expert))
        .collect()
}

/// Where slot `slot` of the tokens from `src` to local expert `local` starts in a PE's
/// receive buffer of `n` sources.
fn slot_at(local: u32, src: u32, slot: usize, n: u32) -> usize {
    ((local * n + src) as usize * TOKENS as usize + slot) * HIDDEN
}

pub(super) fn run<B: Backend>(sh: &Shmem<B>) -> Result<PeOutcome, ShmemError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let experts = n * EXPERTS_PER_PE;
    let per_source = EXPERTS_PER_PE as usize;
    let recv = sh.malloc::<u64>(slot_at(EXPERTS_PER_PE, 0, 0, n))?;
    let counts = sh.calloc::<u64>(n as usize * per_source)?;
    let arrivals = sh.calloc::<u64>(1)?;
    // The plan, the same in every thread: each send's slot, and the counts for each PE.
    let mut sends = Vec::new();
    let mut sent = vec![0u64; experts as usize];
    for token in 0..TOKENS {
        for expert in route(me, token, experts) {
            let (pe, local) = (expert / EXPERTS_PER_PE, expert % EXPERTS_PER_PE);
            let slot = &mut sent[expert as usize];
            sends.push(Send {
                token,
                pe,
                at: slot_at(local, me, *slot as usize, n),
            });
            *slot += 1;
        }
    }
    let tokens: Vec<Vec<u64>> = (0..TOKENS)
        .map(|token| (0..HIDDEN).map(|i| word(me, token, i)).collect())
        .collect();
    let threads = WARPS * rshmem::WARP_SIZE;
    let scatter = Scatter {
        warps: WARPS,
        sends: &sends,
        tokens: &tokens,
        recv,
        sent: &sent,
        per_pe: per_source,
        counts: counts.slice(me as usize * per_source..(me as usize + 1) * per_source)?,
        arrivals,
    };
    let wrong = sh.launch_kernel(Dim3::linear(1), Dim3::linear(threads), async |t| {
        scatter.run(t).await?;
        if t.thread_rank() == 0 {
            t.signal_wait_until(arrivals, Cmp::Eq, u64::from(n)).await?;
        }
        t.sync_threads().await?;
        // Thread `rank` checks the (local expert, source) pairs rank, rank + threads, ...
        let mut wrong = 0;
        let pairs = (t.thread_rank()..EXPERTS_PER_PE * n).step_by(threads as usize);
        for pair in pairs {
            let (local, src) = (pair / n, pair % n);
            let want = routed(src, me * EXPERTS_PER_PE + local, experts);
            let count = t.local(counts.at((src * EXPERTS_PER_PE + local) as usize)?)?[0];
            if count != want.len() as u64 {
                wrong += 1;
                continue;
            }
            let start = slot_at(local, src, 0, n);
            let got = t.local(recv.slice(start..start + want.len() * HIDDEN)?)?;
            let expected = want
                .iter()
                .flat_map(|&token| (0..HIDDEN).map(move |i| word(src, token, i)));
            wrong += usize::from(!got.into_iter().eq(expected));
        }
        Ok(wrong)
    })?;
    let wrong: usize = wrong.into_iter().sum();
    sh.free(arrivals)?;
    sh.free(counts)?;
    sh.free(recv)?;
    Ok(PeOutcome::checked(
        wrong == 0,
        format!(
            "PE {me}: {wrong} of {} (expert, source) slots wrong",
            EXPERTS_PER_PE * n
        ),
    ))
}
