//! The litmus catalogue and the conformance bodies on the host backend (a thread per PE)
//! under shuttle's PCT and DFS schedulers.
//!
//! Run: `RUSTFLAGS="--cfg rshmem_shuttle" CARGO_TARGET_DIR=target/shuttle cargo test --release
//! -p tests --test shuttle -- --nocapture`. `RSHMEM_SHUTTLE_ITERS` sets the PCT schedules per
//! check (default 1000).
//!
//! Every outcome a schedule produces must be one the model allows for the test under the
//! configuration (`nv-nvl` or `os`: the host backend is load/store between all PEs). A
//! forbidden outcome panics inside the schedule, so shuttle prints the schedule that replays
//! it (`shuttle::replay`). The host backend completes every operation as it is issued, so it
//! produces fewer outcomes than the rules allow; the allowed outcomes it never shows are
//! printed, not failed.
//!
//! The simulator's own PEs are coroutines that the simulator schedules in virtual time: its
//! nondeterminism is its choice source, which `tests/litmus.rs` explores exhaustively, so it
//! is not run under shuttle.
#![cfg(rshmem_shuttle)]

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use hw::host::HostBackend;
use model::litmus::{Config, Litmus, Outcome};
use model::om::allowed_outcomes;
use rshmem::Shmem;
use tests::litmus::{load_paths, run_on_host};
use tests::{BodyError, host::run_on_host_with_heap};

/// PCT's bug depth: the number of priority change points per schedule.
const PCT_DEPTH: usize = 3;
/// DFS explores every schedule of a two-PE test up to this many.
const DFS_LIMIT: usize = 2_000;

fn iterations() -> usize {
    std::env::var("RSHMEM_SHUTTLE_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000)
}

fn catalogue() -> Vec<(Arc<Litmus>, Config)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("litmus");
    let files = load_paths(&[dir]).expect("the catalogue loads");
    let mut checks = Vec::new();
    for file in files {
        let test = Arc::new(file.test);
        for expect in &test.expect {
            if matches!(expect.config, Config::NvNvl | Config::Os) {
                checks.push((Arc::clone(&test), expect.config.clone()));
            }
        }
    }
    checks
}

/// One schedule's run: panics (so shuttle prints the schedule) on a failure or an outcome
/// the model forbids; records what it saw.
fn run_checked(
    test: &Litmus,
    config: &Config,
    allowed: &BTreeSet<Outcome>,
    seen: &Mutex<BTreeSet<Outcome>>,
) {
    let outcome = run_on_host(test, config)
        .unwrap_or_else(|e| panic!("{} [{config}]: the run failed: {e}", test.name));
    assert!(
        allowed.contains(&outcome),
        "{} [{config}]: the host backend produced {}, which the model forbids",
        test.name,
        test.show_outcome(&test.observables(), &outcome),
    );
    seen.lock()
        .expect("no schedule panics holding it")
        .insert(outcome);
}

#[test]
fn litmus_catalogue_under_pct_and_dfs() {
    let checks = catalogue();
    assert!(checks.len() >= 100, "only {} checks found", checks.len());
    let iterations = iterations();
    let mut never_seen = Vec::new();
    for (test, config) in &checks {
        let allowed: Arc<BTreeSet<Outcome>> = Arc::new(
            allowed_outcomes(test, config)
                .expect("the model runs every catalogue test")
                .outcomes,
        );
        let seen = Arc::new(Mutex::new(BTreeSet::new()));
        let schedule = {
            let (test, config) = (Arc::clone(test), config.clone());
            let (allowed, seen) = (Arc::clone(&allowed), Arc::clone(&seen));
            move || run_checked(&test, &config, &allowed, &seen)
        };
        if test.n_pes == 2 {
            shuttle::check_dfs(schedule.clone(), Some(DFS_LIMIT));
        }
        shuttle::check_pct(schedule, iterations, PCT_DEPTH);
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
        "{} checks, {iterations} PCT schedules each (and DFS for two PEs); allowed outcomes \
         the host backend never showed, in {} checks:\n  {}",
        checks.len(),
        never_seen.len(),
        never_seen.join("\n  ")
    );
}

/// A heap of a few KiB: every word is a modelled atomic under shuttle.
const HEAP_BYTES: u64 = 16 << 10;
const BODY_PES: u32 = 4;

fn body_under_pct(body: fn(&Shmem<HostBackend>) -> Result<(), BodyError>) {
    shuttle::check_pct(
        move || {
            if let Err(e) = run_on_host_with_heap(BODY_PES, HEAP_BYTES, body) {
                panic!("{e}");
            }
        },
        iterations(),
        PCT_DEPTH,
    );
}

tests::conformance_tests!(body_under_pct);
