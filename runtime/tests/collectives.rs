//! Team collectives against sequential references, on random data and several team shapes.
//!
//! Each test runs one collective on two simulated machines: an 8-GPU NVSwitch node, where
//! every team is load/store reachable (one-shot and two-shot algorithms run), and two such
//! nodes on InfiniBand, where teams that span both take trees, recursive doubling,
//! dissemination, chains and rings. On each machine every PE joins several teams: the world, a
//! strided split, the rows and the columns of a 2-D split (of uneven sizes on one node; a node
//! each and pairs across nodes on two) and a team of one PE. Sizes straddle the plan's
//! thresholds, so between them the shapes run every algorithm but the ring allgather, which
//! the plan keeps for teams beyond 8192 PEs (the crate's own tests force every algorithm on
//! every shape). Every PE regenerates every member's data from the seed, computes the
//! expected result sequentially, and reports what differs; the test prints the seed.

use std::fmt::Debug;

use rshmem::ops::{
    And, ArithElement, BitwiseElement, Complex64, Max, Min, Or, OrderedElement, Prod, ReduceOp,
    Sum, Xor,
};
use rshmem::{Config, Element, Shmem, ShmemError, Sym, Team, TeamConfig, run};
use sim::{Sim, SimBackend};

/// The seed of every run and of the data.
const SEED: u64 = 0x00c0_11ec;

/// Bytes of each scratch buffer every PE allocates up front.
const BUFFER_BYTES: usize = 2 << 20;

/// The machines: (preset, PEs).
const HGX8: (&str, u32) = ("hgx8", 8);
const IB2: (&str, u32) = ("ib-2", 16);

type Pe = Shmem<SimBackend>;

fn config() -> Config {
    Config::default()
        .device_heap_size(16 << 20)
        .wait_timeout_ms(1_000)
}

/// Runs `pe_main` on every PE of `machine` and returns each PE's result, naming the first PE
/// that failed.
fn run_on<R: Send>(machine: (&str, u32), pe_main: impl Fn(&Pe) -> R + Sync) -> (Vec<R>, u64) {
    let (preset, n_pes) = machine;
    println!("seed {SEED:#x} on {preset}");
    let topology = sim::topology::presets::preset(preset).expect("a preset");
    let sim = Sim::builder(topology)
        .pes(n_pes)
        .seed(SEED)
        .build()
        .expect("the preset has the GPUs");
    let output = run(sim, config(), pe_main).expect("the PEs launch");
    match output.all_ok() {
        Ok((values, report)) => (values, report.sim_time_ns),
        Err(err) => panic!("seed {SEED:#x} on {preset}: {err}"),
    }
}

/// The teams a PE joins, named, in the same order on every PE: the world, a strided split
/// (if a member), the row and the column of a 2-D split, and a team of one.
fn teams(shmem: &Pe) -> Vec<(&'static str, Team)> {
    let world = shmem.team_world().clone();
    let n = shmem.n_pes();
    let config = TeamConfig::default();
    let (stride, xrange) = if n == 8 { (2, 3) } else { (3, 8) };
    let size = (n - 1).div_ceil(stride);
    let strided = shmem
        .team_split_strided(&world, 1, stride, size, config)
        .expect("split_strided");
    let (row, column) = shmem
        .team_split_2d(&world, xrange, config, config)
        .expect("split_2d");
    let (single, _) = shmem
        .team_split_2d(&world, 1, config, config)
        .expect("split_2d into ones");
    let mut teams = vec![("world", world)];
    teams.extend(strided.map(|team| ("strided", team)));
    teams.extend([("row", row), ("column", column), ("one PE", single)]);
    teams
}

/// Runs `check` on every team of every PE of both machines and fails with every difference.
fn on_every_team(check: impl Fn(&Pe, &Scratch, &Team) -> Vec<String> + Sync) {
    for machine in [HGX8, IB2] {
        let (failures, _) = run_on(machine, |shmem| {
            let scratch = Scratch::new(shmem);
            teams(shmem)
                .into_iter()
                .flat_map(|(name, team)| {
                    let failures = check(shmem, &scratch, &team);
                    failures.into_iter().map(move |f| format!("{name}: {f}"))
                })
                .collect::<Vec<String>>()
        });
        let failures: Vec<String> = failures.into_iter().flatten().collect();
        assert!(
            failures.is_empty(),
            "seed {SEED:#x} on {}: {} differences, the first: {:#?}",
            machine.0,
            failures.len(),
            &failures[..failures.len().min(5)]
        );
    }
}

/// Two symmetric buffers allocated by every PE, viewed as arrays of any element type.
struct Scratch {
    a: Sym<u8>,
    b: Sym<u8>,
}

impl Scratch {
    fn new(shmem: &Pe) -> Scratch {
        Scratch {
            a: shmem.malloc(BUFFER_BYTES).expect("malloc"),
            b: shmem.malloc(BUFFER_BYTES).expect("malloc"),
        }
    }

    /// `len` elements of `T` at the start of buffer a (the source) and of b (the dest).
    fn views<T: Element>(&self, len_source: usize, len_dest: usize) -> (Sym<T>, Sym<T>) {
        (self.a.addr().cast(len_source), self.b.addr().cast(len_dest))
    }
}

/// Element types that can be drawn at random and compared, chosen so that every operator's
/// result is exact (floats are small powers of two), so any order of combination gives the
/// sequential result bit for bit.
trait Sample: Element + PartialEq + Debug {
    fn sample(bits: u64) -> Self;
}

macro_rules! sample_integers {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            fn sample(bits: u64) -> Self {
                bits as $t
            }
        }
    )*};
}

sample_integers!(i8, u8, i16, u32, i32, i64, u64);

/// `bits` as one of ±0.5, ±1, ±2.
fn small_power_of_two(bits: u64) -> f64 {
    let magnitude = [0.5, 1.0, 2.0][(bits % 3) as usize];
    if bits & 8 == 0 { magnitude } else { -magnitude }
}

impl Sample for f64 {
    fn sample(bits: u64) -> Self {
        small_power_of_two(bits)
    }
}

impl Sample for f32 {
    fn sample(bits: u64) -> Self {
        small_power_of_two(bits) as f32
    }
}

impl Sample for Complex64 {
    fn sample(bits: u64) -> Self {
        // A real or an imaginary power of two: products stay exact.
        let value = small_power_of_two(bits);
        if bits & 16 == 0 {
            Complex64 { re: value, im: 0.0 }
        } else {
            Complex64 { re: 0.0, im: value }
        }
    }
}

/// SplitMix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The `len` values team PE `member` contributes to the call named `call`.
fn values<T: Sample>(call: u64, member: u32, len: usize) -> Vec<T> {
    let base = mix(SEED ^ mix(call) ^ mix(u64::from(member) << 32));
    (0..len as u64).map(|i| T::sample(mix(base ^ i))).collect()
}

/// A name for a call, to seed its data.
fn call_id(words: &[u64]) -> u64 {
    words.iter().fold(0, |h, &w| mix(h ^ w))
}

/// `None` if `got` is `want`, else where they first differ.
fn compare<T: PartialEq + Debug>(what: &str, got: &[T], want: &[T]) -> Option<String> {
    if got == want {
        return None;
    }
    let at = got
        .iter()
        .zip(want)
        .position(|(g, w)| g != w)
        .unwrap_or(got.len().min(want.len()));
    Some(format!(
        "{what}: {} elements, {} wanted; first difference at {at}: {:?} instead of {:?}",
        got.len(),
        want.len(),
        got.get(at),
        want.get(at)
    ))
}

fn me_and_n(team: &Team) -> (u32, u32) {
    (team.my_pe().expect("live"), team.n_pes().expect("live"))
}

#[test]
fn broadcast_matches_the_root_on_every_team() {
    on_every_team(|shmem, scratch, team| {
        let (me, n) = me_and_n(team);
        let mut failures = Vec::new();
        for len in [0, 1, 7, 24_000] {
            for root in [0, n - 1, n / 2] {
                let call = call_id(&[1, len as u64, root.into()]);
                let (source, dest) = scratch.views::<u64>(len, len + 3);
                shmem
                    .set_local(source, &values(call, me, len))
                    .expect("set_local");
                let before: Vec<u64> = values(call ^ 1, me, 3);
                shmem
                    .set_local(dest.slice(len..).expect("tail"), &before)
                    .expect("set_local");
                shmem
                    .broadcast(team, dest, source, root)
                    .expect("broadcast");
                let mut want = values::<u64>(call, root, len);
                want.extend(before);
                let what = format!("{len} elements from root {root}, team PE {me}");
                failures.extend(compare(&what, &shmem.local(dest).expect("local"), &want));
            }
        }
        failures
    });
}

/// collect (`fixed` false, lengths differ between members, some zero) or fcollect.
fn check_collect(shmem: &Pe, scratch: &Scratch, team: &Team, fixed: bool) -> Vec<String> {
    let (me, n) = me_and_n(team);
    let mut failures = Vec::new();
    for size in [0, 3, 10_000] {
        let len_of = |member: u32| {
            if fixed {
                size
            } else {
                size + (member as usize * 7 + size) % 5
            }
        };
        let call = call_id(&[2, size as u64, fixed.into()]);
        let total: usize = (0..n).map(len_of).sum();
        let (source, dest) = scratch.views::<u32>(len_of(me), total);
        shmem
            .set_local(source, &values(call, me, len_of(me)))
            .expect("set_local");
        if fixed {
            shmem.fcollect(team, dest, source).expect("fcollect");
        } else {
            shmem.collect(team, dest, source).expect("collect");
        }
        let want: Vec<u32> = (0..n)
            .flat_map(|member| values::<u32>(call, member, len_of(member)))
            .collect();
        let what = format!("blocks of about {size}, team PE {me}");
        failures.extend(compare(&what, &shmem.local(dest).expect("local"), &want));
    }
    failures
}

#[test]
fn collect_concatenates_blocks_of_every_length_on_every_team() {
    on_every_team(|shmem, scratch, team| check_collect(shmem, scratch, team, false));
}

#[test]
fn fcollect_concatenates_equal_blocks_on_every_team() {
    on_every_team(|shmem, scratch, team| check_collect(shmem, scratch, team, true));
}

/// What member `receiver` finds in dest after an alltoalls of `nelems` with the strides, where
/// dest held `before`.
fn alltoalls_reference(
    call: u64,
    receiver: u32,
    n: u32,
    (dst, src, nelems): (usize, usize, usize),
    before: &[i32],
) -> Vec<i32> {
    let mut want = before.to_vec();
    for sender in 0..n {
        let source: Vec<i32> = values(call, sender, before_len(n, src, nelems));
        for k in 0..nelems {
            let from = (receiver as usize * nelems + k) * src;
            want[(sender as usize * nelems + k) * dst] = source[from];
        }
    }
    want
}

/// The elements a strided buffer of `n` blocks of `nelems` spans.
fn before_len(n: u32, stride: usize, nelems: usize) -> usize {
    (n as usize * nelems).saturating_sub(1) * stride + usize::from(n as usize * nelems > 0)
}

fn check_alltoalls(shmem: &Pe, scratch: &Scratch, team: &Team, strided: bool) -> Vec<String> {
    let (me, n) = me_and_n(team);
    let shapes: &[(usize, usize, usize)] = if strided {
        &[(2, 3, 4), (1, 2, 5), (3, 1, 1), (2, 2, 0)]
    } else {
        &[(1, 1, 0), (1, 1, 2), (1, 1, 3_000)]
    };
    let mut failures = Vec::new();
    for &(dst, src, nelems) in shapes {
        let call = call_id(&[3, dst as u64, src as u64, nelems as u64]);
        let (source, dest) =
            scratch.views::<i32>(before_len(n, src, nelems), before_len(n, dst, nelems));
        shmem
            .set_local(source, &values(call, me, source.len()))
            .expect("set_local");
        let before: Vec<i32> = values(call ^ 1, me, dest.len());
        shmem.set_local(dest, &before).expect("set_local");
        if strided {
            shmem.alltoalls(team, dest, source, dst, src, nelems)
        } else {
            shmem.alltoall(team, dest, source)
        }
        .expect("alltoall");
        let want = alltoalls_reference(call, me, n, (dst, src, nelems), &before);
        let what = format!("strides {dst}/{src}, {nelems} per block, team PE {me}");
        failures.extend(compare(&what, &shmem.local(dest).expect("local"), &want));
    }
    failures
}

#[test]
fn alltoall_exchanges_blocks_on_every_team() {
    on_every_team(|shmem, scratch, team| check_alltoalls(shmem, scratch, team, false));
}

#[test]
fn alltoalls_exchanges_strided_blocks_on_every_team() {
    on_every_team(|shmem, scratch, team| check_alltoalls(shmem, scratch, team, true));
}

/// The sequential reduction of every member's `values(call, member, len)` with `Op`.
fn reduced<T: Sample, Op: ReduceOp<T>>(call: u64, n: u32, len: usize) -> Vec<T> {
    let mut acc = values::<T>(call, 0, len);
    for member in 1..n {
        for (a, b) in acc.iter_mut().zip(values::<T>(call, member, len)) {
            *a = Op::combine(*a, b);
        }
    }
    acc
}

/// Reduces `len` random elements with `op`, in place or not, and compares.
fn check_reduce<T: Sample, Op: ReduceOp<T>>(
    shmem: &Pe,
    scratch: &Scratch,
    team: &Team,
    op: Op,
    len: usize,
    in_place: bool,
) -> Option<String> {
    let (me, n) = me_and_n(team);
    let call = call_id(&[4, len as u64, in_place.into()]) ^ mix(Op::NAME.len() as u64);
    let (source, dest) = scratch.views::<T>(len, len);
    let dest = if in_place { source } else { dest };
    shmem
        .set_local(source, &values(call, me, len))
        .expect("set_local");
    shmem.reduce(team, op, dest, source).expect("reduce");
    let what = format!(
        "{} of {len} {}{}, team PE {me}",
        Op::NAME,
        std::any::type_name::<T>(),
        if in_place { " in place" } else { "" }
    );
    compare(
        &what,
        &shmem.local(dest).expect("local"),
        &reduced::<T, Op>(call, n, len),
    )
}

/// Every operator on integer type `T`.
fn every_operator<T: Sample + BitwiseElement + OrderedElement + ArithElement>(
    shmem: &Pe,
    scratch: &Scratch,
    team: &Team,
    len: usize,
) -> Vec<String> {
    [
        check_reduce::<T, _>(shmem, scratch, team, And, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Or, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Xor, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Max, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Min, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Sum, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Prod, len, false),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The operators of float type `T`.
fn float_operators<T: Sample + OrderedElement + ArithElement>(
    shmem: &Pe,
    scratch: &Scratch,
    team: &Team,
    len: usize,
) -> Vec<String> {
    [
        check_reduce::<T, _>(shmem, scratch, team, Max, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Min, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Sum, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Prod, len, true),
    ]
    .into_iter()
    .flatten()
    .collect()
}

#[test]
fn every_reduction_operator_matches_on_every_team() {
    on_every_team(|shmem, scratch, team| {
        let mut failures = every_operator::<u8>(shmem, scratch, team, 5);
        failures.extend(every_operator::<i16>(shmem, scratch, team, 9));
        failures.extend(every_operator::<i32>(shmem, scratch, team, 1));
        failures.extend(every_operator::<u64>(shmem, scratch, team, 17));
        failures.extend(float_operators::<f32>(shmem, scratch, team, 6));
        failures.extend(float_operators::<f64>(shmem, scratch, team, 11));
        failures.extend(check_reduce::<u32, _>(shmem, scratch, team, Sum, 0, false));
        failures.extend(check_reduce::<Complex64, _>(
            shmem, scratch, team, Sum, 4, false,
        ));
        failures.extend(check_reduce::<Complex64, _>(
            shmem, scratch, team, Prod, 4, true,
        ));
        failures
    });
}

#[test]
fn large_reductions_split_the_work_and_match_on_every_team() {
    on_every_team(|shmem, scratch, team| {
        // 100 000 f64 (800 KB) takes two-shot on a node and the ring across nodes.
        [
            check_reduce::<f64, _>(shmem, scratch, team, Sum, 100_000, false),
            check_reduce::<f64, _>(shmem, scratch, team, Max, 100_000, true),
            check_reduce::<i64, _>(shmem, scratch, team, Xor, 30_001, false),
        ]
        .into_iter()
        .flatten()
        .collect()
    });
}

/// Reduce-scatters `block` elements per member with `Op` and compares.
fn check_reduce_scatter<T: Sample, Op: ReduceOp<T>>(
    shmem: &Pe,
    scratch: &Scratch,
    team: &Team,
    op: Op,
    block: usize,
) -> Option<String> {
    let (me, n) = me_and_n(team);
    let call = call_id(&[5, block as u64]) ^ mix(Op::NAME.len() as u64);
    let (source, dest) = scratch.views::<T>(block * n as usize, block);
    shmem
        .set_local(source, &values(call, me, source.len()))
        .expect("set_local");
    shmem
        .reduce_scatter(team, op, dest, source)
        .expect("reduce_scatter");
    let all = reduced::<T, Op>(call, n, source.len());
    let mine = &all[me as usize * block..(me as usize + 1) * block];
    let what = format!("{} of {block} per PE, team PE {me}", Op::NAME);
    compare(&what, &shmem.local(dest).expect("local"), mine)
}

#[test]
fn reduce_scatter_leaves_each_member_its_block_on_every_team() {
    on_every_team(|shmem, scratch, team| {
        [
            check_reduce_scatter::<u32, _>(shmem, scratch, team, Sum, 0),
            check_reduce_scatter::<u32, _>(shmem, scratch, team, Sum, 3),
            check_reduce_scatter::<i64, _>(shmem, scratch, team, Min, 5),
            check_reduce_scatter::<u8, _>(shmem, scratch, team, Or, 2),
            check_reduce_scatter::<f64, _>(shmem, scratch, team, Sum, 8_000),
        ]
        .into_iter()
        .flatten()
        .collect()
    });
}

/// An inclusive or exclusive prefix sum of `len` elements, in place or not.
fn check_scan<T: Sample + ArithElement>(
    shmem: &Pe,
    scratch: &Scratch,
    team: &Team,
    inclusive: bool,
    len: usize,
    in_place: bool,
) -> Option<String> {
    let (me, _) = me_and_n(team);
    let call = call_id(&[6, len as u64, inclusive.into(), in_place.into()]);
    let (source, dest) = scratch.views::<T>(len, len);
    let dest = if in_place { source } else { dest };
    shmem
        .set_local(source, &values(call, me, len))
        .expect("set_local");
    if inclusive {
        shmem.sum_inscan(team, dest, source)
    } else {
        shmem.sum_exscan(team, dest, source)
    }
    .expect("scan");
    let upto = if inclusive { me + 1 } else { me };
    let mut want = vec![T::zeroed(); len];
    for member in 0..upto {
        for (w, v) in want.iter_mut().zip(values::<T>(call, member, len)) {
            *w = T::sum(*w, v);
        }
    }
    let kind = if inclusive { "inscan" } else { "exscan" };
    let what = format!("{kind} of {len}, team PE {me}");
    compare(&what, &shmem.local(dest).expect("local"), &want)
}

#[test]
fn prefix_sums_match_on_every_team() {
    on_every_team(|shmem, scratch, team| {
        let mut failures = Vec::new();
        for inclusive in [true, false] {
            failures.extend(check_scan::<i64>(shmem, scratch, team, inclusive, 7, false));
            failures.extend(check_scan::<u8>(shmem, scratch, team, inclusive, 3, true));
            // 40 000 f64 (320 KB) runs the chain in pieces on both machines.
            failures.extend(check_scan::<f64>(
                shmem, scratch, team, inclusive, 40_000, inclusive,
            ));
        }
        failures
    });
}

#[test]
fn team_barrier_completes_puts_within_split_teams() {
    for machine in [HGX8, IB2] {
        let (failures, _) = run_on(machine, |shmem| {
            // A slot per team: members of one team may still be busy in the previous team
            // while another team's members already put.
            let slots = shmem.calloc::<u64>(5).expect("calloc");
            let mut failures = Vec::new();
            for (name, team) in teams(shmem) {
                let (me, n) = me_and_n(&team);
                let slot = slots.at(slot_of(name)).expect("a slot");
                for round in 0..3u64 {
                    // Each member puts into the next member's slot, by world PE number.
                    let next = shmem
                        .team_translate_pe(&team, (me + 1) % n, shmem.team_world())
                        .expect("translate")
                        .expect("a team PE is a world PE");
                    shmem.p(slot, round * 100 + u64::from(me), next).expect("p");
                    shmem.team_barrier(&team).expect("team_barrier");
                    let got = shmem.local(slot).expect("local")[0];
                    let want = round * 100 + u64::from((me + n - 1) % n);
                    if got != want {
                        failures.push(format!("{name} round {round}: {got} instead of {want}"));
                    }
                    shmem.team_sync(&team).expect("team_sync");
                }
            }
            failures
        });
        let failures: Vec<String> = failures.into_iter().flatten().collect();
        assert!(failures.is_empty(), "{failures:#?}");
    }
}

/// The slot of a team of [`teams`]: its place in the list of a PE in every team.
fn slot_of(name: &str) -> usize {
    ["world", "strided", "row", "column", "one PE"]
        .iter()
        .position(|n| *n == name)
        .expect("a team of teams()")
}

/// Runs `body`, which checks the errors it meets, on every PE of `machine`; each PE returns
/// its last error, so the run shows every PE got one.
fn errors_on_every_pe(machine: (&str, u32), body: impl Fn(&Pe) -> ShmemError + Sync) {
    let (errors, _) = run_on(machine, body);
    assert_eq!(errors.len(), machine.1 as usize);
}

#[test]
fn mismatched_lengths_fail_on_every_pe_and_leave_the_team_usable() {
    errors_on_every_pe(HGX8, |shmem| {
        let team = shmem.team_world();
        let words = shmem.malloc::<u64>(64).expect("malloc");
        let (source, dest) = (words.slice(..8).unwrap(), words.slice(32..).unwrap());
        let short = if shmem.my_pe() == 3 { 5 } else { 8 };
        let source_here = source.slice(..short).unwrap();
        for err in [
            shmem.broadcast(team, dest, source_here, 0).unwrap_err(),
            shmem.reduce(team, Sum, dest, source_here).unwrap_err(),
            shmem.fcollect(team, dest, source_here).unwrap_err(),
            shmem.sum_inscan(team, dest, source_here).unwrap_err(),
        ] {
            assert!(
                matches!(err, ShmemError::CollectiveMismatch { .. }),
                "{err}"
            );
            assert!(err.to_string().contains("PE 3: 5 elements"), "{err}");
        }
        // Disagreement on the operator or root is caught too.
        let op_err = if shmem.my_pe() == 0 {
            shmem.reduce(team, Max, dest.slice(..8).unwrap(), source)
        } else {
            shmem.reduce(team, Sum, dest.slice(..8).unwrap(), source)
        }
        .unwrap_err();
        assert!(
            matches!(op_err, ShmemError::CollectiveMismatch { .. }),
            "{op_err}"
        );
        let root = if shmem.my_pe() == 2 { 1 } else { 0 };
        let root_err = shmem.broadcast(team, dest, source, root).unwrap_err();
        assert!(
            matches!(root_err, ShmemError::CollectiveMismatch { .. }),
            "{root_err}"
        );
        // Nothing moved, no counter counts a stray arrival: the next call works.
        shmem
            .set_local(source, &[u64::from(shmem.my_pe()); 8])
            .unwrap();
        shmem
            .reduce(team, Sum, dest.slice(..8).unwrap(), source)
            .unwrap();
        assert_eq!(shmem.local(dest.slice(..8).unwrap()).unwrap(), [28; 8]);
        root_err
    });
}

#[test]
fn bad_roots_buffers_and_strides_are_typed_errors_on_every_pe() {
    errors_on_every_pe(HGX8, |shmem| {
        let world = shmem.team_world();
        let config = TeamConfig::default();
        let half = shmem
            .team_split_strided(world, 0, 2, 4, config)
            .expect("split");
        let words = shmem.malloc::<u64>(64).expect("malloc");
        let (source, dest) = (words.slice(..8).unwrap(), words.slice(32..).unwrap());

        let err = shmem.broadcast(world, dest, source, 8).unwrap_err();
        assert!(
            matches!(err, ShmemError::PeOutOfRange { pe: 8, .. }),
            "{err}"
        );
        if let Some(half) = &half {
            let err = shmem.broadcast(half, dest, source, 4).unwrap_err();
            assert!(
                matches!(err, ShmemError::PeNotInTeam { pe: 4, .. }),
                "{err}"
            );
        }
        // A root bad on one PE only: that PE says why, the others who refused.
        let root = if shmem.my_pe() == 5 { 9 } else { 0 };
        let err = shmem.broadcast(world, dest, source, root).unwrap_err();
        if shmem.my_pe() == 5 {
            assert!(
                matches!(err, ShmemError::PeOutOfRange { pe: 9, .. }),
                "{err}"
            );
        } else {
            assert!(
                matches!(err, ShmemError::CollectiveFailedOnPeer { .. })
                    && err.to_string().contains("team PE 5"),
                "{err}"
            );
        }

        let err = shmem
            .broadcast(world, dest.slice(..4).unwrap(), source, 0)
            .unwrap_err();
        assert!(
            matches!(
                err,
                ShmemError::CollectiveBufferTooSmall {
                    needed: 8,
                    len: 4,
                    ..
                }
            ),
            "{err}"
        );
        // collect learns the total only from the agreement, and refuses on every PE too.
        let err = shmem.collect(world, dest, source).unwrap_err();
        assert!(
            matches!(err, ShmemError::CollectiveBufferTooSmall { needed: 64, .. }),
            "{err}"
        );
        let err = shmem
            .reduce(world, Sum, words.slice(4..12).unwrap(), source)
            .unwrap_err();
        assert!(matches!(err, ShmemError::CollectiveOverlap { .. }), "{err}");
        assert!(err.to_string().contains("very same array"), "{err}");
        let err = shmem.fcollect(world, source, source).unwrap_err();
        assert!(matches!(err, ShmemError::CollectiveOverlap { .. }), "{err}");
        let err = shmem
            .alltoall(world, dest, source.slice(..7).unwrap())
            .unwrap_err();
        assert!(
            matches!(
                err,
                ShmemError::CollectiveUnevenBlocks {
                    len: 7,
                    n_pes: 8,
                    ..
                }
            ),
            "{err}"
        );
        let err = shmem
            .reduce_scatter(world, Sum, dest, words.slice(..9).unwrap())
            .unwrap_err();
        assert!(
            matches!(err, ShmemError::CollectiveUnevenBlocks { .. }),
            "{err}"
        );
        let err = shmem.alltoalls(world, dest, source, 0, 1, 1).unwrap_err();
        assert!(
            matches!(err, ShmemError::CollectiveZeroStride { .. }),
            "{err}"
        );
        let err = shmem.alltoalls(world, dest, source, 1, 2, 1).unwrap_err();
        assert!(
            matches!(
                err,
                ShmemError::CollectiveBufferTooSmall {
                    buffer: "source",
                    needed: 15,
                    ..
                }
            ),
            "{err}"
        );
        err
    });
}

#[test]
fn collectives_on_a_destroyed_team_fail_on_every_member() {
    errors_on_every_pe(HGX8, |shmem| {
        let world = shmem.team_world();
        let words = shmem.malloc::<u64>(16).expect("malloc");
        let (row, column) = shmem
            .team_split_2d(world, 4, TeamConfig::default(), TeamConfig::default())
            .expect("split_2d");
        shmem.team_destroy(&row).expect("destroy");
        let (source, dest) = (words.slice(..1).unwrap(), words.slice(8..).unwrap());
        let err = shmem.broadcast(&row, dest, source, 0).unwrap_err();
        assert!(matches!(err, ShmemError::TeamDestroyed { .. }), "{err}");
        let err = shmem.reduce(&row, Sum, dest, source).unwrap_err();
        assert!(matches!(err, ShmemError::TeamDestroyed { .. }), "{err}");
        // The column team is untouched.
        shmem
            .broadcast(&column, dest, source, 0)
            .expect("broadcast");
        err
    });
}

#[test]
fn a_broadcast_within_a_node_takes_less_simulated_time_than_across_nodes() {
    // The same 64 KiB broadcast over 8 PEs: on one node (NVLink) and spread over two nodes
    // (InfiniBand between them). Simulated time must show NVLink's edge.
    let timed = |machine: (&str, u32)| {
        let (times, _) = run_on(machine, |shmem| {
            let world = shmem.team_world();
            let team = if shmem.n_pes() == 8 {
                Some(world.clone())
            } else {
                shmem
                    .team_split_strided(world, 4, 1, 8, TeamConfig::default())
                    .expect("split")
            };
            let buffer = shmem.malloc::<u8>(64 << 10).expect("malloc");
            let dest = shmem.malloc::<u8>(64 << 10).expect("malloc");
            shmem.barrier_all().expect("barrier");
            team.map(|team| {
                let start = shmem.now_ns();
                shmem.broadcast(&team, dest, buffer, 0).expect("broadcast");
                (start, shmem.now_ns())
            })
        });
        let times: Vec<(u64, u64)> = times.into_iter().flatten().collect();
        let start = times.iter().map(|t| t.0).min().expect("a member");
        times.iter().map(|t| t.1).max().expect("a member") - start
    };
    let (node_ns, cross_ns) = (timed(HGX8), timed(IB2));
    println!("64 KiB broadcast over 8 PEs: {node_ns} ns on one node, {cross_ns} ns across two");
    assert!(node_ns * 2 < cross_ns, "{node_ns} ns vs {cross_ns} ns");
}
