//! The OpenSHMEM C and C++ test programs of `tests/c` and `tests/cxx`, built with the `oshcc`
//! and `oshc++` wrappers and run with `oshrun -np N` at the PE counts of their row in `CASES`:
//! as processes, the same binaries at 2 PEs with every peer reached through libfabric
//! (`RSHMEM_TRANSPORT=ofi`, where libfabric is installed), at 4 PEs on two nodes of a one-host
//! Slurm (`srun -N 2 -n 4 --mpi=pmix`, where Slurm and libfabric are installed and this is
//! root: two PEs a node, shared memory within one and libfabric between them), and on the simulator
//! (`oshrun --sim`) on the machines and seeds of `SIMULATED`, one of them with InfiniBand.
//!
//! Design choices:
//! - One test that runs every program and reports every failure at the end (program, PEs,
//!   status, stderr tail), so one broken call does not hide the others.
//! - The programs judge themselves (exit 0 or a `FAIL` line and a non-zero exit); the table
//!   only adds what a program cannot check from inside: its exit status when the job is
//!   meant to end early, and the words its error message must contain.
//! - Every run has a deadline; a run past it is killed with its whole process group (the
//!   launcher and its ranks), so a hang fails the test with the program's name instead of
//!   hanging `cargo test`.
//! - Output goes to files, not pipes, so a chatty program can never block on a full pipe.
//! - Nothing beyond std: the harness needs no crate of its own and no `unsafe`.

mod common;
#[path = "../../../tools/launch/slurm_one_host.rs"]
mod slurm_one_host;

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{
    Outcome, Run, build_library_and_launcher, compile_with, repo_root, require_compilers,
    run_with_deadline, scratch_dir, tail,
};

/// What a run must do to pass.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Exit 0.
    Pass,
    /// Exit with exactly this status (`shmem_global_exit`).
    Status(i32),
    /// Exit non-zero, with each of these words on stderr (the library's `rshmem: ` message
    /// names the call and, where there is one, the fix).
    Fail(&'static [&'static str]),
}

/// One program and how to run it.
#[derive(Debug)]
struct Case {
    /// The source under `runtime/capi/tests`; `.c` builds with `oshcc`, `.cpp` with `oshc++`.
    source: &'static str,
    /// The PE counts it runs at.
    pes: &'static [usize],
    /// Extra environment of the run.
    env: &'static [(&'static str, &'static str)],
    expect: Expect,
    /// The run's deadline.
    timeout_s: u64,
    /// Whether it also runs on the simulator.
    simulated: bool,
}

/// Where a program runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// A process per PE, peers reached through shared memory.
    Processes,
    /// A process per PE, every peer reached through libfabric's `tcp;ofi_rxm`
    /// (`RSHMEM_TRANSPORT=ofi`, docs/multi-node.md).
    Network,
    /// Two PEs on each of two Slurm nodes, the nodes joined by libfabric's `tcp;ofi_rxm`.
    TwoNodes,
    /// On the simulator, on this machine with this seed.
    Simulated(&'static str, u64),
}

/// The network path's variables.
const OVER_TCP: &[(&str, &str)] = &[("RSHMEM_TRANSPORT", "ofi"), ("FI_PROVIDER", "tcp;ofi_rxm")];

/// How the two-node runs start.
const SRUN_TWO_NODES: &[&str] = &["-N", "2", "-n", "4", "--mpi=pmix"];

/// The simulated machines and seeds every simulated case runs on.
const SIMULATED: &[(&str, u64)] = &[("hgx8", 1), ("ib-2", 7)];

const ALL: &[usize] = &[1, 2, 4];
/// A run of a passing program: a few seconds at most on a loaded 2-core machine.
const NORMAL_S: u64 = 60;

const fn pass(source: &'static str) -> Case {
    Case {
        source,
        pes: ALL,
        env: &[],
        expect: Expect::Pass,
        timeout_s: NORMAL_S,
        simulated: true,
    }
}

const fn fails(source: &'static str, stderr: &'static [&'static str]) -> Case {
    Case {
        source,
        pes: ALL,
        env: &[],
        expect: Expect::Fail(stderr),
        timeout_s: NORMAL_S,
        simulated: true,
    }
}

/// Every program, its PE counts, environment and expectation (README.md says what each covers).
const CASES: &[Case] = &[
    pass("c/hello.c"),
    pass("c/autoconf_probe.c"),
    pass("c/rma.c"),
    pass("c/amo.c"),
    pass("c/waits.c"),
    pass("c/memory.c"),
    pass("c/teams.c"),
    pass("c/contexts.c"),
    pass("c/collectives.c"),
    pass("c/reductions.c"),
    pass("c/deprecated_collectives.c"),
    pass("c/coll_in_place.c"),
    pass("c/coll_zero_length.c"),
    pass("c/coll_collect_twice.c"),
    pass("c/team_split_strided.c"),
    pass("c/team_get_config.c"),
    pass("c/ctx_invalid.c"),
    pass("c/ctx_on_teams.c"),
    pass("c/locks.c"),
    pass("c/signals.c"),
    pass("c/on_stream.c"),
    pass("c/static_data.c"),
    pass("c/threads.c"),
    pass("c/generic.c"),
    pass("c/generic_rma.c"),
    pass("c/generic_amo.c"),
    pass("c/generic_sync.c"),
    pass("c/generic_reduce.c"),
    pass("c/spec_memory.c"),
    pass("c/spec_rma.c"),
    pass("c/spec_waits.c"),
    pass("cxx/generic.cpp"),
    pass("cxx/generic_types.cpp"),
    pass("cxx/classes.cpp"),
    Case {
        expect: Expect::Status(7),
        ..pass("c/global_exit.c")
    },
    // Ending with exit(0), after shmem_finalize or without it, and C++ destructors at exit.
    pass("sim/exit_after_finalize.c"),
    pass("sim/exit_without_finalize.c"),
    pass("sim/static_destructor.cpp"),
    // shmem_malloc answers NULL when the heap is too small (the spec's answer, not an error).
    Case {
        env: &[("SHMEM_SYMMETRIC_SIZE", "1m")],
        ..pass("c/heap_exhausted.c")
    },
    fails("c/err_pe_range.c", &["rshmem: ", "shmem_long_p"]),
    fails(
        "c/coll_err_reduce_overlap.c",
        &["rshmem: ", "shmem_long_sum_reduce", "very same array"],
    ),
    fails(
        "c/coll_err_alltoalls_stride.c",
        &["rshmem: ", "shmem_long_alltoalls", "dst is 0"],
    ),
    fails(
        "c/ctx_err_invalid_put.c",
        &["rshmem: ", "shmem_ctx_long_p", "invalid context"],
    ),
    fails(
        "c/team_err_sync_invalid.c",
        &["rshmem: ", "shmem_team_sync", "invalid team"],
    ),
    fails("c/err_not_symmetric.c", &["rshmem: ", "shmem_long_put"]),
    fails(
        "c/err_misaligned_amo.c",
        &["rshmem: ", "shmem_long_atomic_fetch_add"],
    ),
    fails(
        "c/err_before_init.c",
        &["rshmem: ", "shmem_long_p", "shmem_init"],
    ),
    // At one PE nothing can disagree.
    Case {
        pes: &[2, 4],
        ..fails(
            "c/err_collective_mismatch.c",
            &["rshmem: ", "shmem_broadcastmem"],
        )
    },
    // The job must end within seconds of the 500 ms deadline, not at the harness's.
    Case {
        env: &[("RSHMEM_WAIT_TIMEOUT_MS", "500")],
        timeout_s: 20,
        ..fails(
            "c/err_wait_timeout.c",
            &["rshmem: ", "shmem_long_wait_until"],
        )
    },
];

/// Builds one program; `Err` is the compiler's output.
fn compile(root: &Path, dir: &Path, case: &Case) -> Result<PathBuf, String> {
    compile_with(root, dir, case.source, &[])
}

/// Judges one run against its expectation; `Err` says what was wrong.
fn judge(case: &Case, run: &Run) -> Result<(), String> {
    let status = match run.outcome {
        Outcome::TimedOut => return Err("killed at its deadline (a hang)".to_string()),
        Outcome::Exited(status) => status,
    };
    match case.expect {
        Expect::Pass if status.success() => Ok(()),
        Expect::Pass => Err(format!("{status}, want exit 0")),
        Expect::Status(want) if status.code() == Some(want) => Ok(()),
        Expect::Status(want) => Err(format!("{status}, want exit status {want}")),
        Expect::Fail(_) if status.success() => Err("exit 0, want a failure".to_string()),
        Expect::Fail(words) => match words.iter().find(|w| !run.stderr.contains(*w)) {
            Some(missing) => Err(format!("{status} as wanted, but stderr lacks `{missing}`")),
            None => Ok(()),
        },
    }
}

#[test]
fn c_and_cxx_programs_pass_at_1_2_and_4_pes_as_processes_and_simulated() {
    require_compilers();
    build_library_and_launcher();
    let root = repo_root();
    let oshrun = root.join("tools/osh/bin/oshrun");
    let dir = scratch_dir();
    let mut failures = String::new();
    let mut runs = 0;
    let network = match hw::ofi::probe() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("not run over libfabric: {e}");
            false
        }
    };
    let slurm = network.then(slurm_one_host::Slurm::get).flatten();
    for case in CASES {
        let binary = match compile(&root, &dir, case) {
            Ok(binary) => binary,
            Err(why) => {
                let _ = writeln!(failures, "\n== {}: does not build\n{why}", case.source);
                continue;
            }
        };
        let simulated = SIMULATED.iter().filter(|_| case.simulated);
        let modes = std::iter::once(Mode::Processes)
            .chain(simulated.map(|&(topology, seed)| Mode::Simulated(topology, seed)))
            .chain(network.then_some(Mode::Network))
            .chain(slurm.as_ref().map(|_| Mode::TwoNodes));
        let runs_of_case = modes.flat_map(|m| case.pes.iter().map(move |&p| (m, p)));
        // The network path at 2 PEs: enough for every peer to be reached through it; two
        // nodes at 4, two PEs each, for both paths at once.
        let wanted = |&(m, p): &(Mode, usize)| match m {
            Mode::Network => p == 2,
            Mode::TwoNodes => p == 4,
            _ => true,
        };
        for (mode, pes) in runs_of_case.filter(wanted) {
            let mut command = Command::new(&oshrun);
            command.arg("-np").arg(pes.to_string());
            let where_ = match (mode, &slurm) {
                (Mode::Processes, _) => String::from("processes"),
                (Mode::Network, _) => {
                    command.envs(OVER_TCP.iter().copied());
                    String::from("processes over libfabric")
                }
                (Mode::TwoNodes, Some(slurm)) => {
                    command = Command::new("srun");
                    command.args(SRUN_TWO_NODES);
                    command.env("SLURM_CONF", slurm.conf());
                    command.env("FI_PROVIDER", "tcp;ofi_rxm");
                    String::from("two Slurm nodes")
                }
                (Mode::TwoNodes, None) => unreachable!("two nodes are run only with a Slurm"),
                (Mode::Simulated(topology, seed), _) => {
                    command.args(["--sim", topology, "--seed", &seed.to_string()]);
                    format!("{topology} seed {seed}")
                }
            };
            command.arg(&binary);
            command.envs(case.env.iter().copied());
            let tag = format!(
                "{}.{pes}.{}",
                binary.file_name().unwrap_or_default().to_string_lossy(),
                where_.replace(' ', "_")
            );
            // Why longer on two nodes: every exchange through Slurm's PMIx crosses its
            // daemons (a program that allocates and frees often takes 40 to 60 s there,
            // 5 s on one node); a deadline still ends a hang.
            let timeout_s = match mode {
                Mode::TwoNodes if case.timeout_s == NORMAL_S => 3 * NORMAL_S,
                _ => case.timeout_s,
            };
            let run = run_with_deadline(command, &dir, &tag, Duration::from_secs(timeout_s));
            runs += 1;
            if let Err(why) = judge(case, &run) {
                let _ = writeln!(
                    failures,
                    "\n== {} at {pes} PEs ({where_}): {why}\n-- stdout tail:\n{}\n-- stderr tail:\n{}",
                    case.source,
                    tail(&run.stdout, 1000),
                    tail(&run.stderr, 3000),
                );
            }
        }
    }
    let _ = fs::remove_dir_all(&dir);
    assert!(
        failures.is_empty(),
        "C/C++ programs failed ({runs} runs):{failures}"
    );
}
