//! `litmus-net`: runs litmus tests many times on PEs that are the processes of a job (the
//! process backend), every operation through the backend's path to the peer (libfabric under
//! `RSHMEM_TRANSPORT=ofi` or across nodes), and reports per test the outcomes seen against
//! the model's allowed set, the weak outcomes seen, the allowed outcomes never seen, and any
//! outcome the model forbids (docs/litmus-on-network.md).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::{Parser, ValueEnum};
use hw::Launcher;
use hw::process::{Process, ProcessBackend};
use litmus::{
    Arena, ArenaSize, NetLine, NetOptions, ScError, StartGate, Tally, catalogue_dir,
    forbidden_lines, load_paths, net_summary, net_table, sc_outcomes,
};
use model::litmus::{Config, Litmus, Outcome};
use model::om::{ModelError, allowed_outcomes};

/// The rules the outcomes are checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Rules {
    /// OpenSHMEM over the process backend's libfabric transport, every PE on its own node.
    OsNet,
    /// OpenSHMEM 1.5 with every pair of PEs on one node's load/store path.
    Os,
}

impl Rules {
    fn config(self) -> Config {
        match self {
            Rules::OsNet => Config::OS_NET,
            Rules::Os => Config::OS,
        }
    }
}

/// How executions start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Gate {
    /// Every PE waits for every other before each execution.
    Each,
    /// Only each batch starts together.
    Batch,
}

/// Run litmus tests many times as the PEs of a process-backend job and check every outcome
/// against the model.
#[derive(Parser, Debug)]
#[command(name = "litmus-net", version, after_help = AFTER_HELP)]
struct Args {
    /// Litmus files or folders (default: the catalogue, or $RSHMEM_LITMUS_DIR).
    paths: Vec<PathBuf>,
    /// Executions per test.
    #[arg(long, default_value_t = 100_000)]
    executions: u64,
    /// Executions per batch: set up together, then run one after another, then read.
    #[arg(long, default_value_t = 2000)]
    batch: u32,
    /// How executions start: each (a start gate before every execution) or batch.
    #[arg(long, value_enum, default_value_t = Gate::Each)]
    gate: Gate,
    /// Each PE spins a random time below this before each execution, in nanoseconds.
    #[arg(long, default_value_t = 3000)]
    jitter_ns: u64,
    /// The rules checked: os-net (the libfabric transport) or os.
    #[arg(long, value_enum, default_value_t = Rules::OsNet)]
    config: Rules,
    /// How long any one wait may take before it is a hang, in seconds.
    #[arg(long, default_value_t = 10.0)]
    wait_s: f64,
    /// The seed of the random spins.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also write the markdown table here (PE 0), rewritten after every test.
    #[arg(long)]
    table: Option<PathBuf>,
    /// Check the checker: take every test's allowed set as empty, so that every outcome seen
    /// must be reported as forbidden and the run must fail.
    #[arg(long)]
    forbid_all: bool,
    /// Also run tests whose executions may hang: the first hang ends the test, reported with
    /// the PE and the line, and fails the run (to see how a hang is reported).
    #[arg(long)]
    keep_hanging: bool,
}

const AFTER_HELP: &str = "\
Start it as every PE of a job, the way programs are started:
  rshmem run -n 2 litmus-net [OPTIONS] [PATHS]
  mpirun -np 2 litmus-net ...          srun -N 2 -n 2 --mpi=pmix litmus-net ...
With RSHMEM_TRANSPORT=ofi every operation between PEs of one node goes through libfabric
(FI_PROVIDER picks the provider, e.g. \"tcp;ofi_rxm\" or sockets); PEs on other nodes always do.
Tests with as many PEs as the job has run; a test that does not apply under the rules (ld or
st of a peer on another node), has undefined behaviour, or whose executions may hang is
listed as skipped with the reason. An outcome is weak when the model allows it and no
sequentially consistent interleaving gives it. PE 0 prints the table; the exit status is 1 if
an outcome the model forbids appeared or a test did not finish (a hang names the PE, the
execution and the line of the test; every wait gives up after --wait-s).

Example: RSHMEM_TRANSPORT=ofi FI_PROVIDER='tcp;ofi_rxm' rshmem run -n 2 litmus-net --executions 100000";

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("litmus-net: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// A test ready to run, with what the model allows and what SC gives.
struct Planned {
    test: Litmus,
    allowed: BTreeSet<Outcome>,
    sc: BTreeSet<Outcome>,
}

/// `test` planned under `config`, or the reason it is skipped.
fn plan(test: Litmus, config: &Config, args: &Args) -> anyhow::Result<Result<Planned, String>> {
    if !args.keep_hanging && test.expect.iter().any(|e| e.hangs && e.config == *config) {
        return Ok(Err(format!("its `expect {config}` line says it may hang")));
    }
    let result = match allowed_outcomes(&test, config) {
        Ok(result) => result,
        Err(ModelError::Undefined(u)) => {
            return Ok(Err(format!(
                "undefined behaviour at line {}: {}",
                u.line, u.what
            )));
        }
        Err(ModelError::DoesNotApply(d)) => {
            return Ok(Err(format!("line {}: {}", d.line, d.what)));
        }
        Err(e) => return Err(e).with_context(|| format!("{}: the model", test.name)),
    };
    if !args.keep_hanging && !result.hangs.is_empty() {
        return Ok(Err(format!(
            "the model says {} executions may hang; one hang would stop a batch",
            result.hangs.len()
        )));
    }
    // Without the SC outcomes no outcome is called weak; the check is the same.
    let sc = match sc_outcomes(&test) {
        Ok(sc) => sc,
        Err(ScError::Unknown { .. }) => result.outcomes.clone(),
        Err(e) => return Err(e).with_context(|| format!("{}: the SC outcomes", test.name)),
    };
    let allowed = if args.forbid_all {
        BTreeSet::new()
    } else {
        result.outcomes
    };
    Ok(Ok(Planned { test, allowed, sc }))
}

fn run(args: &Args) -> anyhow::Result<bool> {
    if args.executions == 0 || args.batch == 0 {
        bail!("--executions and --batch must be at least 1");
    }
    if !(args.wait_s > 0.0 && args.wait_s.is_finite()) {
        bail!("--wait-s must be a positive number of seconds");
    }
    let process = Process::builder()
        .build()
        .context("joining the job (start litmus-net with rshmem run -n 2, mpirun or srun)")?;
    let n_pes = process.n_pes();
    if n_pes < 2 {
        bail!(
            "this process is a job of one PE: start litmus-net as the PEs of a job, e.g. \
             `rshmem run -n 2 litmus-net` (see --help)"
        );
    }
    let paths = if args.paths.is_empty() {
        vec![catalogue_dir()]
    } else {
        args.paths.clone()
    };
    let config = args.config.config();
    let tests: Vec<Litmus> = load_paths(&paths)
        .context("loading the litmus tests")?
        .into_iter()
        .map(|file| file.test)
        .filter(|test| test.n_pes == n_pes)
        .collect();
    if tests.is_empty() {
        bail!("no test of {n_pes} PEs under {paths:?}");
    }
    // Every PE plans alike, so that all run the same tests in the same order.
    let planned: Vec<Result<Planned, (String, String)>> = tests
        .into_iter()
        .map(|test| {
            let name = test.name.clone();
            Ok(plan(test, &config, args)?.map_err(|reason| (name, reason)))
        })
        .collect::<anyhow::Result<_>>()?;
    let size = ArenaSize::for_tests(planned.iter().flatten().map(|p| &p.test), args.batch);
    let opts = NetOptions {
        executions: args.executions,
        batch: args.batch,
        gate: match args.gate {
            Gate::Each => StartGate::Each,
            Gate::Batch => StartGate::Batch,
        },
        jitter_ns: args.jitter_ns,
        wait_ns: (args.wait_s * 1e9) as u64,
        seed: args.seed,
    };
    let (results, _report) = process
        .launch(|dev| run_pe(args, &config, &dev, &planned, size, &opts))
        .context("launching this PE")?;
    results
        .into_iter()
        .next()
        .context("the launch ran no PE")?
        .map_err(|f| anyhow::anyhow!("the PE panicked: {}", f.message))?
}

/// This PE's part of the run: every planned test on one arena. PE 0 tallies and reports.
fn run_pe(
    args: &Args,
    config: &Config,
    dev: &hw::process::ProcessDevice,
    planned: &[Result<Planned, (String, String)>],
    size: ArenaSize,
    opts: &NetOptions,
) -> anyhow::Result<bool> {
    let me = hw::Device::pe(dev).0;
    let mut arena =
        Arena::<ProcessBackend>::open(dev, size, opts.wait_ns).context("setting up the arena")?;
    let started = Instant::now();
    let mut lines = Vec::new();
    for (k, p) in planned.iter().enumerate() {
        let test_started = Instant::now();
        let line = match p {
            Err((name, reason)) => NetLine::Skipped {
                name: name.clone(),
                reason: reason.clone(),
            },
            Ok(p) => match arena.run_test(&p.test, config, opts) {
                Ok(counts) => NetLine::Ran {
                    tally: Tally {
                        test: &p.test,
                        gpus: Vec::new(),
                        counts: counts.unwrap_or_default(),
                        allowed: p.allowed.clone(),
                        sc: p.sc.clone(),
                    },
                    seconds: test_started.elapsed().as_secs_f64(),
                },
                Err(e) => {
                    // Every PE says its own failure: the one that hung names the line. One
                    // write, so that the PEs' lines do not interleave on a shared stderr.
                    let said = format!("litmus-net: {}: {e}\n", p.test.name);
                    let _ = std::io::Write::write_all(&mut std::io::stderr(), said.as_bytes());
                    NetLine::Failed {
                        name: p.test.name.clone(),
                        error: e.to_string(),
                    }
                }
            },
        };
        if me == 0 {
            eprintln!(
                "[{}/{}] {}: {} ({:.1} s)",
                k + 1,
                planned.len(),
                line.name(),
                progress(&line),
                test_started.elapsed().as_secs_f64()
            );
            if let Some(path) = &args.table {
                std::fs::write(path, document(args, config, &lines, &line))
                    .with_context(|| format!("writing {}", path.display()))?;
            }
        }
        lines.push(line);
    }
    let failed = lines
        .iter()
        .filter(|l| matches!(l, NetLine::Failed { .. }))
        .count();
    if me != 0 {
        return Ok(failed == 0);
    }
    print!("{}", net_table(&lines));
    println!("Wall time: {:.0} s.", started.elapsed().as_secs_f64());
    let forbidden = forbidden_lines(&lines);
    for line in &forbidden {
        println!("FORBIDDEN: {line}");
    }
    eprintln!("litmus-net: {}", net_summary(&lines));
    Ok(forbidden.is_empty() && failed == 0)
}

/// One test's progress line.
fn progress(line: &NetLine) -> String {
    match line {
        NetLine::Ran { tally, .. } => format!(
            "{} executions, {} outcomes, weak {}/{}, forbidden {}",
            tally.executions(),
            tally.counts.len(),
            tally.weak_seen().len(),
            tally.weak().len(),
            tally.forbidden().len()
        ),
        NetLine::Skipped { reason, .. } => format!("skipped: {reason}"),
        NetLine::Failed { error, .. } => format!("did not finish: {error}"),
    }
}

/// The table so far, `last` included, under a line that says how it was made.
fn document(args: &Args, config: &Config, lines: &[NetLine], last: &NetLine) -> String {
    let mut all = lines.to_vec();
    all.push(last.clone());
    format!(
        "litmus-net under {config}, {} executions a test, batches of {}, gate {:?}, jitter {} ns, \
         seed {}.\n\n{}",
        args.executions,
        args.batch,
        args.gate,
        args.jitter_ns,
        args.seed,
        net_table(&all)
    )
}
