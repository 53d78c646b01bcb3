//! The InfiniBand visibility rule (docs/ordering.md R8) under the race detector: a write that
//! crossed a NIC is visible to others than its target only after the target's own
//! consistency step. The same program is clean with NVLink only and racy on a machine with
//! InfiniBand between hosts, until the target synchronises itself.

use hw::topology::{ClusterLinks, Link, LinkKind, NV18};
use hw::{Semantics, Topology};
use rshmem::Shmem;
use rshmem::check::{Race, RaceCause};
use sim::Sim;

use super::check::races_on;
use crate::common::sim_builder;

const SEEDS: std::ops::Range<u64> = 0..3;

/// 8 GPUs, 4 per host: NVLink within a host, InfiniBand between the two.
fn two_hosts() -> Topology {
    let link = |kind| Link {
        kind,
        latency_ns: 2_000,
        bandwidth_bytes_per_s: 25_000_000_000,
    };
    let links = ClusterLinks {
        nvlink: NV18,
        pcie: link(LinkKind::Pcie),
        ib: link(LinkKind::Ib),
    };
    Topology::hosts_with_nics("two-hosts", &[0, 0, 0, 0, 1, 1, 1, 1], links)
        .expect("a valid machine")
}

/// Who does what: the writer puts to the owner's word, the reader (an NVLink peer of the
/// owner) gets it after a barrier.
#[derive(Clone, Copy)]
struct Roles {
    writer: u32,
    owner: u32,
    reader: u32,
}

/// The writer puts and quiets; every PE meets in `barrier_all`; with `owner_syncs`, the
/// owner quiets (its own consistency step) and every PE meets again; the reader gets the
/// word from the owner.
fn third_party_get<B: hw::Backend>(
    sh: &Shmem<B>,
    roles: Roles,
    owner_syncs: bool,
) -> Result<(), rshmem::ShmemError> {
    let word = sh.calloc::<u64>(1)?;
    let me = sh.my_pe();
    if me == roles.writer {
        sh.put(word, &[42], roles.owner)?;
        sh.quiet()?;
    }
    sh.barrier_all()?;
    if owner_syncs {
        if me == roles.owner {
            sh.quiet()?;
        }
        sh.barrier_all()?;
    }
    if me == roles.reader {
        let value = sh.g(word, roles.owner)?;
        // Without the owner's step the simulator may show the stale word, as hardware may.
        if owner_syncs {
            assert_eq!(value, 42, "PE {me} read a stale word");
        }
    }
    Ok(())
}

fn r8_races(races: &[Race]) -> Vec<&Race> {
    races
        .iter()
        .filter(|r| matches!(r.cause, RaceCause::InfinibandVisibility { .. }))
        .collect()
}

const ROLES: Roles = Roles {
    writer: 0,
    owner: 4,
    reader: 5,
};

#[test]
fn a_third_pe_reading_an_infiniband_write_after_a_barrier_races_only_with_infiniband() {
    for seed in SEEDS {
        println!("seed {seed}");
        let nvlink = sim_builder("hgx8", 8, seed).semantics(Semantics::Nvshmem);
        let races = races_on(nvlink, |sh| third_party_get(sh, ROLES, false));
        assert!(races.is_empty(), "hgx8: {races:#?}");
        let mixed = Sim::builder(two_hosts())
            .pes(8)
            .seed(seed)
            .semantics(Semantics::Nvshmem);
        let races = races_on(mixed, |sh| third_party_get(sh, ROLES, false));
        assert_eq!(races.len(), 1, "two hosts: {races:#?}");
        let race = &races[0];
        assert_eq!(race.cause, RaceCause::InfinibandVisibility { target: 4 });
        assert_eq!((race.first.pe, race.second.pe), (0, 5));
        let text = race.to_string();
        assert!(text.contains("(R8)") && text.contains("PE 4"), "{text}");
    }
}

#[test]
fn the_owners_own_synchronisation_makes_the_write_visible_to_its_peers() {
    for seed in SEEDS {
        println!("seed {seed}");
        let mixed = Sim::builder(two_hosts())
            .pes(8)
            .seed(seed)
            .semantics(Semantics::Nvshmem);
        let races = races_on(mixed, |sh| third_party_get(sh, ROLES, true));
        assert!(races.is_empty(), "{races:#?}");
    }
}

#[test]
fn ib_2_shows_the_same_race_between_its_hosts() {
    let roles = Roles {
        writer: 0,
        owner: 8,
        reader: 9,
    };
    let builder = || sim_builder("ib-2", 16, 0).semantics(Semantics::Nvshmem);
    let races = races_on(builder(), |sh| third_party_get(sh, roles, false));
    assert_eq!(r8_races(&races).len(), 1, "{races:#?}");
    assert_eq!(races.len(), 1, "{races:#?}");
    let races = races_on(builder(), |sh| third_party_get(sh, roles, true));
    assert!(races.is_empty(), "{races:#?}");
    // Under OpenSHMEM 1.5 a completed write is visible to everyone.
    let openshmem = sim_builder("ib-2", 16, 0).semantics(Semantics::OpenShmem15);
    let races = races_on(openshmem, |sh| third_party_get(sh, roles, false));
    assert!(races.is_empty(), "{races:#?}");
}
