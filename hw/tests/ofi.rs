//! libfabric between real processes (`hw::ofi`): the test runs its own binary as the two
//! ranks of a run (`hw::bootstrap::run_ranks`), which trade their endpoints' addresses and
//! their regions' keys through the bootstrap, as the network transport will, then reach each
//! other's memory with puts, gets and atomics over each loopback provider installed.
//!
//! Neither process has a progress thread: a provider with manual progress (`tcp;ofi_rxm`)
//! moves a rank's incoming data only while that rank calls into its endpoint, so the rank that
//! is written to polls its own memory, progressing, until it holds what it was sent.

#![cfg(feature = "process")]

use std::ffi::CStr;
use std::process::Command;
use std::time::{Duration, Instant};

use hw::bootstrap::{RANK_VAR, run_ranks};
use hw::ofi::{AtomicOp, AtomicWidth, Endpoint, OfiError, Place, RemoteKey};

const DEADLINE: Duration = Duration::from_secs(60);

/// What a rank gives every other: its address, then its region's key and base.
fn encode(name: &[u8], key: RemoteKey) -> Vec<u8> {
    let mut bytes = key.key.to_le_bytes().to_vec();
    bytes.extend_from_slice(&key.base.to_le_bytes());
    bytes.extend_from_slice(name);
    bytes
}

fn decode(bytes: &[u8]) -> (Vec<u8>, RemoteKey) {
    let word = |i: usize| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap());
    let key = RemoteKey {
        key: word(0),
        base: word(1),
    };
    (bytes[16..].to_vec(), key)
}

/// Rank 0 writes into rank 1's region and rank 1 waits for it, then rank 1 reads rank 0's.
fn rank_body(provider: &CStr) {
    let deadline = Instant::now() + DEADLINE;
    let mut bootstrap = hw::bootstrap::from_env(deadline)
        .expect("a bootstrap")
        .expect("started as a rank");
    let rank = bootstrap.rank();
    let endpoint = Endpoint::open(Some(provider), 2).expect("an endpoint");
    let mut words = vec![0u64; 8];
    words[7] = 1000 + u64::from(rank);
    // SAFETY: `words` outlives the endpoint (dropped first, below), and is read only with
    // volatile reads while peers may write it.
    let key = unsafe { endpoint.register(words.as_mut_ptr().cast(), 64) }.expect("a region");
    let mine = encode(&endpoint.name().expect("a name"), key);
    let all = bootstrap.allgather(&mine, deadline).expect("the exchange");
    let peers: Vec<(Vec<u8>, RemoteKey)> = all.iter().map(|b| decode(b)).collect();
    let names: Vec<Vec<u8>> = peers.iter().map(|(name, _)| name.clone()).collect();
    endpoint.insert_peers(&names).expect("the peers");
    let word = |i: usize| {
        // SAFETY: an element of `words`, which the provider writes.
        unsafe { std::ptr::read_volatile(words.as_ptr().add(i)) }
    };
    let until = |want: &dyn Fn() -> bool| {
        while !want() {
            endpoint.progress().expect("progress");
            assert!(Instant::now() < deadline, "rank {rank}: nothing came");
            std::thread::yield_now();
        }
    };
    let other = 1 - u64::from(rank);
    let at = |offset| Place {
        peer: other,
        key: peers[other as usize].1,
        offset,
    };
    let mut nothing = || {};
    if rank == 0 {
        endpoint
            .put(at(0), &42u64.to_le_bytes(), &mut nothing)
            .expect("a put");
        let add = (AtomicOp::Sum, AtomicWidth::U64);
        endpoint
            .atomic(at(8), add, 5, &mut nothing)
            .expect("an add");
        let old = endpoint
            .fetch_atomic(at(8), add, 2, None, &mut nothing)
            .expect("a fetch-add");
        assert_eq!(old, 5);
        endpoint.quiet(&mut nothing).expect("quiet");
        // The flag last: rank 1 waits for it, then reads rank 0's word 7.
        endpoint
            .put(at(48), &1u64.to_le_bytes(), &mut nothing)
            .expect("the flag");
        endpoint.quiet(&mut nothing).expect("quiet");
        until(&|| word(6) == 1);
    } else {
        until(&|| word(6) == 1);
        assert_eq!(
            (word(0), word(1)),
            (42, 7),
            "what rank 0 wrote before its flag"
        );
        let mut got = [0u8; 8];
        endpoint.get(at(56), &mut got, &mut nothing).expect("a get");
        assert_eq!(u64::from_le_bytes(got), 1000, "rank 0's word 7");
        endpoint
            .put(at(48), &1u64.to_le_bytes(), &mut nothing)
            .expect("the flag back");
        endpoint.quiet(&mut nothing).expect("quiet");
    }
    // Neither leaves before the other is done with its memory.
    bootstrap.barrier(deadline).expect("the last barrier");
    drop(endpoint);
    println!("rank {rank} over {provider:?}: done");
}

fn on_two_ranks(test: &str, provider: &CStr) {
    if std::env::var_os(RANK_VAR).is_some() {
        rank_body(provider);
        return;
    }
    if let Err(OfiError::Load { why, .. }) = Endpoint::open(Some(provider), 1) {
        eprintln!("skipped: libfabric is not installed here ({why})");
        return;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let outputs = run_ranks(2, Instant::now() + DEADLINE, |_| {
        let mut command = Command::new(&exe);
        command.args([test, "--exact", "--nocapture", "--test-threads", "1"]);
        command
    })
    .expect("the ranks started");
    for (rank, output) in outputs.iter().enumerate() {
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains("done"),
            "rank {rank} over {provider:?} ended with {}\n--- stdout\n{stdout}\n--- stderr\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr),
        );
    }
}

#[test]
fn two_processes_over_tcp_rxm() {
    on_two_ranks("two_processes_over_tcp_rxm", c"tcp;ofi_rxm");
}

#[test]
fn two_processes_over_sockets() {
    on_two_ranks("two_processes_over_sockets", c"sockets");
}
