//! Link timing: latency, bandwidth, and links shared by concurrent transfers.
//!
//! Each direction of each link is a FIFO server: a transfer occupies every link of its path
//! for `bytes / bottleneck bandwidth` (cut-through), starting when the last of those links is
//! free. Concurrent transfers over a link therefore share its bandwidth, and a lone transfer
//! takes `latency + bytes / bandwidth`.

use hw::topology::{Hop, Routes};
use hw::{Path, Pe, Topology};

#[derive(Debug)]
pub(crate) struct Network {
    routes: Vec<Option<Routes>>,
    /// Per link, per direction (forward, backward): when it is free again, in ns.
    busy_until_ns: Vec<[u64; 2]>,
    /// Per link, per direction: bytes carried, for reports.
    pub(crate) bytes_carried: Vec<[u64; 2]>,
}

/// When a transfer occupies its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Transfer {
    pub(crate) begin_ns: u64,
    pub(crate) serialise_ns: u64,
}

/// `bytes` at `bytes_per_s`, in whole nanoseconds rounded up (a transfer of one byte still
/// takes time).
pub(crate) fn serialise_ns(bytes: u64, bytes_per_s: u64) -> u64 {
    if bytes == 0 {
        return 0;
    }
    (bytes as u128 * 1_000_000_000).div_ceil(bytes_per_s as u128) as u64
}

fn dir(hop: &Hop) -> usize {
    usize::from(!hop.forward)
}

impl Network {
    pub(crate) fn new(topology: &Topology, n_pes: u32) -> Network {
        Network {
            routes: (0..n_pes).map(|_| None).collect(),
            busy_until_ns: vec![[0; 2]; topology.n_links() as usize],
            bytes_carried: vec![[0; 2]; topology.n_links() as usize],
        }
    }

    /// The route from `src` to `dst`; routes from a PE are computed the first time it sends.
    pub(crate) fn path(&mut self, topology: &Topology, src: u32, dst: u32) -> Path {
        let routes = self.routes[src as usize].get_or_insert_with(|| topology.routes_from(Pe(src)));
        routes.path_to(topology, Pe(dst))
    }

    /// Occupies `hops` (crossed in reverse if `reverse`) with `bytes` from `ready_ns` on.
    pub(crate) fn reserve(
        &mut self,
        hops: &[Hop],
        reverse: bool,
        ready_ns: u64,
        bytes: u64,
        bytes_per_s: u64,
    ) -> Transfer {
        let serialise_ns = serialise_ns(bytes, bytes_per_s);
        let slot = |hop: &Hop| (hop.link.0 as usize, dir(hop) ^ usize::from(reverse));
        let begin_ns = hops
            .iter()
            .map(|h| {
                let (link, d) = slot(h);
                self.busy_until_ns[link][d]
            })
            .fold(ready_ns, u64::max);
        for h in hops {
            let (link, d) = slot(h);
            self.busy_until_ns[link][d] = begin_ns + serialise_ns;
            self.bytes_carried[link][d] += bytes;
        }
        Transfer {
            begin_ns,
            serialise_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hw::topology::{Link, LinkKind, NodeKind, TopologyBuilder};

    fn pair() -> Topology {
        let mut b = TopologyBuilder::new("pair");
        let g0 = b.node("g0", NodeKind::Gpu { host: 0 });
        let g1 = b.node("g1", NodeKind::Gpu { host: 0 });
        b.link(
            g0,
            g1,
            Link {
                kind: LinkKind::NvLink,
                latency_ns: 100,
                bandwidth_bytes_per_s: 1_000_000_000,
            },
        );
        b.build().unwrap()
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
        let mut n = Network::new(&t, 2);
        let path = n.path(&t, 0, 1);
        let bw = path.bandwidth_bytes_per_s;
        let first = n.reserve(&path.hops, false, 0, 1000, bw);
        let second = n.reserve(&path.hops, false, 0, 1000, bw);
        assert_eq!(
            first,
            Transfer {
                begin_ns: 0,
                serialise_ns: 1000
            }
        );
        assert_eq!(second.begin_ns, 1000, "the second waits for the first");
        let back = n.reserve(&path.hops, true, 0, 1000, bw);
        assert_eq!(back.begin_ns, 0, "the reverse direction is free");
        assert_eq!(n.bytes_carried[0], [2000, 1000]);
    }
}
