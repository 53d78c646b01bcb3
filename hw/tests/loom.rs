//! loom models of the host backend's real primitives (`hw::host` over `hw::sync`): every
//! interleaving and every weak-memory outcome C11 allows, for 2 to 3 threads.
//!
//! Run: `RUSTFLAGS="--cfg rshmem_loom" cargo test --release -p hw --test loom -- --nocapture`.
//!
//! Each model drives the backend through its `Device`/`Queue` API, exactly as the runtime
//! does; PEs are loom threads (the model's main thread is PE 0). Segments are created on the
//! main thread before the PEs start, and each PE imports them. Preemption bounds are set
//! explicitly on each model: none for 2 threads, 3 for 3 threads (loom's documentation: 2-3
//! catches most bugs; measurements in the memory-model notes, section 4.3). Each model prints
//! its executions and time.
//!
//! Companions weaken one ordering of the backend (`HostBuilder::weaken`, loom builds only) and
//! assert that loom finds the bug: the lost wake-up is found; the relaxed signal is found by
//! a reader that polls with get, not by one that waits (an ignored test records that).
//!
//! Mutation check (`docs/mutation.md`): of the mutants that weaken one ordering or fence of
//! `hw::host`, these models kill all but two, which cannot change behaviour. The models of
//! readers that poll, `put_quiet_get_cannot_both_miss` and
//! `consistency_step_sees_delivered_puts` were added for it: before them, the consistency
//! step's `fence(SeqCst)` at the end of every wait hid most weakenings.
//!
//! Blind spots (memory-model notes, section 4): loom models SeqCst *accesses* as AcqRel (the
//! backend uses explicit SeqCst fences instead) and never produces load buffering; and a
//! model whose reader ends in a wait's consistency step passed with the writer's Release
//! missing (`relaxed_signal_is_caught`, ignored), so models that need a writer's Release to
//! be seen read without a wait.
#![cfg(rshmem_loom)]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering as StdOrdering};

use hw::host::{Host, HostDevice, HostQueue, HostWorld, Weakening};
use hw::{
    AmoKind, AmoOp, AmoWidth, Cmp, Copier, Device, Instant, LocalRange, MemKind, Pe, Queue,
    RemoteRange, SegmentKey, SignalOp, Topology, WaitSpec,
};
use loom::thread;

/// Bytes per PE segment: 8 words.
const SEG_BYTES: u64 = 64;
const NEVER: Instant = Instant(u64::MAX);

/// A PE of a model: its device and one queue.
struct Node {
    dev: HostDevice,
    q: HostQueue,
}

/// A world of `n` PEs whose segments exist, and the keys to import them.
fn world(n: u32, weakening: Option<Weakening>) -> (HostWorld, Vec<SegmentKey>) {
    let mut b = Host::builder(Topology::single_host(n).unwrap()).pes(n);
    if let Some(w) = weakening {
        b = b.weaken(w);
    }
    let world = b.build().unwrap().into_world();
    let keys = (0..n)
        .map(|p| {
            world
                .device(Pe(p))
                .create_segment(MemKind::Device, SEG_BYTES)
                .unwrap()
        })
        .collect();
    (world, keys)
}

/// PE `me`'s device and queue, with every segment imported (call on the PE's thread).
fn node(world: &HostWorld, keys: &[SegmentKey], me: u32) -> Node {
    let dev = world.device(Pe(me));
    for (p, key) in keys.iter().enumerate() {
        dev.import_segment(Pe(p as u32), MemKind::Device, key)
            .unwrap();
    }
    let q = dev.create_queue().unwrap();
    Node { dev, q }
}

/// Bytes `offset..offset + len` of `pe`'s segment.
fn at(pe: u32, offset: u64, len: u64) -> RemoteRange {
    RemoteRange {
        pe: Pe(pe),
        kind: MemKind::Device,
        offset,
        len,
    }
}

/// Word `w` of `pe`'s segment.
fn word(pe: u32, w: u64) -> RemoteRange {
    at(pe, w * 8, 8)
}

fn local(w: u64) -> LocalRange {
    LocalRange {
        kind: MemKind::Device,
        offset: w * 8,
        len: 8,
    }
}

fn amo(kind: AmoKind, operand: u64) -> AmoOp {
    AmoOp {
        kind,
        operand,
        width: AmoWidth::W64,
    }
}

/// Blocks until own word `w` satisfies `cmp value`.
fn wait(p: &Node, w: u64, cmp: Cmp, value: u64) -> u64 {
    let spec = WaitSpec {
        word: local(w),
        width: AmoWidth::W64,
        signed: false,
        cmp,
        value,
        purpose: "loom",
    };
    p.dev.wait_until(spec, NEVER).unwrap()
}

fn read(p: &Node, w: u64) -> u64 {
    let mut b = [0u8; 8];
    p.dev.read_local(local(w), &mut b);
    u64::from_le_bytes(b)
}

fn get(p: &Node, pe: u32, w: u64) -> u64 {
    let t = p.q.get(word(pe, w)).unwrap();
    u64::from_le_bytes(p.q.take_fetched(t).try_into().unwrap())
}

fn fetch_amo(p: &Node, pe: u32, w: u64, op: AmoOp) -> u64 {
    let t = p.q.amo(word(pe, w), op, true).unwrap();
    u64::from_le_bytes(p.q.take_fetched(t).try_into().unwrap())
}

/// Runs `f` under loom with `bound` preemptions and prints its executions and time.
fn check(name: &str, bound: Option<usize>, f: impl Fn() + Sync + Send + 'static) {
    let executions = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&executions);
    let mut b = loom::model::Builder::new();
    b.preemption_bound = bound;
    let start = std::time::Instant::now();
    b.check(move || {
        counter.fetch_add(1, StdOrdering::Relaxed);
        f();
    });
    println!(
        "loom model {name}: preemption bound {bound:?}, {} executions, {:.2?}",
        executions.load(StdOrdering::Relaxed),
        start.elapsed()
    );
}

/// Spawns PEs 1.. of `n` running `body`, runs PE 0's body on the main thread, joins.
fn run_pes(n: u32, weakening: Option<Weakening>, body: fn(&Node, u32, u32)) {
    let (w, keys) = world(n, weakening);
    let handles: Vec<_> = (1..n)
        .map(|me| {
            let (w, keys) = (w.clone(), keys.clone());
            thread::spawn(move || body(&node(&w, &keys, me), me, n))
        })
        .collect();
    body(&node(&w, &keys, 0), 0, n);
    for h in handles {
        h.join().unwrap();
    }
}

// ---- rendezvous ----

fn exchange_episodes(n: u32, episodes: u8) {
    let w = Host::builder(Topology::single_host(n).unwrap())
        .build()
        .unwrap()
        .into_world();
    let body = move |w: HostWorld, me: u32| {
        let dev = w.device(Pe(me));
        for e in 0..episodes {
            let all = dev.exchange(&[me as u8, e], NEVER).unwrap();
            let want: Vec<Vec<u8>> = (0..n).map(|p| vec![p as u8, e]).collect();
            assert_eq!(all[..], want[..], "PE {me} episode {e}");
        }
    };
    let handles: Vec<_> = (1..n)
        .map(|me| {
            let w = w.clone();
            thread::spawn(move || body(w, me))
        })
        .collect();
    body(w, 0);
    for h in handles {
        h.join().unwrap();
    }
}

/// 2 threads, unbounded: the rendezvous is reusable (no episode overtakes another).
#[test]
fn exchange_two_pes_two_episodes() {
    check("exchange 2 PEs x 2 episodes", None, || {
        exchange_episodes(2, 2)
    });
}

/// 3 threads, bound 3, two episodes.
#[test]
fn exchange_three_pes_two_episodes() {
    check("exchange 3 PEs x 2 episodes", Some(3), || {
        exchange_episodes(3, 2)
    });
}

// ---- message passing: data, then a flag the receiver waits on ----

/// PE 0: put data; fence; atomic set of the flag. PE 1 waits for the flag, then must see the
/// data (R1, R3). 2 threads, unbounded.
#[test]
fn fenced_put_then_atomic_flag() {
    check("mp put;fence;amo-set", None, || {
        run_pes(2, None, |p, me, _| {
            if me == 0 {
                p.q.put(word(1, 0), &42u64.to_le_bytes(), Copier::Device)
                    .unwrap();
                p.q.fence().unwrap();
                p.q.amo(word(1, 1), amo(AmoKind::Set, 1), false).unwrap();
            } else {
                wait(p, 1, Cmp::Eq, 1);
                assert_eq!(read(p, 0), 42, "saw the flag but not the data");
            }
        })
    });
}

/// The same with the flag written by a plain put: the fence orders the two puts.
#[test]
fn fenced_put_then_put_flag() {
    check("mp put;fence;put", None, || {
        run_pes(2, None, |p, me, _| {
            if me == 0 {
                p.q.put(word(1, 0), &42u64.to_le_bytes(), Copier::Device)
                    .unwrap();
                p.q.fence().unwrap();
                p.q.put(word(1, 1), &1u64.to_le_bytes(), Copier::Device)
                    .unwrap();
            } else {
                wait(p, 1, Cmp::Eq, 1);
                assert_eq!(read(p, 0), 42, "saw the flag but not the data");
            }
        })
    });
}

/// PE 0 puts 13 unaligned bytes with a signal; PE 1 waits for the signal and must see them
/// all (R5). Shared with the weakened companions.
fn signal_mp(p: &Node, me: u32, _n: u32) {
    let data: Vec<u8> = (1..=13).collect();
    if me == 0 {
        p.q.put_signal(
            at(1, 3, 13),
            &data,
            word(1, 3),
            SignalOp::Set,
            1,
            Copier::Device,
        )
        .unwrap();
    } else {
        wait(p, 3, Cmp::Eq, 1);
        let mut got = [0u8; 13];
        let range = LocalRange {
            kind: MemKind::Device,
            offset: 3,
            len: 13,
        };
        p.dev.read_local(range, &mut got);
        assert_eq!(got.to_vec(), data, "saw the signal but not the data");
    }
}

/// 2 threads, unbounded.
#[test]
fn put_signal_then_wait() {
    check("mp put_signal", None, || run_pes(2, None, signal_mp));
}

/// The panic message of a model that failed.
fn failure_of(r: std::thread::Result<()>, what: &str) -> String {
    let payload = r.expect_err(what);
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Weakened: put-with-signal's signal update Relaxed. loom should find a PE that sees the
/// signal but not the data.
///
/// Ignored: loom 0.7.3 does NOT find it (17 435 executions, all pass). Suspected cause, not
/// yet confirmed: the waiter's consistency step is a `fence(SeqCst)`, and loom's acquire half
/// of a fence synchronises with every store the thread has seen, carrying more causality
/// than C11 gives a Relaxed RMW. Kept as the record of a loom blind spot to investigate; the
/// same weakening read by a PE that polls with get, with no wait, is caught
/// ([`relaxed_signal_polled_is_caught`]).
#[test]
#[ignore = "loom does not catch this weakening; see the doc comment"]
fn relaxed_signal_is_caught() {
    let r = catch_unwind(AssertUnwindSafe(|| {
        check("mp put_signal, RELAXED signal", None, || {
            run_pes(2, Some(Weakening::RelaxedSignal), signal_mp)
        })
    }));
    let msg = failure_of(r, "loom missed a relaxed signal");
    assert!(msg.contains("saw the signal but not the data"), "{msg}");
}

/// Weakened: put-with-signal's signal update Relaxed, read by a PE that polls with get (no
/// wait, so no consistency-step fence hides it). loom must find the stale data.
#[test]
fn relaxed_signal_polled_is_caught() {
    let r = catch_unwind(AssertUnwindSafe(|| {
        check("put_signal polled by get, RELAXED signal", None, || {
            run_pes(2, Some(Weakening::RelaxedSignal), signal_polled)
        })
    }));
    let msg = failure_of(r, "loom missed a relaxed signal read by get");
    assert!(msg.contains("got the signal but not the data"), "{msg}");
}

/// The model of [`lost_wakeup_is_caught`], run in a child process: loom reports the deadlock
/// by panicking, and unwinding out of a deadlocked loom execution aborts the process.
#[test]
#[ignore = "run by lost_wakeup_is_caught in a child process; it aborts"]
fn lost_wakeup_model() {
    check("mp put_signal, NO wake fence", None, || {
        run_pes(2, Some(Weakening::NoWakeFence), signal_mp)
    });
}

/// Weakened: the wake-up handshake without its SeqCst fences. loom must find the lost
/// wake-up: every thread blocked, which loom reports as a deadlock.
#[test]
fn lost_wakeup_is_caught() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["lost_wakeup_model", "--exact", "--ignored", "--nocapture"])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "loom missed a lost wake-up:\n{text}");
    assert!(
        text.contains("deadlock"),
        "the model failed, but not by deadlock:\n{text}"
    );
}

/// PEs 1 and 2 each put-with-signal (Add) to their own slot on PE 0; PE 0 waits for the
/// signal to reach 2 and must see both slots. 3 threads, bound 3.
#[test]
fn signal_add_from_two_writers() {
    check("signal add from 2 writers", Some(3), || {
        run_pes(3, None, |p, me, _| {
            if me == 0 {
                assert_eq!(wait(p, 7, Cmp::Ge, 2), 2);
                assert_eq!((read(p, 1), read(p, 2)), (10, 20), "signal before data");
            } else {
                let v = u64::from(me) * 10;
                let dst = word(0, u64::from(me));
                p.q.put_signal(
                    dst,
                    &v.to_le_bytes(),
                    word(0, 7),
                    SignalOp::Add,
                    1,
                    Copier::Device,
                )
                .unwrap();
            }
        })
    });
}

/// PE 0 waits on two words at once (`wait_until_any`); PE 1 put-with-signals to the second.
/// The one sleep covers both words: no lost wake-up, and the data comes with the signal.
#[test]
fn wait_until_any_wakes_on_the_second_word() {
    check("wait_until_any on 2 words", None, || {
        run_pes(2, None, |p, me, _| {
            if me == 0 {
                let spec = |w| WaitSpec {
                    word: local(w),
                    width: AmoWidth::W64,
                    signed: false,
                    cmp: Cmp::Ge,
                    value: 1,
                    purpose: "loom",
                };
                let found = p.dev.wait_until_any(&[spec(5), spec(6)], NEVER).unwrap();
                assert_eq!(found, (1, 1));
                assert_eq!(read(p, 1), 10, "signal before data");
            } else {
                let data = 10u64.to_le_bytes();
                p.q.put_signal(
                    word(0, 1),
                    &data,
                    word(0, 6),
                    SignalOp::Set,
                    1,
                    Copier::Device,
                )
                .unwrap();
            }
        })
    });
}

// ---- readers that poll instead of waiting ----
//
// The waits above end with the consistency step (a `fence(SeqCst)`), which would hide a
// missing Acquire on the reader's side or a missing Release on the writer's. These readers
// poll a flag with a plain read, a get or an atomic fetch, with no wait and no fence, so the
// ordering of each access is all that orders them. Found missing by the mutation check
// (docs/mutation.md).

/// PE 0 puts data and then a flag into its *own* memory, separated by `fence` only (a put to
/// the PE's own memory runs no wake-up fence, so nothing else orders the two).
fn fenced_own_puts(p: &Node) {
    p.q.put(word(0, 0), &42u64.to_le_bytes(), Copier::Device)
        .unwrap();
    p.q.fence().unwrap();
    p.q.put(word(0, 1), &1u64.to_le_bytes(), Copier::Device)
        .unwrap();
}

/// PE 1 gets PE 0's flag; if it is set, a get of the data must see it (R1: fence orders the
/// puts; a get is an Acquire load). 2 threads, unbounded.
#[test]
fn get_sees_fenced_puts_in_order() {
    check("get polls a fenced flag", None, || {
        run_pes(2, None, |p, me, _| {
            if me == 0 {
                fenced_own_puts(p);
            } else if get(p, 0, 1) == 1 {
                assert_eq!(get(p, 0, 0), 42, "got the flag but not the data");
            }
        })
    });
}

/// The same with the flag read by a fetching atomic (an Acquire read-modify-write, whose
/// load half is the `Fetch`). 2 threads, unbounded.
#[test]
fn atomic_fetch_sees_fenced_puts_in_order() {
    check("atomic fetch polls a fenced flag", None, || {
        run_pes(2, None, |p, me, _| {
            if me == 0 {
                fenced_own_puts(p);
            } else if fetch_amo(p, 0, 1, amo(AmoKind::Fetch, 0)) == 1 {
                assert_eq!(get(p, 0, 0), 42, "fetched the flag but not the data");
            }
        })
    });
}

/// Happens-before carried onwards by atomics, with no wait on the way: PE 0 puts data and,
/// after `fence`, sets a flag in its own memory; PE 1 fetches that flag and, if set, sets its
/// own flag by an atomic; PE 2 fetches PE 1's flag and, if set, must get PE 0's data. The
/// release half of PE 1's AcqRel atomic is what passes PE 0's data on. 3 threads, bound 3.
#[test]
fn atomics_pass_happens_before_on() {
    check("atomic chain of 3 PEs", Some(3), || {
        run_pes(3, None, |p, me, _| match me {
            0 => fenced_own_puts(p),
            1 => {
                if fetch_amo(p, 0, 1, amo(AmoKind::Fetch, 0)) == 1 {
                    p.q.amo(word(1, 1), amo(AmoKind::Set, 1), false).unwrap();
                }
            }
            _ => {
                if fetch_amo(p, 1, 1, amo(AmoKind::Fetch, 0)) == 1 {
                    assert_eq!(get(p, 0, 0), 42, "a chain of atomics lost the data");
                }
            }
        })
    });
}

/// PE 0 puts data, fences and puts a flag into PE 1's memory; PE 1 reads the flag with a
/// plain `read_local` (no wait): if set, the data must be there (`read_local` is an Acquire
/// load). 2 threads, unbounded.
#[test]
fn plain_read_sees_fenced_puts_in_order() {
    check("read_local polls a fenced flag", None, || {
        run_pes(2, None, |p, me, _| {
            if me == 0 {
                p.q.put(word(1, 0), &42u64.to_le_bytes(), Copier::Device)
                    .unwrap();
                p.q.fence().unwrap();
                p.q.put(word(1, 1), &1u64.to_le_bytes(), Copier::Device)
                    .unwrap();
            } else if read(p, 1) == 1 {
                assert_eq!(read(p, 0), 42, "read the flag but not the data");
            }
        })
    });
}

/// PE 0 puts-with-signal into its own memory; PE 1 gets the signal and, if set, must get the
/// data (R5 for a reader that polls with get: the signal update releases the data).
/// 2 threads, unbounded.
#[test]
fn put_signal_polled_by_get() {
    check("put_signal polled by get", None, || {
        run_pes(2, None, signal_polled)
    });
}

/// The body of [`put_signal_polled_by_get`], shared with its weakened companion.
fn signal_polled(p: &Node, me: u32, _n: u32) {
    if me == 0 {
        let data = 42u64.to_le_bytes();
        p.q.put_signal(
            word(0, 0),
            &data,
            word(0, 1),
            SignalOp::Set,
            1,
            Copier::Device,
        )
        .unwrap();
    } else if get(p, 0, 1) == 1 {
        assert_eq!(get(p, 0, 0), 42, "got the signal but not the data");
    }
}

// ---- completion ----

/// PE 0: put; quiet; put of a flag (no fence: quiet completed the data). PE 1 waits for the
/// flag, then must see the data (R2). 2 threads, unbounded.
#[test]
fn quiet_then_flag() {
    check("quiet then flag", None, || {
        run_pes(2, None, |p, me, _| {
            if me == 0 {
                let t =
                    p.q.put(word(1, 0), &7u64.to_le_bytes(), Copier::Device)
                        .unwrap();
                p.q.quiet(NEVER).unwrap();
                assert!(p.q.is_complete(t));
                p.q.put(word(1, 1), &1u64.to_le_bytes(), Copier::Device)
                    .unwrap();
            } else {
                wait(p, 1, Cmp::Eq, 1);
                assert_eq!(read(p, 0), 7, "quiet did not complete the put");
            }
        })
    });
}

/// PE 0 puts into PE 2's memory (PE 2 runs nothing), quiets, then signals PE 1; PE 1 waits
/// and gets the word from PE 2: it must see the completed put (R2, visibility to a third
/// party). 2 threads, unbounded.
#[test]
fn get_after_quiet() {
    check("get after quiet", None, || {
        let (w, keys) = world(3, None);
        let (w1, k1) = (w.clone(), keys.clone());
        let h = thread::spawn(move || {
            let p = node(&w1, &k1, 1);
            wait(&p, 0, Cmp::Ge, 1);
            assert_eq!(get(&p, 2, 5), 99, "a get missed a put completed by quiet");
        });
        let p = node(&w, &keys, 0);
        p.q.put(word(2, 5), &99u64.to_le_bytes(), Copier::Device)
            .unwrap();
        p.q.quiet(NEVER).unwrap();
        p.q.amo(word(1, 0), amo(AmoKind::Add, 1), false).unwrap();
        h.join().unwrap();
    });
}

/// "put; quiet; get" on two PEs cannot both miss (R2, R8): each PE puts a flag into its own
/// memory (no wake-up fence runs), quiets, and gets the other's flag; at least one sees a 1.
/// This is the store-buffering shape, which only quiet's `fence(SeqCst)` forbids.
/// 2 threads, unbounded.
#[test]
fn put_quiet_get_cannot_both_miss() {
    check("put; quiet; get on 2 PEs", None, || {
        let (w, keys) = world(2, None);
        let body = |p: &Node, me: u32| {
            p.q.put(word(me, 0), &1u64.to_le_bytes(), Copier::Device)
                .unwrap();
            p.q.quiet(NEVER).unwrap();
            get(p, 1 - me, 0)
        };
        let (w1, k1) = (w.clone(), keys.clone());
        let h = thread::spawn(move || body(&node(&w1, &k1, 1), 1));
        let seen0 = body(&node(&w, &keys, 0), 0);
        let seen1 = h.join().unwrap();
        assert!(seen0 == 1 || seen1 == 1, "both PEs missed the other's put");
    });
}

/// The consistency step of a satisfied wait is a `fence(SeqCst)`: every update delivered
/// before it in the fences' single order is visible after it. PE 0 puts into PE 1's word 0
/// (the put's wake-up check is a `fence(SeqCst)`: delivered), then gets PE 1's word 1. PE 1
/// sets its own word 1 with an atomic (no wake-up fence: its own memory), passes a wait that
/// is already satisfied, and reads word 0. Store buffering: one of them must see the other's
/// write. 2 threads, unbounded.
#[test]
fn consistency_step_sees_delivered_puts() {
    check("consistency step vs delivered put", None, || {
        let (w, keys) = world(2, None);
        let (w1, k1) = (w.clone(), keys.clone());
        let h = thread::spawn(move || {
            let p = node(&w1, &k1, 1);
            p.q.amo(word(1, 1), amo(AmoKind::Set, 1), false).unwrap();
            wait(&p, 1, Cmp::Eq, 1);
            read(&p, 0)
        });
        let p = node(&w, &keys, 0);
        p.q.put(word(1, 0), &1u64.to_le_bytes(), Copier::Device)
            .unwrap();
        let seen0 = get(&p, 1, 1);
        let seen1 = h.join().unwrap();
        assert!(
            seen0 == 1 || seen1 == 1,
            "a delivered put was missed after a wait"
        );
    });
}

// ---- atomics ----

/// Three PEs fetch-add PE 0's counter: distinct fetched values, exact total (R6).
/// 3 threads, bound 3.
#[test]
fn fetch_add_from_three_pes() {
    check("fetch_add from 3 PEs", Some(3), || {
        let (w, keys) = world(3, None);
        let handles: Vec<_> = (1..3)
            .map(|me| {
                let (w, keys) = (w.clone(), keys.clone());
                thread::spawn(move || fetch_amo(&node(&w, &keys, me), 0, 0, amo(AmoKind::Add, 1)))
            })
            .collect();
        let p = node(&w, &keys, 0);
        let mut got = vec![fetch_amo(&p, 0, 0, amo(AmoKind::Add, 1))];
        got.extend(handles.into_iter().map(|h| h.join().unwrap()));
        got.sort_unstable();
        assert_eq!(got, [0, 1, 2]);
        assert_eq!(read(&p, 0), 3);
    });
}

/// A 32-bit atomic on the low half of a word and a partial-word put into the high half do
/// not disturb each other. 2 threads, unbounded.
#[test]
fn half_word_atomic_and_partial_put() {
    check("w32 atomic + partial put", None, || {
        let (w, keys) = world(2, None);
        let (w1, k1) = (w.clone(), keys.clone());
        let h = thread::spawn(move || {
            let p = node(&w1, &k1, 1);
            let add = AmoOp {
                kind: AmoKind::Add,
                operand: 5,
                width: AmoWidth::W32,
            };
            p.q.amo(at(0, 0, 4), add, false).unwrap();
            p.q.amo(at(0, 0, 4), add, false).unwrap();
        });
        let p = node(&w, &keys, 0);
        p.q.put(at(0, 4, 3), &[1, 2, 3], Copier::Device).unwrap();
        h.join().unwrap();
        assert_eq!(read(&p, 0).to_le_bytes(), [10, 0, 0, 0, 1, 2, 3, 0]);
    });
}

/// A lock on PE 0's word 0 built from compare-and-swap: a PE that loses waits on its own
/// word 2 for a release count newer than the one it read before trying. The critical
/// section increments PE 0's word 1 by get and put (not atomic): the total must be exact.
fn cas_lock(p: &Node, me: u32, n: u32) {
    loop {
        let released = read(p, 2);
        let cas = amo(AmoKind::CompareSwap { compare: 0 }, u64::from(me) + 1);
        if fetch_amo(p, 0, 0, cas) == 0 {
            break;
        }
        wait(p, 2, Cmp::Gt, released);
    }
    let v = get(p, 0, 1);
    p.q.put(word(0, 1), &(v + 1).to_le_bytes(), Copier::Device)
        .unwrap();
    p.q.quiet(NEVER).unwrap();
    p.q.amo(word(0, 0), amo(AmoKind::Set, 0), false).unwrap();
    for other in (0..n).filter(|&o| o != me) {
        p.q.amo(word(other, 2), amo(AmoKind::Add, 1), false)
            .unwrap();
    }
}

fn cas_lock_model(n: u32) {
    let (w, keys) = world(n, None);
    let handles: Vec<_> = (1..n)
        .map(|me| {
            let (w, keys) = (w.clone(), keys.clone());
            thread::spawn(move || cas_lock(&node(&w, &keys, me), me, n))
        })
        .collect();
    let p = node(&w, &keys, 0);
    cas_lock(&p, 0, n);
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(
        read(&p, 1),
        u64::from(n),
        "two PEs were in the critical section"
    );
}

/// 2 threads, unbounded.
#[test]
fn compare_swap_lock_two_pes() {
    check("cas lock, 2 PEs", None, || cas_lock_model(2));
}

/// 3 threads, bound 3.
#[test]
fn compare_swap_lock_three_pes() {
    check("cas lock, 3 PEs", Some(3), || cas_lock_model(3));
}

// ---- the runtime's barrier ----

/// `runtime/src/p2p/ordering.rs`'s dissemination barrier over the backend: in round k a PE adds 1
/// to the round-k counter (word 4 + k) of the PE 2^k ahead and waits until its own reaches
/// the epoch. Around it, `barrier_all`'s use: in episode e each PE puts a value into its
/// successor's word e - 1, quiets, passes the barrier, and must read its predecessor's value.
/// The second episode reuses the counters (they only grow).
fn barrier_episodes(p: &Node, me: u32, n: u32, episodes: u64) {
    let rounds = u32::BITS - (n - 1).leading_zeros();
    for epoch in 1..=episodes {
        let value = epoch * 100 + u64::from(me);
        p.q.put(
            word((me + 1) % n, epoch - 1),
            &value.to_le_bytes(),
            Copier::Device,
        )
        .unwrap();
        p.q.quiet(NEVER).unwrap();
        for round in 0..rounds {
            let successor = (me + (1 << round)) % n;
            let counter = 4 + u64::from(round);
            p.q.amo(word(successor, counter), amo(AmoKind::Add, 1), false)
                .unwrap();
            wait(p, counter, Cmp::Ge, epoch);
        }
        let left = u64::from((me + n - 1) % n);
        assert_eq!(
            read(p, epoch - 1),
            epoch * 100 + left,
            "PE {me} after barrier {epoch}"
        );
    }
}

/// 2 threads, two episodes, bound 3: unbounded did not finish in 4 minutes on the 2-core CI
/// machine (each wait is a mutex and a condvar, which loom explores in full).
#[test]
fn dissemination_barrier_two_pes() {
    check("dissemination barrier, 2 PEs x 2 episodes", Some(3), || {
        run_pes(2, None, |p, me, n| barrier_episodes(p, me, n, 2))
    });
}

/// 3 threads (two rounds), bound 3, one episode: two episodes did not finish in 12 minutes.
#[test]
fn dissemination_barrier_three_pes() {
    check("dissemination barrier, 3 PEs x 1 episode", Some(3), || {
        run_pes(3, None, |p, me, n| barrier_episodes(p, me, n, 1))
    });
}
