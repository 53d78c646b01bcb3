//! shuttle: 8 host PEs (threads) run random programs through the backend's `Device`/`Queue`
//! API under PCT schedules, and check at the end what every PE's memory must hold.
//!
//! Run: `RUSTFLAGS="--cfg rshmem_shuttle" cargo test --release -p hw --test shuttle -- --nocapture`.
//! `RSHMEM_SHUTTLE_SEED` picks the programs (default 1), `RSHMEM_SHUTTLE_ITERS` the number of
//! schedules (default 100 000). A failure panics in the test's closure, so shuttle prints the
//! failing schedule to replay with `shuttle::replay`.
//!
//! shuttle treats every atomic as SeqCst, so this finds protocol bugs (lost wake-ups,
//! deadlocks, lost updates, rendezvous reuse) at a scale loom cannot reach; weak-memory bugs
//! are loom's job (`tests/loom.rs`).
//!
//! Each program has a phase of at least 20 random operations with no waits (puts, gets,
//! 64- and 32-bit atomics, put-with-signal, fence, quiet), so every PE sends all of its
//! signals unconditionally; then it waits for every signal its peers' programs send it and
//! checks the data they guarded; then quiet and a rendezvous; then it checks its own memory.
#![cfg(rshmem_shuttle)]

use std::sync::Arc;

use hw::host::{Host, HostDevice, HostQueue};
use hw::{
    AmoKind, AmoOp, AmoWidth, Cmp, Copier, Device, Instant, Launcher, LocalRange, MemKind, Pe,
    Queue, RemoteRange, SignalOp, Topology, WaitSpec,
};

const PES: u32 = 8;
const OPS: usize = 20;
const NEVER: Instant = Instant(u64::MAX);

// Word layout of every PE's segment.
const COUNTERS: u64 = 0; // 4 words of 64-bit atomic adds
const HALVES: u64 = 4; // one word: 32-bit adds, low half from even PEs, high from odd
const SIGNALS: u64 = 5; // one signal word per sender
const MAILBOX: u64 = SIGNALS + PES as u64; // two words per sender, guarded by its signal
const SCRATCH: u64 = MAILBOX + 2 * PES as u64; // one word per sender, plain puts
const WORDS: u64 = SCRATCH + PES as u64;

/// One operation of a PE's random phase.
#[derive(Clone, Copy, Debug)]
enum Op {
    Put {
        to: u32,
    },
    Get {
        from: u32,
        slot: u32,
    },
    Add {
        to: u32,
        counter: u64,
        value: u64,
        fetch: bool,
    },
    Add32 {
        to: u32,
        value: u64,
    },
    Signal {
        to: u32,
    },
    Fence,
    Quiet,
}

/// The programs of all PEs, and what each PE's memory must hold at the end.
#[derive(Debug)]
struct Plan {
    programs: Vec<Vec<Op>>,
    /// Final word values per PE (index by word).
    expect: Vec<Vec<u64>>,
}

/// splitmix64: the programs' only randomness, from the seed.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The value PE `me`'s `seq`-th put or message carries: the sender in the high half.
fn tagged(me: u32, seq: u64) -> u64 {
    (u64::from(me) << 32) | seq
}

impl Plan {
    fn new(seed: u64) -> Plan {
        let mut rng = seed;
        let mut expect = vec![vec![0u64; WORDS as usize]; PES as usize];
        let programs = (0..PES)
            .map(|me| {
                let mut seq = 0;
                (0..OPS)
                    .map(|_| {
                        let peer = (next(&mut rng) % u64::from(PES)) as u32;
                        let op = match next(&mut rng) % 8 {
                            0 | 1 => Op::Put { to: peer },
                            2 => Op::Get {
                                from: peer,
                                slot: (next(&mut rng) % u64::from(PES)) as u32,
                            },
                            3 => Op::Add {
                                to: peer,
                                counter: next(&mut rng) % 4,
                                value: next(&mut rng) % 100,
                                fetch: next(&mut rng).is_multiple_of(2),
                            },
                            4 => Op::Add32 {
                                to: peer,
                                value: next(&mut rng) % 1000,
                            },
                            5 => Op::Signal { to: peer },
                            6 => Op::Fence,
                            _ => Op::Quiet,
                        };
                        let e = &mut expect[peer as usize];
                        let me_ = u64::from(me);
                        match op {
                            Op::Put { .. } => {
                                seq += 1;
                                e[(SCRATCH + me_) as usize] = tagged(me, seq);
                            }
                            Op::Add { counter, value, .. } => {
                                e[(COUNTERS + counter) as usize] += value;
                            }
                            Op::Add32 { value, .. } => {
                                let shift = 32 * (me_ % 2);
                                let w = &mut e[HALVES as usize];
                                let half = ((*w >> shift) + value) & 0xffff_ffff;
                                *w = (*w & !(0xffff_ffff << shift)) | (half << shift);
                            }
                            Op::Signal { .. } => {
                                seq += 1;
                                e[(SIGNALS + me_) as usize] += 1;
                                e[(MAILBOX + 2 * me_) as usize] = tagged(me, seq);
                                e[(MAILBOX + 2 * me_ + 1) as usize] = tagged(me, seq);
                            }
                            _ => {}
                        }
                        op
                    })
                    .collect()
            })
            .collect();
        Plan { programs, expect }
    }
}

fn range(pe: u32, w: u64, words: u64) -> RemoteRange {
    RemoteRange {
        pe: Pe(pe),
        kind: MemKind::Device,
        offset: w * 8,
        len: words * 8,
    }
}

fn read(dev: &HostDevice, w: u64) -> u64 {
    let mut b = [0u8; 8];
    let src = LocalRange {
        kind: MemKind::Device,
        offset: w * 8,
        len: 8,
    };
    dev.read_local(src, &mut b);
    u64::from_le_bytes(b)
}

/// Runs PE `me`'s program; `Err` names the first check that failed.
fn run_pe(plan: &Plan, dev: HostDevice) -> Result<(), String> {
    let me = dev.pe().0;
    let key = dev
        .create_segment(MemKind::Device, WORDS * 8)
        .map_err(|e| e.to_string())?;
    let keys = dev.exchange(&key.0, NEVER).map_err(|e| e.to_string())?;
    for (p, k) in keys.iter().cloned().enumerate() {
        dev.import_segment(Pe(p as u32), MemKind::Device, &hw::SegmentKey(k))
            .map_err(|e| e.to_string())?;
    }
    let q: HostQueue = dev.create_queue().map_err(|e| e.to_string())?;
    let fail = |e: hw::QueueError| e.to_string();
    let mut seq = 0;
    for op in &plan.programs[me as usize] {
        match *op {
            Op::Put { to } => {
                seq += 1;
                q.put(
                    range(to, SCRATCH + u64::from(me), 1),
                    &tagged(me, seq).to_le_bytes(),
                    Copier::Device,
                )
                .map_err(fail)?;
            }
            Op::Get { from, slot } => {
                let t = q
                    .get(range(from, SCRATCH + u64::from(slot), 1))
                    .map_err(fail)?;
                let v = u64::from_le_bytes(q.take_fetched(t).try_into().unwrap());
                if v != 0 && v >> 32 != u64::from(slot) {
                    return Err(format!("PE {me} got {v:#x} from PE {from}'s slot {slot}"));
                }
            }
            Op::Add {
                to,
                counter,
                value,
                fetch,
            } => {
                let op = AmoOp {
                    kind: AmoKind::Add,
                    operand: value,
                    width: AmoWidth::W64,
                };
                let t = q
                    .amo(range(to, COUNTERS + counter, 1), op, fetch)
                    .map_err(fail)?;
                if fetch {
                    let old = u64::from_le_bytes(q.take_fetched(t).try_into().unwrap());
                    let total = plan.expect[to as usize][(COUNTERS + counter) as usize];
                    if old + value > total {
                        return Err(format!(
                            "PE {me} fetched {old} from a counter ending at {total}"
                        ));
                    }
                }
            }
            Op::Add32 { to, value } => {
                let op = AmoOp {
                    kind: AmoKind::Add,
                    operand: value,
                    width: AmoWidth::W32,
                };
                let dst = RemoteRange {
                    pe: Pe(to),
                    kind: MemKind::Device,
                    offset: HALVES * 8 + 4 * u64::from(me % 2),
                    len: 4,
                };
                q.amo(dst, op, false).map_err(fail)?;
            }
            Op::Signal { to } => {
                seq += 1;
                let v = tagged(me, seq);
                let mut data = v.to_le_bytes().to_vec();
                data.extend_from_slice(&v.to_le_bytes());
                let sig = range(to, SIGNALS + u64::from(me), 1);
                q.put_signal(
                    range(to, MAILBOX + 2 * u64::from(me), 2),
                    &data,
                    sig,
                    SignalOp::Add,
                    1,
                    Copier::Device,
                )
                .map_err(fail)?;
            }
            Op::Fence => q.fence().map_err(fail)?,
            Op::Quiet => q.quiet(NEVER).map_err(fail)?,
        }
    }
    // Wait for every peer's signals, then the data they guard must be the last message.
    let expect = &plan.expect[me as usize];
    for from in 0..PES {
        let count = expect[(SIGNALS + u64::from(from)) as usize];
        if count == 0 {
            continue;
        }
        let spec = WaitSpec {
            word: LocalRange {
                kind: MemKind::Device,
                offset: (SIGNALS + u64::from(from)) * 8,
                len: 8,
            },
            width: AmoWidth::W64,
            signed: false,
            cmp: Cmp::Ge,
            value: count,
            purpose: "shuttle signals",
        };
        dev.wait_until(spec, NEVER).map_err(fail)?;
        for w in [
            MAILBOX + 2 * u64::from(from),
            MAILBOX + 2 * u64::from(from) + 1,
        ] {
            let (got, want) = (read(&dev, w), expect[w as usize]);
            if got != want {
                return Err(format!(
                    "PE {me} saw PE {from}'s signals but mailbox {got:#x}, not {want:#x}"
                ));
            }
        }
    }
    q.quiet(NEVER).map_err(fail)?;
    dev.exchange(&[], NEVER).map_err(fail)?;
    for w in 0..WORDS {
        let (got, want) = (read(&dev, w), expect[w as usize]);
        if got != want {
            return Err(format!(
                "PE {me}: word {w} holds {got:#x}, expected {want:#x}"
            ));
        }
    }
    Ok(())
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn random_programs_on_eight_pes() {
    let seed = env_u64("RSHMEM_SHUTTLE_SEED", 1);
    let iterations = env_u64("RSHMEM_SHUTTLE_ITERS", 100_000) as usize;
    let plan = Arc::new(Plan::new(seed));
    let ops: usize = plan.programs.iter().map(Vec::len).sum();
    println!(
        "shuttle: seed {seed}, {PES} PEs, {ops} random operations, {iterations} PCT schedules"
    );
    let start = std::time::Instant::now();
    shuttle::check_pct(
        move || {
            let host = Host::builder(Topology::single_host(PES).unwrap())
                .build()
                .unwrap();
            let (results, _) = host.launch(|dev| run_pe(&plan, dev)).unwrap();
            let failures: Vec<String> = results
                .into_iter()
                .filter_map(|r| match r {
                    Ok(Ok(())) => None,
                    Ok(Err(e)) => Some(e),
                    Err(f) => Some(format!("{} panicked: {}", f.pe, f.message)),
                })
                .collect();
            assert!(failures.is_empty(), "seed {seed}:\n{}", failures.join("\n"));
        },
        iterations,
        3,
    );
    println!("shuttle: {iterations} schedules in {:.2?}", start.elapsed());
}
