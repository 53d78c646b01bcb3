//! The erased backend carries the host backend's operations unchanged.

use crate::any::AnyDevice;
use crate::backend::{Device, Queue};
use crate::host::{Host, HostDevice};
use crate::topology::Topology;
use crate::types::{Copier, Instant, LocalRange, MemKind, Pe, RemoteRange};

const NEVER: Instant = Instant(u64::MAX);

#[test]
fn a_put_and_a_get_through_erased_devices_reach_the_peer_and_the_device_downcasts() {
    let world = Host::builder(Topology::single_host(2).unwrap())
        .pes(2)
        .build()
        .unwrap()
        .into_world();
    let devices: Vec<AnyDevice> = (0..2)
        .map(|pe| AnyDevice::new(world.device(Pe(pe))))
        .collect();
    let keys: Vec<_> = devices
        .iter()
        .map(|d| d.create_segment(MemKind::Host, 64).unwrap())
        .collect();
    for device in &devices {
        for (peer, key) in keys.iter().enumerate() {
            device
                .import_segment(Pe(peer as u32), MemKind::Host, key)
                .unwrap();
        }
    }
    assert_eq!(devices[1].pe(), Pe(1));
    assert!(devices[0].downcast_ref::<HostDevice>().is_some());

    let queue = devices[0].create_queue().unwrap();
    let dst = RemoteRange {
        pe: Pe(1),
        kind: MemKind::Host,
        offset: 8,
        len: 4,
    };
    let ticket = queue.put(dst, &[1, 2, 3, 4], Copier::Device).unwrap();
    queue.wait_ticket(ticket, NEVER).unwrap();
    queue.quiet(NEVER).unwrap();
    let mut seen = [0; 4];
    let local = LocalRange {
        kind: MemKind::Host,
        offset: 8,
        len: 4,
    };
    devices[1].read_local(local, &mut seen);
    assert_eq!(seen, [1, 2, 3, 4]);

    let ticket = queue.get(dst).unwrap();
    queue.wait_ticket(ticket, NEVER).unwrap();
    assert_eq!(queue.take_fetched(ticket), vec![1, 2, 3, 4]);
}
