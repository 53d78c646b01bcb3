//! `cargo xtask sim-scaling [--workloads ...] [--pes ...] [--svg FILE]`: how the simulator's
//! wall time and peak memory grow with the PEs, as a table and a picture (BENCHMARKS.md).
//!
//! Each point is one `rshmem run WORKLOAD --pes N --topology T --seed 1 --json` of this tree's
//! release build, on `hgx8` up to 8 PEs and on `ib-{N/8}` (8 GPUs a node) above. A run is
//! stopped when it passes the time or memory limit, and the workload's larger PE counts are
//! then skipped: they would only take longer. A run that fails is reported with its log, and
//! the workload's larger counts are skipped too. Stopped, failed and skipped points are in the
//! table, with why.

mod plot;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::sim_bench::{self, Measured};

/// `cargo xtask sim-scaling`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The workloads, comma-separated (any of `rshmem run`'s).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "hello,msg-rate,alltoall,moe-dispatch"
    )]
    workloads: Vec<String>,
    /// The PE counts, comma-separated: 8 or fewer, or a multiple of 8.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "8,64,512,1024,2048,4096,16384"
    )]
    pes: Vec<u32>,
    /// Stop a run after this many wall seconds.
    #[arg(long, value_name = "S", default_value_t = 600)]
    timeout_s: u64,
    /// Stop a run whose resident memory passes this many GiB.
    #[arg(long, value_name = "GIB", default_value_t = 20.0)]
    max_rss_gib: f64,
    /// Write the picture (wall time and peak memory against PEs) to FILE.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Split each run of at least this many hosts into N partitions (`rshmem run
    /// --partitions`, docs/sim-parallel.md); runs on fewer hosts (8 PEs: one) run whole.
    #[arg(long, value_name = "N")]
    partitions: Option<u32>,
    /// The threads of the partitioned runs (`rshmem run --threads`).
    #[arg(long, value_name = "N", requires = "partitions")]
    threads: Option<u32>,
}

impl Args {
    /// What a run on `topology` adds to its command line.
    fn flags_for(&self, pes: u32) -> Vec<String> {
        let mut flags = Vec::new();
        let Some(parts) = self.partitions else {
            return flags;
        };
        if pes <= 8 || pes / 8 < parts {
            return flags;
        }
        flags.extend(["--partitions".to_string(), parts.to_string()]);
        if let Some(threads) = self.threads {
            flags.extend(["--threads".to_string(), threads.to_string()]);
        }
        flags
    }
}

/// What became of one point.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Outcome {
    Ran(Measured),
    /// Stopped at a limit: why, and the wall seconds and resident bytes by then.
    Stopped {
        why: String,
        wall_s: f64,
        rss_bytes: u64,
    },
    /// The run failed; its standard error is in the log.
    Failed {
        status: String,
        log: PathBuf,
    },
    /// Not run, as a smaller run of the workload was stopped or failed.
    Skipped,
}

/// One point of the sweep.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Point {
    pub(crate) workload: String,
    pub(crate) pes: u32,
    pub(crate) outcome: Outcome,
}

/// The topology a sweep runs `pes` PEs on: one HGX node up to 8, nodes of 8 above.
fn topology(pes: u32) -> anyhow::Result<String> {
    match pes {
        0 => bail!("--pes 0: a run needs at least one PE"),
        1..=8 => Ok("hgx8".into()),
        _ if pes.is_multiple_of(8) => Ok(format!("ib-{}", pes / 8)),
        _ => bail!(
            "--pes {pes}: above 8 the sweep uses nodes of 8 GPUs (ib-N), so give a multiple of \
             8, e.g. {}",
            pes.next_multiple_of(8)
        ),
    }
}

/// The resident memory of process `pid`, in bytes, from /proc; 0 once it is gone.
fn rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        });
    kib.unwrap_or(0) * 1024
}

/// Runs `workload` on `pes` PEs with `binary`, stopping it at the limits; its standard error
/// goes to `log`.
fn run_point(
    binary: &Path,
    workload: &str,
    pes: u32,
    args: &Args,
    log: &Path,
) -> anyhow::Result<Outcome> {
    let topology = topology(pes)?;
    let stderr =
        std::fs::File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
    let mut child = Command::new(binary)
        .args(["run", workload, "--pes", &pes.to_string()])
        .args(["--topology", &topology, "--seed", "1", "--json"])
        .args(args.flags_for(pes))
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .with_context(|| format!("cannot run {}", binary.display()))?;
    let start = Instant::now();
    let max_rss_bytes = (args.max_rss_gib * (1u64 << 30) as f64) as u64;
    let mut peak_rss_bytes = 0;
    loop {
        if let Some(status) = child.try_wait()? {
            let mut stdout = String::new();
            if let Some(mut out) = child.stdout.take() {
                std::io::Read::read_to_string(&mut out, &mut stdout)?;
            }
            if !status.success() {
                return Ok(Outcome::Failed {
                    status: status.to_string(),
                    log: log.to_path_buf(),
                });
            }
            return Ok(Outcome::Ran(sim_bench::parse_report(&stdout)?));
        }
        let wall_s = start.elapsed().as_secs_f64();
        peak_rss_bytes = peak_rss_bytes.max(rss_bytes(child.id()));
        let why = if wall_s > args.timeout_s as f64 {
            Some(format!("over {} s", args.timeout_s))
        } else if peak_rss_bytes > max_rss_bytes {
            Some(format!("over {} GiB", args.max_rss_gib))
        } else {
            None
        };
        if let Some(why) = why {
            child.kill()?;
            child.wait()?;
            return Ok(Outcome::Stopped {
                why,
                wall_s,
                rss_bytes: peak_rss_bytes,
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The markdown table of the sweep.
fn table(points: &[Point]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| workload | PEs | topology | wall s | peak RSS | simulated µs | simulated ops / wall s |"
    );
    let _ = writeln!(out, "|---|---:|---|---:|---:|---:|---:|");
    for p in points {
        let topology = topology(p.pes).unwrap_or_default();
        let cells = match &p.outcome {
            Outcome::Ran(m) => format!(
                "{:.3} | {} | {:.1} | {:.2} M",
                m.wall_s,
                sim_bench::mib(m.rss_bytes),
                m.sim_time_ns as f64 / 1e3,
                m.ops_per_s / 1e6
            ),
            Outcome::Stopped {
                why,
                wall_s,
                rss_bytes,
            } => format!(
                "stopped {why} ({wall_s:.0} s) | {} by then | - | -",
                sim_bench::mib(*rss_bytes)
            ),
            Outcome::Failed { status, log } => {
                format!("failed ({status}): see {} | - | - | -", log.display())
            }
            Outcome::Skipped => "not run: a smaller run was stopped | - | - | -".into(),
        };
        let _ = writeln!(out, "| {} | {} | {topology} | {cells} |", p.workload, p.pes);
    }
    out
}

/// Builds this tree, runs the sweep, prints the table and writes the picture.
///
/// # Errors
/// The options are malformed, the build fails, a run fails or the picture cannot be written.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let mut pes = args.pes.clone();
    pes.sort_unstable();
    pes.dedup();
    for &n in &pes {
        topology(n)?;
    }
    let root = sim_bench::workspace_root()?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let binary = sim_bench::build(&cargo, &root, None)?;
    let logs = root.join("target/sim-scaling");
    std::fs::create_dir_all(&logs).with_context(|| format!("cannot make {}", logs.display()))?;
    let total = args.workloads.len() * pes.len();
    let mut points = Vec::new();
    let sweep = Instant::now();
    for workload in &args.workloads {
        let mut stopped = false;
        for &n in &pes {
            let outcome = if stopped {
                Outcome::Skipped
            } else {
                eprintln!(
                    "[{}/{total}, {:.0} s] {workload} at {n} PEs",
                    points.len() + 1,
                    sweep.elapsed().as_secs_f64()
                );
                let log = logs.join(format!("{workload}-{n}.stderr"));
                let outcome = run_point(&binary, workload, n, args, &log)?;
                if let Outcome::Failed { status, log } = &outcome {
                    let why = std::fs::read_to_string(log).unwrap_or_default();
                    eprintln!("{workload} at {n} PEs failed ({status}): {}", why.trim());
                }
                outcome
            };
            stopped |= !matches!(outcome, Outcome::Ran(_));
            points.push(Point {
                workload: workload.clone(),
                pes: n,
                outcome,
            });
        }
    }
    print!("{}", table(&points));
    if let Some(path) = &args.svg {
        std::fs::write(path, plot::svg(&points))
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn ran(workload: &str, pes: u32, wall_s: f64, rss_bytes: u64) -> Point {
        Point {
            workload: workload.into(),
            pes,
            outcome: Outcome::Ran(Measured {
                wall_s,
                ops_per_s: 1e6,
                rss_bytes,
                sim_time_ns: 1500,
                trace_hash: "ab".into(),
            }),
        }
    }

    #[test]
    fn each_pe_count_has_its_topology_and_a_bad_one_is_named() {
        assert_eq!(topology(1).unwrap(), "hgx8");
        assert_eq!(topology(8).unwrap(), "hgx8");
        assert_eq!(topology(16384).unwrap(), "ib-2048");
        let err = topology(100).unwrap_err().to_string();
        assert!(err.contains("multiple of 8, e.g. 104"), "{err}");
        assert!(topology(0).is_err());
    }

    #[test]
    fn the_table_says_what_ran_what_was_stopped_and_what_was_skipped() {
        let points = [
            ran("alltoall", 8, 0.25, 6 << 20),
            Point {
                workload: "alltoall".into(),
                pes: 4096,
                outcome: Outcome::Stopped {
                    why: "over 20 GiB".into(),
                    wall_s: 31.0,
                    rss_bytes: 21 << 30,
                },
            },
            Point {
                workload: "alltoall".into(),
                pes: 16384,
                outcome: Outcome::Skipped,
            },
            Point {
                workload: "hello".into(),
                pes: 64,
                outcome: Outcome::Failed {
                    status: "exit status: 2".into(),
                    log: "hello-64.stderr".into(),
                },
            },
        ];
        let text = table(&points);
        assert!(
            text.contains("| alltoall | 8 | hgx8 | 0.250 | 6 MiB | 1.5 | 1.00 M |"),
            "{text}"
        );
        assert!(
            text.contains("stopped over 20 GiB (31 s) | 21504 MiB by then"),
            "{text}"
        );
        assert!(
            text.contains("| alltoall | 16384 | ib-2048 | not run"),
            "{text}"
        );
    }

    #[test]
    fn the_resident_memory_of_this_process_is_read() {
        assert!(rss_bytes(std::process::id()) > 0);
        assert_eq!(rss_bytes(u32::MAX), 0, "no such process");
    }
}
