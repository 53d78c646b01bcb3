//! The arithmetic of `deepep-normal`: which PEs share a node, which PE of a node forwards a
//! source's tokens there, the counts each PE sends to each PE in the notify phase, and the
//! packed layouts the PEs of a node derive from the counts they got. No SHMEM here, so that
//! the tests can check that every token gets a place of its own in every buffer it crosses.

use std::ops::Range;

/// The PEs of a run grouped by host ("nodes", DeepEP's RDMA ranks), each node's in PE order.
#[derive(Debug)]
pub(super) struct Nodes {
    node_of: Vec<u32>,
    local_of: Vec<u32>,
    members: Vec<Vec<u32>>,
}

impl Nodes {
    /// PEs `0..n_pes` grouped by `host_of`; nodes are numbered in the order of their first PE.
    pub(super) fn new(n_pes: u32, host_of: impl Fn(u32) -> u32) -> Nodes {
        let mut hosts = Vec::new();
        let mut members: Vec<Vec<u32>> = Vec::new();
        let (mut node_of, mut local_of) = (Vec::new(), Vec::new());
        for pe in 0..n_pes {
            let host = host_of(pe);
            let node = match hosts.iter().position(|&h| h == host) {
                Some(node) => node,
                None => {
                    hosts.push(host);
                    members.push(Vec::new());
                    hosts.len() - 1
                }
            };
            node_of.push(node as u32);
            local_of.push(members[node].len() as u32);
            members[node].push(pe);
        }
        Nodes {
            node_of,
            local_of,
            members,
        }
    }

    /// How many nodes.
    pub(super) fn count(&self) -> u32 {
        self.members.len() as u32
    }

    /// How many PEs.
    pub(super) fn n_pes(&self) -> u32 {
        self.node_of.len() as u32
    }

    /// How many PEs the largest node has.
    pub(super) fn largest(&self) -> u32 {
        self.members.iter().map(Vec::len).max().unwrap_or(0) as u32
    }

    /// The node `pe` is on.
    pub(super) fn node_of(&self, pe: u32) -> u32 {
        self.node_of[pe as usize]
    }

    /// `pe`'s index among the PEs of its node.
    pub(super) fn local_of(&self, pe: u32) -> u32 {
        self.local_of[pe as usize]
    }

    /// The PEs of `node`.
    pub(super) fn members(&self, node: u32) -> &[u32] {
        &self.members[node as usize]
    }

    /// The PE of `node` that receives `src`'s tokens for that node over InfiniBand and
    /// forwards them over NVLink: the one with `src`'s local index, as DeepEP pairs RDMA ranks
    /// (wrapping where `node` has fewer PEs than `src`'s node); on `src`'s own node, `src`.
    pub(super) fn forwarder(&self, src: u32, node: u32) -> u32 {
        let members = self.members(node);
        members[self.local_of(src) as usize % members.len()]
    }
}

/// Where one token goes: the PEs that hold its experts, and their nodes, each sorted and
/// distinct.
#[derive(Debug)]
pub(super) struct Dests {
    pub(super) pes: Vec<u32>,
    pub(super) nodes: Vec<u32>,
}

impl Dests {
    /// Where a token routed to the experts `route` goes, `experts_per_pe` experts a PE.
    pub(super) fn of(route: &[u32], experts_per_pe: u32, nodes: &Nodes) -> Dests {
        let mut pes: Vec<u32> = route.iter().map(|expert| expert / experts_per_pe).collect();
        pes.sort_unstable();
        pes.dedup();
        let mut on: Vec<u32> = pes.iter().map(|&pe| nodes.node_of(pe)).collect();
        on.sort_unstable();
        on.dedup();
        Dests { pes, nodes: on }
    }
}

/// The tokens of channel `channel` of `channels`: a contiguous run, as DeepEP splits a rank's
/// tokens over its channels (here each channel is a warp).
pub(super) fn channel_tokens(tokens: u32, channels: u32, channel: u32) -> Range<u32> {
    let bound = |c: u32| (u64::from(c) * u64::from(tokens) / u64::from(channels)) as u32;
    bound(channel)..bound(channel + 1)
}

/// The notify phase's counts as the PEs of one node see them: for every source PE and channel,
/// how many of its tokens go to the node and to each PE of it (DeepEP's
/// `num_tokens_per_rdma_rank` and `num_tokens_per_rank`, per channel as its `notify_dispatch`
/// keeps them). Why only the node's part of each source's counts: that is all a PE lays out
/// (its own buffers and the NVLink buffers of its node), and every source's whole row at
/// every PE was `n` words from each of `n` PEs, 9.6 GiB at 512 PEs.
#[derive(Debug)]
pub(super) struct Counts {
    n_pes: u32,
    node: u32,
    channels: u32,
    /// Words of one source's part: per channel, the node's count and then one per PE of the
    /// node by local index, padded to the largest node.
    part_len: usize,
    /// Every source's part, in PE order.
    parts: Vec<u32>,
}

impl Counts {
    /// Words of one source's part for a run grouped as `nodes`.
    pub(super) fn part_len(nodes: &Nodes, channels: u32) -> usize {
        channels as usize * (1 + nodes.largest() as usize)
    }

    /// What a PE whose tokens go to `dests` (by token) tells each PE in the notify phase: the
    /// part of its counts for that PE's node, PE after PE.
    pub(super) fn outgoing(dests: &[Dests], nodes: &Nodes, channels: u32) -> Vec<u32> {
        let len = Counts::part_len(nodes, channels);
        let stride = len / channels as usize;
        let mut by_node = vec![0; nodes.count() as usize * len];
        for channel in 0..channels {
            let at = channel as usize * stride;
            for token in channel_tokens(dests.len() as u32, channels, channel) {
                let to = &dests[token as usize];
                for &node in &to.nodes {
                    by_node[node as usize * len + at] += 1;
                }
                for &pe in &to.pes {
                    let node = nodes.node_of(pe) as usize;
                    by_node[node * len + at + 1 + nodes.local_of(pe) as usize] += 1;
                }
            }
        }
        (0..nodes.n_pes())
            .flat_map(|pe| {
                let node = nodes.node_of(pe) as usize;
                by_node[node * len..(node + 1) * len].iter().copied()
            })
            .collect()
    }

    /// The counts `node`'s PEs got: every source's part, one after another.
    pub(super) fn new(parts: Vec<u32>, nodes: &Nodes, node: u32, channels: u32) -> Counts {
        let part_len = Counts::part_len(nodes, channels);
        assert_eq!(
            parts.len(),
            nodes.n_pes() as usize * part_len,
            "one part per PE"
        );
        Counts {
            n_pes: nodes.n_pes(),
            node,
            channels,
            part_len,
            parts,
        }
    }

    /// How many PEs have parts.
    pub(super) fn n_pes(&self) -> u32 {
        self.n_pes
    }

    /// PE `src`'s part.
    pub(super) fn part_of(&self, src: u32) -> &[u32] {
        &self.parts[src as usize * self.part_len..(src as usize + 1) * self.part_len]
    }

    fn at(&self, src: u32, channel: u32, word: usize) -> u64 {
        let stride = self.part_len / self.channels as usize;
        u64::from(self.part_of(src)[channel as usize * stride + word])
    }

    /// Tokens of channel `channel` of `src` that go to this node.
    pub(super) fn to_node(&self, src: u32, channel: u32) -> u64 {
        self.at(src, channel, 0)
    }

    /// Tokens of channel `channel` of `src` that go to the PE of this node with local index
    /// `local`.
    pub(super) fn to_local(&self, src: u32, channel: u32, local: u32) -> u64 {
        self.at(src, channel, 1 + local as usize)
    }
}

/// The sizes of one PE's packed buffers, in entries; the notify phase takes the largest of
/// each over the PEs, as a symmetric allocation is as large on every PE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Sizes {
    pub(super) rdma: u64,
    pub(super) nvl: u64,
    pub(super) reduce: u64,
    pub(super) back: u64,
}

impl Sizes {
    pub(super) fn to_words(self) -> [u64; 4] {
        [self.rdma, self.nvl, self.reduce, self.back]
    }

    pub(super) fn from_words([rdma, nvl, reduce, back]: [u64; 4]) -> Sizes {
        Sizes {
            rdma,
            nvl,
            reduce,
            back,
        }
    }
}

/// The packed buffers' layouts at the PEs of one node, from the counts they got.
/// A buffer holds regions, one per (source, channel) in that order; a layout is the first
/// entry of each region, `n_pes * channels + 1` of them (the last is the buffer's total).
#[derive(Debug)]
pub(super) struct Layout<'a> {
    pub(super) nodes: &'a Nodes,
    pub(super) counts: &'a Counts,
}

impl Layout<'_> {
    /// The index of region (`src`, `channel`) in a layout.
    pub(super) fn region(&self, src: u32, channel: u32) -> usize {
        (src * self.counts.channels + channel) as usize
    }

    fn prefix(&self, count: impl Fn(u32, u32) -> u64) -> Vec<u64> {
        let mut sum = 0;
        let regions = (0..self.counts.n_pes)
            .flat_map(|src| (0..self.counts.channels).map(move |channel| (src, channel)));
        std::iter::once(0)
            .chain(regions.map(|(src, channel)| {
                sum += count(src, channel);
                sum
            }))
            .collect()
    }

    /// The local index of `pe`, which must be on this layout's node.
    fn local(&self, pe: u32) -> u32 {
        assert_eq!(
            self.nodes.node_of(pe),
            self.counts.node,
            "a node's counts lay out its own PEs' buffers"
        );
        self.nodes.local_of(pe)
    }

    /// Forwarder `pe`'s InfiniBand receive buffer: the tokens for its node of the sources on
    /// other nodes it forwards.
    pub(super) fn rdma(&self, pe: u32) -> Vec<u64> {
        self.local(pe);
        let node = self.counts.node;
        self.prefix(|src, channel| {
            let forwarded = src != pe && self.nodes.forwarder(src, node) == pe;
            if forwarded {
                self.counts.to_node(src, channel)
            } else {
                0
            }
        })
    }

    /// PE `pe`'s NVLink receive buffer: every token with an expert on `pe`.
    pub(super) fn nvl(&self, pe: u32) -> Vec<u64> {
        let local = self.local(pe);
        self.prefix(|src, channel| self.counts.to_local(src, channel, local))
    }

    /// Forwarder `pe`'s reduce buffer: a slot per token it forwards (its own included) and PE
    /// of its node that holds one of the token's experts, for that PE's weighted answers.
    pub(super) fn reduce(&self, pe: u32) -> Vec<u64> {
        self.local(pe);
        let (node, members) = (self.counts.node, self.nodes.members(self.counts.node).len());
        self.prefix(|src, channel| {
            if self.nodes.forwarder(src, node) == pe {
                (0..members as u32)
                    .map(|local| self.counts.to_local(src, channel, local))
                    .sum()
            } else {
                0
            }
        })
    }

    /// What forwarder `pe` tells each PE in the notify phase: where that source's region of
    /// each channel starts in `pe`'s InfiniBand buffer (`channels` words a PE, PE after PE;
    /// zeros for the sources `pe` does not forward).
    pub(super) fn rdma_starts(&self, pe: u32) -> Vec<u64> {
        let rdma = self.rdma(pe);
        let node = self.counts.node;
        (0..self.counts.n_pes)
            .flat_map(|src| {
                let forwarded = src != pe && self.nodes.forwarder(src, node) == pe;
                let rdma = &rdma;
                (0..self.counts.channels).map(move |channel| match forwarded {
                    true => rdma[self.region(src, channel)],
                    false => 0,
                })
            })
            .collect()
    }

    /// PE `pe`'s own sizes; its combine buffer takes a slot per token and node it went to
    /// (`dests`, its tokens' destinations).
    pub(super) fn sizes(&self, pe: u32, dests: &[Dests]) -> Sizes {
        let total = |layout: Vec<u64>| *layout.last().expect("a layout has a total");
        Sizes {
            rdma: total(self.rdma(pe)),
            nvl: total(self.nvl(pe)),
            reduce: total(self.reduce(pe)),
            back: dests.iter().map(|d| d.nodes.len() as u64).sum(),
        }
    }
}

/// A forwarder's walk through one (source, channel) region of tokens, in order: where each
/// token goes in the NVLink buffer of each PE of the node, and its slots in the reduce buffer.
#[derive(Debug)]
pub(super) struct Walk {
    /// The next entry of each PE of the node (by local index) in its NVLink buffer.
    next_entries: Vec<u64>,
    next_slot: u64,
}

impl Walk {
    /// The walk of region `region` (`Layout::region`) at a forwarder whose node's PEs have
    /// the NVLink layouts `nvl` (by local index) and whose reduce layout is `reduce`.
    pub(super) fn start(nvl: &[Vec<u64>], reduce: &[u64], region: usize) -> Walk {
        Walk {
            next_entries: nvl.iter().map(|layout| layout[region]).collect(),
            next_slot: reduce[region],
        }
    }

    /// The next token, bound for `holders` (PEs of this node by local index, distinct): the
    /// entry it takes in each one's NVLink buffer, and its first reduce slot (it takes one a
    /// holder, consecutive).
    pub(super) fn next(&mut self, holders: &[u32]) -> (Vec<u64>, u64) {
        let entries = holders
            .iter()
            .map(|&local| {
                let entry = self.next_entries[local as usize];
                self.next_entries[local as usize] += 1;
                entry
            })
            .collect();
        let first_slot = self.next_slot;
        self.next_slot += holders.len() as u64;
        (entries, first_slot)
    }
}

#[cfg(test)]
mod tests;
