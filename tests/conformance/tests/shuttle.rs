//! The litmus catalogue and the conformance bodies under shuttle's PCT and DFS schedulers, on
//! two backends whose PEs are shuttle tasks:
//!
//! - the host backend (a thread per PE over shared memory): shuttle orders every access;
//! - the simulator with `SimBuilder::shuttle_tasks`: the world still orders events in virtual
//!   time, shuttle orders the operations PEs issue at the same nanosecond and checks the
//!   executor's hand-offs, and the weak-ordering choices come from the world's choice source,
//!   seeded from `shuttle::rand` so that a schedule string replays them too.
//!
//! Run: `RUSTFLAGS="--cfg rshmem_shuttle" CARGO_TARGET_DIR=target/shuttle cargo test --release
//! -p conformance --test shuttle -- --nocapture`. `RSHMEM_SHUTTLE_ITERS` sets the PCT schedules per
//! check (default 1000).
//!
//! Every outcome a schedule produces must be one the model allows for the test under the
//! configuration. A forbidden outcome or a failed run panics inside the schedule, so shuttle
//! prints the schedule that replays it (`shuttle::replay`). Neither backend is exhaustive
//! here (the host backend completes every operation as it is issued; the simulator's choices
//! are sampled, not enumerated: the litmus crate's `catalogue` suite enumerates them), so the allowed outcomes
//! a backend never showed are printed, not failed.
#![cfg(rshmem_shuttle)]

use std::collections::BTreeSet;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use conformance::{BodyError, host::run_on_host_with_heap, run_on_sim_with};
use hw::host::HostBackend;
use litmus::{ExecutionError, catalogue_dir, load_paths, run_on_host, run_once};
use model::litmus::{Config, Instr, Litmus, Observation, Outcome};
use model::om::allowed_outcomes;
use rshmem::Shmem;
use shuttle::rand::RngCore;
use shuttle::scheduler::{DfsScheduler, PctScheduler, Scheduler};
use sim::{Fault, SimBackend};

/// PCT's bug depth: the number of priority change points per schedule.
const PCT_DEPTH: usize = 3;
/// DFS explores every schedule of a two-PE test up to this many.
const DFS_LIMIT: usize = 2_000;
/// The simulator's seeds under DFS, which offers no random data: DFS explores the schedules
/// of each.
const DFS_SIM_SEEDS: [Option<u64>; 2] = [Some(0), Some(1)];
/// A shuttle task's stack: simulated PEs and the world's event loop need more than shuttle's
/// default of 32 KiB.
const TASK_STACK_BYTES: usize = 512 << 10;

/// Which backend a schedule runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OnBackend {
    Host,
    SimTasks,
}

impl fmt::Display for OnBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OnBackend::Host => "the host backend",
            OnBackend::SimTasks => "the simulator (PEs as shuttle tasks)",
        })
    }
}

/// PCT schedules per check.
fn iterations() -> usize {
    std::env::var("RSHMEM_SHUTTLE_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000)
}

impl OnBackend {
    /// Whether a check under `config` runs here: the host backend is load/store between all
    /// PEs, so it only stands for the all-NVLink and OpenSHMEM configurations.
    fn runs(self, config: &Config) -> bool {
        match self {
            OnBackend::Host => *config == Config::NV_NVL || *config == Config::OS,
            OnBackend::SimTasks => true,
        }
    }
}

/// Runs `schedule` under `scheduler` with stacks big enough for simulated PEs.
/// Returns how many schedules ran.
fn run_under(
    scheduler: impl Scheduler + 'static,
    schedule: impl Fn() + Send + Sync + 'static,
) -> usize {
    shuttle::Runner::new(scheduler, shuttle_config()).run(schedule)
}

/// Shuttle's configuration with stacks big enough for simulated PEs.
fn shuttle_config() -> shuttle::Config {
    let mut config = shuttle::Config::new();
    config.stack_size = TASK_STACK_BYTES;
    config
}

fn pct(iterations: usize, schedule: impl Fn() + Send + Sync + 'static) {
    run_under(PctScheduler::new(PCT_DEPTH, iterations), schedule);
}

/// Whether DFS explored every schedule (it stopped before [`DFS_LIMIT`]).
fn dfs(schedule: impl Fn() + Send + Sync + 'static) -> bool {
    run_under(DfsScheduler::new(Some(DFS_LIMIT), false), schedule) < DFS_LIMIT
}

fn catalogue(backend: OnBackend) -> Vec<(Arc<Litmus>, Config)> {
    let files = load_paths(&[catalogue_dir()]).expect("the catalogue loads");
    let mut checks = Vec::new();
    for file in files {
        let test = Arc::new(file.test);
        // On host threads a spin re-reads with no pause (time is real there), an unfair loop
        // that PCT may run past shuttle's step bound before the writer runs; the exploration
        // checks spins on the simulator, and the simulator's tasks below run them paced.
        let spins = test
            .programs
            .iter()
            .flatten()
            .any(|(instr, _)| matches!(instr, Instr::Spin { .. }));
        if spins && matches!(backend, OnBackend::Host) {
            continue;
        }
        for expect in &test.expect {
            // A test that may hang would fail its run at the wait's deadline; its hangs are
            // checked against the model by the exploration (`rshmem litmus`) instead. An
            // undefined test has no outcome to check.
            if backend.runs(&expect.config)
                && !expect.hangs
                && expect.observation != Observation::Undefined
            {
                checks.push((Arc::clone(&test), expect.config.clone()));
            }
        }
    }
    checks
}

/// One schedule's run: panics (so shuttle prints the schedule) on a failure or an outcome
/// the model forbids; records what it saw. `sim_seed` is the simulator's seed, or `None` to
/// draw it from shuttle's random source.
fn run_checked(
    backend: OnBackend,
    test: &Litmus,
    config: &Config,
    sim_seed: Option<u64>,
    allowed: &BTreeSet<Outcome>,
    seen: &Mutex<BTreeSet<Outcome>>,
) {
    let (outcome, seed) = match backend {
        OnBackend::Host => (run_on_host(test, config), None),
        OnBackend::SimTasks => {
            let seed = sim_seed.unwrap_or_else(|| shuttle::rand::thread_rng().next_u64());
            (run_on_sim_tasks(test, config, seed, None), Some(seed))
        }
    };
    let seed = seed
        .map(|s| format!(" (simulator seed {s})"))
        .unwrap_or_default();
    let outcome = outcome.unwrap_or_else(|e| {
        panic!(
            "{} [{config}] on {backend}{seed}: the run failed: {e}",
            test.name
        )
    });
    assert!(
        allowed.contains(&outcome),
        "{} [{config}] on {backend}{seed}: produced {}, which the model forbids",
        test.name,
        test.show_outcome(&test.observables(), &outcome),
    );
    seen.lock()
        .expect("no schedule panics holding it")
        .insert(outcome);
}

/// One execution of `test` on the simulator with its PEs as shuttle tasks, with `fault`
/// switched on if given.
fn run_on_sim_tasks(
    test: &Litmus,
    config: &Config,
    seed: u64,
    fault: Option<Fault>,
) -> Result<Outcome, ExecutionError> {
    let execution = run_once(test, config, |b| {
        let b = b.seed(seed).shuttle_tasks();
        match fault {
            Some(fault) => b.fault(fault),
            None => b,
        }
    })
    .unwrap_or_else(|e| panic!("{} [{config}]: cannot start: {e}", test.name));
    Ok(execution.outcome?)
}

/// Runs every check of the catalogue that `backend` stands for under PCT (and DFS for the
/// two-PE tests) and prints the allowed outcomes it never showed.
fn catalogue_under_pct_and_dfs(backend: OnBackend) {
    let checks = catalogue(backend);
    assert!(checks.len() >= 100, "only {} checks found", checks.len());
    let iterations = iterations();
    let mut never_seen = Vec::new();
    let (mut dfs_runs, mut dfs_complete) = (0, 0);
    for (test, config) in &checks {
        let allowed: Arc<BTreeSet<Outcome>> = Arc::new(
            allowed_outcomes(test, config)
                .expect("the model runs every catalogue test")
                .outcomes,
        );
        let seen = Arc::new(Mutex::new(BTreeSet::new()));
        let schedule = |sim_seed: Option<u64>| {
            let (test, config) = (Arc::clone(test), config.clone());
            let (allowed, seen) = (Arc::clone(&allowed), Arc::clone(&seen));
            move || run_checked(backend, &test, &config, sim_seed, &allowed, &seen)
        };
        if test.n_pes == 2 {
            let seeds: &[Option<u64>] = match backend {
                OnBackend::Host => &[None],
                OnBackend::SimTasks => &DFS_SIM_SEEDS,
            };
            for &seed in seeds {
                dfs_runs += 1;
                dfs_complete += usize::from(dfs(schedule(seed)));
            }
        }
        pct(iterations, schedule(None));
        let seen = seen.lock().expect("the schedules are over");
        let missing: Vec<String> = allowed
            .difference(&seen)
            .map(|o| test.show_outcome(&test.observables(), o))
            .collect();
        if !missing.is_empty() {
            never_seen.push(format!("{} [{config}]: {}", test.name, missing.join(" | ")));
        }
    }
    println!(
        "{} checks on {backend}, {iterations} PCT schedules each; DFS explored every schedule \
         in {dfs_complete} of {dfs_runs} two-PE runs (limit {DFS_LIMIT}); {} checks did not show \
         every allowed outcome{}\n  {}",
        checks.len(),
        never_seen.len(),
        if never_seen.len() > SHOWN {
            format!(", the first {SHOWN}:")
        } else {
            ":".into()
        },
        never_seen[..never_seen.len().min(SHOWN)].join("\n  ")
    );
}

/// How many checks with unseen outcomes a summary lists.
const SHOWN: usize = 10;

/// The checker can fail here, and its failure replays: with fences ignored, message passing
/// through a fence shows the stale value under some schedule and seed; shuttle writes that
/// schedule (with the seed it drew) to a file, and replaying the file fails the same way.
#[test]
fn a_broken_rule_fails_on_simulator_tasks_and_the_schedule_replays_it() {
    let path = catalogue_dir().join("a2-mp-put-fence-put.litmus");
    let test = Arc::new(load_paths(&[path]).expect("A2 loads").remove(0).test);
    let config = Config::NV_NVL;
    let allowed = allowed_outcomes(&test, &config)
        .expect("the model runs A2")
        .outcomes;
    let schedule = move || {
        let seed = shuttle::rand::thread_rng().next_u64();
        let outcome = run_on_sim_tasks(&test, &config, seed, Some(Fault::FenceIgnored))
            .unwrap_or_else(|e| panic!("the run failed: {e}"));
        assert!(
            allowed.contains(&outcome),
            "forbidden outcome {outcome:?} with seed {seed}"
        );
    };
    let dir = std::env::temp_dir().join(format!("rshmem-shuttle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let mut config = shuttle_config();
    config.failure_persistence = shuttle::FailurePersistence::File(Some(dir.clone()));
    let runner = shuttle::Runner::new(PctScheduler::new(PCT_DEPTH, 1_000), config);
    let schedule = Arc::new(schedule);
    let first = {
        let schedule = Arc::clone(&schedule);
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            runner.run(move || schedule());
        }))
    };
    assert!(
        first.is_err(),
        "1000 PCT schedules with fences ignored never broke A2"
    );
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the folder shuttle wrote to")
        .map(|e| e.expect("an entry").path())
        .collect();
    assert_eq!(files.len(), 1, "shuttle persisted one schedule: {files:?}");
    let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        shuttle::replay_from_file(move || schedule(), &files[0]);
    }));
    std::fs::remove_dir_all(&dir).expect("removing the temporary folder");
    let message = |r: std::thread::Result<()>| {
        let payload = r.expect_err("a failure");
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
            .unwrap_or_default()
    };
    let (first, again) = (message(first), message(again));
    println!("first failure: {first}\nreplayed: {again}");
    let forbidden = |m: &str| {
        m.lines()
            .find(|l| l.contains("forbidden outcome"))
            .map(str::to_string)
    };
    assert!(forbidden(&first).is_some(), "the first failure: {first}");
    assert_eq!(
        forbidden(&first),
        forbidden(&again),
        "the replay fails the same way"
    );
}

#[test]
fn litmus_catalogue_on_the_host_backend() {
    catalogue_under_pct_and_dfs(OnBackend::Host);
}

#[test]
fn litmus_catalogue_on_simulator_tasks() {
    catalogue_under_pct_and_dfs(OnBackend::SimTasks);
}

/// A heap of a few KiB: every word is a modelled atomic under shuttle.
const HEAP_BYTES: u64 = 16 << 10;
const BODY_PES: u32 = 4;

fn body_on_host(body: fn(&Shmem<HostBackend>) -> Result<(), BodyError>) {
    pct(iterations(), move || {
        if let Err(e) = run_on_host_with_heap(BODY_PES, HEAP_BYTES, body) {
            panic!("{e}");
        }
    });
}

mod host_bodies {
    conformance::conformance_tests!(super::body_on_host);
}

/// The simulated machines the bodies run on as shuttle tasks: NVSwitch and two InfiniBand
/// hosts (the contract suites cover the rest).
const BODY_TOPOLOGIES: [&str; 2] = ["hgx8", "ib-2"];

fn body_on_sim_tasks(body: fn(&Shmem<SimBackend>) -> Result<(), BodyError>) {
    for topology in BODY_TOPOLOGIES {
        pct(iterations(), move || {
            let seed = shuttle::rand::thread_rng().next_u64();
            if let Err(e) = run_on_sim_with(topology, seed, |b| b.shuttle_tasks(), body) {
                panic!("{e}");
            }
        });
    }
}

mod sim_task_bodies {
    conformance::conformance_tests!(super::body_on_sim_tasks);
}

/// Shuttle decides something on the simulator: with the seed fixed, the schedules DFS
/// explores for store buffering (both PEs post at time 0) give different event traces.
#[test]
fn shuttle_orders_same_time_operations_of_simulator_tasks() {
    let path = catalogue_dir().join("f1-sb-put-put.litmus");
    let test = Arc::new(load_paths(&[path]).expect("F1 loads").remove(0).test);
    let traces = Arc::new(Mutex::new(BTreeSet::new()));
    let schedules = {
        let traces = Arc::clone(&traces);
        run_under(DfsScheduler::new(Some(DFS_LIMIT), false), move || {
            let execution =
                run_once(&test, &Config::NV_NVL, |b| b.seed(7).shuttle_tasks()).expect("F1 starts");
            assert!(execution.outcome.is_ok(), "{:?}", execution.outcome);
            traces
                .lock()
                .expect("no schedule panics holding it")
                .insert(execution.report.trace_hash);
        })
    };
    let traces = traces.lock().expect("the schedules are over").len();
    println!("F1 with seed 7: {schedules} schedules, {traces} distinct event traces");
    assert!(traces > 1, "{schedules} schedules all gave one trace");
}
