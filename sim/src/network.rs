//! Link timing: latency, bandwidth, and links shared by concurrent transfers.
//!
//! Each direction of each link is a FIFO server, and a transfer of data goes through the links
//! of its path one after another, cut-through: it takes each link once its head has come
//! through the ones before (their latency) and the link is free, and holds it for the start-up
//! time plus its bytes at that link's bandwidth, or until the slower links before it have
//! passed its last byte. Concurrent transfers over a link therefore share its bandwidth, a
//! transfer that waits for a busy link further on does not hold the links behind it (a
//! switch buffers it), and a lone transfer takes `latency + start-up + bytes / bottleneck
//! bandwidth`. A transfer of no bytes (a request, an acknowledgement) waits its turn on each
//! link and holds none: holding a link up to when it passed left a hole no later transfer
//! could use.
//!
//! Injected faults (`crate::injection`) change links before the run (their latency and
//! bandwidth) and stall them during it: a stalled link carries nothing, so a transfer that
//! needs it starts after the stall, or pauses through it.

use std::sync::Arc;

use hw::topology::{Hop, LinkId, Routes};
use hw::{Path, PathClass, Pe, Topology};

use crate::injection::{Interval, LinkScale};

/// The routes from one PE, as far as it has used them. Walking the shortest-path tree for
/// every traversal touches a dozen cold cache lines; a route used before is two.
#[derive(Debug)]
struct SourceRoutes {
    tree: Arc<Routes>,
    /// For each destination PE, where its route starts in `records`, plus one; 0 until used.
    slots: Slots,
    /// Routes one after another: a header word (hop count, NICs crossed, class; see
    /// [`header`]), then a word per hop, `2 * link + backward`. Only routes in use are here,
    /// so a PE that talks to a few peers costs little even among thousands.
    records: Vec<u32>,
    /// How many routes were computed one by one; see [`Network::fill`].
    computed: usize,
}

/// Where each destination's route starts among a PE's records, plus one (0 until used): a
/// list of pairs while the PE talks to a few peers, a slot per PE once it talks to more.
/// Why not a slot per PE from the start: every sending PE of a run would hold `n` of them,
/// `n²` words per run, most never used.
#[derive(Debug)]
enum Slots {
    Few(Vec<(u32, u32)>),
    Every(Vec<u32>),
}

/// The most destinations [`Slots::Few`] lists before it becomes [`Slots::Every`].
const FEW_SLOTS: usize = 32;

impl Slots {
    fn get(&self, dst: u32) -> u32 {
        match self {
            Slots::Few(pairs) => pairs
                .iter()
                .find(|&&(d, _)| d == dst)
                .map_or(0, |&(_, slot)| slot),
            Slots::Every(slots) => slots[dst as usize],
        }
    }

    fn set(&mut self, dst: u32, slot: u32, n_pes: usize) {
        match self {
            Slots::Few(pairs) if pairs.len() < FEW_SLOTS => pairs.push((dst, slot)),
            Slots::Few(_) => {
                self.every(n_pes)[dst as usize] = slot;
            }
            Slots::Every(slots) => slots[dst as usize] = slot,
        }
    }

    /// A slot per PE, made from the pairs the first time.
    fn every(&mut self, n_pes: usize) -> &mut Vec<u32> {
        if let Slots::Few(pairs) = self {
            let mut every = vec![0; n_pes];
            for &(dst, slot) in pairs.iter() {
                every[dst as usize] = slot;
            }
            *self = Slots::Every(every);
        }
        match self {
            Slots::Every(slots) => slots,
            Slots::Few(_) => unreachable!("made a slot per PE above"),
        }
    }
}

/// The header word of `path`'s record: hop count (16 bits), NICs crossed (8), class (8).
fn header(path: &Path) -> u32 {
    let class = match path.class {
        PathClass::Local => 0,
        PathClass::LoadStore => 1,
        PathClass::Rdma => 2,
    };
    let hops = path.hops.len() as u32;
    assert!(
        hops < 1 << 16 && path.nics < 1 << 8,
        "a route of {hops} hops through {} NICs is too long to cache",
        path.nics
    );
    hops | path.nics << 16 | class << 24
}

/// Appends `path`'s record to `records` and returns the slot that points to it.
fn append_record(records: &mut Vec<u32>, path: &Path) -> u32 {
    let slot = u32::try_from(records.len() + 1).expect("a PE's routes fit in 2^32 words");
    records.push(header(path));
    records.extend(path.hops.iter().map(hop_word));
    slot
}

/// A hop as records and routes keep it: `2 * link + backward`.
fn hop_word(hop: &Hop) -> u32 {
    2 * hop.link.0 + u32::from(!hop.forward)
}

fn unpack_header(word: u32) -> (usize, u32, PathClass) {
    let class = match word >> 24 {
        0 => PathClass::Local,
        1 => PathClass::LoadStore,
        _ => PathClass::Rdma,
    };
    ((word & 0xffff) as usize, (word >> 16) & 0xff, class)
}

/// One link as the network keeps it: what it is and how busy. Why one struct of one cache
/// line and not an array per field: a transfer reads and writes all of it for every hop, and
/// hops of a big fabric are far apart in memory, so each array was a cache miss per hop.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
struct LinkState {
    latency_ns: u64,
    bytes_per_s: u64,
    /// Per direction (forward, backward): when it is free again, in ns.
    busy_until_ns: [u64; 2],
    /// Per direction: bytes carried, for reports.
    bytes_carried: [u64; 2],
}

#[derive(Debug)]
pub(crate) struct Network {
    sources: Vec<Option<SourceRoutes>>,
    links: Vec<LinkState>,
    local_bytes_per_s: u64,
    /// The start-up of each transfer of data over links (`Timing::transfer_ns`).
    transfer_ns: u64,
    /// Scratch space for filling route records without allocating.
    scratch: Path,
    /// Words in the route records of all sources.
    record_words: usize,
    /// Injected stalls, `(link, interval)`, earliest start first; empty in most runs.
    stalls: Vec<(u32, Interval)>,
    /// When a timeline is drawn: each link's window of the last transfer sent, hop by hop.
    windows: Option<Vec<(u64, u64)>>,
}

/// A PE that used routes to more than this fraction of all PEs gets all its routes at once, in
/// one walk down its tree, which costs about as much as walking up it for a few dozen: it is
/// probably talking to everyone (an all-to-all), while one that talks to a few peers (a ring,
/// a barrier, a recursive doubling) never pays for routes it does not use.
const FULL_FILL_FRACTION: usize = 8;

/// Route records of all sources stop growing at this many words (16 MiB): past it, a route
/// not yet recorded is walked on the tree each time it is used. An all-to-all at 4096 PEs
/// would record 16.7 million routes (470 MB); walking every route instead of reading records
/// left `msg-rate` and `alltoall` at 1024 PEs as fast, within the noise (BENCHMARKS.md).
const ROUTE_RECORD_WORDS: usize = 4 << 20;

/// Hops a [`Route`] carries itself: every route of the built-in topologies fits.
const CARRIED_HOPS: usize = 6;

/// A route as operations carry it: its record's header word, then its hops when there are
/// at most [`CARRIED_HOPS`], else where the record starts among its source's records. An
/// operation's response travels the route again microseconds of simulated time later, when
/// the record is long out of cache; carrying the hops saves it that miss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Route([u32; 1 + CARRIED_HOPS]);

impl Route {
    /// `path` as a route that carries its hops, if it has few enough.
    fn carrying(path: &Path) -> Option<Route> {
        let hops = path.hops.len();
        if hops > CARRIED_HOPS {
            return None;
        }
        let mut route = Route([0; 1 + CARRIED_HOPS]);
        route.0[0] = header(path);
        for (word, hop) in route.0[1..1 + hops].iter_mut().zip(&path.hops) {
            *word = hop_word(hop);
        }
        Some(route)
    }

    pub(crate) fn class(&self) -> PathClass {
        unpack_header(self.0[0]).2
    }

    /// Whether the route carries its hops, so that the network of any world of a run can
    /// send it (a parallel run's partitions and network each have one).
    pub(crate) fn is_portable(&self) -> bool {
        unpack_header(self.0[0]).0 <= CARRIED_HOPS
    }

    /// The route's hops, `2 * link + backward` each, given its source's records.
    fn hops<'a>(&'a self, records: &'a [u32]) -> &'a [u32] {
        let n_hops = unpack_header(self.0[0]).0;
        if n_hops <= CARRIED_HOPS {
            &self.0[1..1 + n_hops]
        } else {
            let start = self.0[1] as usize + 1;
            &records[start..start + n_hops]
        }
    }
}

/// When a transfer occupies its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Transfer {
    pub(crate) begin_ns: u64,
    pub(crate) serialise_ns: u64,
}

/// One traversal of a route: what the route costs beyond the links' occupation, and when
/// it occupies them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sent {
    pub(crate) latency_ns: u64,
    pub(crate) nics: u32,
    pub(crate) class: PathClass,
    pub(crate) transfer: Transfer,
}

/// `bytes` at `bytes_per_s`, in whole nanoseconds rounded up (a transfer of one byte still
/// takes time).
pub(crate) fn serialise_ns(bytes: u64, bytes_per_s: u64) -> u64 {
    if bytes == 0 {
        return 0;
    }
    (bytes as u128 * 1_000_000_000).div_ceil(bytes_per_s as u128) as u64
}

impl Network {
    /// The links of `topology` for `n_pes` PEs, each transfer of data starting up in
    /// `transfer_ns` (`Timing::transfer_ns`).
    pub(crate) fn new(topology: &Topology, transfer_ns: u64, n_pes: u32) -> Network {
        let n_links = topology.n_links();
        Network {
            sources: (0..n_pes).map(|_| None).collect(),
            links: (0..n_links)
                .map(|l| {
                    let link = topology.link(LinkId(l));
                    LinkState {
                        latency_ns: link.latency_ns,
                        bytes_per_s: link.bandwidth_bytes_per_s,
                        ..LinkState::default()
                    }
                })
                .collect(),
            local_bytes_per_s: topology.local_bytes_per_s(),
            transfer_ns,
            scratch: Path {
                hops: Vec::new(),
                latency_ns: 0,
                bandwidth_bytes_per_s: 0,
                class: PathClass::Local,
                nics: 0,
            },
            record_words: 0,
            stalls: Vec::new(),
            windows: None,
        }
    }

    /// Applies injected faults before the run: `scales` change links (several on one link
    /// compound), `stalls` stop them for a while.
    pub(crate) fn inject(&mut self, scales: &[(LinkId, LinkScale)], stalls: &[(LinkId, Interval)]) {
        for &(link, scale) in scales {
            let state = &mut self.links[link.0 as usize];
            (state.latency_ns, state.bytes_per_s) =
                scale.apply((state.latency_ns, state.bytes_per_s));
        }
        self.stalls = stalls
            .iter()
            .map(|&(link, during)| (link.0, during))
            .collect();
        self.stalls
            .sort_unstable_by_key(|&(link, during)| (during, link));
    }

    /// The route from `src` to `dst`, computing the tree of `src` the first time it sends and
    /// the route the first time it is used (see [`Network::fill`]).
    pub(crate) fn route(&mut self, topology: &Topology, src: u32, dst: u32) -> Route {
        let n_pes = self.sources.len();
        let routes = self.sources[src as usize].get_or_insert_with(|| SourceRoutes {
            tree: topology.routes_from(Pe(src)),
            slots: Slots::Few(Vec::new()),
            records: Vec::new(),
            computed: 0,
        });
        let mut slot = routes.slots.get(dst);
        if slot == 0 {
            if self.record_words >= ROUTE_RECORD_WORDS {
                routes.tree.path_into(topology, Pe(dst), &mut self.scratch);
                if let Some(route) = Route::carrying(&self.scratch) {
                    return route;
                }
            }
            let before = routes.records.len();
            Self::fill(topology, routes, &mut self.scratch, dst, n_pes);
            self.record_words += routes.records.len() - before;
            slot = routes.slots.get(dst);
        }
        let start = slot as usize - 1;
        let mut route = Route([0; 1 + CARRIED_HOPS]);
        route.0[0] = routes.records[start];
        let n_hops = unpack_header(route.0[0]).0;
        if n_hops <= CARRIED_HOPS {
            route.0[1..1 + n_hops].copy_from_slice(&routes.records[start + 1..start + 1 + n_hops]);
        } else {
            route.0[1] = start as u32;
        }
        route
    }

    /// Computes the route of `src` to `dst`, or, once `src` has used routes to a good part of
    /// all PEs, every route it has not computed yet.
    fn fill(
        topology: &Topology,
        routes: &mut SourceRoutes,
        scratch: &mut Path,
        dst: u32,
        n_pes: usize,
    ) {
        routes.computed += 1;
        if routes.computed * FULL_FILL_FRACTION > n_pes {
            let SourceRoutes {
                tree,
                slots,
                records,
                ..
            } = routes;
            let slots = slots.every(n_pes);
            // The tree is walked in its own order; the records are then laid out in PE order,
            // the order in which an all-to-all uses them.
            let mut found = Vec::new();
            let mut found_slots = vec![0; n_pes];
            tree.for_each_path(topology, |pe, path| {
                // The topology may have more GPUs than the run has PEs.
                if let Some(0) = slots.get(pe.idx()) {
                    found_slots[pe.idx()] = append_record(&mut found, path);
                }
            });
            for (slot, found_slot) in slots.iter_mut().zip(found_slots) {
                if found_slot != 0 {
                    let start = found_slot as usize - 1;
                    let end = start + 1 + unpack_header(found[start]).0;
                    *slot = u32::try_from(records.len() + 1).expect("routes fit in 2^32 words");
                    records.extend_from_slice(&found[start..end]);
                }
            }
            return;
        }
        routes.tree.path_into(topology, Pe(dst), scratch);
        let slot = append_record(&mut routes.records, scratch);
        routes.slots.set(dst, slot, n_pes);
    }

    fn records(&self, src: u32) -> &[u32] {
        &self.sources[src as usize]
            .as_ref()
            .expect("routes are made before they are used")
            .records
    }

    /// Keeps each link's window of the last transfer sent ([`Network::windows`]), for a
    /// timeline.
    pub(crate) fn record_windows(&mut self) {
        self.windows = Some(Vec::new());
    }

    /// When each link of the last transfer's route held it, in the order the transfer took
    /// them, as `(from, to)` in ns; empty unless [`Network::record_windows`] was called.
    pub(crate) fn windows(&self) -> &[(u64, u64)] {
        self.windows.as_deref().unwrap_or_default()
    }

    /// Sends `bytes` along a route of `src` (from its end back to `src` if `reverse`, over
    /// the same links), ready at `ready_ns`: occupies the links and says when.
    pub(crate) fn send(
        &mut self,
        src: u32,
        route: &Route,
        reverse: bool,
        ready_ns: u64,
        bytes: u64,
    ) -> Sent {
        // A route that carries its hops needs no records: it may come from another world.
        let records = match &self.sources[src as usize] {
            Some(routes) => routes.records.as_slice(),
            None => {
                assert!(route.is_portable(), "routes are made before they are used");
                &[]
            }
        };
        let hops = route.hops(records);
        let (_, nics, class) = unpack_header(route.0[0]);
        if hops.is_empty() {
            // A PE's access to its own memory: no link, no start-up.
            return Sent {
                latency_ns: 0,
                nics,
                class,
                transfer: Transfer {
                    begin_ns: ready_ns,
                    serialise_ns: serialise_ns(bytes, self.local_bytes_per_s),
                },
            };
        }
        // A start-up is paid only by transfers of data: a bare request or acknowledgement has
        // no bytes to start.
        let start_up_ns = if bytes == 0 { 0 } else { self.transfer_ns };
        // Hop by hop: when the head reaches the link, when the link takes it, and when the
        // link has passed its last byte.
        let (mut head_ns, mut latency_ns) = (ready_ns, 0);
        if let Some(windows) = &mut self.windows {
            windows.clear();
        }
        let (mut first_begin_ns, mut last_end_ns, mut before_last_ns) = (None, ready_ns, 0);
        // A transfer coming back (an acknowledgement, a get's data) meets the route's links
        // from its far end.
        let n_hops = hops.len();
        for at in 0..n_hops {
            let hop = hops[if reverse { n_hops - 1 - at } else { at }];
            let d = (hop % 2) as usize ^ usize::from(reverse);
            let link = &self.links[(hop / 2) as usize];
            let (link_latency_ns, free_ns) = (link.latency_ns, link.busy_until_ns[d]);
            let begin_ns = head_ns.max(free_ns);
            // Not before the links behind it have passed the last byte to it.
            let own_ns = start_up_ns + serialise_ns(bytes, link.bytes_per_s);
            let upstream_ns = (last_end_ns + before_last_ns).saturating_sub(begin_ns);
            let mut hold = (begin_ns, own_ns.max(upstream_ns));
            if !self.stalls.is_empty() {
                hold = around_stalls(&self.stalls, &[hop], hold.0, hold.1);
            }
            let link = &mut self.links[(hop / 2) as usize];
            if bytes > 0 {
                link.busy_until_ns[d] = hold.0 + hold.1;
            }
            link.bytes_carried[d] += bytes;
            if let Some(windows) = &mut self.windows {
                windows.push((hold.0, hold.0 + hold.1));
            }
            first_begin_ns.get_or_insert(hold.0);
            (last_end_ns, before_last_ns) = (hold.0 + hold.1, link_latency_ns);
            head_ns = hold.0 + link_latency_ns;
            latency_ns += link_latency_ns;
        }
        let begin_ns = first_begin_ns.expect("a route with hops");
        // Said as one window: the last byte leaves the last link at `begin + serialise +
        // latency - its latency`, so that `begin + serialise + latency` is its arrival.
        let serialise_ns = last_end_ns + before_last_ns - latency_ns - begin_ns;
        Sent {
            latency_ns,
            nics,
            class,
            transfer: Transfer {
                begin_ns,
                serialise_ns,
            },
        }
    }

    /// The hops of a route of `src`, in order.
    pub(crate) fn hops<'a>(&'a self, src: u32, route: &'a Route) -> impl Iterator<Item = Hop> + 'a {
        route.hops(self.records(src)).iter().map(|&hop| Hop {
            link: LinkId(hop / 2),
            forward: hop % 2 == 0,
        })
    }
}

/// When a transfer over `hops` that needs `serialise_ns` of its links from `begin_ns` occupies
/// them, given the stalls (earliest start first): it starts once none of its links is stalled,
/// and pauses through every stall of one of them that comes while it is under way. Returns
/// its start and how long it then holds its links, pauses included.
#[cold]
fn around_stalls(
    stalls: &[(u32, Interval)],
    hops: &[u32],
    begin_ns: u64,
    serialise_ns: u64,
) -> (u64, u64) {
    let mut at_ns = begin_ns;
    let mut left_ns = serialise_ns;
    let mut started_ns = None;
    for &(link, during) in stalls {
        if during.to_ns <= at_ns || !hops.iter().any(|&hop| hop / 2 == link) {
            continue;
        }
        if during.from_ns <= at_ns {
            // Stalled now: wait for the end.
            at_ns = during.to_ns;
            continue;
        }
        started_ns.get_or_insert(at_ns);
        let free_ns = during.from_ns - at_ns;
        if free_ns >= left_ns {
            break;
        }
        left_ns -= free_ns;
        at_ns = during.to_ns;
    }
    let start_ns = started_ns.unwrap_or(at_ns);
    (start_ns, at_ns + left_ns - start_ns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hw::topology::{Link, LinkKind, NodeKind, TopologyBuilder};

    fn pair() -> Topology {
        Topology::pair(Link {
            kind: LinkKind::NvLink,
            latency_ns: 100,
            bandwidth_bytes_per_s: 1_000_000_000,
        })
        .unwrap()
    }

    #[test]
    fn serialisation_rounds_up() {
        assert_eq!(serialise_ns(0, 10), 0);
        assert_eq!(serialise_ns(1, 1_000_000_000), 1);
        assert_eq!(serialise_ns(3, 2_000_000_000), 2);
        assert_eq!(serialise_ns(1 << 30, 1 << 30), 1_000_000_000);
    }

    #[test]
    fn concurrent_transfers_share_a_link_but_not_its_other_direction() {
        let t = pair();
        let mut n = Network::new(&t, 0, 2);
        let route = n.route(&t, 0, 1);
        let first = n.send(0, &route, false, 0, 1000).transfer;
        let second = n.send(0, &route, false, 0, 1000).transfer;
        assert_eq!(
            first,
            Transfer {
                begin_ns: 0,
                serialise_ns: 1000
            }
        );
        assert_eq!(second.begin_ns, 1000, "the second waits for the first");
        let back = n.send(0, &route, true, 0, 1000).transfer;
        assert_eq!(back.begin_ns, 0, "the reverse direction is free");
        assert_eq!(n.links[0].bytes_carried, [2000, 1000]);
    }

    #[test]
    fn each_transfer_of_data_pays_the_start_up_and_nothing_else_does() {
        let mut b = TopologyBuilder::new("pair");
        let g0 = b.node("g0", NodeKind::Gpu { host: 0 });
        let g1 = b.node("g1", NodeKind::Gpu { host: 0 });
        b.link(g0, g1, pcie());
        let t = b.build().unwrap();
        let mut n = Network::new(&t, 50, 2);
        let route = n.route(&t, 0, 1);
        let first = n.send(0, &route, false, 0, 1000).transfer;
        assert_eq!(first.serialise_ns, 50 + 1000);
        let second = n.send(0, &route, false, 0, 1000).transfer;
        assert_eq!(
            second.begin_ns, 1050,
            "the link is held for the start-up too"
        );
        assert_eq!(n.send(0, &route, true, 0, 0).transfer.serialise_ns, 0);
        let local = n.route(&t, 0, 0);
        assert_eq!(n.send(0, &local, false, 0, 8).transfer.serialise_ns, 1);
    }

    /// Three GPUs on one switch: a transfer that waits for a busy link further on leaves the
    /// links behind it to others (a switch buffers it), and one alone through two links of
    /// different speeds goes at the slower one's rate.
    #[test]
    fn a_transfer_waiting_downstream_does_not_hold_the_links_behind_it() {
        let t = star();
        let mut n = Network::new(&t, 0, 3);
        n.record_windows();
        let (to_2_from_1, to_2, to_1) = (n.route(&t, 1, 2), n.route(&t, 0, 2), n.route(&t, 0, 1));
        // GPU 1 fills the link into GPU 2 for 10 µs.
        let busy = n.send(1, &to_2_from_1, false, 0, 10_000).transfer;
        assert_eq!(busy.begin_ns, 0);
        // GPU 0's transfer to GPU 2 waits for that link, but not on its own link out ...
        let waits = n.send(0, &to_2, false, 0, 1000);
        let arrives_ns = waits.transfer.begin_ns + waits.transfer.serialise_ns + waits.latency_ns;
        assert_eq!(
            arrives_ns,
            10_000 + 10 + 1000 + 10,
            "after the link into GPU 2 is free"
        );
        // Each link's window, as a timeline draws them: its own link at once, the next one
        // once GPU 1's transfer has left it.
        assert_eq!(n.windows(), [(0, 1000), (10_010, 11_010)]);
        // ... so its next one, to GPU 1, leaves once its first has crossed GPU 0's link.
        let next = n.send(0, &to_1, false, 0, 1000).transfer;
        assert_eq!(next.begin_ns, 1000, "not held until GPU 2's link was free");
    }

    /// A transfer coming back over a route (a get's data) takes its links from the far end:
    /// it leaves GPU 2 at once and waits only for the busy link into GPU 0.
    #[test]
    fn a_transfer_coming_back_takes_the_links_from_the_far_end() {
        let t = star();
        let mut n = Network::new(&t, 0, 3);
        n.record_windows();
        let (to_0_from_1, to_2, to_1_from_2) =
            (n.route(&t, 1, 0), n.route(&t, 0, 2), n.route(&t, 2, 1));
        // GPU 1 fills the link into GPU 0 until 10 010 ns.
        n.send(1, &to_0_from_1, false, 0, 10_000);
        let back = n.send(0, &to_2, true, 0, 1000);
        assert_eq!(n.windows(), [(0, 1000), (10_010, 11_010)]);
        let arrives_ns = back.transfer.begin_ns + back.transfer.serialise_ns + back.latency_ns;
        assert_eq!(arrives_ns, 10_010 + 1000 + 10);
        // GPU 2's own link out was left at 1000 ns, not held while the data waited.
        let next = n.send(2, &to_1_from_2, false, 0, 1000).transfer;
        assert_eq!(next.begin_ns, 1000);
    }

    /// A route longer than a [`Route`] carries is read from its record.
    #[test]
    fn long_routes_work_too() {
        let mut b = TopologyBuilder::new("chain");
        let g0 = b.node("g0", NodeKind::Gpu { host: 0 });
        let g1 = b.node("g1", NodeKind::Gpu { host: 1 });
        let mut prev = g0;
        for i in 0..CARRIED_HOPS + 2 {
            let s = b.node(format!("s{i}"), NodeKind::PcieSwitch { host: 0 });
            b.link(prev, s, pcie());
            prev = s;
        }
        b.link(prev, g1, pcie());
        let t = b.build().unwrap();
        let mut n = Network::new(&t, 0, 2);
        for (src, dst) in [(0, 1), (1, 0)] {
            let route = n.route(&t, src, dst);
            let path = t.routes_from(Pe(src)).path_to(&t, Pe(dst));
            assert_eq!(path.hops.len(), CARRIED_HOPS + 3);
            assert_eq!(n.hops(src, &route).collect::<Vec<_>>(), path.hops);
            assert_eq!(n.send(src, &route, false, 0, 0).latency_ns, path.latency_ns);
        }
    }

    /// Three GPUs on one PCIe switch.
    fn star() -> Topology {
        let mut b = TopologyBuilder::new("star");
        let gpus: Vec<_> = (0..3)
            .map(|i| b.node(format!("g{i}"), NodeKind::Gpu { host: 0 }))
            .collect();
        let switch = b.node("s", NodeKind::PcieSwitch { host: 0 });
        for &g in &gpus {
            b.link(g, switch, pcie());
        }
        b.build().unwrap()
    }

    fn pcie() -> Link {
        Link {
            kind: LinkKind::Pcie,
            latency_ns: 10,
            bandwidth_bytes_per_s: 1_000_000_000,
        }
    }

    /// Routes computed one by one, then all at once, are the topology's.
    #[test]
    fn routes_computed_one_by_one_then_at_once_match_the_topology() {
        let t = crate::topology::presets::preset("ib-32")
            .expect("a preset")
            .topology;
        let mut n = Network::new(&t, 0, t.n_gpus());
        let routes = t.routes_from(Pe(3));
        for (i, dst) in (0..t.n_gpus()).map(|i| (i * 37) % t.n_gpus()).enumerate() {
            let route = n.route(&t, 3, dst);
            let path = routes.path_to(&t, Pe(dst));
            assert_eq!(
                n.hops(3, &route).collect::<Vec<_>>(),
                path.hops,
                "route {i}"
            );
            assert_eq!(route.class(), path.class);
        }
        let computed = n.sources[3].as_ref().expect("routed").computed;
        assert_eq!(
            computed * FULL_FILL_FRACTION,
            256 + FULL_FILL_FRACTION,
            "a 32nd of the routes one by one, then the rest at once"
        );
    }

    /// Cached routes cost what the topology's own paths say, over the same hops.
    #[test]
    fn cached_routes_match_the_topology() {
        let t = crate::topology::presets::preset("ib-2")
            .expect("a preset")
            .topology;
        let mut n = Network::new(&t, 0, t.n_gpus());
        for src in 0..t.n_gpus() {
            let routes = t.routes_from(Pe(src));
            for dst in 0..t.n_gpus() {
                let path = routes.path_to(&t, Pe(dst));
                let route = n.route(&t, src, dst);
                assert_eq!(n.route(&t, src, dst), route, "a route is computed once");
                let sent = n.send(src, &route, false, 0, 0);
                assert_eq!(
                    (sent.latency_ns, sent.nics, sent.class),
                    (path.latency_ns, path.nics, path.class)
                );
                assert_eq!(n.hops(src, &route).collect::<Vec<_>>(), path.hops);
                assert_eq!(route.class(), path.class);
                // Alone on the network, a transfer takes its bytes at the bottleneck's rate.
                let mut alone = Network::new(&t, 0, t.n_gpus());
                let route = alone.route(&t, src, dst);
                let big = alone
                    .send(src, &route, true, 0, 1 << 30)
                    .transfer
                    .serialise_ns;
                assert_eq!(big, serialise_ns(1 << 30, path.bandwidth_bytes_per_s));
            }
        }
    }
}
