//! The CUDA backend (one thread per PE, PE `i` on GPU `i`): every conformance body, every
//! atomic at both widths, and the litmus catalogue, each outcome checked against the model:
//! its two-PE NVLink tests through the host API, and every `nv-nvl` test as a kernel of the
//! device-side API. Each test skips, printing why, where CUDA is missing; with fewer GPUs than
//! PEs the PEs share them (`conformance::cuda`).
//!
//! On a machine away from the checkout that built the binary, run it from the repository
//! root or set `RSHMEM_LITMUS_DIR` to the catalogue folder. `RSHMEM_CUDA_LITMUS_RUNS` sets the
//! executions per litmus test through the host API (default 200),
//! `RSHMEM_CUDA_LITMUS_KERNEL_RUNS` those as kernels (default 100000).

use std::collections::{BTreeMap, BTreeSet};

use conformance::BodyError;
use conformance::cuda::{run_on_cuda, unavailable};
use hw::cuda::CudaBackend;
use hw::{
    AmoKind, AmoOp, AmoWidth, Backend, Copier, Device, Instant, Launcher, MemKind, Pe, Queue,
    RemoteRange, SegmentKey,
};
use litmus::{
    MAX_DELAY_CYCLES, catalogue_dir, load_paths, run_on_cuda as litmus_on_cuda, run_on_gpu_kernel,
};
use model::litmus::{Config, Litmus, Observation, Outcome};
use model::om::allowed_outcomes;
use rshmem::Shmem;

/// Runs of each body per PE count: thread and GPU timing differ from run to run.
const REPEATS: u32 = 5;

/// Whether `n_pes` CUDA PEs can run here; prints why not.
fn available(n_pes: u32) -> bool {
    match unavailable(n_pes) {
        Some(reason) => {
            eprintln!("skipped {n_pes} PEs: {reason}");
            false
        }
        None => true,
    }
}

/// Runs `body` on 1 and on 2 PEs (sharing a GPU where there is one), [`REPEATS`] times each.
fn conformance(body: fn(&Shmem<CudaBackend>) -> Result<(), BodyError>) {
    for n_pes in [1, 2] {
        if !available(n_pes) {
            continue;
        }
        for _ in 0..REPEATS {
            if let Err(e) = run_on_cuda(n_pes, body) {
                panic!("{e}");
            }
        }
    }
}

conformance::conformance_tests!(conformance);

/// Every atomic kind at both widths, applied by PE 0 to a word of the last PE, returns the
/// old value and leaves the value `AmoOp::apply` computes; the neighbouring half of a 32-bit
/// word is untouched.
fn every_atomic<B: Backend>(dev: &B::Device) -> Result<(), String> {
    let deadline = || Instant(dev.now().0 + 10_000_000_000);
    let key = dev
        .create_segment(MemKind::Device, 64)
        .map_err(|e| e.to_string())?;
    let keys = dev
        .exchange(&key.0, deadline())
        .map_err(|e| e.to_string())?;
    for (peer, bytes) in keys.iter().cloned().enumerate() {
        dev.import_segment(Pe(peer as u32), MemKind::Device, &SegmentKey(bytes))
            .map_err(|e| e.to_string())?;
    }
    let target = Pe(dev.n_pes() - 1);
    if dev.pe() == Pe(0) {
        let q = dev.create_queue().map_err(|e| e.to_string())?;
        let kinds = [
            AmoKind::Fetch,
            AmoKind::Set,
            AmoKind::Swap,
            AmoKind::CompareSwap { compare: 0x1234 },
            AmoKind::CompareSwap { compare: 7 },
            AmoKind::Add,
            AmoKind::And,
            AmoKind::Or,
            AmoKind::Xor,
        ];
        let start = 0xdead_beef_0000_1234u64;
        let operand = 0xffff_ffff_0000_00ffu64;
        for width in [AmoWidth::W32, AmoWidth::W64] {
            for kind in kinds {
                let op = AmoOp {
                    kind,
                    operand: width.truncate(operand),
                    width,
                };
                let word = RemoteRange {
                    pe: target,
                    kind: MemKind::Device,
                    offset: 8,
                    len: width.bytes(),
                };
                let whole = RemoteRange { len: 8, ..word };
                let set = |v: u64| q.put(whole, &v.to_le_bytes(), Copier::Device);
                set(start).map_err(|e| e.to_string())?;
                q.quiet(deadline()).map_err(|e| e.to_string())?;
                let t = q.amo(word, op, true).map_err(|e| e.to_string())?;
                q.wait_ticket(t, deadline()).map_err(|e| e.to_string())?;
                let old = u64::from_le_bytes(q.take_fetched(t).try_into().expect("8 bytes"));
                let g = q.get(whole).map_err(|e| e.to_string())?;
                q.quiet(deadline()).map_err(|e| e.to_string())?;
                let after = u64::from_le_bytes(q.take_fetched(g).try_into().expect("8 bytes"));
                let keep = !width.truncate(u64::MAX);
                let want_after = (start & keep) | op.apply(width.truncate(start));
                if old != width.truncate(start) || after != want_after {
                    return Err(format!(
                        "{kind:?} at {width:?}: fetched {old:#x}, word {after:#x}; wanted \
                         {:#x} and {want_after:#x}",
                        width.truncate(start)
                    ));
                }
            }
        }
    }
    dev.exchange(&[], deadline()).map_err(|e| e.to_string())?;
    Ok(())
}

#[test]
fn every_atomic_at_both_widths() {
    for n_pes in [1, 2] {
        if !available(n_pes) {
            continue;
        }
        let cuda = conformance::cuda::cuda(n_pes).unwrap();
        let (results, _) = cuda
            .launch(|dev| every_atomic::<CudaBackend>(&dev))
            .unwrap();
        for (pe, r) in results.into_iter().enumerate() {
            match r {
                Ok(Ok(())) => {}
                Ok(Err(e)) => panic!("{n_pes} PEs, PE {pe}: {e}"),
                Err(f) => panic!("{n_pes} PEs, PE {pe} panicked: {}", f.message),
            }
        }
    }
}

/// `var`'s number, or `default` when it is unset or not a number.
fn count_from_env(var: &str, default: u32) -> u32 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Every catalogue test of at most `max_pes` PEs with an `nv-nvl` expectation, with the
/// outcomes the model allows for it there.
fn nv_nvl_checks(max_pes: u32) -> Vec<(Litmus, BTreeSet<Outcome>)> {
    let dir = catalogue_dir();
    let files = load_paths(std::slice::from_ref(&dir))
        .unwrap_or_else(|e| panic!("the catalogue at {} does not load: {e}", dir.display()));
    let checks: Vec<(Litmus, BTreeSet<Outcome>)> = files
        .into_iter()
        .map(|file| file.test)
        .filter(|test| {
            test.n_pes <= max_pes && test.expect.iter().any(|e| e.config == Config::NV_NVL)
        })
        // Undefined behaviour has no outcome that is right or wrong, and a test that may hang
        // would trap its kernel (a wait never satisfied), ending every later test.
        .filter(|test| {
            let undefined = test
                .expect
                .iter()
                .any(|e| e.observation == Observation::Undefined);
            let hangs = test.expect.iter().any(|e| e.hangs);
            if undefined || hangs {
                let why = if undefined {
                    "undefined behaviour"
                } else {
                    "it may hang"
                };
                eprintln!("{}: skipped: {why}", test.name);
            }
            !undefined && !hangs
        })
        .map(|test| {
            let allowed = allowed_outcomes(&test, &Config::NV_NVL)
                .unwrap_or_else(|e| panic!("{}: the model fails: {e}", test.name))
                .outcomes;
            (test, allowed)
        })
        .collect();
    assert!(!checks.is_empty(), "no nv-nvl test in {}", dir.display());
    checks
}

/// Every two-PE test of the catalogue with an `nv-nvl` expectation, run many times on two
/// GPUs: every outcome must be one the model allows. Prints how often each outcome appeared.
#[test]
fn litmus_catalogue_on_two_gpus() {
    if !available(2) {
        return;
    }
    let config = Config::NV_NVL;
    let runs = count_from_env("RSHMEM_CUDA_LITMUS_RUNS", 200);
    let mut forbidden = Vec::new();
    let mut table = Vec::new();
    for (test, allowed) in &nv_nvl_checks(2) {
        let mut counts: BTreeMap<Outcome, u64> = BTreeMap::new();
        for _ in 0..runs {
            let outcome = litmus_on_cuda(test, &config)
                .unwrap_or_else(|e| panic!("{} [{config}]: a run failed: {e}", test.name));
            *counts.entry(outcome).or_default() += 1;
        }
        let (row, bad) = tally(test, &config, allowed, &counts);
        table.push(row);
        forbidden.extend(bad);
    }
    eprintln!(
        "litmus through the host API, {runs} runs each:\n{}",
        table.join("\n")
    );
    assert!(forbidden.is_empty(), "{}", forbidden.join("\n"));
}

/// A table row for `test` (name, allowed outcomes seen, each outcome with its count, allowed
/// outcomes never seen) and a line for each outcome the model forbids.
fn tally(
    test: &Litmus,
    config: &Config,
    allowed: &BTreeSet<Outcome>,
    counts: &BTreeMap<Outcome, u64>,
) -> (String, Vec<String>) {
    let observables = test.observables();
    let runs: u64 = counts.values().sum();
    let forbidden = counts
        .keys()
        .filter(|o| !allowed.contains(o))
        .map(|o| {
            format!(
                "{} [{config}]: {} ({} of {runs} runs), which the model forbids",
                test.name,
                test.show_outcome(&observables, o),
                counts[o]
            )
        })
        .collect();
    let shown: Vec<String> = counts
        .iter()
        .map(|(o, n)| format!("{} x{n}", test.show_outcome(&observables, o)))
        .collect();
    let unseen: Vec<String> = allowed
        .iter()
        .filter(|o| !counts.contains_key(o))
        .map(|o| test.show_outcome(&observables, o))
        .collect();
    let row = format!(
        "| {} | {} | {}/{} | {} | {} |",
        test.name,
        test.n_pes,
        counts.keys().filter(|o| allowed.contains(o)).count(),
        allowed.len(),
        shown.join("; "),
        if unseen.is_empty() {
            "-".to_string()
        } else {
            unseen.join("; ")
        }
    );
    (row, forbidden)
}

/// Every catalogue test with an `nv-nvl` expectation, as a kernel of the device-side API
/// (`litmus::run_on_gpu_kernel`) executed `RSHMEM_CUDA_LITMUS_KERNEL_RUNS` times with random delays:
/// every outcome must be one the model allows. Prints the table of outcomes (markdown), and
/// writes it to `$RSHMEM_LITMUS_TABLE` if set.
#[test]
fn litmus_catalogue_as_gpu_kernels() {
    if !available(2) {
        return;
    }
    let config = Config::NV_NVL;
    let runs = count_from_env("RSHMEM_CUDA_LITMUS_KERNEL_RUNS", 100_000);
    let start = std::time::Instant::now();
    let mut forbidden = Vec::new();
    let mut table = vec![
        "| test | PEs | allowed seen | outcomes (count) | allowed, never seen |".to_string(),
        "|---|---|---|---|---|".to_string(),
    ];
    for (k, (test, allowed)) in nv_nvl_checks(u32::MAX).iter().enumerate() {
        let counts = run_on_gpu_kernel(test, runs, k as u64, None)
            .unwrap_or_else(|e| panic!("{} [{config}]: {e}", test.name));
        let (row, bad) = tally(test, &config, allowed, &counts);
        table.push(row);
        forbidden.extend(bad);
    }
    let table = format!(
        "Litmus tests as device-API kernels, {runs} executions each, random delays up to {} \
         cycles, checked against [{config}]; {} s in all.\n\n{}\n",
        MAX_DELAY_CYCLES,
        start.elapsed().as_secs(),
        table.join("\n")
    );
    eprintln!("{table}");
    if let Ok(path) = std::env::var("RSHMEM_LITMUS_TABLE") {
        std::fs::write(&path, &table).unwrap_or_else(|e| panic!("writing {path}: {e}"));
    }
    assert!(forbidden.is_empty(), "{}", forbidden.join("\n"));
}
