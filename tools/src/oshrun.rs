//! `rshmem oshrun ...`: Open MPI's `oshrun`/`mpirun` command line, translated to the launcher
//! (`rshmem run -n N PROGRAM`). `tools/osh/bin/oshrun` is a script that execs it.
//!
//! A subcommand, not a behaviour chosen by `argv[0]`: the `oshrun` script must find the
//! `rshmem` binary anyway (in the build tree or an install prefix), and a subcommand shows up
//! in `rshmem --help`.
//!
//! The options are parsed by hand because Open MPI's spellings are not clap's: single-dash long
//! options (`-np 4`, `-x VAR`, `-mca k v`) and options of two values (`--mca k v`). Placement
//! and tuning options, meaningless on one node with one process per PE, are accepted and
//! ignored (with a note under `--verbose`) so that existing scripts run unchanged; an option
//! that is not known is an error, not silently dropped.

use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use std::path::PathBuf;

use hw::Semantics;

use crate::launch::{self, LaunchArgs};
use crate::sim_program::{self, SimRequest};

/// `rshmem oshrun`'s arguments: everything, parsed by [`parse`].
#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
pub(crate) struct OshrunArgs {
    /// Open MPI's `oshrun` options, then PROGRAM and its arguments (`oshrun --help`).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    args: Vec<String>,
}

/// `oshrun --help`.
const HELP: &str = "\
oshrun: run an OpenSHMEM program as N processes on this machine (rshmem's launcher).

Usage: oshrun -np N [OPTIONS] PROGRAM [ARGS...]

  -np N, -n N, --np N, --n N, -c N, -N N
                      the number of PEs (processes), one node
  --timeout-s S, --timeout S
                      kill every PE still running after S seconds (default: no limit)
  -x VAR, -x VAR=VALUE
                      export VAR to every PE (the environment is passed on anyway; VAR=VALUE
                      sets it)
  --gpu               run the PEs on GPUs, one per PE (RSHMEM_BACKEND=cuda; docs/c-api.md)
  --sim TOPOLOGY      run the PEs on simulated GPUs of TOPOLOGY (hgx8, h200x2, ib-N or a
                      TOML file) in one process, reproducibly; with --seed S, --semantics
                      nvshmem|openshmem-1.5, --trace FILE (Chrome trace), --json (the report
                      as one JSON object) and --exact (every load a kernel makes of a peer's
                      memory is a simulated get, not a mapped load; docs/nvshmem-programs.md)
  --share-gpus        let CUDA PEs share GPUs when there are more PEs than GPUs
  -v, --verbose       say which options were ignored
  -h, --help          this text

Accepted and ignored (one node, one process per PE): --allow-run-as-root, --oversubscribe,
--report-bindings, --display-map, --tag-output, -q/--quiet, --bind-to X, --map-by X,
--rank-by X, -H/--host X, --hostfile X, --machinefile X, --mca K V, --gmca K V.
Open MPI's single-dash spellings (-np, -x, -mca, -bind-to, ...) work too, and so do
--option=value forms.

Every argument after PROGRAM is PROGRAM's. Each PE gets RSHMEM_RANK, RSHMEM_N_RANKS and
RSHMEM_BOOTSTRAP_SOCKET. The exit status is 0 when every PE exits 0; the status passed to
shmem_global_exit when a PE calls it (the others are ended at once); else the status of the
first PE that failed (128 + signal when killed), 1 when only the launcher's kills failed, and
2 when oshrun itself could not run. See docs/c-tools.md and docs/launcher.md.
";

/// Options that are accepted and ignored without a value.
const IGNORED_FLAGS: [&str; 7] = [
    "--allow-run-as-root",
    "--oversubscribe",
    "--report-bindings",
    "--display-map",
    "--tag-output",
    "-q",
    "--quiet",
];

/// Options that are accepted and ignored with one value.
const IGNORED_WITH_VALUE: [&str; 7] = [
    "--bind-to",
    "--map-by",
    "--rank-by",
    "-H",
    "--host",
    "--hostfile",
    "--machinefile",
];

/// Options that are accepted and ignored with two values (`--mca KEY VALUE`).
const IGNORED_WITH_TWO: [&str; 2] = ["--mca", "--gmca"];

/// The spellings of the number of PEs.
const COUNT: [&str; 5] = ["--np", "-n", "--n", "-c", "-N"];

/// A parsed `oshrun` command line.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Oshrun {
    /// `-h`/`--help`.
    Help,
    /// A run.
    Run(Launch),
}

/// What to launch.
/// The simulator's options of `oshrun --sim TOPOLOGY`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct SimOptions {
    topology: String,
    seed: u64,
    semantics: Semantics,
    trace: Option<PathBuf>,
    json: bool,
    exact: bool,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Launch {
    n_pes: u32,
    program: String,
    program_args: Vec<String>,
    timeout_s: u64,
    share_gpus: bool,
    gpu: bool,
    /// `--sim TOPOLOGY` and the simulator's options.
    sim: Option<SimOptions>,
    exports: Vec<(String, String)>,
    /// What was ignored, for `--verbose`.
    notes: Vec<String>,
    verbose: bool,
}

/// Runs `rshmem oshrun ARGS`.
///
/// # Errors
/// A bad command line (no `-np`, an unknown option, a missing value) or a launch that cannot
/// start (see `launch::main`).
pub(crate) fn main(args: OshrunArgs) -> anyhow::Result<ExitCode> {
    let launch = match parse(&args.args)? {
        Oshrun::Help => {
            print!("{HELP}");
            return Ok(ExitCode::SUCCESS);
        }
        Oshrun::Run(launch) => launch,
    };
    if launch.verbose {
        for note in &launch.notes {
            eprintln!("oshrun: {note}");
        }
    }
    if let Some(sim) = launch.sim {
        if sim.topology.is_empty() {
            bail!("oshrun: --seed, --semantics, --trace, --json and --exact need --sim TOPOLOGY");
        }
        let mut request = SimRequest::new(launch.n_pes, &sim.topology, sim.seed, sim.semantics);
        request.trace = sim.trace;
        request.exact = sim.exact;
        return sim_program::main(
            &launch.program,
            &launch.program_args,
            request,
            sim.json,
            &launch.exports,
            launch.timeout_s,
        );
    }
    let options = LaunchArgs {
        np: Some(launch.n_pes),
        sim: None,
        timeout_s: launch.timeout_s,
        share_gpus: launch.share_gpus,
        gpu: launch.gpu,
        exports: launch.exports,
    };
    launch::main(
        launch.n_pes,
        &launch.program,
        &launch.program_args,
        &options,
    )
}

/// Open MPI accepts `-np` as well as `--np`: a single-dash option of more than one letter is
/// read as its double-dash spelling (one-letter options, `-n`, `-x`, `-N`, stay as they are).
impl Launch {
    /// The simulator's options, made at the first of them.
    fn sim_mut(&mut self) -> &mut SimOptions {
        self.sim.get_or_insert_with(SimOptions::default)
    }
}

fn normalise(arg: &str) -> String {
    if arg.starts_with('-') && !arg.starts_with("--") && arg.len() > 2 {
        format!("-{arg}")
    } else {
        arg.to_string()
    }
}

/// Parses Open MPI's `oshrun` command line.
///
/// # Errors
/// No PROGRAM, no number of PEs, an unknown option, a missing or malformed value.
pub(crate) fn parse(args: &[String]) -> anyhow::Result<Oshrun> {
    let mut launch = Launch {
        n_pes: 0,
        program: String::new(),
        program_args: Vec::new(),
        timeout_s: 0,
        share_gpus: false,
        gpu: false,
        sim: None,
        exports: Vec::new(),
        notes: Vec::new(),
        verbose: false,
    };
    let mut n_pes = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--" {
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            launch.program.clone_from(arg);
            break;
        }
        let arg = normalise(arg);
        // `--option=value`: the value is attached.
        let (name, mut attached) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = |what: &str| {
            attached
                .take()
                .or_else(|| rest.next().cloned())
                .with_context(|| format!("{name} needs {what}; see oshrun --help"))
        };
        match name {
            "-h" | "--help" => return Ok(Oshrun::Help),
            "-v" | "--verbose" => launch.verbose = true,
            "--share-gpus" => launch.share_gpus = true,
            "--gpu" => launch.gpu = true,
            "--sim" => launch.sim_mut().topology = value("a topology (hgx8, ib-N, a file)")?,
            "--json" => launch.sim_mut().json = true,
            "--exact" => launch.sim_mut().exact = true,
            "--trace" => launch.sim_mut().trace = Some(value("a file")?.into()),
            "--seed" => {
                let text = value("a seed")?;
                launch.sim_mut().seed = text
                    .parse()
                    .with_context(|| format!("--seed {text}: not a whole number"))?;
            }
            "--semantics" => {
                let text = value("nvshmem or openshmem-1.5")?;
                launch.sim_mut().semantics = text.parse().map_err(anyhow::Error::msg)?;
            }
            "--timeout-s" | "--timeout" => {
                let text = value("a number of seconds")?;
                launch.timeout_s = text.parse().with_context(|| {
                    format!("{name} {text}: not a whole number of seconds; see oshrun --help")
                })?;
            }
            "-x" => {
                let export = value("a variable name (VAR or VAR=VALUE)")?;
                match export.split_once('=') {
                    Some((var, val)) => launch.exports.push((var.to_string(), val.to_string())),
                    // Every PE inherits oshrun's environment: VAR is exported already.
                    None => launch.notes.push(format!("-x {export}: passed on already")),
                }
            }
            _ if COUNT.contains(&name) => {
                let text = value("the number of PEs")?;
                let n: u32 = text.parse().with_context(|| {
                    format!("{name} {text}: not a number of PEs; pass e.g. -np 4")
                })?;
                n_pes = Some(n);
            }
            _ if IGNORED_FLAGS.contains(&name) => launch.notes.push(format!("{name}: ignored")),
            _ if IGNORED_WITH_VALUE.contains(&name) => {
                let v = value("a value")?;
                launch.notes.push(format!("{name} {v}: ignored (one node)"));
            }
            _ if IGNORED_WITH_TWO.contains(&name) => {
                let key = value("a key and a value")?;
                let v = rest
                    .next()
                    .with_context(|| format!("{name} {key} needs a value; see oshrun --help"))?;
                launch
                    .notes
                    .push(format!("{name} {key} {v}: ignored (not Open MPI)"));
            }
            _ => bail!(
                "oshrun: unknown option {arg}; see oshrun --help for the options it takes (put \
                 `--` before a program whose name starts with `-`)"
            ),
        }
        if attached.is_some() {
            bail!("oshrun: {name} takes no value, got {arg}");
        }
    }
    if launch.program.is_empty() {
        launch.program = rest
            .next()
            .cloned()
            .context("oshrun: no program given; usage: oshrun -np N PROGRAM [ARGS...]")?;
    }
    launch.program_args = rest.cloned().collect();
    launch.n_pes = n_pes.with_context(|| {
        format!(
            "oshrun: how many PEs? pass -np N (oshrun -np 2 {})",
            launch.program
        )
    })?;
    Ok(Oshrun::Run(launch))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(line: &str) -> Launch {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        match parse(&args) {
            Ok(Oshrun::Run(launch)) => launch,
            other => panic!("{line}: {other:?}"),
        }
    }

    fn error(line: &str) -> String {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        match parse(&args) {
            Err(e) => e.to_string(),
            Ok(other) => panic!("{line}: expected an error, got {other:?}"),
        }
    }

    #[test]
    fn every_spelling_of_the_pe_count_is_read() {
        for line in [
            "-np 4 ./a.out",
            "--np 4 ./a.out",
            "-n 4 ./a.out",
            "--n 4 ./a.out",
            "-c 4 ./a.out",
            "-N 4 ./a.out",
            "--np=4 ./a.out",
            "-np=4 ./a.out",
        ] {
            assert_eq!(run(line).n_pes, 4, "{line}");
        }
    }

    #[test]
    fn the_programs_arguments_are_its_own_even_when_they_look_like_options() {
        let launch = run("-np 2 --allow-run-as-root ./bench -np 8 --help -x A");
        assert_eq!(launch.program, "./bench");
        assert_eq!(launch.program_args, ["-np", "8", "--help", "-x", "A"]);
        let launch = run("-np 2 -- -weird arg");
        assert_eq!(
            (launch.program.as_str(), launch.program_args.len()),
            ("-weird", 1)
        );
    }

    #[test]
    fn placement_and_tuning_options_are_ignored_with_a_note() {
        let launch = run(
            "--allow-run-as-root --oversubscribe -bind-to core --map-by slot:PE=1 -mca osc ^rdma \
             --mca btl self -H localhost -np 2 ./a.out",
        );
        assert_eq!((launch.n_pes, launch.program.as_str()), (2, "./a.out"));
        assert_eq!(launch.notes.len(), 7, "{:?}", launch.notes);
        assert!(launch.notes.iter().any(|n| n.contains("--mca osc ^rdma")));
    }

    #[test]
    fn exports_timeouts_and_gpu_sharing_reach_the_launcher() {
        let launch = run("-x A=1 -x PATH -x B=x=y --timeout-s 30 --share-gpus --gpu -np 1 prog");
        assert_eq!(
            launch.exports,
            [
                ("A".to_string(), "1".to_string()),
                ("B".to_string(), "x=y".to_string())
            ]
        );
        assert_eq!(
            (launch.timeout_s, launch.share_gpus, launch.gpu),
            (30, true, true)
        );
        assert!(!run("-np 1 prog").gpu);
        assert_eq!(run("--timeout 5 -np 1 prog").timeout_s, 5);
    }

    #[test]
    fn bad_command_lines_say_what_is_wrong() {
        assert!(error("./a.out").contains("pass -np N"));
        assert!(error("-np 2").contains("no program"));
        assert!(error("-np").contains("needs the number of PEs"));
        assert!(error("-np four ./a.out").contains("not a number of PEs"));
        assert!(error("--frobnicate -np 2 ./a.out").contains("unknown option --frobnicate"));
        assert!(error("--oversubscribe=yes -np 2 ./a.out").contains("takes no value"));
        assert!(error("--mca k").contains("needs a value"));
        assert_eq!(parse(&["--help".to_string()]).unwrap(), Oshrun::Help);
    }
}
