//! Fixtures the simulator's integration tests share: the two smallest machines, a segment on
//! every PE, and ranges of it.

use hw::topology::{Link, LinkKind};
use hw::{Device, Instant, LocalRange, MemKind, Pe, RemoteRange, SegmentKey, Topology};
use sim::SimDevice;

/// A deadline no test reaches.
pub const FAR: Instant = Instant(u64::MAX);

/// Two GPUs joined by one NVLink.
pub fn nvlink_pair() -> Topology {
    Topology::pair(Link {
        kind: LinkKind::NvLink,
        latency_ns: 500,
        bandwidth_bytes_per_s: 100_000_000_000,
    })
    .unwrap()
}

/// Two hosts with one GPU and one NIC each, behind one InfiniBand switch.
pub fn ib_pair() -> Topology {
    let pcie = Link {
        kind: LinkKind::Pcie,
        latency_ns: 100,
        bandwidth_bytes_per_s: 64_000_000_000,
    };
    let ib = Link {
        kind: LinkKind::Ib,
        latency_ns: 600,
        bandwidth_bytes_per_s: 48_000_000_000,
    };
    Topology::ib_pair(pcie, ib).unwrap()
}

/// Creates a 4 KiB device segment on every PE and imports every peer's.
pub fn setup(dev: &SimDevice) {
    let key = dev.create_segment(MemKind::Device, 4096).unwrap();
    for (peer, k) in dev.exchange(&key.0, FAR).unwrap().into_iter().enumerate() {
        dev.import_segment(Pe(peer as u32), MemKind::Device, &SegmentKey(k))
            .unwrap();
    }
}

/// `len` bytes at `offset` of `pe`'s device segment.
pub fn remote(pe: u32, offset: u64, len: u64) -> RemoteRange {
    RemoteRange {
        pe: Pe(pe),
        kind: MemKind::Device,
        offset,
        len,
    }
}

/// `len` bytes at `offset` of this PE's own device segment.
pub fn local(offset: u64, len: u64) -> LocalRange {
    LocalRange {
        kind: MemKind::Device,
        offset,
        len,
    }
}
