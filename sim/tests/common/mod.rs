//! Fixtures the simulator's integration tests share: the two smallest machines, a segment on
//! every PE, ranges of it, and a small program that uses every operation.

use hw::topology::{Link, LinkKind};
use hw::{
    AmoKind, AmoOp, AmoWidth, Cmp, Copier, Device, Instant, LocalRange, MemKind, Pe, Queue,
    RemoteRange, SegmentKey, SignalOp, Topology, WaitSpec,
};
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
    import_all(dev, MemKind::Device, &key);
}

/// Trades `key`, this PE's segment of `kind`, with every PE and imports every PE's.
pub fn import_all(dev: &SimDevice, kind: MemKind, key: &SegmentKey) {
    let keys = dev.exchange(&key.0, FAR).unwrap();
    for (peer, theirs) in (0..).zip(keys.iter()) {
        dev.import_segment(Pe(peer), kind, &SegmentKey(theirs.clone()))
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

/// Every PE sends to the next one: puts, a fence, a put-with-signal, an atomic, a get; the
/// next PE waits for the signal and reads.
pub fn ring(dev: SimDevice) -> u64 {
    setup(&dev);
    let q = dev.create_queue().unwrap();
    let me = dev.pe().0;
    let next = (me + 1) % dev.n_pes();
    dev.write_local(local(64, 8), &7u64.to_le_bytes());
    q.put(remote(next, 0, 8), &1u64.to_le_bytes(), Copier::Device)
        .unwrap();
    q.put(remote(next, 8, 8), &2u64.to_le_bytes(), Copier::Device)
        .unwrap();
    q.fence().unwrap();
    q.put_signal(
        remote(next, 16, 8),
        &3u64.to_le_bytes(),
        remote(next, 24, 8),
        SignalOp::Set,
        1,
        Copier::Device,
    )
    .unwrap();
    let add = AmoOp {
        kind: AmoKind::Add,
        operand: 1,
        width: AmoWidth::W64,
    };
    let t = q.amo(remote(next, 32, 8), add, true).unwrap();
    q.wait_ticket(t, FAR).unwrap();
    let old = u64::from_le_bytes(q.take_fetched(t).try_into().unwrap());
    let spec = WaitSpec {
        word: local(24, 8),
        width: AmoWidth::W64,
        signed: false,
        cmp: Cmp::Ge,
        value: 1,
        purpose: "golden",
    };
    dev.wait_until(spec, FAR).unwrap();
    let mut out = [0; 8];
    dev.read_local(local(0, 8), &mut out);
    let g = q.get(remote(next, 64, 8)).unwrap();
    q.quiet(FAR).unwrap();
    let got = u64::from_le_bytes(q.take_fetched(g).try_into().unwrap());
    old + u64::from_le_bytes(out) + got
}
