//! Addressable memory and static data in place: a PE's program reads its own segments through
//! the address `load_store_addr` gives, and sees there exactly what the simulated operations
//! made visible, no earlier; the mode changes no event of a seeded run. (That a delivered but
//! pending InfiniBand write is not behind the pointer is checked in `world/tests.rs`, which
//! can see the pending list.)

#[allow(dead_code)]
mod common;
use common::{FAR, import_all, local, nvlink_pair, remote, ring, setup};

use hw::{
    AmoWidth, Cmp, Copier, Device, LaunchError, Launcher, LocalRange, MemKind, Pe, Queue,
    RemoteRange, Topology, WaitSpec,
};
use sim::{Sim, SimDevice, StaticRegion};

/// The data word PE 0 puts to PE 1.
const DATA: u64 = 0x5eed_cafe;

/// Reads the word at `addr` as a program does, with a plain load.
fn load(addr: u64) -> u64 {
    // SAFETY: the tests pass addresses `load_store_addr` gave for their own 8-byte words,
    // which stay valid until the run ends.
    unsafe { std::ptr::read_volatile(addr as *const u64) }
}

/// The address of this PE's own word at `offset` of `kind`.
fn own_addr(dev: &SimDevice, kind: MemKind, offset: u64) -> u64 {
    let range = RemoteRange {
        pe: dev.pe(),
        kind,
        offset,
        len: 8,
    };
    dev.load_store_addr(range)
        .expect("an addressable own segment has an address")
}

fn until_at_least(kind: MemKind, offset: u64, value: u64) -> WaitSpec {
    WaitSpec {
        word: LocalRange {
            kind,
            offset,
            len: 8,
        },
        width: AmoWidth::W64,
        signed: false,
        cmp: Cmp::Ge,
        value,
        purpose: "addressable test",
    }
}

fn addressable(topology: Topology, seed: u64) -> Sim {
    Sim::builder(topology)
        .seed(seed)
        .addressable_memory(true)
        .build()
        .unwrap()
}

#[test]
fn a_put_is_read_through_the_pointer_once_the_wait_returns() {
    for seed in 0..8 {
        let (results, report) = addressable(nvlink_pair(), seed)
            .launch(|dev| {
                setup(&dev);
                let q = dev.create_queue().unwrap();
                if dev.pe().0 == 0 {
                    q.put(remote(1, 8, 8), &DATA.to_le_bytes(), Copier::Device)
                        .unwrap();
                    q.fence().unwrap();
                    q.put(remote(1, 0, 8), &1u64.to_le_bytes(), Copier::Device)
                        .unwrap();
                    q.quiet(FAR).unwrap();
                    return 0;
                }
                assert_eq!(
                    dev.load_store_addr(remote(0, 0, 8)),
                    None,
                    "a peer's memory changes only through simulated operations"
                );
                let data_at = own_addr(&dev, MemKind::Device, 8);
                dev.wait_until(until_at_least(MemKind::Device, 0, 1), FAR)
                    .unwrap();
                load(data_at)
            })
            .unwrap();
        assert!(
            report.failure.is_none(),
            "seed {seed}: {:?}",
            report.failure
        );
        assert_eq!(results[1].as_ref().unwrap(), &DATA, "seed {seed}");
    }
}

fn trace_hash(topology: &str, pes: u32, seed: u64, addressable: bool) -> (u64, Vec<u64>) {
    let topology = sim::topology::load(topology).unwrap();
    let sim = Sim::builder(topology)
        .pes(pes)
        .seed(seed)
        .addressable_memory(addressable)
        .build()
        .unwrap();
    let (results, report) = sim.launch(ring).unwrap();
    assert!(report.failure.is_none(), "{:?}", report.failure);
    let results = results.into_iter().map(Result::unwrap).collect();
    (report.trace_hash, results)
}

#[test]
fn addressable_memory_changes_no_event_of_a_seeded_run() {
    for (topology, pes) in [("hgx8", 4), ("ib-2", 16)] {
        for seed in [0, 1, 99] {
            assert_eq!(
                trace_hash(topology, pes, seed, false),
                trace_hash(topology, pes, seed, true),
                "{topology}, seed {seed}"
            );
        }
    }
}

/// PE `i`'s static data: eight words of its own.
fn static_words(n_pes: usize) -> Vec<[u64; 8]> {
    vec![[0; 8]; n_pes]
}

fn regions(words: &mut [[u64; 8]]) -> Vec<StaticRegion> {
    words
        .iter_mut()
        .map(|w| StaticRegion {
            base: w.as_mut_ptr() as usize,
            len_bytes: 64,
        })
        .collect()
}

fn static_range(pe: u32, offset: u64) -> RemoteRange {
    RemoteRange {
        pe: Pe(pe),
        kind: MemKind::Static,
        offset,
        len: 8,
    }
}

#[test]
fn a_put_into_a_peers_static_segment_lands_in_its_region() {
    let mut words = static_words(2);
    let regions = regions(&mut words);
    let bases: Vec<u64> = regions.iter().map(|r| r.base as u64).collect();
    // SAFETY: `words` outlives the run and nothing else touches it meanwhile.
    let sim = unsafe { Sim::builder(nvlink_pair()).static_data(regions) }
        .build()
        .unwrap();
    let (results, report) = sim
        .launch(|dev| {
            let (key, len_bytes) = dev.share_static_data().unwrap().expect("static data");
            assert_eq!(len_bytes, 64);
            assert_eq!(dev.share_static_data().unwrap(), Some((key.clone(), 64)));
            import_all(&dev, MemKind::Static, &key);
            let me = dev.pe().0;
            assert_eq!(own_addr(&dev, MemKind::Static, 0), bases[me as usize]);
            let q = dev.create_queue().unwrap();
            if me == 0 {
                assert_eq!(dev.load_store_addr(static_range(1, 0)), None);
                q.put(static_range(1, 16), &DATA.to_le_bytes(), Copier::Device)
                    .unwrap();
                q.fence().unwrap();
                q.put(static_range(1, 0), &1u64.to_le_bytes(), Copier::Device)
                    .unwrap();
                q.quiet(FAR).unwrap();
                return 0;
            }
            dev.wait_until(until_at_least(MemKind::Static, 0, 1), FAR)
                .unwrap();
            load(own_addr(&dev, MemKind::Static, 16))
        })
        .unwrap();
    assert!(report.failure.is_none(), "{:?}", report.failure);
    assert_eq!(results[1].as_ref().unwrap(), &DATA);
    assert_eq!(words[1], [1, 0, DATA, 0, 0, 0, 0, 0]);
    assert_eq!(words[0], [0; 8], "PE 0's data was not written");
}

#[test]
fn static_regions_of_different_lengths_are_an_error_naming_the_pes() {
    let mut words = static_words(2);
    let mut regions = regions(&mut words);
    regions[1].len_bytes = 32;
    // SAFETY: the run is never launched.
    let built = unsafe { Sim::builder(nvlink_pair()).static_data(regions) }.build();
    let Err(LaunchError::Init(message)) = built else {
        panic!("mismatched lengths must not build");
    };
    assert!(
        message.contains("PE 0's region has 64 bytes but PE 1 has 32"),
        "{message}"
    );
}

#[test]
fn without_static_data_the_simulator_shares_none() {
    let (results, _) = Sim::builder(nvlink_pair())
        .addressable_memory(true)
        .build()
        .unwrap()
        .launch(|dev| dev.share_static_data().unwrap().is_none())
        .unwrap();
    assert!(results.into_iter().all(|r| r.unwrap()));
}

/// Uses 6 MiB of stack, deeper than the default stack: a C program's locals. A function of its
/// own, so that only the PE that calls it touches that much stack.
#[inline(never)]
fn deep_locals() -> u8 {
    let deep = std::hint::black_box([1u8; 6 << 20]);
    deep[deep.len() - 1]
}

/// A thousand PEs, each with a C program's 8 MiB stack and a 1 GiB segment, cost address
/// space and the pages they touch.
#[test]
fn a_thousand_pes_with_big_stacks_and_segments_cost_what_they_touch() {
    const GIB: u64 = 1 << 30;
    let sim = Sim::builder(sim::topology::load("ib-128").unwrap())
        .addressable_memory(true)
        .stack_bytes(8 << 20)
        .build()
        .unwrap();
    let (results, report) = sim
        .launch(|dev| {
            let key = dev.create_segment(MemKind::Device, GIB).unwrap();
            dev.import_segment(dev.pe(), MemKind::Device, &key).unwrap();
            let offset = GIB / 2;
            dev.write_local(local(offset, 8), &u64::from(dev.pe().0).to_le_bytes());
            if dev.pe().0 == 0 {
                assert_eq!(deep_locals(), 1);
            }
            load(own_addr(&dev, MemKind::Device, offset))
        })
        .unwrap();
    assert!(report.failure.is_none(), "{:?}", report.failure);
    assert_eq!(results.len(), 1024);
    for (pe, r) in results.into_iter().enumerate() {
        assert_eq!(r.unwrap(), pe as u64);
    }
    assert_eq!(report.memory_bytes_peak, 1024 * 4096, "a page per PE");
}
