//! Every conformance body on the host backend (one OS thread per PE) with 2, 4 and 8 PEs, and
//! the logic of the ring and reduce examples. The runtime runs on it unchanged.

use conformance::BodyError;
use conformance::host::{HOST_PES, host_conformance, run_on_host};
use hw::Backend;
use rshmem::{Cmp, Shmem, SignalOp};

conformance::conformance_tests!(host_conformance);

/// The ring example: a token passes PE 0 → 1 → … → 0 by put-with-signal, each PE adding its
/// number; PE 0 gets it back as n(n-1)/2.
fn pass_token<B: Backend>(sh: &Shmem<B>) -> Result<(), BodyError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let token = sh.calloc::<u64>(1)?;
    let arrived = sh.calloc::<u64>(1)?;
    let next = (me + 1) % n;
    if me == 0 {
        sh.put_signal(token, &[0], arrived, 1, SignalOp::Set, next)?;
        sh.signal_wait_until(arrived, Cmp::Eq, 1)?;
        let got = sh.g(token, me)?;
        let want = u64::from(n) * u64::from(n - 1) / 2;
        if got != want {
            return Err(BodyError::Violated(format!(
                "the token came back as {got}, not {want}"
            )));
        }
    } else {
        sh.signal_wait_until(arrived, Cmp::Eq, 1)?;
        let value = sh.g(token, me)? + u64::from(me);
        sh.put_signal(token, &[value], arrived, 1, SignalOp::Set, next)?;
    }
    sh.barrier_all()?;
    Ok(())
}

/// The reduce example: recursive-doubling all-reduce with put-with-signal; every PE ends with
/// the sum of all contributions.
fn allreduce<B: Backend>(sh: &Shmem<B>) -> Result<(), BodyError> {
    const LEN: usize = 256;
    let contribution = |pe: u32| (0..LEN as u64).map(move |j| j * u64::from(pe + 1));
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let rounds = n.trailing_zeros() as usize;
    let inbox = sh.malloc::<u64>(LEN * rounds)?;
    let signals = sh.calloc::<u64>(rounds)?;
    let mut partial: Vec<u64> = contribution(me).collect();
    for round in 0..rounds {
        let partner = me ^ (1 << round);
        let slot = inbox.slice(round * LEN..(round + 1) * LEN)?;
        let signal = signals.at(round)?;
        sh.put_signal(slot, &partial, signal, 1, SignalOp::Set, partner)?;
        sh.signal_wait_until(signal, Cmp::Eq, 1)?;
        for (sum, theirs) in partial.iter_mut().zip(sh.local(slot)?) {
            *sum += theirs;
        }
    }
    let total = u64::from(n) * u64::from(n + 1) / 2;
    let want: Vec<u64> = (0..LEN as u64).map(|j| j * total).collect();
    sh.barrier_all()?;
    if partial != want {
        return Err(BodyError::Violated(format!(
            "PE {me} reduced to a wrong sum"
        )));
    }
    Ok(())
}

#[test]
fn ring_example() {
    host_conformance(pass_token);
}

#[test]
fn reduce_example() {
    for n in HOST_PES {
        run_on_host(n, allreduce).unwrap();
    }
}

/// The harness can fail: a body whose promise does not hold is reported with its PE.
#[test]
fn a_broken_promise_is_reported() {
    let err = run_on_host(2, |sh| {
        if sh.my_pe() == 1 {
            return Err(BodyError::Violated("on purpose".into()));
        }
        Ok(())
    })
    .unwrap_err()
    .to_string();
    assert!(err.contains("PE 1: violated: on purpose"), "{err}");
}

/// A PE that panics is reported as that PE's failure, and the others still finish (the
/// panicking PE never reaches finalize, so they fail there at their deadline: keep it short).
#[test]
fn a_panicking_pe_is_reported() {
    let topology = hw::Topology::single_host(2).unwrap();
    let host = hw::host::Host::builder(topology).build().unwrap();
    let config = rshmem::Config::default()
        .device_heap_size(1 << 20)
        .wait_timeout_ms(200);
    let output = rshmem::run(host, config, |sh| {
        assert!(sh.my_pe() != 1, "PE 1 panics on purpose");
    })
    .unwrap();
    let text = format!("{:?}", output.results);
    assert!(text.contains("PE 1 panics on purpose"), "{text}");
    assert!(
        output.results[0].is_err(),
        "PE 0 cannot finalise without PE 1: {text}"
    );
}
