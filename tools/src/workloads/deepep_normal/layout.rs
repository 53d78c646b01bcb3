//! The arithmetic of `deepep-normal`: which PEs share a node, which PE of a node forwards a
//! source's tokens there, the counts each PE publishes in the notify phase, and the packed
//! layouts every PE derives from everyone's counts. No SHMEM here, so that the tests can check
//! that every token gets a place of its own in every buffer it crosses.

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

/// The notify phase's counts: for every source PE and channel, how many of its tokens go to
/// each node and to each PE (DeepEP's `num_tokens_per_rdma_rank` and `num_tokens_per_rank`,
/// per channel as its `notify_dispatch` keeps them). One row per PE, in PE order.
#[derive(Debug)]
pub(super) struct Counts {
    n_pes: u32,
    n_nodes: u32,
    channels: u32,
    rows: Vec<u64>,
}

impl Counts {
    /// How many PEs have rows.
    pub(super) fn n_pes(&self) -> u32 {
        self.n_pes
    }

    /// Words of one PE's row.
    pub(super) fn row_len(n_pes: u32, n_nodes: u32, channels: u32) -> usize {
        (channels * (n_nodes + n_pes)) as usize
    }

    /// A PE's row, from where each of its tokens goes (`dests`, by token).
    pub(super) fn row(dests: &[Dests], n_pes: u32, n_nodes: u32, channels: u32) -> Vec<u64> {
        let mut row = vec![0; Counts::row_len(n_pes, n_nodes, channels)];
        for channel in 0..channels {
            let at = (channel * (n_nodes + n_pes)) as usize;
            for token in channel_tokens(dests.len() as u32, channels, channel) {
                let to = &dests[token as usize];
                to.nodes
                    .iter()
                    .for_each(|&node| row[at + node as usize] += 1);
                to.pes
                    .iter()
                    .for_each(|&pe| row[at + (n_nodes + pe) as usize] += 1);
            }
        }
        row
    }

    /// Every PE's row, one after another.
    pub(super) fn new(rows: Vec<u64>, n_pes: u32, n_nodes: u32, channels: u32) -> Counts {
        assert_eq!(
            rows.len(),
            n_pes as usize * Counts::row_len(n_pes, n_nodes, channels),
            "one row per PE"
        );
        Counts {
            n_pes,
            n_nodes,
            channels,
            rows,
        }
    }

    /// PE `src`'s row.
    pub(super) fn row_of(&self, src: u32) -> &[u64] {
        let len = Counts::row_len(self.n_pes, self.n_nodes, self.channels);
        &self.rows[src as usize * len..(src as usize + 1) * len]
    }

    /// Tokens of channel `channel` of `src` that go to node `node`.
    pub(super) fn to_node(&self, src: u32, channel: u32, node: u32) -> u64 {
        self.row_of(src)[(channel * (self.n_nodes + self.n_pes) + node) as usize]
    }

    /// Tokens of channel `channel` of `src` that go to PE `pe`.
    pub(super) fn to_pe(&self, src: u32, channel: u32, pe: u32) -> u64 {
        self.row_of(src)[(channel * (self.n_nodes + self.n_pes) + self.n_nodes + pe) as usize]
    }
}

/// The sizes of the packed buffers on the PE that needs the most of each, in entries (a
/// symmetric allocation is as large on every PE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Sizes {
    pub(super) rdma: u64,
    pub(super) nvl: u64,
    pub(super) reduce: u64,
    pub(super) back: u64,
}

/// Every packed buffer's layout, the same on every PE since it derives from everyone's counts.
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

    /// Forwarder `pe`'s InfiniBand receive buffer: the tokens for its node of the sources on
    /// other nodes it forwards.
    pub(super) fn rdma(&self, pe: u32) -> Vec<u64> {
        let node = self.nodes.node_of(pe);
        self.prefix(|src, channel| {
            let forwarded = src != pe && self.nodes.forwarder(src, node) == pe;
            if forwarded {
                self.counts.to_node(src, channel, node)
            } else {
                0
            }
        })
    }

    /// PE `pe`'s NVLink receive buffer: every token with an expert on `pe`.
    pub(super) fn nvl(&self, pe: u32) -> Vec<u64> {
        self.prefix(|src, channel| self.counts.to_pe(src, channel, pe))
    }

    /// Forwarder `pe`'s reduce buffer: a slot per token it forwards (its own included) and PE
    /// of its node that holds one of the token's experts, for that PE's weighted answers.
    pub(super) fn reduce(&self, pe: u32) -> Vec<u64> {
        let node = self.nodes.node_of(pe);
        self.prefix(|src, channel| {
            if self.nodes.forwarder(src, node) == pe {
                let members = self.nodes.members(node).iter();
                members.map(|&d| self.counts.to_pe(src, channel, d)).sum()
            } else {
                0
            }
        })
    }

    /// Source `pe`'s combine buffer: a slot per token and node it went to, in token order.
    pub(super) fn back(&self, pe: u32) -> u64 {
        (0..self.counts.channels)
            .flat_map(|channel| (0..self.nodes.count()).map(move |node| (channel, node)))
            .map(|(channel, node)| self.counts.to_node(pe, channel, node))
            .sum()
    }

    /// The largest of each buffer over the PEs, in one pass over the counts.
    pub(super) fn largest(&self) -> Sizes {
        let n = self.counts.n_pes as usize;
        let (mut rdma, mut nvl, mut reduce) = (vec![0; n], vec![0; n], vec![0; n]);
        for src in 0..self.counts.n_pes {
            for channel in 0..self.counts.channels {
                for node in 0..self.nodes.count() {
                    let forwarder = self.nodes.forwarder(src, node) as usize;
                    if node != self.nodes.node_of(src) {
                        rdma[forwarder] += self.counts.to_node(src, channel, node);
                    }
                    for &pe in self.nodes.members(node) {
                        let to_pe = self.counts.to_pe(src, channel, pe);
                        nvl[pe as usize] += to_pe;
                        reduce[forwarder] += to_pe;
                    }
                }
            }
        }
        let most = |v: Vec<u64>| v.into_iter().max().unwrap_or(0);
        Sizes {
            rdma: most(rdma),
            nvl: most(nvl),
            reduce: most(reduce),
            back: (0..self.counts.n_pes)
                .map(|pe| self.back(pe))
                .max()
                .unwrap_or(0),
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
