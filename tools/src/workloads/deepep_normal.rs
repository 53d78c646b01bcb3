//! `deepep-normal`: DeepEP's normal (high-throughput) kernels as one kernel per PE, checked as
//! `deepep-ll` is (deepep.rs), in three phases.
//!
//! - Notify: each PE counts, per channel, its tokens for each node and each PE, and an
//!   `alltoall_block` gives every PE each source's counts for its node (DeepEP's
//!   `notify_dispatch`). From them the PEs of a node lay out their receive buffers packed, a
//!   region per (source, channel) (`layout.rs`); each forwarder tells each source it forwards
//!   where that source's regions start, and every PE every PE its buffers' sizes (a second
//!   `alltoall_block`), as DeepEP's host waits for the counts to size its outputs.
//! - Dispatch: a token crosses InfiniBand once per other node it has experts on, to the PE of
//!   that node with the sender's local index (its forwarder, DeepEP's RDMA peer), with a
//!   put-with-signal that sets the token's own flag there. The forwarder waits for each of
//!   its tokens' flags alone and forwards the token over NVLink (a put) to each PE of its node
//!   that holds one of its experts; a sender forwards its tokens for its own node itself.
//!   Once it has forwarded everything, a PE fences and tells each PE of its node how many
//!   tokens it sent there (a put-with-signal adding one to a counter): a PE that has heard
//!   from its whole node has all its tokens. A token carries its top-k experts and where its
//!   answer goes, as DeepEP's carry `topk_idx` and their source index.
//! - Combine, the way back: each PE weighs and sums the answers of its experts to each token
//!   it got and puts the sum into the token's slot at its forwarder, adding one to the
//!   token's counter there. The forwarder waits for each token's counter alone, sums the
//!   node's answers and puts the sum back over InfiniBand; once all are sent it fences and
//!   tells each source how many, and the source sums the nodes' sums.
//!
//! Warp `c` is channel `c`: it sends the tokens of its run (`channel_tokens`), and forwards,
//! answers and sums those of channel `c` of every source, source by source.

mod layout;
mod plan;

use std::cell::{Cell, RefCell};

use hw::{Backend, Device as _, Pe};
use rshmem::{Cmp, Dim3, KernelThread, Shmem, ShmemError, SignalOp};

use super::PeOutcome;
use super::moe_shape::MoeShape;
use super::moe_token::{answer, combined, token_of, weight, word};
use layout::{Counts, Dests, Layout, Nodes, Sizes, Walk, channel_tokens};
use plan::{Buffers, Plan, Reply, message, parts};

/// Warps of the block, a channel each.
const WARPS: u32 = 4;

/// The normal kernels (module docs).
pub(super) fn normal<B: Backend>(sh: &Shmem<B>, shape: &MoeShape) -> Result<PeOutcome, ShmemError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let topology = sh.device().topology();
    let nodes = Nodes::new(n, |pe| topology.host_of(Pe(pe)));
    let routes: Vec<Vec<u32>> = (0..shape.tokens).map(|t| shape.route(me, t, n)).collect();
    let per_pe = shape.experts_per_pe(n);
    let dests: Vec<Dests> = routes
        .iter()
        .map(|r| Dests::of(r, per_pe, &nodes))
        .collect();

    let notified = notify(sh, &nodes, &dests)?;
    let layout = Layout {
        nodes: &nodes,
        counts: &notified.counts,
    };
    let plan = Plan::new(me, shape, &layout, &routes, &dests, notified.rdma_first);
    let buffers = Buffers::alloc(sh, notified.most, &plan)?;
    // Thread 0 notes when the dispatch and the combine end; they start at the launch.
    let started_ns = sh.now_ns();
    let ended_ns = [Cell::new(0), Cell::new(0)];
    let members = nodes.members(nodes.node_of(me)).len();
    let told = Told {
        nvl: vec![Cell::new(0); members],
        back: vec![Cell::new(0); n as usize],
    };
    let threads = WARPS * rshmem::WARP_SIZE;
    let wrong = sh.launch_kernel(Dim3::linear(1), Dim3::linear(threads), async |t| {
        let forwarded = dispatch(t, &plan, &buffers, &told).await?;
        let to_node = plan.nodes.members(plan.my_node()).iter().copied();
        tell(t, &buffers, 0, to_node.zip(told.nvl.iter().map(Cell::get))).await?;
        if t.thread_rank() == 0 {
            let senders = members as u64;
            t.signal_wait_until(buffers.arrivals.at(0)?, Cmp::Eq, senders)
                .await?;
            ended_ns[0].set(sh.now_ns());
        }
        t.sync_threads().await?;
        let mut wrong = answer_tokens(t, &plan, &buffers).await?;
        sum_nodes(t, &plan, &buffers, &forwarded, &told).await?;
        let sources = plan.forwarded.iter().copied().filter(|&src| src != me);
        let sums_sent = sources.map(|src| (src, told.back[src as usize].get()));
        tell(t, &buffers, 1, sums_sent).await?;
        if t.thread_rank() == 0 {
            let forwarders = u64::from(plan.nodes.count() - 1);
            t.signal_wait_until(buffers.arrivals.at(1)?, Cmp::Eq, forwarders)
                .await?;
            ended_ns[1].set(sh.now_ns());
        }
        t.sync_threads().await?;
        wrong += check(t, &plan, &buffers)?;
        Ok(wrong)
    })?;
    let part_len = Counts::part_len(&nodes, WARPS);
    let sent_to_me = &Counts::outgoing(&dests, &nodes, WARPS)[me as usize * part_len..][..part_len];
    let wrong =
        wrong.into_iter().sum::<usize>() + usize::from(notified.counts.part_of(me) != sent_to_me);
    buffers.free(sh)?;
    let [dispatched_ns, combined_ns] = ended_ns.map(Cell::into_inner);
    Ok(PeOutcome {
        phases_ns: vec![
            ("notify", notified.ns),
            ("dispatch", dispatched_ns - started_ns),
            ("combine", combined_ns - dispatched_ns),
        ],
        ..PeOutcome::checked(
            wrong == 0,
            format!("PE {me}: {wrong} wrong (counts, dispatched tokens or combined tokens)"),
        )
    })
}

/// What the notify phase tells a PE.
struct Notified {
    /// The counts its node's PEs got.
    counts: Counts,
    /// `rdma_first[channel][node]`, from the forwarders (`Plan::rdma_first`).
    rdma_first: Vec<Vec<u64>>,
    /// The largest buffers of any PE.
    most: Sizes,
    /// How long the kernel took.
    ns: u64,
}

/// The notify phase, one kernel: an `alltoall_block` gives every PE each source's counts for
/// its node; from them each PE lays out its buffers, and a second `alltoall_block` tells each
/// source where its regions start at the forwarders and every PE every PE's sizes, the
/// largest of which size the buffers (DeepEP's host waits for the counts to size its
/// outputs). Why not a max reduction for the sizes: a reduction gets from every PE between
/// two barriers, which tripled the phase's simulated time at 8 PEs. (Allocating the buffers for the
/// counts, and after it for the tokens, is outside the phases, as DeepEP's buffers are
/// allocated once.)
fn notify<B: Backend>(
    sh: &Shmem<B>,
    nodes: &Nodes,
    dests: &[Dests],
) -> Result<Notified, ShmemError> {
    let (me, n) = (sh.my_pe(), sh.n_pes() as usize);
    let counts_len = n * Counts::part_len(nodes, WARPS);
    let counts_sent = sh.malloc::<u32>(counts_len)?;
    let counts_got = sh.malloc::<u32>(counts_len)?;
    // What each PE tells each PE second: where the receiver's regions start at it (if it
    // forwards the receiver's tokens), and its own buffers' sizes.
    let told_len = WARPS as usize + 4;
    let told_sent = sh.malloc::<u64>(n * told_len)?;
    let told_got = sh.malloc::<u64>(n * told_len)?;
    let counts = RefCell::new(None);
    let started_ns = sh.now_ns();
    let threads = WARPS * rshmem::WARP_SIZE;
    let mut got = sh.launch_kernel(Dim3::linear(1), Dim3::linear(threads), async |t| {
        if t.thread_rank() == 0 {
            t.set_local(counts_sent, &Counts::outgoing(dests, nodes, WARPS))?;
        }
        t.sync_threads().await?;
        t.block().alltoall(counts_got, counts_sent).await?;
        if t.thread_rank() == 0 {
            let mine = Counts::new(t.local(counts_got)?, nodes, nodes.node_of(me), WARPS);
            let layout = Layout {
                nodes,
                counts: &mine,
            };
            let sizes = layout.sizes(me, dests).to_words();
            let starts = layout.rdma_starts(me);
            let told: Vec<u64> = starts
                .chunks(WARPS as usize)
                .flat_map(|starts| starts.iter().chain(&sizes).copied())
                .collect();
            t.set_local(told_sent, &told)?;
            *counts.borrow_mut() = Some(mine);
        }
        t.sync_threads().await?;
        t.block().alltoall(told_got, told_sent).await?;
        match t.thread_rank() {
            0 => Ok(t.local(told_got)?),
            _ => Ok(Vec::new()),
        }
    })?;
    let ns = sh.now_ns() - started_ns;
    for sym in [told_got, told_sent] {
        sh.free(sym)?;
    }
    sh.free(counts_got)?;
    sh.free(counts_sent)?;
    let told = got.swap_remove(0);
    let told_by = |pe: u32| &told[pe as usize * told_len..][..told_len];
    let rdma_first = (0..WARPS as usize)
        .map(|channel| {
            (0..nodes.count())
                .map(|node| told_by(nodes.forwarder(me, node))[channel])
                .collect()
        })
        .collect();
    let mut most = [0; 4];
    for pe in 0..n as u32 {
        for (most, &size) in most.iter_mut().zip(&told_by(pe)[WARPS as usize..]) {
            *most = size.max(*most);
        }
    }
    Ok(Notified {
        counts: counts.into_inner().expect("thread 0 kept the counts"),
        rdma_first,
        most: Sizes::from_words(most),
        ns,
    })
}

/// What this PE sent, counted by lane 0 of each warp, to tell the receivers once it is all
/// sent: tokens to each PE of its node (by local index), sums to each source.
struct Told {
    nvl: Vec<Cell<u64>>,
    back: Vec<Cell<u64>>,
}

/// Every thread: once every warp is done sending, a block fence, then a put-with-signal to
/// each of `counts`' PEs of what it was sent, into `told` and adding one to `arrivals[which]`.
/// The fence orders everything sent before it: a receiver that has heard from every sender
/// has all their puts (as deepep-ll's counts follow its tokens, deepep.rs).
async fn tell<B: Backend>(
    t: &KernelThread<'_, B>,
    buf: &Buffers,
    which: usize,
    counts: impl Iterator<Item = (u32, u64)>,
) -> Result<(), ShmemError> {
    // Why `counts` may be lazy: it is read after this sync, once every lane 0 has counted.
    t.sync_threads().await?;
    t.block().fence().await?;
    let threads = (WARPS * rshmem::WARP_SIZE) as usize;
    let at = which * t.n_pes() as usize + t.my_pe() as usize;
    for (pe, count) in counts.skip(t.thread_rank() as usize).step_by(threads) {
        t.put_signal(
            buf.told.at(at)?,
            &[count],
            buf.arrivals.at(which)?,
            1,
            SignalOp::Add,
            pe,
        )
        .await?;
    }
    Ok(())
}

/// A token a PE forwarded: its source, its first reduce slot and its holders (one slot
/// each), and where the node's sum goes at the source.
struct Forwarded {
    src: u32,
    first_slot: u64,
    holders: u64,
    back_slot: u64,
}

/// Warp `c`'s dispatch: channel `c`'s tokens to the forwarders of the other nodes, then each
/// token of channel `c` this PE forwards to the PEs of its node that hold its
/// experts. Returns what it forwarded, for the combine.
async fn dispatch<B: Backend>(
    t: &KernelThread<'_, B>,
    plan: &Plan<'_>,
    buf: &Buffers,
    told: &Told,
) -> Result<Vec<Forwarded>, ShmemError> {
    let (channel, len) = (t.warp_id(), plan.message_len);
    let mut sent = vec![0; plan.nodes.count() as usize];
    for token in channel_tokens(plan.shape.tokens, WARPS, channel) {
        for &node in &plan.dests[token as usize].nodes {
            if node == plan.my_node() {
                continue;
            }
            let first = plan.rdma_first[channel as usize][node as usize];
            let at = (first + sent[node as usize]) as usize;
            sent[node as usize] += 1;
            t.warp()
                .put_signal(
                    buf.rdma.slice(at * len..(at + 1) * len)?,
                    &plan.message_to(token, node),
                    buf.rdma_flags.at(at)?,
                    1,
                    SignalOp::Set,
                    plan.nodes.forwarder(plan.me, node),
                )
                .await?;
        }
    }
    let members = plan.nodes.members(plan.my_node());
    let mut forwarded = Vec::new();
    for &src in &plan.forwarded {
        let region = plan.layout.region(src, channel);
        let mut walk = Walk::start(&plan.nvl, &plan.reduce, region);
        // This PE's own tokens are here already; another's, once their flags are set.
        let mut own = plan.own_tokens(channel);
        let entries = match src == plan.me {
            true => plan.layout.counts.to_node(src, channel),
            false => plan.rdma[region + 1] - plan.rdma[region],
        };
        for entry in 0..entries {
            let msg = if src == plan.me {
                let token = own.next().expect("as many own tokens as counted");
                plan.message_to(token, plan.my_node())
            } else {
                let at = (plan.rdma[region] + entry) as usize;
                t.warp()
                    .signal_wait_until(buf.rdma_flags.at(at)?, Cmp::Eq, 1)
                    .await?;
                t.local(buf.rdma.slice(at * len..(at + 1) * len)?)?
            };
            let (words, back, route) = parts(&msg, plan.shape.words());
            let holders = plan.holders(&route);
            let (at_holders, first) = walk.next(&holders);
            for (part, (&local, &at)) in (0..).zip(holders.iter().zip(&at_holders)) {
                let at = at as usize;
                t.warp()
                    .put_nbi(
                        buf.nvl.slice(at * len..(at + 1) * len)?,
                        &message(words, Reply { first, part }, &route),
                        members[local as usize],
                    )
                    .await?;
                if t.lane_id() == 0 {
                    let sent = &told.nvl[local as usize];
                    sent.set(sent.get() + 1);
                }
            }
            forwarded.push(Forwarded {
                src,
                first_slot: first,
                holders: holders.len() as u64,
                back_slot: back.first,
            });
        }
    }
    Ok(forwarded)
}

/// Warp `c` answers the tokens of channel `c` in this PE's NVLink buffer, source by source:
/// for each, the weighted sum of its experts' answers that are on this PE, into its slot at
/// its forwarder.
/// Returns how many entries were wrong: not a token its source routed here.
async fn answer_tokens<B: Backend>(
    t: &KernelThread<'_, B>,
    plan: &Plan<'_>,
    buf: &Buffers,
) -> Result<usize, ShmemError> {
    let (me, n, words, len) = (plan.me, plan.n, plan.shape.words(), plan.message_len);
    let per_pe = plan.shape.experts_per_pe(n);
    let mut wrong = 0;
    let layout = &plan.nvl[plan.nodes.local_of(me) as usize];
    let regions = (0..n).map(|src| (src, plan.layout.region(src, t.warp_id())));
    let entries = regions.flat_map(|(src, r)| (layout[r]..layout[r + 1]).map(move |e| (src, e)));
    for (src, entry) in entries {
        let at = entry as usize;
        let msg = t.local(buf.nvl.slice(at * len..(at + 1) * len)?)?;
        let (got, reply, route) = parts(&msg, words);
        if t.lane_id() == 0 {
            let token = token_of(got[0]);
            let right = token < plan.shape.tokens
                && route == plan.shape.route(src, token, n)
                && route.iter().any(|&expert| expert / per_pe == me)
                && got
                    .iter()
                    .enumerate()
                    .all(|(i, &w)| w == word(src, token, i));
            wrong += usize::from(!right);
        }
        let mine: Vec<(usize, u32)> = route
            .iter()
            .copied()
            .enumerate()
            .filter(|&(_, e)| e / per_pe == me)
            .collect();
        let partial: Vec<u64> = got
            .iter()
            .map(|&w| {
                mine.iter().fold(0u64, |sum, &(k, expert)| {
                    sum.wrapping_add(weight(k).wrapping_mul(answer(w, expert)))
                })
            })
            .collect();
        let slot = (reply.first + reply.part) as usize;
        t.warp()
            .put_signal(
                buf.reduce.slice(slot * words..(slot + 1) * words)?,
                &partial,
                buf.reduce_flags.at(reply.first as usize)?,
                1,
                SignalOp::Add,
                plan.nodes.forwarder(src, plan.my_node()),
            )
            .await?;
    }
    Ok(wrong)
}

/// Warp `c` sums, for each token of channel `c` it forwarded, the node's answers once their
/// slots are in, and sends the node's sum to the token's source (its own: a store).
async fn sum_nodes<B: Backend>(
    t: &KernelThread<'_, B>,
    plan: &Plan<'_>,
    buf: &Buffers,
    forwarded: &[Forwarded],
    told: &Told,
) -> Result<(), ShmemError> {
    let words = plan.shape.words();
    for token in forwarded {
        let first = token.first_slot as usize;
        t.warp()
            .signal_wait_until(buf.reduce_flags.at(first)?, Cmp::Ge, token.holders)
            .await?;
        let holders = token.holders as usize;
        let partials = t.local(buf.reduce.slice(first * words..(first + holders) * words)?)?;
        let sum: Vec<u64> = (0..words)
            .map(|i| (0..holders).fold(0u64, |sum, h| sum.wrapping_add(partials[h * words + i])))
            .collect();
        let back = token.back_slot as usize;
        let to = buf.back.slice(back * words..(back + 1) * words)?;
        if token.src != plan.me {
            t.warp().put_nbi(to, &sum, token.src).await?;
            if t.lane_id() == 0 {
                let sent = &told.back[token.src as usize];
                sent.set(sent.get() + 1);
            }
        } else if t.lane_id() == 0 {
            t.set_local(to, &sum)?;
        }
    }
    Ok(())
}

/// Thread `r` checks tokens `r, r + threads, ...`: the sum of its nodes' sums is its experts'
/// weighted answers; thread 0 also checks the arrival counters against the counts.
fn check<B: Backend>(
    t: &KernelThread<'_, B>,
    plan: &Plan<'_>,
    buf: &Buffers,
) -> Result<usize, ShmemError> {
    let words = plan.shape.words();
    let mut wrong = 0;
    if t.thread_rank() == 0 {
        let told = t.local(buf.told)?;
        let (tokens, sums) = told.split_at(plan.n as usize);
        let sent: [u64; 2] = [tokens.iter().sum(), sums.iter().sum()];
        wrong += usize::from(sent != [plan.tokens_here, plan.sums_from_afar]);
    }
    let threads = WARPS * rshmem::WARP_SIZE;
    for token in (t.thread_rank()..plan.shape.tokens).step_by(threads as usize) {
        let first = plan.back_first[token as usize] as usize;
        let nodes = plan.dests[token as usize].nodes.len();
        let sums = t.local(buf.back.slice(first * words..(first + nodes) * words)?)?;
        let route = &plan.routes[token as usize];
        let right = (0..words).all(|i| {
            let got = (0..nodes).fold(0u64, |sum, node| sum.wrapping_add(sums[node * words + i]));
            got == combined(plan.me, token, i, route)
        });
        wrong += usize::from(!right);
    }
    Ok(wrong)
}
