//! Determinism: a seed reproduces a run bit for bit, and different seeds explore different
//! orders of a racy program.

use std::collections::BTreeSet;

use conformance::{TOPOLOGIES, bodies, run_on_sim};
use rshmem::Config;
use sim::Sim;

#[test]
fn the_same_seed_gives_the_same_trace_on_every_topology() {
    for topology in TOPOLOGIES {
        for seed in [0, 7, 123_456_789] {
            let a = run_on_sim(topology, seed, bodies::fenced_message_passing).unwrap();
            let b = run_on_sim(topology, seed, bodies::fenced_message_passing).unwrap();
            assert_eq!(a.trace_hash, b.trace_hash, "{topology} seed {seed}");
            assert_eq!(a.sim_time_ns, b.sim_time_ns, "{topology} seed {seed}");
            assert_eq!(a.events, b.events, "{topology} seed {seed}");
        }
    }
}

/// The order in which 8 PEs win a race to one atomic counter on PE 0.
fn race_order(seed: u64) -> (Vec<u64>, u64) {
    let topology = sim::topology::load("hgx8").unwrap();
    let sim = Sim::builder(topology).seed(seed).build().unwrap();
    let config = Config::default().device_heap_size(1 << 20);
    let output = rshmem::run(sim, config, |sh| {
        let counter = sh.calloc::<u64>(1)?;
        let ticket = sh.atomic_fetch_add(counter, 1, 0)?;
        sh.barrier_all()?;
        sh.free(counter)?;
        Ok::<u64, rshmem::ShmemError>(ticket)
    })
    .unwrap();
    let (tickets, report) = output.all_ok().unwrap();
    (
        tickets.into_iter().map(|t| t.unwrap()).collect(),
        report.trace_hash,
    )
}

#[test]
fn different_seeds_order_a_race_differently_and_each_seed_replays() {
    let orders: BTreeSet<Vec<u64>> = (0..16).map(|seed| race_order(seed).0).collect();
    assert!(
        orders.len() > 1,
        "16 seeds all produced the order {orders:?}"
    );
    for seed in [3, 11] {
        assert_eq!(
            race_order(seed),
            race_order(seed),
            "seed {seed} did not replay"
        );
    }
}
