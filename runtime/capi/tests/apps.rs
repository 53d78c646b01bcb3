//! Programs written the way OpenSHMEM applications are written elsewhere (`tests/apps`): an
//! SGI-era start with `start_pes` and `exit(0)` at the end, broadcasts in place through the
//! deprecated pSync collectives, `shmem_*_to_all` reductions with pWrk arrays, a heap larger
//! than the default, a thread per core with a context each.
//!
//! Each one runs every way a user runs a program: as processes (`oshrun -np 4`), on the
//! simulator (`oshrun -np 4 --sim hgx8` at two seeds) and under the race detector
//! (`rshmem check -n 4`, built with `-rshmem-check` so that the detector sees its own loads
//! and stores), and must pass all three. `tools/gpu/check.sh` runs them on GPUs too.
//!
//! Design choices: the programs judge themselves (exit 0, or a line on stderr and a non-zero
//! status), as a user's program would; one test runs them all and reports every failure at
//! the end, so that one regression does not hide another.

mod common;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{
    Outcome, Run, build_library_and_launcher, compile_with, repo_root, require_compilers,
    run_with_deadline, scratch_dir, tail,
};

/// One program and the environment its users give it.
struct App {
    source: &'static str,
    env: &'static [(&'static str, &'static str)],
}

const APPS: &[App] = &[
    App {
        source: "apps/heat_exit.c",
        env: &[],
    },
    App {
        source: "apps/bcast_in_place.c",
        env: &[],
    },
    App {
        source: "apps/histogram.c",
        env: &[],
    },
    // More than the default heap, with the variable that raises it, as its users are told.
    App {
        source: "apps/big_heap.c",
        env: &[("SHMEM_SYMMETRIC_SIZE", "2G")],
    },
    App {
        source: "apps/thread_ctx.c",
        env: &[],
    },
];

/// PEs of every run: enough for neighbours on both sides and a root that is not PE 0.
const PES: &str = "4";
/// A run of these programs takes seconds; a hang is killed at this deadline.
const DEADLINE: Duration = Duration::from_secs(120);

/// Runs `args` (after `oshrun`, or after `rshmem` for the detector) with the app's variables.
fn run(dir: &Path, app: &App, tool: &str, args: &[&str], tag: &str) -> Run {
    let root = repo_root();
    let program = match tool {
        "rshmem" => root.join("target/release/rshmem"),
        _ => root.join("tools/osh/bin").join(tool),
    };
    let mut command = Command::new(program);
    command.args(args).envs(app.env.iter().copied());
    run_with_deadline(command, dir, tag, DEADLINE)
}

/// `Err` says how a run that should have exited 0 did not.
fn judge(run: &Run) -> Result<(), String> {
    match &run.outcome {
        Outcome::TimedOut => Err(format!("killed after {} s (a hang)", DEADLINE.as_secs())),
        Outcome::Exited(status) if status.success() => Ok(()),
        Outcome::Exited(status) => Err(format!("{status}\n{}", tail(&run.stderr, 3000))),
    }
}

#[test]
fn programs_written_like_public_applications_pass_as_processes_simulated_and_checked() {
    require_compilers();
    build_library_and_launcher();
    let root = repo_root();
    let dir = scratch_dir();
    let mut failures = String::new();
    for app in APPS {
        let built = compile_with(&root, &dir, app.source, &[]).and_then(|plain| {
            compile_with(&root, &dir, app.source, &["-rshmem-check"]).map(|c| (plain, c))
        });
        let (plain, checked) = match built {
            Ok(binaries) => binaries,
            Err(why) => {
                let _ = writeln!(failures, "\n== {}: does not build\n{why}", app.source);
                continue;
            }
        };
        let plain = plain.to_str().expect("a UTF-8 path");
        let checked = checked.to_str().expect("a UTF-8 path");
        let runs: [(&str, Vec<&str>); 4] = [
            ("oshrun", vec!["-np", PES, plain]),
            (
                "oshrun",
                vec!["-np", PES, "--sim", "hgx8", "--seed", "1", plain],
            ),
            (
                "oshrun",
                vec!["-np", PES, "--sim", "hgx8", "--seed", "2", plain],
            ),
            ("rshmem", vec!["check", "-n", PES, "--runs", "4", checked]),
        ];
        for (i, (tool, args)) in runs.iter().enumerate() {
            let tag = format!("{}.{i}", app.source.replace('/', "_"));
            if let Err(why) = judge(&run(&dir, app, tool, args, &tag)) {
                let command = format!("{tool} {}", args.join(" "));
                let _ = writeln!(failures, "\n== {} ({command}): {why}", app.source);
            }
        }
    }
    assert!(failures.is_empty(), "failures:{failures}");
}
