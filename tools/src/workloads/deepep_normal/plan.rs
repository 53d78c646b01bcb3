//! What one PE of `deepep-normal` knows before its kernel runs (`Plan`: its tokens, where they
//! go, where everything lands), the symmetric buffers the kernel moves them through
//! (`Buffers`), and a token's message on the wire.

use hw::Backend;
use rshmem::{Shmem, ShmemError, Sym};

use super::super::moe_shape::MoeShape;
use super::super::moe_token::word;
use super::WARPS;
use super::layout::{Dests, Layout, Nodes, Sizes, channel_tokens};

/// Where the answer to a message goes: slot `first + part` of the buffer the answers go to,
/// counted by the flag of slot `first`, so that the forwarder of a token waits once for the
/// answers of all the PEs that hold its experts.
#[derive(Clone, Copy, Debug)]
pub(super) struct Reply {
    pub(super) first: u64,
    pub(super) part: u64,
}

/// A token on the wire: its words, where its answer goes, and its experts in top-k order.
pub(super) fn message(words: &[u64], reply: Reply, route: &[u32]) -> Vec<u64> {
    let route = route.iter().map(|&expert| u64::from(expert));
    let reply = [reply.first, reply.part];
    words.iter().copied().chain(reply).chain(route).collect()
}

/// A [`message`]'s words, reply and route.
pub(super) fn parts(message: &[u64], words: usize) -> (&[u64], Reply, Vec<u32>) {
    let reply = Reply {
        first: message[words],
        part: message[words + 1],
    };
    let route = message[words + 2..].iter().map(|&e| e as u32).collect();
    (&message[..words], reply, route)
}

/// What one PE knows before the kernel: its tokens and where they go, and where everything
/// lands in the packed buffers (the notify phase's result).
pub(super) struct Plan<'a> {
    pub(super) me: u32,
    pub(super) n: u32,
    pub(super) shape: &'a MoeShape,
    pub(super) layout: &'a Layout<'a>,
    pub(super) nodes: &'a Nodes,
    pub(super) routes: &'a [Vec<u32>],
    pub(super) dests: &'a [Dests],
    /// Each token's words.
    pub(super) payloads: Vec<Vec<u64>>,
    /// Words of a message.
    pub(super) message_len: usize,
    /// Each token's first slot in this PE's combine buffer: it takes one a node, in order.
    pub(super) back_first: Vec<u64>,
    /// `rdma_first[channel][node]`: where this PE's region of `channel` starts in the
    /// InfiniBand buffer of its forwarder on `node`, as that forwarder said in the notify
    /// phase.
    pub(super) rdma_first: Vec<Vec<u64>>,
    /// The layouts of this PE's InfiniBand and reduce buffers, and of the NVLink buffers of
    /// the PEs of its node (by local index).
    pub(super) rdma: Vec<u64>,
    pub(super) reduce: Vec<u64>,
    pub(super) nvl: Vec<Vec<u64>>,
    /// The sources this PE forwards tokens of (itself included), in order: the order in
    /// which every PE answers them, so that a forwarder's waits in the combine come in turn.
    pub(super) forwarded: Vec<u32>,
    /// Tokens that land here; node sums that come from other nodes.
    pub(super) tokens_here: u64,
    pub(super) sums_from_afar: u64,
}

impl<'a> Plan<'a> {
    pub(super) fn new(
        me: u32,
        shape: &'a MoeShape,
        layout: &'a Layout<'a>,
        routes: &'a [Vec<u32>],
        dests: &'a [Dests],
        rdma_first: Vec<Vec<u64>>,
    ) -> Plan<'a> {
        let nodes = layout.nodes;
        let n = layout.counts.n_pes();
        let my_node = nodes.node_of(me);
        let back_first = dests
            .iter()
            .scan(0, |next, d| {
                let first = *next;
                *next += d.nodes.len() as u64;
                Some(first)
            })
            .collect();
        let forwarded = (0..n)
            .filter(|&src| nodes.forwarder(src, my_node) == me)
            .collect();
        let nvl = layout.nvl(me);
        let payloads = (0..shape.tokens)
            .map(|token| (0..shape.words()).map(|i| word(me, token, i)).collect())
            .collect();
        Plan {
            me,
            n,
            shape,
            layout,
            nodes,
            routes,
            dests,
            payloads,
            message_len: shape.words() + 2 + shape.top_k(n) as usize,
            back_first,
            rdma_first,
            rdma: layout.rdma(me),
            reduce: layout.reduce(me),
            nvl: nodes
                .members(my_node)
                .iter()
                .map(|&pe| layout.nvl(pe))
                .collect(),
            forwarded,
            tokens_here: *nvl.last().expect("a layout has a total"),
            sums_from_afar: dests
                .iter()
                .map(|d| d.nodes.iter().filter(|&&node| node != my_node).count() as u64)
                .sum(),
        }
    }

    pub(super) fn my_node(&self) -> u32 {
        self.nodes.node_of(self.me)
    }

    /// The message that takes `token` to `node`: its answer is the node's sum, into the
    /// token's slot for `node` in the combine buffer.
    pub(super) fn message_to(&self, token: u32, node: u32) -> Vec<u64> {
        let reply = Reply {
            first: self.back_slot(token, node),
            part: 0,
        };
        let t = token as usize;
        message(&self.payloads[t], reply, &self.routes[t])
    }

    /// The slot of `token`'s sum from `node` in the combine buffer.
    pub(super) fn back_slot(&self, token: u32, node: u32) -> u64 {
        let nodes = &self.dests[token as usize].nodes;
        let at = nodes
            .iter()
            .position(|&n| n == node)
            .expect("a node the token went to");
        self.back_first[token as usize] + at as u64
    }

    /// The PEs of this node (by local index) that hold one of `route`'s experts, in order;
    /// experts that do not exist (a wrong route) hold nothing.
    pub(super) fn holders(&self, route: &[u32]) -> Vec<u32> {
        let (n, per_pe) = (self.n, self.shape.experts_per_pe(self.n));
        let mut holders: Vec<u32> = route
            .iter()
            .map(|expert| expert / per_pe)
            .filter(|&pe| pe < n && self.nodes.node_of(pe) == self.my_node())
            .map(|pe| self.nodes.local_of(pe))
            .collect();
        holders.sort_unstable();
        holders.dedup();
        holders
    }

    /// This PE's tokens of `channel` with experts on its own node.
    pub(super) fn own_tokens(&self, channel: u32) -> impl Iterator<Item = u32> + '_ {
        let my_node = self.my_node();
        channel_tokens(self.shape.tokens, WARPS, channel)
            .filter(move |&t| self.dests[t as usize].nodes.contains(&my_node))
    }
}

/// The symmetric buffers of the dispatch and the combine, each as large as the largest PE's
/// (`most`, from the notify phase).
pub(super) struct Buffers {
    /// Tokens from other nodes that this PE forwards, and a flag per entry that its
    /// put-with-signal sets.
    pub(super) rdma: Sym<u64>,
    pub(super) rdma_flags: Sym<u64>,
    /// Tokens with experts on this PE.
    pub(super) nvl: Sym<u64>,
    /// The weighted answers of the PEs of this node for the tokens this PE forwards, and a
    /// flag per slot.
    pub(super) reduce: Sym<u64>,
    pub(super) reduce_flags: Sym<u64>,
    /// Each node's sum for each of this PE's tokens.
    pub(super) back: Sym<u64>,
    /// What each PE said it sent here, once it had sent everything: `told[pe]` tokens into
    /// `nvl`, `told[n_pes + pe]` sums into `back`.
    pub(super) told: Sym<u64>,
    /// How many PEs said so: [0] of the tokens, [1] of the sums.
    pub(super) arrivals: Sym<u64>,
}

impl Buffers {
    pub(super) fn alloc<B: Backend>(
        sh: &Shmem<B>,
        most: Sizes,
        plan: &Plan<'_>,
    ) -> Result<Buffers, ShmemError> {
        // Why at least one: an empty buffer (one node has no InfiniBand traffic) is still
        // a symmetric object every PE slices the same way.
        let entries = |count: u64, len: usize| count.max(1) as usize * len;
        let words = plan.shape.words();
        Ok(Buffers {
            rdma: sh.malloc(entries(most.rdma, plan.message_len))?,
            rdma_flags: sh.calloc(entries(most.rdma, 1))?,
            nvl: sh.malloc(entries(most.nvl, plan.message_len))?,
            reduce: sh.malloc(entries(most.reduce, words))?,
            reduce_flags: sh.calloc(entries(most.reduce, 1))?,
            back: sh.malloc(entries(most.back, words))?,
            told: sh.calloc(2 * plan.n as usize)?,
            arrivals: sh.calloc(2)?,
        })
    }

    pub(super) fn free<B: Backend>(self, sh: &Shmem<B>) -> Result<(), ShmemError> {
        for sym in [
            self.arrivals,
            self.told,
            self.back,
            self.reduce_flags,
            self.reduce,
            self.nvl,
            self.rdma_flags,
            self.rdma,
        ] {
            sh.free(sym)?;
        }
        Ok(())
    }
}
