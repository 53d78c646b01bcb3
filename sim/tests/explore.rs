//! Explorations: every execution of a litmus test, replayable, and the test-only faults that
//! the litmus cross-check must notice, each shown to change the outcome set.

#[allow(dead_code)]
mod common;
use common::{FAR, ib_pair, local, nvlink_pair, remote, setup};

use std::collections::BTreeMap;
use std::time::Instant as WallClock;

use hw::{
    AmoWidth, Cmp, Copier, Device, Launcher, LocalRange, Queue, RemoteRange, SignalOp, WaitSpec,
};
use sim::explore::dfs;
use sim::{Choices, Explore, Fault, Machine, Sim, SimDevice};

/// Enough for every test here; a test that hits it has more executions than it should.
const LIMIT: u64 = 100_000;

/// Word `i` (8 bytes) of `pe`'s device segment.
fn word(pe: u32, i: u64) -> RemoteRange {
    remote(pe, 8 * i, 8)
}

/// Word `i` of this PE's own device segment.
fn my_word(i: u64) -> LocalRange {
    local(8 * i, 8)
}

fn load(dev: &SimDevice, i: u64) -> u64 {
    let mut out = [0; 8];
    dev.read_local(my_word(i), &mut out);
    u64::from_le_bytes(out)
}

fn wait_for(dev: &SimDevice, i: u64) {
    let spec = WaitSpec {
        word: my_word(i),
        width: AmoWidth::W64,
        signed: false,
        cmp: Cmp::Ge,
        value: 1,
        purpose: "litmus flag",
    };
    dev.wait_until(spec, FAR).unwrap();
}

fn put(q: &impl Queue, dst: RemoteRange, value: u64) {
    q.put(dst, &value.to_le_bytes(), Copier::Device).unwrap();
}

/// Every execution of `program` on `pes` PEs of `machine` with `faults`: each PE's result,
/// with the choice string and trace hash of each execution.
fn explore<R: Clone + Ord + Send>(
    machine: &Machine,
    pes: u32,
    faults: &[Fault],
    program: impl Fn(SimDevice) -> R + Sync,
) -> Vec<(Choices, (Vec<R>, u64))> {
    // Computed once rather than in every run, where it costs a route search per PE.
    let round_ns = Explore::default_round_ns(&machine.topology, &machine.timing, pes);
    let mut executions = Vec::new();
    let summary = dfs(LIMIT, |prefix| {
        let explore = Explore {
            round_ns: Some(round_ns),
            ..Explore::new(prefix.clone())
        };
        let mut builder = Sim::builder(machine.clone())
            .pes(pes)
            .stack_bytes(64 * 1024)
            .explore(explore);
        for &f in faults {
            builder = builder.fault(f);
        }
        let (results, report) = builder.build().unwrap().launch(&program).unwrap();
        assert!(report.failure.is_none(), "{prefix}: {:?}", report.failure);
        let results: Vec<R> = results.into_iter().map(|r| r.unwrap()).collect();
        let trace = report.choice_trace.unwrap();
        executions.push((Choices::from_trace(&trace), (results, report.trace_hash)));
        trace
    });
    assert!(summary.complete, "more than {LIMIT} executions");
    assert_eq!(summary.executions, executions.len() as u64);
    executions
}

/// The outcomes (the PEs' results) of every execution, each with one choice string.
fn outcomes<R: Clone + Ord + Send>(
    machine: &Machine,
    pes: u32,
    faults: &[Fault],
    program: impl Fn(SimDevice) -> R + Sync,
) -> BTreeMap<Vec<R>, Choices> {
    let mut found = BTreeMap::new();
    for (choices, (results, _)) in explore(machine, pes, faults, program) {
        found.entry(results).or_insert(choices);
    }
    found
}

fn keys<R: Clone>(map: &BTreeMap<Vec<R>, Choices>) -> Vec<Vec<R>> {
    map.keys().cloned().collect()
}

/// Message passing: PE 0 puts data then a flag (fenced or not); PE 1 waits for the flag and
/// loads the data.
fn message_passing(fenced: bool) -> impl Fn(SimDevice) -> u64 + Sync {
    move |dev| {
        setup(&dev);
        let q = dev.create_queue().unwrap();
        if dev.pe().0 == 0 {
            put(&q, word(1, 0), 1);
            if fenced {
                q.fence().unwrap();
            }
            put(&q, word(1, 1), 1);
            q.quiet(FAR).unwrap();
            0
        } else {
            wait_for(&dev, 1);
            load(&dev, 0)
        }
    }
}

#[test]
fn a_fence_orders_message_passing_and_without_it_the_data_may_be_late() {
    let fenced = outcomes(&nvlink_pair().into(), 2, &[], message_passing(true));
    assert_eq!(keys(&fenced), [vec![0, 1]]);
    let unfenced = outcomes(&nvlink_pair().into(), 2, &[], message_passing(false));
    assert_eq!(keys(&unfenced), [vec![0, 0], vec![0, 1]]);
}

#[test]
fn every_choice_string_replays_its_execution() {
    let program = message_passing(false);
    let explored = explore(&nvlink_pair().into(), 2, &[], &program);
    // Two puts and one load, three rounds each.
    assert_eq!(explored.len(), 27);
    for (choices, (results, hash)) in &explored {
        let replay = Sim::builder(nvlink_pair())
            .explore(Explore::new(choices.to_string().parse().unwrap()))
            .build()
            .unwrap();
        let (got, report) = replay.launch(&program).unwrap();
        let got: Vec<u64> = got.into_iter().map(|r| r.unwrap()).collect();
        assert_eq!((&got, report.trace_hash), (results, *hash), "{choices}");
        assert_eq!(&Choices::from_trace(&report.choice_trace.unwrap()), choices);
    }
}

#[test]
fn an_exploration_is_deterministic_and_setup_makes_no_choice() {
    let run = || {
        let sim = Sim::builder(ib_pair())
            .explore(Explore::new(Choices(vec![1, 2])))
            .build()
            .unwrap();
        let (_, report) = sim
            .launch(|dev| {
                setup(&dev);
                dev.create_queue().unwrap();
            })
            .unwrap();
        report
    };
    let (a, b) = (run(), run());
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(a.choice_trace, Some(Vec::new()));
}

/// PE 0 puts `x` then (after a quiet) `y` to PE 1 over InfiniBand; PE 1 loads `y`, then `x`.
/// Writes through a NIC may become visible in any order, so PE 1 may see `y` but not `x`.
fn ib_quiet_then_flag(wait: bool) -> impl Fn(SimDevice) -> (u64, u64) + Sync {
    move |dev| {
        setup(&dev);
        let q = dev.create_queue().unwrap();
        if dev.pe().0 == 0 {
            put(&q, word(1, 0), 1);
            q.quiet(FAR).unwrap();
            put(&q, word(1, 1), 1);
            q.quiet(FAR).unwrap();
            (0, 0)
        } else {
            if wait {
                wait_for(&dev, 1);
            }
            let y = load(&dev, 1);
            (y, load(&dev, 0))
        }
    }
}

#[test]
fn infiniband_writes_may_become_visible_out_of_order() {
    let seen = outcomes(&ib_pair().into(), 2, &[], ib_quiet_then_flag(false));
    assert!(seen.contains_key(&vec![(0, 0), (1, 0)]), "{seen:?}");
    assert_eq!(seen.len(), 4, "{seen:?}");
}

#[test]
fn fault_no_ib_pending_loses_the_out_of_order_visibility() {
    let seen = outcomes(
        &ib_pair().into(),
        2,
        &[Fault::NoIbPending],
        ib_quiet_then_flag(false),
    );
    assert!(!seen.contains_key(&vec![(0, 0), (1, 0)]), "{seen:?}");
    assert_eq!(seen.len(), 3, "{seen:?}");
}

#[test]
fn a_satisfied_wait_makes_earlier_infiniband_writes_visible_unless_faulty() {
    let good = outcomes(&ib_pair().into(), 2, &[], ib_quiet_then_flag(true));
    assert_eq!(keys(&good), [vec![(0, 0), (1, 1)]]);
    let faulty = outcomes(
        &ib_pair().into(),
        2,
        &[Fault::WaitSkipsConsistency],
        ib_quiet_then_flag(true),
    );
    assert_eq!(keys(&faulty), [vec![(0, 0), (1, 0)], vec![(0, 0), (1, 1)]]);
}

#[test]
fn fault_fence_ignored_lets_the_flag_overtake_the_data() {
    let seen = outcomes(
        &nvlink_pair().into(),
        2,
        &[Fault::FenceIgnored],
        message_passing(true),
    );
    assert_eq!(keys(&seen), [vec![0, 0], vec![0, 1]]);
}

/// Message passing with a quiet between data and flag.
fn quiet_message_passing(dev: SimDevice) -> u64 {
    setup(&dev);
    let q = dev.create_queue().unwrap();
    if dev.pe().0 == 0 {
        put(&q, word(1, 0), 1);
        q.quiet(FAR).unwrap();
        put(&q, word(1, 1), 1);
        q.quiet(FAR).unwrap();
        0
    } else {
        wait_for(&dev, 1);
        load(&dev, 0)
    }
}

#[test]
fn fault_quiet_skips_nbi_puts_lets_the_flag_overtake_the_data() {
    let good = outcomes(&nvlink_pair().into(), 2, &[], quiet_message_passing);
    assert_eq!(keys(&good), [vec![0, 1]]);
    let faulty = outcomes(
        &nvlink_pair().into(),
        2,
        &[Fault::QuietSkipsNbiPuts],
        quiet_message_passing,
    );
    assert_eq!(keys(&faulty), [vec![0, 0], vec![0, 1]]);
}

/// Put-with-signal: PE 1 waits for the signal and loads the data.
fn signalled(dev: SimDevice) -> u64 {
    setup(&dev);
    let q = dev.create_queue().unwrap();
    if dev.pe().0 == 0 {
        q.put_signal(
            word(1, 0),
            &1u64.to_le_bytes(),
            word(1, 1),
            SignalOp::Set,
            1,
            Copier::Device,
        )
        .unwrap();
        q.quiet(FAR).unwrap();
        0
    } else {
        wait_for(&dev, 1);
        load(&dev, 0)
    }
}

#[test]
fn fault_signal_before_data_lets_the_data_be_late() {
    let good = outcomes(&nvlink_pair().into(), 2, &[], signalled);
    assert_eq!(keys(&good), [vec![0, 1]]);
    let faulty = outcomes(
        &nvlink_pair().into(),
        2,
        &[Fault::SignalBeforeData],
        signalled,
    );
    assert_eq!(keys(&faulty), [vec![0, 0], vec![0, 1]]);
}

/// Independent reads of independent writes (IRIW) on four PEs over NVLink: PEs 0 and 1 each
/// put a word to PEs 2 and 3, which load them in opposite orders. Eight choices, 3^8 runs.
fn iriw(dev: SimDevice) -> (u64, u64) {
    setup(&dev);
    let q = dev.create_queue().unwrap();
    let me = dev.pe().0;
    match me {
        0 | 1 => {
            put(&q, word(2, u64::from(me)), 1);
            put(&q, word(3, u64::from(me)), 1);
            q.quiet(FAR).unwrap();
            (0, 0)
        }
        2 => (load(&dev, 0), load(&dev, 1)),
        _ => (load(&dev, 1), load(&dev, 0)),
    }
}

#[test]
#[allow(
    clippy::disallowed_methods,
    reason = "prints how long the exploration took on the host's clock, which no simulation reads"
)]
fn iriw_on_four_pes_shows_the_non_multi_copy_atomic_outcome() {
    let topology = sim::topology::load("hgx8").unwrap();
    let start = WallClock::now();
    let explored = explore(&topology, 4, &[], iriw);
    let elapsed = start.elapsed();
    assert_eq!(explored.len(), 6561);
    let mut seen: BTreeMap<Vec<(u64, u64)>, Choices> = BTreeMap::new();
    for (choices, (results, _)) in explored {
        seen.entry(results).or_insert(choices);
    }
    // PE 2 sees x but not y while PE 3 sees y but not x: the writes were seen in different
    // orders, which puts without fences or quiet allow.
    assert!(
        seen.contains_key(&vec![(0, 0), (0, 0), (1, 0), (1, 0)]),
        "{seen:?}"
    );
    assert_eq!(seen.len(), 16);
    eprintln!("IRIW: 6561 executions in {elapsed:?}");
}

/// A third PE reads over NVLink what an InfiniBand write left pending at its target, after
/// a rendezvous (which has no consistency step) and before the target's quiet (which has
/// one). The target may be slow to take its step, so the reader may see the old value.
fn third_party_read(dev: SimDevice) -> u64 {
    setup(&dev);
    let q = dev.create_queue().unwrap();
    let me = dev.pe().0;
    if me == 8 {
        put(&q, word(1, 0), 1);
        q.quiet(FAR).unwrap();
    }
    dev.exchange(&[], FAR).unwrap();
    match me {
        0 => {
            let t = q.get(word(1, 0)).unwrap();
            q.wait_ticket(t, FAR).unwrap();
            u64::from_le_bytes(q.take_fetched(t).try_into().unwrap())
        }
        1 => {
            q.quiet(FAR).unwrap();
            0
        }
        _ => 0,
    }
}

#[test]
fn a_consistency_step_may_come_late_when_it_has_writes_to_show() {
    let topology = sim::topology::load("ib-2").unwrap();
    let seen = outcomes(&topology, 9, &[], third_party_read);
    let reads: Vec<u64> = seen.keys().map(|r| r[0]).collect();
    assert_eq!(reads, [0, 1]);
}
