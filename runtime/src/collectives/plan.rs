//! Which algorithm a collective call runs: the cheapest, by a latency-bandwidth (alpha-beta)
//! cost model, of those that suit the team's reach.
//!
//! Every member computes the plan from the same agreed inputs (the team's size, whether every
//! member reaches every other with loads and stores, the bytes each member moves), so all pick
//! the same algorithm without talking about it.
//!
//! Reach decides which algorithms may run at all. Pull-based algorithms (one-shot and two-shot
//! reductions, the direct reduce-scatter and scans) read peers' memory, and one-shot pushes
//! make every member talk to every other: both are what NVLink peers do with loads and stores,
//! but through a NIC each access is an RDMA operation with its own work request, and at scale
//! all of them land on the same NICs at once (incast). So, as NCCL and NVSHMEM do, they run
//! only when the whole team is load/store reachable; across nodes the algorithms push along a
//! ring, a tree or a dissemination pattern. The simulator's NICs charge latency per operation
//! but no per-operation occupancy, so they would not show that cost; the rule encodes it.

use crate::collectives::{MAX_ROUNDS, rounds};

/// How the members of a team reach one another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Every member reaches every other with loads and stores (NVLink on one host).
    LoadStore,
    /// Some members are reached only through a network (InfiniBand).
    Network,
}

/// What a plan depends on; every member has the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) n_pes: u32,
    pub(crate) reach: Reach,
    /// How many consecutive members, from team PE 0 on, share a host: the team's members per
    /// node when they come host by host (the world of `ib-N`: 8).
    pub(crate) node_run: u32,
    /// The bytes of one member's contribution (broadcast: the message; collect: the average
    /// block; reduce and scans: the vector; reduce_scatter: one result block).
    pub(crate) bytes: u64,
}

/// How an allgather spreads one block per member to every member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Allgather {
    /// Each member pushes its block to every other member (load/store teams).
    OneShot,
    /// Bruck's dissemination: in round `k` each member passes the `2^k` blocks it has to the
    /// member `2^k` behind; `ceil(log2 n)` rounds.
    Dissemination,
    /// Each member passes one block to its successor per step; `n - 1` steps.
    Ring,
}

/// How a broadcast moves the root's message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Broadcast {
    /// The root pushes the message to every member (load/store teams).
    OneShot,
    /// A binomial tree rooted at the root: `ceil(log2 n)` rounds of whole messages.
    Tree,
    /// The root scatters one piece per member, then the members allgather the pieces (van de
    /// Geijn): every link carries about twice the message instead of `log2 n` times.
    ScatterAllgather(Allgather),
}

/// How an all-reduce combines every member's vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reduce {
    /// Each member reads every member's vector and combines them (load/store teams).
    OneShot,
    /// Each member reads its piece of every member's vector, combines it, and pushes the
    /// result to every member: a reduce-scatter then an allgather (load/store teams).
    TwoShot,
    /// Partners `2^k` apart exchange and combine their partial results, `log2 n` rounds (with
    /// a step before and after for the members beyond the largest power of two).
    RecursiveDoubling,
    /// A ring reduce-scatter (`n - 1` steps of one piece each) followed by an allgather.
    Ring(Allgather),
}

/// How a reduce-scatter makes each member's block of the reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReduceScatter {
    /// Each member reads its block from every member (load/store teams).
    Direct,
    /// Partial blocks travel a ring, `n - 1` steps; a credit per step frees the one block of
    /// landing space each member has (its result block).
    Ring,
}

/// How a prefix sum runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scan {
    /// Each member reads the vectors of the members before it (load/store teams).
    Direct,
    /// Each member passes its running prefix to the next, in `chunks` pieces so that the
    /// members work on different pieces at once (a pipelined chain).
    Chain { chunks: u32 },
}

/// One link class of the cost model.
#[derive(Clone, Copy, Debug)]
struct Link {
    /// One way, from issue to the target seeing it: link latency plus polling.
    latency_ns: f64,
    bytes_per_ns: f64,
}

/// NVLink through an NVSwitch: 450 ns one way (docs/targets.md's remote atomic round trip,
/// halved) plus 100 ns of polling, at the 394.8 GB/s measured peer bandwidth (the hgx8 and
/// h200x2 presets).
const LOAD_STORE: Link = Link {
    latency_ns: 550.0,
    bytes_per_ns: 394.8,
};

/// InfiniBand NDR between hosts on one rail: PCIe to the NIC and back (2 x 150 ns), NIC to
/// leaf and leaf to NIC (2 x 600 ns), two NICs (2 x 300 ns) and polling (100 ns), at the
/// 48.5 GB/s a ConnectX-7 achieves (the ib-N presets).
const NETWORK: Link = Link {
    latency_ns: 2_200.0,
    bytes_per_ns: 48.5,
};

/// What issuing one operation costs the PE that issues it (the presets' `issue_ns`).
const MESSAGE_NS: f64 = 20.0;

/// The most pieces a chain scan splits its vector into.
const MAX_CHAIN_CHUNKS: u32 = 64;

impl Shape {
    /// Members fewer than this many places apart in an aligned pattern (recursive doubling's
    /// partners, a binomial tree rooted at team PE 0) share a node: the largest power of two
    /// that divides the node run, since aligned blocks of that size never straddle two nodes.
    fn near_distance(&self) -> u32 {
        match self.reach {
            Reach::LoadStore => u32::MAX,
            Reach::Network if self.node_run >= self.n_pes => u32::MAX,
            Reach::Network => 1 << self.node_run.max(1).trailing_zeros(),
        }
    }

    /// The slowest link between members: every step of a ring, a dissemination round, or a
    /// fan-out from one member waits for it.
    fn link(&self) -> Link {
        if self.near_distance() == u32::MAX {
            LOAD_STORE
        } else {
            NETWORK
        }
    }

    /// The link between members `distance` apart in an aligned pattern.
    fn link_at(&self, distance: u32) -> Link {
        if distance < self.near_distance() {
            LOAD_STORE
        } else {
            self.link()
        }
    }

    /// One message of `bytes` between members `distance` apart in an aligned pattern.
    fn step_at(&self, distance: u32, bytes: f64) -> f64 {
        let link = self.link_at(distance);
        MESSAGE_NS + link.latency_ns + bytes / link.bytes_per_ns
    }

    fn load_store(&self) -> bool {
        self.reach == Reach::LoadStore
    }

    fn n(&self) -> f64 {
        f64::from(self.n_pes)
    }

    fn bytes(&self) -> f64 {
        self.bytes as f64
    }

    /// One message of `bytes` over the slowest link, issued, sent and seen.
    fn step(&self, bytes: f64) -> f64 {
        let link = self.link();
        MESSAGE_NS + link.latency_ns + bytes / link.bytes_per_ns
    }

    /// `count` messages of `bytes` each from one member, bound by its link.
    fn fan(&self, count: f64, bytes: f64) -> f64 {
        let link = self.link();
        count * MESSAGE_NS + link.latency_ns + count * bytes / link.bytes_per_ns
    }

    /// `count` reads of `bytes` each, and the notes that say they are done.
    fn pulls(&self, count: f64, bytes: f64) -> f64 {
        // Why two more latencies: a read is a round trip, and its owner waits for the note.
        self.fan(count, bytes) + self.fan(count, 0.0) + self.link().latency_ns
    }

    /// The same shape with `bytes` per member.
    fn with_bytes(&self, bytes: f64) -> Shape {
        Shape {
            bytes: bytes as u64,
            ..*self
        }
    }
}

/// The candidate with the lowest cost; the first of equals.
fn cheapest<A: Copy>(candidates: impl IntoIterator<Item = Option<(A, f64)>>) -> A {
    candidates
        .into_iter()
        .flatten()
        .reduce(|best, next| if next.1 < best.1 { next } else { best })
        .map(|(algorithm, _)| algorithm)
        .expect("every plan has an algorithm that runs everywhere")
}

/// `Some((algorithm, cost))` where `valid`.
fn option<A>(valid: bool, algorithm: A, cost: impl FnOnce() -> f64) -> Option<(A, f64)> {
    valid.then(|| (algorithm, cost()))
}

/// Whether a team of `n_pes` has a round counter for each dissemination round.
fn rounds_fit(n_pes: u32) -> bool {
    rounds(n_pes) <= MAX_ROUNDS
}

fn allgather_cost(shape: &Shape, algorithm: Allgather) -> f64 {
    let n = shape.n();
    let link = shape.link();
    match algorithm {
        Allgather::OneShot => shape.fan(n - 1.0, shape.bytes()),
        Allgather::Dissemination => {
            f64::from(rounds(shape.n_pes)) * (MESSAGE_NS + link.latency_ns)
                + (n - 1.0) * shape.bytes() / link.bytes_per_ns
        }
        Allgather::Ring => (n - 1.0) * shape.step(shape.bytes()),
    }
}

/// The allgather for blocks of `shape.bytes`, with its cost.
fn allgather_with_cost(shape: &Shape) -> (Allgather, f64) {
    let algorithm = allgather(shape);
    (algorithm, allgather_cost(shape, algorithm))
}

/// The allgather of collect and fcollect, and the second phase of other collectives.
pub(crate) fn allgather(shape: &Shape) -> Allgather {
    cheapest([
        option(shape.load_store(), Allgather::OneShot, || {
            allgather_cost(shape, Allgather::OneShot)
        }),
        option(rounds_fit(shape.n_pes), Allgather::Dissemination, || {
            allgather_cost(shape, Allgather::Dissemination)
        }),
        Some((Allgather::Ring, allgather_cost(shape, Allgather::Ring))),
    ])
}

pub(crate) fn broadcast(shape: &Shape) -> Broadcast {
    let (n, bytes) = (shape.n(), shape.bytes());
    let piece = shape.with_bytes(bytes / n);
    let (ag, ag_cost) = allgather_with_cost(&piece);
    cheapest([
        option(shape.load_store(), Broadcast::OneShot, || {
            shape.fan(n - 1.0, bytes)
        }),
        Some((
            Broadcast::Tree,
            (0..rounds(shape.n_pes))
                .map(|k| shape.step_at(1 << k, bytes))
                .sum(),
        )),
        Some((
            Broadcast::ScatterAllgather(ag),
            shape.fan(n - 1.0, piece.bytes()) + ag_cost,
        )),
    ])
}

pub(crate) fn reduce(shape: &Shape) -> Reduce {
    let (n, bytes) = (shape.n(), shape.bytes());
    let piece = shape.with_bytes(bytes / n);
    let (ag, ag_cost) = allgather_with_cost(&piece);
    let core = largest_power_of_two(shape.n_pes);
    let extras = shape.n_pes > core;
    let recursive_doubling = || {
        // Every round but an unhindered first one waits for the partner's go-ahead.
        let round = |k: u32| {
            let handshake = if k > 0 || extras {
                shape.step_at(1 << k, 0.0)
            } else {
                0.0
            };
            handshake + shape.step_at(1 << k, bytes)
        };
        let edges = if extras { 2.0 * shape.step(bytes) } else { 0.0 };
        edges + (0..core.trailing_zeros()).map(round).sum::<f64>()
    };
    cheapest([
        option(shape.load_store(), Reduce::OneShot, || {
            shape.pulls(n - 1.0, bytes)
        }),
        option(shape.load_store(), Reduce::TwoShot, || {
            shape.pulls(n - 1.0, piece.bytes()) + allgather_cost(&piece, Allgather::OneShot)
        }),
        option(
            core.trailing_zeros() <= MAX_ROUNDS,
            Reduce::RecursiveDoubling,
            recursive_doubling,
        ),
        Some((
            Reduce::Ring(ag),
            (n - 1.0) * shape.step(piece.bytes()) + ag_cost,
        )),
    ])
}

pub(crate) fn reduce_scatter(shape: &Shape) -> ReduceScatter {
    let (n, bytes) = (shape.n(), shape.bytes());
    cheapest([
        option(shape.load_store(), ReduceScatter::Direct, || {
            shape.pulls(n - 1.0, bytes)
        }),
        Some((
            ReduceScatter::Ring,
            (n - 1.0) * (shape.step(bytes) + shape.step(0.0)),
        )),
    ])
}

pub(crate) fn scan(shape: &Shape) -> Scan {
    let (n, bytes) = (shape.n(), shape.bytes());
    let chain = |chunks: u32| {
        let c = f64::from(chunks);
        (
            Scan::Chain { chunks },
            (n - 2.0 + c).max(0.0) * shape.step(bytes / c),
        )
    };
    let chains = (0..=MAX_CHAIN_CHUNKS.trailing_zeros()).map(|k| Some(chain(1 << k)));
    cheapest(
        [option(shape.load_store(), Scan::Direct, || {
            shape.pulls(n - 1.0, bytes)
        })]
        .into_iter()
        .chain(chains),
    )
}

/// The largest power of two not above `n` (1 for 0).
pub(crate) fn largest_power_of_two(n: u32) -> u32 {
    1 << (u32::BITS - 1 - n.max(1).leading_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;

    /// The world of the hgx8 preset: 8 PEs on one NVSwitch.
    fn hgx8(bytes: u64) -> Shape {
        Shape {
            n_pes: 8,
            reach: Reach::LoadStore,
            node_run: 8,
            bytes,
        }
    }

    /// The world of the `ib-{hosts}` preset: 8 PEs on each host.
    fn ib(hosts: u32, bytes: u64) -> Shape {
        Shape {
            n_pes: 8 * hosts,
            reach: Reach::Network,
            node_run: 8,
            bytes,
        }
    }

    fn ib2(bytes: u64) -> Shape {
        ib(2, bytes)
    }

    #[test]
    fn within_one_host_small_calls_go_one_shot_and_large_ones_split_the_work() {
        assert_eq!(broadcast(&hgx8(8)), Broadcast::OneShot);
        assert_eq!(
            broadcast(&hgx8(4 * MIB)),
            Broadcast::ScatterAllgather(Allgather::OneShot)
        );
        assert_eq!(reduce(&hgx8(64)), Reduce::OneShot);
        assert_eq!(reduce(&hgx8(4 * MIB)), Reduce::TwoShot);
        assert_eq!(allgather(&hgx8(8)), Allgather::OneShot);
        assert_eq!(allgather(&hgx8(4 * MIB)), Allgather::OneShot);
        assert_eq!(reduce_scatter(&hgx8(MIB)), ReduceScatter::Direct);
        assert_eq!(scan(&hgx8(64)), Scan::Direct);
    }

    #[test]
    fn across_two_nodes_trees_and_recursive_doubling_keep_most_rounds_on_nvlink() {
        // Node-aligned partners less than 8 apart share a node, so only one round of
        // log2(16) crosses InfiniBand, with the whole message: less than a ring's 2(n-1)/n.
        for bytes in [8, KIB, 4 * MIB, 64 * MIB] {
            assert_eq!(broadcast(&ib2(bytes)), Broadcast::Tree, "{bytes}");
            assert_eq!(reduce(&ib2(bytes)), Reduce::RecursiveDoubling, "{bytes}");
        }
        assert_eq!(allgather(&ib2(8)), Allgather::Dissemination);
        assert_eq!(reduce_scatter(&ib2(KIB)), ReduceScatter::Ring);
        assert!(matches!(scan(&ib2(8)), Scan::Chain { chunks: 1 }));
        assert!(matches!(scan(&ib2(4 * MIB)), Scan::Chain { chunks } if chunks > 1));
    }

    #[test]
    fn across_many_nodes_large_calls_take_rings_and_scatter_allgather() {
        // On 16 nodes recursive doubling sends the whole vector over InfiniBand 4 times, the
        // ring about twice, so the ring wins once bandwidth outweighs its 2(n-1) latencies.
        assert_eq!(reduce(&ib(16, 8)), Reduce::RecursiveDoubling);
        assert_eq!(
            reduce(&ib(16, 64 * MIB)),
            Reduce::Ring(Allgather::Dissemination)
        );
        assert_eq!(broadcast(&ib(16, 8)), Broadcast::Tree);
        assert_eq!(
            broadcast(&ib(16, 64 * MIB)),
            Broadcast::ScatterAllgather(Allgather::Dissemination)
        );
    }

    #[test]
    fn members_spread_one_per_node_get_no_nvlink_rounds() {
        let column = Shape {
            node_run: 1,
            ..ib(16, 0)
        };
        assert_eq!(column.near_distance(), 1);
        assert_eq!(ib2(0).near_distance(), 8);
        let unaligned = Shape {
            node_run: 3,
            ..ib2(0)
        };
        assert_eq!(unaligned.near_distance(), 1);
    }

    #[test]
    fn no_pull_or_one_shot_algorithm_runs_across_nodes() {
        for bytes in [0, 8, KIB, MIB, 64 * MIB] {
            let shape = ib(4, bytes);
            assert_ne!(broadcast(&shape), Broadcast::OneShot);
            assert!(!matches!(reduce(&shape), Reduce::OneShot | Reduce::TwoShot));
            assert_ne!(allgather(&shape), Allgather::OneShot);
            assert_ne!(reduce_scatter(&shape), ReduceScatter::Direct);
            assert_ne!(scan(&shape), Scan::Direct);
        }
    }

    #[test]
    fn teams_too_large_for_the_round_counters_fall_back_to_rings() {
        let huge = Shape {
            n_pes: 1 << (MAX_ROUNDS + 1),
            reach: Reach::Network,
            node_run: 8,
            bytes: 8,
        };
        assert_eq!(allgather(&huge), Allgather::Ring);
        assert_eq!(reduce(&huge), Reduce::Ring(Allgather::Ring));
        let largest = Shape {
            n_pes: 1 << MAX_ROUNDS,
            ..huge
        };
        assert_eq!(allgather(&largest), Allgather::Dissemination);
        assert_eq!(reduce(&largest), Reduce::RecursiveDoubling);
    }

    #[test]
    fn plans_for_one_pe_and_empty_messages_exist() {
        for reach in [Reach::LoadStore, Reach::Network] {
            for n_pes in [1, 2, 3] {
                let shape = Shape {
                    n_pes,
                    reach,
                    node_run: 1,
                    bytes: 0,
                };
                broadcast(&shape);
                reduce(&shape);
                allgather(&shape);
                reduce_scatter(&shape);
                scan(&shape);
            }
        }
    }

    #[test]
    fn largest_power_of_two_rounds_down() {
        assert_eq!(
            [0, 1, 2, 3, 7, 8, 9, 16, 17].map(largest_power_of_two),
            [1, 1, 2, 2, 4, 8, 8, 16, 16]
        );
    }
}
