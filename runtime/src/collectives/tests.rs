//! Every algorithm, forced, on the simulator; and the plan's choices against simulated time.
//!
//! The public API runs whichever algorithm the plan picks; here each one runs whatever the
//! team, so that algorithms the plan keeps for other shapes (the ring allgather, one-shot
//! across nodes, recursive doubling on a node) are checked too, on teams of 8 and 3 PEs on one
//! node and of 16 and 5 PEs across two. Data is `member * 1_000_003 + i`, so expected values
//! are easy to write down and sums are exact.

use sim::{Sim, SimBackend};

use crate::collectives::Kind;
use crate::collectives::ops::{Max, Sum};
use crate::collectives::plan::{
    self, Allgather, Broadcast, Reach, Reduce, ReduceScatter, Scan, Shape,
};
use crate::{Config, Shmem, Sym, Team, TeamConfig, run};

type Pe = Shmem<SimBackend>;

const SEED: u64 = 7;

/// Runs `pe_main` on `n_pes` PEs of `preset`; returns each PE's value and the simulated time.
fn run_on<R: Send>(preset: &str, n_pes: u32, pe_main: impl Fn(&Pe) -> R + Sync) -> (Vec<R>, u64) {
    let topology = sim::topology::presets::preset(preset).expect("a preset");
    let sim = Sim::builder(topology)
        .pes(n_pes)
        .seed(SEED)
        .build()
        .expect("the preset has the GPUs");
    let config = Config::default()
        .device_heap_size(32 << 20)
        .wait_timeout_ms(1_000);
    let output = run(sim, config, pe_main).expect("the PEs launch");
    match output.all_ok() {
        Ok((values, report)) => (values, report.sim_time_ns),
        Err(err) => panic!("seed {SEED} on {preset}: {err}"),
    }
}

/// Runs `check` with every algorithm `algorithms` lists on a world of 8 and rows of 3 PEs on
/// hgx8, and on a world of 16 and a strided team of 5 on ib-2; fails with every difference.
fn on_every_shape<A: Copy + std::fmt::Debug + Sync>(
    algorithms: &[A],
    check: impl Fn(&Pe, &Team, A, &Buffers) -> Option<String> + Sync,
) {
    for (preset, n_pes) in [("hgx8", 8), ("ib-2", 16)] {
        let (failures, _) = run_on(preset, n_pes, |shmem| {
            let world = shmem.team_world().clone();
            let config = TeamConfig::default();
            let other = if n_pes == 8 {
                Some(
                    shmem
                        .team_split_2d(&world, 3, config, config)
                        .expect("2d")
                        .0,
                )
            } else {
                shmem
                    .team_split_strided(&world, 1, 3, 5, config)
                    .expect("strided")
            };
            let buffers = Buffers::new(shmem);
            let mut failures = Vec::new();
            for team in std::iter::once(world).chain(other) {
                for &algorithm in algorithms {
                    let failure = check(shmem, &team, algorithm, &buffers);
                    let n = team.n_pes().expect("live");
                    failures
                        .extend(failure.map(|f| format!("{preset}, {n} PEs, {algorithm:?}: {f}")));
                }
            }
            failures
        });
        let failures: Vec<String> = failures.into_iter().flatten().collect();
        assert!(failures.is_empty(), "seed {SEED}: {failures:#?}");
    }
}

/// A source and a dest every PE allocates.
struct Buffers {
    source: Sym<u64>,
    dest: Sym<u64>,
}

/// Elements of each buffer.
const LEN: usize = 2_000;

impl Buffers {
    fn new(shmem: &Pe) -> Buffers {
        Buffers {
            source: shmem.malloc(LEN).expect("malloc"),
            dest: shmem.malloc(LEN).expect("malloc"),
        }
    }

    /// Fills the first `len` source elements with this member's pattern; returns the views.
    fn fill(&self, shmem: &Pe, member: u32, len: usize) -> (Sym<u64>, Sym<u64>) {
        let source = self.source.slice(..len).expect("view");
        shmem
            .set_local(source, &pattern(member, len))
            .expect("set_local");
        (source, self.dest)
    }
}

fn pattern(member: u32, len: usize) -> Vec<u64> {
    (0..len as u64)
        .map(|i| u64::from(member) * 1_000_003 + i)
        .collect()
}

/// The element-wise sum of the patterns of `members`.
fn summed(members: impl Iterator<Item = u32>, len: usize) -> Vec<u64> {
    members.fold(vec![0; len], |acc, member| {
        acc.iter()
            .zip(pattern(member, len))
            .map(|(a, b)| a + b)
            .collect()
    })
}

fn differs(got: Vec<u64>, want: Vec<u64>) -> Option<String> {
    (got != want).then(|| {
        let at = got.iter().zip(&want).position(|(g, w)| g != w);
        format!(
            "differs at {at:?} (lengths {} and {})",
            got.len(),
            want.len()
        )
    })
}

fn me_and_n(team: &Team) -> (u32, u32) {
    (team.my_pe().expect("live"), team.n_pes().expect("live"))
}

#[test]
fn every_broadcast_algorithm_delivers_the_message() {
    let algorithms = [
        Broadcast::OneShot,
        Broadcast::Tree,
        Broadcast::ScatterAllgather(Allgather::OneShot),
        Broadcast::ScatterAllgather(Allgather::Dissemination),
        Broadcast::ScatterAllgather(Allgather::Ring),
    ];
    on_every_shape(&algorithms, |shmem, team, algorithm, buffers| {
        let (me, n) = me_and_n(team);
        let root = n / 2;
        let (source, dest) = buffers.fill(shmem, me, 100);
        let dest = dest.slice(..100).expect("view");
        shmem
            .broadcast_by(team, dest, source, root, |_| algorithm)
            .expect("broadcast");
        differs(shmem.local(dest).expect("local"), pattern(root, 100))
    });
}

#[test]
fn every_allgather_algorithm_concatenates_the_blocks() {
    let algorithms = [
        Allgather::OneShot,
        Allgather::Dissemination,
        Allgather::Ring,
    ];
    on_every_shape(&algorithms, |shmem, team, algorithm, buffers| {
        let (me, n) = me_and_n(team);
        // Blocks of me % 3 elements: some members bring none.
        let len_of = |member: u32| (member % 3) as usize;
        let (source, dest) = buffers.fill(shmem, me, len_of(me));
        let total: usize = (0..n).map(len_of).sum();
        let dest = dest.slice(..total).expect("view");
        shmem
            .collect_by(
                Kind::Collect,
                team,
                crate::collectives::collect::Dest::Sized(dest),
                source,
                |_| algorithm,
            )
            .expect("collect");
        let want = (0..n).flat_map(|m| pattern(m, len_of(m))).collect();
        differs(shmem.local(dest).expect("local"), want)
    });
}

#[test]
fn every_reduce_algorithm_sums_and_every_pe_agrees() {
    let algorithms = [
        Reduce::OneShot,
        Reduce::TwoShot,
        Reduce::RecursiveDoubling,
        Reduce::Ring(Allgather::OneShot),
        Reduce::Ring(Allgather::Dissemination),
        Reduce::Ring(Allgather::Ring),
    ];
    on_every_shape(&algorithms, |shmem, team, algorithm, buffers| {
        let (me, n) = me_and_n(team);
        let len = 37;
        let (source, _) = buffers.fill(shmem, me, len);
        // In place, the hardest case for algorithms that land data in dest.
        shmem
            .reduce_by(team, Sum, source, source, |_| algorithm)
            .expect("reduce");
        differs(shmem.local(source).expect("local"), summed(0..n, len))
    });
}

#[test]
fn every_reduce_scatter_algorithm_leaves_each_member_its_block() {
    let algorithms = [ReduceScatter::Direct, ReduceScatter::Ring];
    on_every_shape(&algorithms, |shmem, team, algorithm, buffers| {
        let (me, n) = me_and_n(team);
        let block = 3;
        let (source, dest) = buffers.fill(shmem, me, block * n as usize);
        let dest = dest.slice(..block).expect("view");
        shmem
            .reduce_scatter_by(team, Max, dest, source, |_| algorithm)
            .expect("reduce_scatter");
        // The largest member's pattern is the maximum everywhere.
        let all = pattern(n - 1, block * n as usize);
        let mine = all[me as usize * block..(me as usize + 1) * block].to_vec();
        differs(shmem.local(dest).expect("local"), mine)
    });
}

#[test]
fn every_scan_algorithm_adds_the_members_before() {
    let algorithms = [
        Scan::Direct,
        Scan::Chain { chunks: 1 },
        Scan::Chain { chunks: 4 },
        Scan::Chain { chunks: 64 },
    ];
    on_every_shape(&algorithms, |shmem, team, algorithm, buffers| {
        let (me, _) = me_and_n(team);
        let len = 10;
        let (source, dest) = buffers.fill(shmem, me, len);
        let dest = dest.slice(..len).expect("view");
        shmem
            .scan_by(Kind::Exscan, team, dest, source, |_| algorithm)
            .expect("exscan");
        let exclusive = differs(shmem.local(dest).expect("local"), summed(0..me, len));
        shmem
            .scan_by(Kind::Inscan, team, source, source, |_| algorithm)
            .expect("inscan");
        let inclusive = differs(shmem.local(source).expect("local"), summed(0..=me, len));
        exclusive.or(inclusive)
    });
}

/// The simulated time of one reduce of `bytes` over the world of `preset` by `algorithm`:
/// from the first PE's start to the last PE's end.
fn reduce_time_ns(preset: &str, n_pes: u32, bytes: usize, algorithm: Reduce) -> u64 {
    let (times, _) = run_on(preset, n_pes, |shmem| {
        let len = bytes / 8;
        let source = shmem.calloc::<f64>(len).expect("calloc");
        let dest = shmem.malloc::<f64>(len).expect("malloc");
        let start = shmem.now_ns();
        shmem
            .reduce_by(shmem.team_world(), Sum, dest, source, |_| algorithm)
            .expect("reduce");
        (start, shmem.now_ns())
    });
    span_ns(&times)
}

/// As [`reduce_time_ns`], for a broadcast.
fn broadcast_time_ns(preset: &str, n_pes: u32, bytes: usize, algorithm: Broadcast) -> u64 {
    let (times, _) = run_on(preset, n_pes, |shmem| {
        let source = shmem.calloc::<u8>(bytes).expect("calloc");
        let dest = shmem.malloc::<u8>(bytes).expect("malloc");
        let start = shmem.now_ns();
        shmem
            .broadcast_by(shmem.team_world(), dest, source, 0, |_| algorithm)
            .expect("broadcast");
        (start, shmem.now_ns())
    });
    span_ns(&times)
}

fn span_ns(times: &[(u64, u64)]) -> u64 {
    let start = times.iter().map(|t| t.0).min().expect("a PE");
    times.iter().map(|t| t.1).max().expect("a PE") - start
}

/// A case of [`the_plans_choice_is_the_faster_in_simulated_time`]: on `n_pes` PEs of
/// `preset`, with `bytes` per PE, `faster` must be the plan's choice and beat `slower`.
struct Race<A> {
    preset: &'static str,
    n_pes: u32,
    bytes: u64,
    faster: A,
    slower: A,
}

/// Checks each race with `plan` and the simulated times `time_ns` measures.
fn assert_plan_wins<A: Copy + std::fmt::Debug + PartialEq>(
    races: &[Race<A>],
    plan: fn(&Shape) -> A,
    time_ns: fn(&str, u32, usize, A) -> u64,
) {
    for race in races {
        let shape = Shape {
            n_pes: race.n_pes,
            reach: if race.n_pes == 8 {
                Reach::LoadStore
            } else {
                Reach::Network
            },
            node_run: 8,
            bytes: race.bytes,
        };
        assert_eq!(plan(&shape), race.faster, "{shape:?}");
        let bytes = race.bytes as usize;
        let fast_ns = time_ns(race.preset, race.n_pes, bytes, race.faster);
        let slow_ns = time_ns(race.preset, race.n_pes, bytes, race.slower);
        println!(
            "{bytes} B on {}: {:?} {fast_ns} ns, {:?} {slow_ns} ns",
            race.preset, race.faster, race.slower
        );
        assert!(fast_ns < slow_ns, "{bytes} B on {}", race.preset);
    }
}

/// For each case, the algorithm the plan picks must be the faster of the two in simulated
/// time: the cost model and the simulator agree where it matters.
#[test]
fn the_plans_choice_is_the_faster_in_simulated_time() {
    fn race<A>(preset: &'static str, n_pes: u32, bytes: u64, faster: A, slower: A) -> Race<A> {
        Race {
            preset,
            n_pes,
            bytes,
            faster,
            slower,
        }
    }
    let ring = Reduce::Ring(Allgather::Dissemination);
    assert_plan_wins(
        &[
            race("hgx8", 8, 64, Reduce::OneShot, Reduce::TwoShot),
            race("hgx8", 8, 2 << 20, Reduce::TwoShot, Reduce::OneShot),
            race("ib-2", 16, 64, Reduce::RecursiveDoubling, ring),
            race("ib-2", 16, 4 << 20, Reduce::RecursiveDoubling, ring),
        ],
        plan::reduce,
        reduce_time_ns,
    );
    let scatter = |ag| Broadcast::ScatterAllgather(ag);
    assert_plan_wins(
        &[
            race("hgx8", 8, 8, Broadcast::OneShot, Broadcast::Tree),
            race(
                "hgx8",
                8,
                4 << 20,
                scatter(Allgather::OneShot),
                Broadcast::OneShot,
            ),
            race(
                "ib-2",
                16,
                8,
                Broadcast::Tree,
                scatter(Allgather::Dissemination),
            ),
            race(
                "ib-2",
                16,
                4 << 20,
                Broadcast::Tree,
                scatter(Allgather::Dissemination),
            ),
        ],
        plan::broadcast,
        broadcast_time_ns,
    );
}
