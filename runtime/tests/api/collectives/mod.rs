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

use rshmem::ops::Complex64;
use rshmem::{Config, Element, Shmem, Sym, Team, TeamConfig};
use sim::SimBackend;

use crate::common::{run_values_and_report, sim};

mod barrier;
mod data_movement;
mod errors;
mod reductions;

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

/// Runs `pe_main` on every PE of `machine` with [`SEED`] and returns each PE's result and the
/// simulated time of the run; panics naming the first PE that failed.
fn run_on_machine<R: Send>(
    machine: (&str, u32),
    pe_main: impl Fn(&Pe) -> R + Sync,
) -> (Vec<R>, u64) {
    let (preset, n_pes) = machine;
    println!("on {preset}");
    let (values, report) = run_values_and_report(sim(preset, n_pes, SEED), config(), pe_main);
    (values, report.sim_time_ns)
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
        .team_split_strided(&world, 1, stride as i32, size, config)
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
        let (failures, _) = run_on_machine(machine, |shmem| {
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
