//! `cargo xtask sim-bench [--against REV] [--rows ...]`: the simulator's speed and memory at
//! scale, this tree beside another revision built in a temporary worktree, in one invocation.
//!
//! Each row is one `rshmem run WORKLOAD --pes N --topology T --seed 1 --json`; its report
//! gives the wall time, the simulated operations per wall second, the peak resident memory,
//! and the simulated time and trace hash that say whether both builds simulated the same run.
//! The targets are the simulator's at cluster scale (BENCHMARKS.md); a missed one says by how
//! much.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};

/// `cargo xtask sim-bench`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// A git revision to measure beside this tree (built in a temporary worktree under
    /// target/sim-bench/, with its own target directory kept there between invocations).
    #[arg(long, value_name = "REV")]
    against: Option<String>,
    /// The rows, as WORKLOAD:PES:TOPOLOGY, comma-separated or repeated (default: every row
    /// of the table, the three at 4096 PEs included, which take minutes and gigabytes).
    #[arg(long = "rows", value_name = "ROW", value_delimiter = ',')]
    rows: Vec<String>,
    /// Runs of each row with each build, one build after the other; the table shows the run
    /// of median wall time (a shared machine's wall times vary by a third from run to run).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Runs this tree's rows split into N partitions (`rshmem run --partitions`,
    /// docs/sim-parallel.md); the other revision's run as they always did, so the table
    /// compares one world then with partitions now (`--against HEAD`: one world with
    /// partitions, on the same code).
    #[arg(long, value_name = "N")]
    partitions: Option<u32>,
    /// The threads of this tree's partitioned runs (`rshmem run --threads`).
    #[arg(long, value_name = "N", requires = "partitions")]
    threads: Option<u32>,
    /// Splits the other revision's runs the same way too (it must have `--partitions`), so
    /// the table compares two builds of the parallel mode.
    #[arg(long, requires_all = ["partitions", "against"])]
    both_split: bool,
}

impl Args {
    /// What this tree's runs add to their command line.
    fn this_tree_flags(&self) -> Vec<String> {
        let mut flags = Vec::new();
        if let Some(parts) = self.partitions {
            flags.extend(["--partitions".to_string(), parts.to_string()]);
        }
        if let Some(threads) = self.threads {
            flags.extend(["--threads".to_string(), threads.to_string()]);
        }
        flags
    }
}

/// One row of the table: a run and its targets.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    workload: String,
    pes: u32,
    topology: String,
    /// At least this many simulated operations per wall second.
    min_ops_per_s: Option<f64>,
    /// At most this many wall seconds.
    max_wall_s: Option<f64>,
    /// At most this many bytes of peak resident memory.
    max_rss_bytes: Option<u64>,
}

const GIB: u64 = 1 << 30;

/// A run without targets.
fn row(workload: &str, pes: u32, topology: &str) -> Row {
    Row {
        workload: workload.into(),
        pes,
        topology: topology.into(),
        min_ops_per_s: None,
        max_wall_s: None,
        max_rss_bytes: None,
    }
}

/// The table of the simulator's targets at scale.
fn default_rows() -> Vec<Row> {
    vec![
        Row {
            min_ops_per_s: Some(10e6),
            ..row("msg-rate", 8, "hgx8")
        },
        Row {
            min_ops_per_s: Some(4e6),
            ..row("msg-rate", 1024, "ib-128")
        },
        Row {
            max_wall_s: Some(1.0),
            ..row("hello", 4096, "ib-512")
        },
        Row {
            max_wall_s: Some(15.0),
            max_rss_bytes: Some(4 * GIB),
            ..row("alltoall", 4096, "ib-512")
        },
        Row {
            max_wall_s: Some(60.0),
            ..row("moe-dispatch", 4096, "ib-512")
        },
    ]
}

/// `WORKLOAD:PES:TOPOLOGY`, with the targets of the same run in the default table.
fn parse_row(text: &str) -> anyhow::Result<Row> {
    let parts: Vec<&str> = text.split(':').collect();
    let [workload, pes, topology] = parts[..] else {
        bail!("--rows {text}: write each row as WORKLOAD:PES:TOPOLOGY, e.g. hello:4096:ib-512");
    };
    let pes = pes
        .parse()
        .with_context(|| format!("--rows {text}: {pes} is not a number of PEs"))?;
    let known = default_rows()
        .into_iter()
        .find(|r| r.workload == workload && r.pes == pes && r.topology == topology);
    Ok(known.unwrap_or_else(|| row(workload, pes, topology)))
}

/// What one run reported.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Measured {
    pub(crate) wall_s: f64,
    pub(crate) ops_per_s: f64,
    pub(crate) rss_bytes: u64,
    pub(crate) sim_time_ns: u64,
    pub(crate) trace_hash: String,
}

/// Reads the fields of `rshmem run --json`'s report.
pub(crate) fn parse_report(json: &str) -> anyhow::Result<Measured> {
    let v: serde_json::Value =
        serde_json::from_str(json.trim()).context("the run's report is not JSON")?;
    let number = |key: &str| {
        v.get(key)
            .and_then(serde_json::Value::as_f64)
            .with_context(|| format!("the run's report has no number `{key}`"))
    };
    Ok(Measured {
        wall_s: number("wall_s")?,
        ops_per_s: number("sim_ops_per_wall_s")?,
        rss_bytes: number("process_rss_bytes_peak")? as u64,
        sim_time_ns: number("sim_time_ns")? as u64,
        trace_hash: v
            .get("trace_hash")
            .and_then(serde_json::Value::as_str)
            .context("the run's report has no `trace_hash`")?
            .to_string(),
    })
}

/// Runs `row` with the `rshmem` at `binary`, with `flags` added.
fn measure(binary: &Path, row: &Row, flags: &[String]) -> anyhow::Result<Measured> {
    let output = Command::new(binary)
        .args(["run", &row.workload, "--pes", &row.pes.to_string()])
        .args(["--topology", &row.topology, "--seed", "1", "--json"])
        .args(flags)
        .output()
        .with_context(|| format!("cannot run {}", binary.display()))?;
    if !output.status.success() {
        bail!(
            "{} run {} --pes {} --topology {} failed ({}): {}",
            binary.display(),
            row.workload,
            row.pes,
            row.topology,
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    parse_report(&String::from_utf8_lossy(&output.stdout))
}

/// The run of median wall time among `runs` (not empty).
fn median(mut runs: Vec<Measured>) -> Measured {
    runs.sort_by(|a, b| a.wall_s.total_cmp(&b.wall_s));
    runs.swap_remove(runs.len() / 2)
}

/// Whether `m` meets `row`'s targets: "met", or what was missed and by how much.
fn verdict(row: &Row, m: &Measured) -> String {
    let mut missed = Vec::new();
    if let Some(min) = row.min_ops_per_s
        && m.ops_per_s < min
    {
        missed.push(format!(
            "{:.2} M ops/s of {:.0} M ({:.1}x short)",
            m.ops_per_s / 1e6,
            min / 1e6,
            min / m.ops_per_s
        ));
    }
    if let Some(max) = row.max_wall_s
        && m.wall_s > max
    {
        missed.push(format!(
            "{:.2} s of {max} s ({:.1}x over)",
            m.wall_s,
            m.wall_s / max
        ));
    }
    if let Some(max) = row.max_rss_bytes
        && m.rss_bytes > max
    {
        missed.push(format!(
            "{:.2} GiB of {:.0} GiB",
            m.rss_bytes as f64 / GIB as f64,
            max as f64 / GIB as f64
        ));
    }
    let has_target =
        row.min_ops_per_s.is_some() || row.max_wall_s.is_some() || row.max_rss_bytes.is_some();
    match (has_target, missed.is_empty()) {
        (false, _) => "-".into(),
        (true, true) => "met".into(),
        (true, false) => format!("missed: {}", missed.join("; ")),
    }
}

pub(crate) fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1 << 20) as f64)
}

/// The markdown table of `rows`, each with this tree's measurement and the other revision's.
fn table(rows: &[(Row, Measured, Option<Measured>)], against: Option<&str>) -> String {
    let mut out = String::new();
    let before = against.unwrap_or("-");
    let _ = writeln!(
        out,
        "| run | wall s ({before} → this tree) | speed-up | simulated ops / wall s | peak RSS | same run | target |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---|---|");
    for (row, now, then) in rows {
        let run = format!("{} {} PEs {}", row.workload, row.pes, row.topology);
        let (wall, speedup, ops, rss, same) = match then {
            Some(then) => (
                format!("{:.3} → {:.3}", then.wall_s, now.wall_s),
                format!("{:.2}x", then.wall_s / now.wall_s),
                format!(
                    "{:.2} M → {:.2} M",
                    then.ops_per_s / 1e6,
                    now.ops_per_s / 1e6
                ),
                format!("{} → {}", mib(then.rss_bytes), mib(now.rss_bytes)),
                if (then.sim_time_ns, &then.trace_hash) == (now.sim_time_ns, &now.trace_hash) {
                    "yes".to_string()
                } else {
                    format!(
                        "no: {} ns {} → {} ns {}",
                        then.sim_time_ns, then.trace_hash, now.sim_time_ns, now.trace_hash
                    )
                },
            ),
            None => (
                format!("{:.3}", now.wall_s),
                "-".into(),
                format!("{:.2} M", now.ops_per_s / 1e6),
                mib(now.rss_bytes),
                "-".into(),
            ),
        };
        let _ = writeln!(
            out,
            "| {run} | {wall} | {speedup} | {ops} | {rss} | {same} | {} |",
            verdict(row, now)
        );
    }
    out
}

/// `cargo build --release -p tools --bin rshmem` in `dir`, into `target_dir` (or the
/// workspace's own); returns the binary.
pub(crate) fn build(
    cargo: &std::ffi::OsStr,
    dir: &Path,
    target_dir: Option<&Path>,
) -> anyhow::Result<PathBuf> {
    let mut command = Command::new(cargo);
    command
        .current_dir(dir)
        .args(["build", "--release", "-p", "tools", "--bin", "rshmem"]);
    if let Some(target_dir) = target_dir {
        command.env("CARGO_TARGET_DIR", target_dir);
    }
    let status = command.status().context("cannot run cargo")?;
    if !status.success() {
        bail!(
            "cargo build --release -p tools in {} failed ({status})",
            dir.display()
        );
    }
    let target = target_dir
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from))
        .unwrap_or_else(|| dir.join("target"));
    Ok(target.join("release/rshmem"))
}

/// Builds `rev` in a temporary worktree and copies its `rshmem` to `bench_dir`.
fn build_revision(
    cargo: &std::ffi::OsStr,
    root: &Path,
    bench_dir: &Path,
    rev: &str,
) -> anyhow::Result<PathBuf> {
    let worktree = bench_dir.join("worktree");
    // A worktree left by an interrupted invocation goes first.
    let _ = Command::new("git")
        .current_dir(root)
        .args(["worktree", "remove", "--force"])
        .arg(&worktree)
        .status();
    let added = Command::new("git")
        .current_dir(root)
        .args(["worktree", "add", "--detach"])
        .arg(&worktree)
        .arg(rev)
        .status()
        .context("cannot run git")?;
    if !added.success() {
        bail!("git worktree add {rev} failed ({added}): is {rev} a revision of this repository?");
    }
    let built = build(cargo, &worktree, Some(&bench_dir.join("target")));
    let kept = bench_dir.join(format!("rshmem-{}", rev.replace('/', "_")));
    let copied = built.and_then(|binary| {
        std::fs::copy(&binary, &kept)
            .with_context(|| format!("cannot copy {} to {}", binary.display(), kept.display()))
    });
    let _ = Command::new("git")
        .current_dir(root)
        .args(["worktree", "remove", "--force"])
        .arg(&worktree)
        .status();
    copied?;
    Ok(kept)
}

/// The workspace's root directory.
pub(crate) fn workspace_root() -> anyhow::Result<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize()
        .with_context(|| format!("cannot find the workspace at {}", root.display()))
}

/// Builds, measures every row with both builds one after the other, prints the table.
///
/// # Errors
/// A build or a run fails, or `--rows` is malformed.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let rows = if args.rows.is_empty() {
        default_rows()
    } else {
        args.rows
            .iter()
            .map(|r| parse_row(r))
            .collect::<anyhow::Result<_>>()?
    };
    let root = workspace_root()?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let bench_dir = root.join("target/sim-bench");
    std::fs::create_dir_all(&bench_dir)
        .with_context(|| format!("cannot make {}", bench_dir.display()))?;
    let before = match &args.against {
        Some(rev) => Some(build_revision(&cargo, &root, &bench_dir, rev)?),
        None => None,
    };
    let now = build(&cargo, &root, None)?;
    let flags = args.this_tree_flags();
    let then_flags: &[String] = if args.both_split { &flags } else { &[] };
    if args.both_split {
        println!("Both builds' runs add `{}`.\n", flags.join(" "));
    } else if !flags.is_empty() {
        println!("This tree's runs add `{}`.\n", flags.join(" "));
    }
    let mut measured = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        eprintln!(
            "[{}/{}] {} at {} PEs on {}",
            i + 1,
            rows.len(),
            row.workload,
            row.pes,
            row.topology
        );
        let (mut thens, mut nows) = (Vec::new(), Vec::new());
        for _ in 0..args.runs {
            if let Some(before) = &before {
                thens.push(measure(before, row, then_flags)?);
            }
            nows.push(measure(&now, row, &flags)?);
        }
        let then = (!thens.is_empty()).then(|| median(thens));
        measured.push((row.clone(), median(nows), then));
    }
    print!("{}", table(&measured, args.against.as_deref()));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(wall_s: f64, ops: f64, rss: u64, hash: &str) -> Measured {
        Measured {
            wall_s,
            ops_per_s: ops,
            rss_bytes: rss,
            sim_time_ns: 100,
            trace_hash: hash.into(),
        }
    }

    #[test]
    fn rows_are_read_with_the_targets_of_the_table() {
        let hello = parse_row("hello:4096:ib-512").unwrap();
        assert_eq!(hello.max_wall_s, Some(1.0));
        let other = parse_row("ring:8:hgx8").unwrap();
        assert_eq!((other.max_wall_s, other.min_ops_per_s), (None, None));
        let err = parse_row("hello:many:ib-512").unwrap_err().to_string();
        assert!(err.contains("not a number of PEs"), "{err}");
        let err = parse_row("hello").unwrap_err().to_string();
        assert!(err.contains("WORKLOAD:PES:TOPOLOGY"), "{err}");
    }

    #[test]
    fn a_report_is_read_and_a_broken_one_named() {
        let json = r#"{"workload":"hello","wall_s":1.5,"sim_ops_per_wall_s":2000.0,
            "process_rss_bytes_peak":1048576,"sim_time_ns":42,"trace_hash":"ab"}"#;
        let m = parse_report(json).unwrap();
        assert_eq!(
            (m.wall_s, m.rss_bytes, m.trace_hash.as_str()),
            (1.5, 1 << 20, "ab")
        );
        let err = parse_report(r#"{"wall_s":1}"#).unwrap_err().to_string();
        assert!(err.contains("sim_ops_per_wall_s"), "{err}");
    }

    #[test]
    fn the_median_run_is_shown() {
        let runs = [3.0, 1.0, 2.0].map(|wall| report(wall, 1.0, 0, "x"));
        assert_eq!(median(runs.to_vec()).wall_s, 2.0);
        assert_eq!(median(vec![report(5.0, 1.0, 0, "x")]).wall_s, 5.0);
    }

    #[test]
    fn missed_targets_say_by_how_much() {
        let rows = default_rows();
        let hello = &rows[2];
        assert_eq!(verdict(hello, &report(0.5, 1.0, 0, "x")), "met");
        assert_eq!(
            verdict(hello, &report(2.0, 1.0, 0, "x")),
            "missed: 2.00 s of 1 s (2.0x over)"
        );
        let alltoall = &rows[3];
        let v = verdict(alltoall, &report(30.0, 1.0, 8 * GIB, "x"));
        assert!(
            v.contains("2.0x over") && v.contains("8.00 GiB of 4 GiB"),
            "{v}"
        );
        let msg_rate = &rows[0];
        assert!(verdict(msg_rate, &report(1.0, 2e6, 0, "x")).contains("5.0x short"));
    }

    #[test]
    fn the_table_shows_both_builds_and_whether_they_ran_the_same() {
        let row = default_rows().remove(2);
        let same = table(
            &[(
                row.clone(),
                report(1.0, 2e6, 1 << 20, "aa"),
                Some(report(2.0, 1e6, 2 << 20, "aa")),
            )],
            Some("main"),
        );
        assert!(same.contains("| 2.000 → 1.000 | 2.00x |"), "{same}");
        assert!(same.contains("| yes |"), "{same}");
        let differ = table(
            &[(
                row,
                report(1.0, 2e6, 0, "bb"),
                Some(report(2.0, 1e6, 0, "aa")),
            )],
            Some("main"),
        );
        assert!(differ.contains("no: 100 ns aa → 100 ns bb"), "{differ}");
    }
}
