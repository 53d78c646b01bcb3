//! The process backend (`hw::process`) across real processes: each test runs its own binary as
//! the ranks of a run (self-exec with the launcher's variables, served by
//! `hw::bootstrap::run_ranks`) at 2 and 4 PEs, and the child that is a rank runs the body.
//!
//! Run with `cargo test --release -p hw --features process --test process`. The ignored test
//! measures a 1-byte put and a 64-bit fetch_add (`-- --ignored --nocapture`).

#![cfg(all(
    feature = "process",
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]

use std::process::{Command, Output};
use std::time::Duration;

use hw::bootstrap::{RANK_VAR, run_ranks};
use hw::process::{Process, ProcessDevice};
use hw::{
    AmoKind, AmoOp, AmoWidth, Cmp, Copier, Device, Instant, MemKind, Pe, Queue, QueueError,
    RemoteRange, SignalOp, WaitSpec,
};

/// In a child that is a rank: joins the run and runs `body`. In the test itself: runs this
/// test as every run of `sizes` PEs and fails with a failing rank's output. Returns the ranks'
/// outputs of the last run (none in a child).
fn on_ranks(
    test: &str,
    sizes: &[u32],
    static_data: bool,
    body: impl Fn(ProcessDevice),
) -> Vec<Output> {
    on_ranks_with(test, sizes, static_data, &[], body)
}

/// [`on_ranks`] with `vars` set in every rank's environment.
fn on_ranks_with(
    test: &str,
    sizes: &[u32],
    static_data: bool,
    vars: &[(&str, &str)],
    body: impl Fn(ProcessDevice),
) -> Vec<Output> {
    if std::env::var_os(RANK_VAR).is_some() {
        let process = Process::builder().static_data(static_data).build();
        body(process.expect("a process").join().expect("joined"));
        return Vec::new();
    }
    let exe = std::env::current_exe().expect("the test binary");
    let mut outputs = Vec::new();
    for &n in sizes {
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        outputs = run_ranks(n, deadline, |_| {
            let mut command = Command::new(&exe);
            command.envs(vars.iter().copied());
            command.args([test, "--exact", "--nocapture", "--include-ignored"]);
            command.args(["--test-threads", "1"]);
            command
        })
        .expect("the ranks started");
        for (rank, output) in outputs.iter().enumerate() {
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success() && stdout.contains("1 passed"),
                "{test} with {n} PEs: rank {rank} ended with {}\n--- stdout\n{stdout}\n--- \
                 stderr\n{}",
                output.status,
                String::from_utf8_lossy(&output.stderr),
            );
        }
    }
    outputs
}

fn never() -> Instant {
    Instant(u64::MAX)
}

/// Every PE's segment of `kind` imported by this PE.
fn share(device: &ProcessDevice, kind: MemKind, len_bytes: u64) {
    let key = device.create_segment(kind, len_bytes).expect("a segment");
    let keys = device.exchange(&key.0, never()).expect("the exchange");
    for (peer, key) in (0..).zip(keys.iter().cloned()) {
        device
            .import_segment(Pe(peer), kind, &hw::SegmentKey(key))
            .expect("an import");
    }
}

fn barrier(device: &ProcessDevice) {
    device.exchange(&[], never()).expect("the barrier");
}

fn at(pe: u32, kind: MemKind, offset: u64, len: u64) -> RemoteRange {
    RemoteRange {
        pe: Pe(pe),
        kind,
        offset,
        len,
    }
}

fn add(operand: u64, width: AmoWidth) -> AmoOp {
    AmoOp {
        kind: AmoKind::Add,
        operand,
        width,
    }
}

fn local_u64(device: &ProcessDevice, kind: MemKind, offset: u64) -> u64 {
    let mut bytes = [0u8; 8];
    let range = hw::LocalRange {
        kind,
        offset,
        len: 8,
    };
    device.read_local(range, &mut bytes);
    u64::from_le_bytes(bytes)
}

#[test]
fn puts_gets_and_atomics_between_processes() {
    on_ranks(
        "puts_gets_and_atomics_between_processes",
        &[2, 4],
        false,
        puts_gets_and_atomics,
    );
}

/// The network path (`RSHMEM_TRANSPORT=ofi`) over `tcp;ofi_rxm`, and the same bodies.
const OVER_TCP: &[(&str, &str)] = &[("RSHMEM_TRANSPORT", "ofi"), ("FI_PROVIDER", "tcp;ofi_rxm")];
/// The network path over `sockets`, which orders puts before atomics.
const OVER_SOCKETS: &[(&str, &str)] = &[("RSHMEM_TRANSPORT", "ofi"), ("FI_PROVIDER", "sockets")];

/// Whether libfabric is here; says why not if not.
fn libfabric_here() -> bool {
    match hw::ofi::probe() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("skipped: {e}");
            false
        }
    }
}

#[test]
fn puts_gets_and_atomics_over_libfabric_tcp() {
    if libfabric_here() {
        on_ranks_with(
            "puts_gets_and_atomics_over_libfabric_tcp",
            &[2, 4],
            false,
            OVER_TCP,
            puts_gets_and_atomics,
        );
    }
}

#[test]
fn puts_gets_and_atomics_over_libfabric_sockets() {
    if libfabric_here() {
        on_ranks_with(
            "puts_gets_and_atomics_over_libfabric_sockets",
            &[2, 4],
            false,
            OVER_SOCKETS,
            puts_gets_and_atomics,
        );
    }
}

#[test]
fn waits_over_libfabric() {
    if libfabric_here() {
        on_ranks_with("waits_over_libfabric", &[2, 4], false, OVER_TCP, waits);
    }
}

#[test]
fn static_data_over_libfabric() {
    if libfabric_here() {
        on_ranks_with(
            "static_data_over_libfabric",
            &[2],
            true,
            OVER_TCP,
            static_data,
        );
    }
}

/// Exchanges over the network path, small ones through its slots and ones too large for a
/// slot (a PE's, or every PE's) through the launcher, in any mix: each gives every PE's bytes.
#[test]
fn exchanges_over_libfabric() {
    if libfabric_here() {
        on_ranks_with("exchanges_over_libfabric", &[2, 4], false, OVER_TCP, |d| {
            let (me, n) = (d.pe().0, d.n_pes());
            let bytes_of = |pe: u32, round: u32| -> Vec<u8> {
                let len = match round % 3 {
                    0 => round as usize,
                    // One PE's bytes do not fit a slot: every PE takes the launcher's way.
                    1 if pe == round % n => 5000,
                    1 => 3,
                    _ => 9000 + pe as usize,
                };
                (0..len).map(|i| (i as u32 ^ pe ^ round) as u8).collect()
            };
            for round in 0..30 {
                let all = d
                    .exchange(&bytes_of(me, round), never())
                    .expect("the exchange");
                for pe in 0..n {
                    assert_eq!(
                        all[pe as usize],
                        bytes_of(pe, round),
                        "round {round}, PE {pe}"
                    );
                }
            }
        });
    }
}

fn puts_gets_and_atomics(d: ProcessDevice) {
    let (me, n) = (d.pe().0, d.n_pes());
    assert_eq!(d.caps().backend_name, "process");
    share(&d, MemKind::Host, 1 << 30);
    share(&d, MemKind::Device, 4096);
    let q = d.create_queue().expect("a queue");
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    let mine = u64::from(me) + 100;
    q.put(
        at(next, MemKind::Host, 8 * u64::from(me), 8),
        &mine.to_le_bytes(),
        Copier::Device,
    )
    .unwrap();
    let t = q
        .amo(at(0, MemKind::Device, 0, 8), add(1, AmoWidth::W64), true)
        .unwrap();
    let old = u64::from_le_bytes(q.take_fetched(t).try_into().unwrap());
    assert!(old < u64::from(n), "fetch_add returned {old}");
    q.amo(at(0, MemKind::Device, 8, 4), add(2, AmoWidth::W32), false)
        .unwrap();
    q.quiet(never()).unwrap();
    barrier(&d);
    let from_prev = local_u64(&d, MemKind::Host, 8 * u64::from(prev));
    assert_eq!(from_prev, u64::from(prev) + 100);
    if me == 0 {
        assert_eq!(local_u64(&d, MemKind::Device, 0), u64::from(n));
        assert_eq!(local_u64(&d, MemKind::Device, 8), 2 * u64::from(n));
    }
    let t = q
        .get(at(next, MemKind::Host, 8 * u64::from(me), 8))
        .unwrap();
    assert_eq!(q.take_fetched(t), mine.to_le_bytes());
    let addr = d
        .load_store_addr(at(next, MemKind::Host, 8 * u64::from(me), 8))
        .expect("an address");
    // SAFETY: the address is of 8 bytes of the next PE's segment, mapped here.
    assert_eq!(unsafe { std::ptr::read_volatile(addr as *const u64) }, mine);
    barrier(&d);
}

#[test]
fn waits_sleep_until_a_peer_signals() {
    on_ranks("waits_sleep_until_a_peer_signals", &[2, 4], false, waits);
}

fn waits(d: ProcessDevice) {
    let (me, n) = (d.pe().0, d.n_pes());
    share(&d, MemKind::Host, 4096);
    let q = d.create_queue().expect("a queue");
    let signal = WaitSpec {
        word: hw::LocalRange {
            kind: MemKind::Host,
            offset: 0,
            len: 8,
        },
        width: AmoWidth::W64,
        signed: false,
        cmp: Cmp::Eq,
        value: 1,
        purpose: "the token",
    };
    let forward = |token: u64| {
        let next = (me + 1) % n;
        let data = at(next, MemKind::Host, 64, 8);
        let flag = at(next, MemKind::Host, 0, 8);
        q.put_signal(
            data,
            &token.to_le_bytes(),
            flag,
            SignalOp::Set,
            1,
            Copier::Device,
        )
        .unwrap();
    };
    let deadline = d.now().after(hw::Duration::from_secs(30));
    if me == 0 {
        // Long enough for the next PE to be asleep on its futex.
        std::thread::sleep(Duration::from_millis(50));
        forward(1);
        d.wait_until(signal, deadline).unwrap();
        assert_eq!(local_u64(&d, MemKind::Host, 64), u64::from(n));
    } else {
        d.wait_until(signal, deadline).unwrap();
        forward(local_u64(&d, MemKind::Host, 64) + 1);
    }
    let never_set = WaitSpec {
        word: hw::LocalRange {
            offset: 128,
            ..signal.word
        },
        value: 7,
        purpose: "a word nobody sets",
        ..signal
    };
    let soon = d.now().after(hw::Duration(50_000_000));
    match d.wait_until(never_set, soon) {
        Err(QueueError::Deadline { waiting_for, .. }) => {
            assert!(waiting_for.contains("offset 0x80"), "{waiting_for}");
        }
        other => panic!("a wait nobody satisfies ended with {other:?}"),
    }
    barrier(&d);
}

/// The program's globals: one in `.data` whose value must survive the remap, and counters
/// and an inbox that peers write through their own mappings.
static mut KEPT: [u64; 4] = [1, 2, 3, 0x5eed];
static mut COUNTER: u64 = 0;
static mut INBOX: [u64; 8] = [0; 8];

#[test]
fn static_data_is_a_segment_peers_reach() {
    on_ranks(
        "static_data_is_a_segment_peers_reach",
        &[2, 4],
        true,
        static_data,
    );
}

fn static_data(d: ProcessDevice) {
    let (me, n) = (d.pe().0, d.n_pes());
    let (key, len_bytes) = d
        .share_static_data()
        .expect("the remap")
        .expect("static data is on");
    let keys = d.exchange(&key.0, never()).unwrap();
    for (peer, key) in (0..).zip(keys.iter().cloned()) {
        d.import_segment(Pe(peer), MemKind::Static, &hw::SegmentKey(key))
            .unwrap();
    }
    let base = d.load_store_addr(at(me, MemKind::Static, 0, 0)).unwrap();
    let offset_of = |addr: *const u64| {
        let offset = addr as u64 - base;
        assert!(offset < len_bytes, "a global outside the static data");
        offset
    };
    // SAFETY: reads of this program's own globals; peers write them only after the
    // barrier below, and with the atomics and puts of the contract.
    let kept = unsafe { std::ptr::read_volatile(&raw const KEPT) };
    assert_eq!(kept, [1, 2, 3, 0x5eed], "the remap kept the values");
    let q = d.create_queue().unwrap();
    let counter = offset_of(&raw const COUNTER);
    let inbox = offset_of((&raw const INBOX).cast());
    barrier(&d);
    q.amo(
        at(0, MemKind::Static, counter, 8),
        add(1, AmoWidth::W64),
        false,
    )
    .unwrap();
    for peer in 0..n {
        let slot = at(peer, MemKind::Static, inbox + 8 * u64::from(me), 8);
        q.put(slot, &(u64::from(me) + 1).to_le_bytes(), Copier::Device)
            .unwrap();
    }
    q.quiet(never()).unwrap();
    barrier(&d);
    // SAFETY: as above; every peer's writes are complete (quiet, then the barrier).
    let (counter, inbox) = unsafe {
        (
            std::ptr::read_volatile(&raw const COUNTER),
            std::ptr::read_volatile(&raw const INBOX),
        )
    };
    if me == 0 {
        assert_eq!(counter, u64::from(n));
    }
    for (j, slot) in inbox.iter().enumerate().take(n as usize) {
        assert_eq!(*slot, j as u64 + 1, "PE {j}'s put into the inbox");
    }
    barrier(&d);
}

/// Without the launcher's variables the process is the only PE of its run.
#[test]
fn a_process_without_the_launcher_is_one_pe() {
    if std::env::var_os(RANK_VAR).is_some() {
        return;
    }
    let d = Process::builder().build().unwrap().join().unwrap();
    assert_eq!((d.pe(), d.n_pes()), (Pe(0), 1));
    assert!(d.bootstrap().is_none());
    assert_eq!(d.exchange(b"me", never()).unwrap()[..], [b"me".to_vec()]);
    assert!(d.share_static_data().unwrap().is_none(), "off by default");
    share(&d, MemKind::Host, 64);
    let q = d.create_queue().unwrap();
    q.put(
        at(0, MemKind::Host, 8, 8),
        &5u64.to_le_bytes(),
        Copier::Device,
    )
    .unwrap();
    let t = q
        .amo(at(0, MemKind::Host, 8, 8), add(2, AmoWidth::W64), true)
        .unwrap();
    assert_eq!(q.take_fetched(t), 5u64.to_le_bytes());
    assert_eq!(local_u64(&d, MemKind::Host, 8), 7);
}

/// Launcher variables that are only partly set are an error that names the missing one.
#[test]
fn a_partial_launcher_environment_names_the_missing_variable() {
    if std::env::var_os("RSHMEM_TEST_PARTIAL_ENV").is_some() {
        let err = Process::builder().build().unwrap_err().to_string();
        assert!(err.contains("RSHMEM_BOOTSTRAP_SOCKET"), "{err}");
        return;
    }
    if std::env::var_os(RANK_VAR).is_some() {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let output = Command::new(exe)
        .args([
            "a_partial_launcher_environment_names_the_missing_variable",
            "--exact",
        ])
        .env("RSHMEM_TEST_PARTIAL_ENV", "1")
        .env(RANK_VAR, "0")
        .env(hw::bootstrap::N_RANKS_VAR, "2")
        .env_remove(hw::bootstrap::SOCKET_VAR)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

/// The cost of a 1-byte put, of a 64-bit fetch_add (ticketed, and at once with `amo_now`) and
/// of an 8-byte get (`get_now`) from PE 0 to PE 1, in ns per operation.
#[test]
#[ignore = "a measurement: run with --ignored --nocapture"]
fn cost_of_a_put_and_a_fetch_add() {
    const OPS: u32 = 2_000_000;
    let outputs = on_ranks("cost_of_a_put_and_a_fetch_add", &[2], false, |d| {
        share(&d, MemKind::Host, 4096);
        let q = d.create_queue().unwrap();
        if d.pe() == Pe(0) {
            let started = std::time::Instant::now();
            for _ in 0..OPS {
                q.put(at(1, MemKind::Host, 0, 1), &[1], Copier::Device)
                    .unwrap();
            }
            let put_ns = started.elapsed().as_nanos() as f64 / f64::from(OPS);
            let started = std::time::Instant::now();
            for _ in 0..OPS {
                let t = q
                    .amo(at(1, MemKind::Host, 8, 8), add(1, AmoWidth::W64), true)
                    .unwrap();
                std::hint::black_box(q.take_fetched(t));
            }
            let amo_ns = started.elapsed().as_nanos() as f64 / f64::from(OPS);
            let started = std::time::Instant::now();
            for _ in 0..OPS {
                let old = q.amo_now(at(1, MemKind::Host, 8, 8), add(1, AmoWidth::W64));
                std::hint::black_box(old.unwrap());
            }
            let amo_now_ns = started.elapsed().as_nanos() as f64 / f64::from(OPS);
            let started = std::time::Instant::now();
            let mut word = [0u8; 8];
            for _ in 0..OPS {
                let done = q.get_now(at(1, MemKind::Host, 16, 8), &mut word).unwrap();
                std::hint::black_box((done, &word));
            }
            let get_now_ns = started.elapsed().as_nanos() as f64 / f64::from(OPS);
            println!(
                "measured: put 1 B {put_ns:.1} ns/op, fetch_add 64-bit {amo_ns:.1} ns/op, \
                 amo_now fetch_add {amo_now_ns:.1} ns/op, get_now 8 B {get_now_ns:.1} ns/op"
            );
        }
        barrier(&d);
    });
    for output in outputs {
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            if let Some(at) = line.find("measured:") {
                println!("{}", &line[at..]);
            }
        }
    }
}
