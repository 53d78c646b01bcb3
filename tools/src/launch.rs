//! `rshmem run -n N PROGRAM [ARGS...]`: start N processes of a program on this machine, one per
//! rank, with a bootstrap server they find through the environment (`hw::bootstrap`).
//!
//! The launcher's job is small and its failure handling is the point: every rank gets its
//! rank, the number of ranks and the bootstrap socket; when one rank fails, the others are
//! given a short grace period (to print their own view of the failure, which the bootstrap
//! makes "rank K left") and are then killed, so that a run never hangs on a dead peer.
//! A rank that calls `shmem_global_exit(status)` ends the job on purpose: the bootstrap server
//! reports it ([`ServeEnd::GlobalExit`]), the others are killed at once, without grace, and
//! the launcher exits with that status.

use std::ffi::OsString;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use clap::Args;
use hw::bootstrap::{BootstrapError, BootstrapServer, N_RANKS_VAR, RANK_VAR, SOCKET_VAR, ServeEnd};
use hw::cuda::SHARE_GPUS_VAR;

use crate::rank_activity::RankActivities;
use crate::workloads;

mod mps;

/// The variable with which libshmem picks its backend (`runtime/capi/src/start.rs`): `--gpu`
/// sets it to `cuda` for every rank.
const BACKEND_VAR: &str = "RSHMEM_BACKEND";

/// How long the other ranks may still run after one failed: long enough to print their own
/// error, short enough that nobody waits for a hung peer.
const GRACE_MS: u64 = 2_000;

/// How often the launcher looks at its children. `std` has no "wait for any child", and 20 ms
/// is nothing next to a process's start-up.
const POLL_MS: u64 = 20;

/// The bootstrap's deadline when `--timeout-s` is 0: in effect none. Ranks still bound their
/// own waits by their deadlines, and the launcher kills the rest when one fails.
const NO_DEADLINE_S: u64 = 100 * 365 * 24 * 3600;

/// The launcher's options of `rshmem run` (the others are the simulator's).
#[derive(Args, Debug)]
pub(crate) struct LaunchArgs {
    /// Start N processes of PROGRAM on this machine (ranks 0..N) instead of simulating a
    /// workload; every argument after PROGRAM goes to PROGRAM.
    #[arg(
        short = 'n',
        long = "np",
        value_name = "N",
        conflicts_with_all = ["pes", "topology"]
    )]
    pub(crate) np: Option<u32>,
    /// With -n: run PROGRAM (built by oshcc) on N simulated GPUs of this topology (a preset:
    /// h200x2, hgx8, ib-N, or a TOML file) in one process, each PE a coroutine over its own
    /// copy of the program; --seed, --semantics, --trace and --json then apply
    #[arg(long, value_name = "TOPOLOGY", requires = "np")]
    pub(crate) sim: Option<String>,
    /// With -n: kill every rank that still runs after this many seconds (0: no limit).
    #[arg(long, value_name = "SECONDS", default_value_t = 0, requires = "np")]
    pub(crate) timeout_s: u64,
    /// With -n: let the ranks' CUDA PEs share GPUs when there are more ranks than GPUs (rank
    /// i on GPU i mod the GPU count; for tests on small machines, not for timing)
    #[arg(long, requires = "np")]
    pub(crate) share_gpus: bool,
    /// With -n: run the ranks' C and C++ programs (libshmem) on GPUs, one rank per GPU: sets
    /// RSHMEM_BACKEND=cuda in every rank's environment
    #[arg(long, requires = "np")]
    pub(crate) gpu: bool,
    /// Variables set in every rank's environment on top of the launcher's own (`oshrun -x
    /// VAR=VALUE`); not an option of `rshmem run`.
    #[arg(skip)]
    pub(crate) exports: Vec<(String, String)>,
}

/// Why a rank ended.
#[derive(Debug, Clone, Copy)]
enum End {
    Exited(ExitStatus),
    /// Killed by the launcher after `rank` failed.
    KilledAfter {
        rank: u32,
    },
    /// Killed by the launcher when `--timeout-s` passed.
    KilledAtTimeout,
    /// Killed by the launcher after the bootstrap server failed.
    KilledAfterBootstrap,
    /// Killed by the launcher after a rank called `shmem_global_exit`.
    KilledAtGlobalExit,
}

/// How the supervision of a run ended.
struct Outcome {
    /// How each rank ended.
    ends: Vec<Option<End>>,
    /// The first rank seen to fail on its own.
    first_failed: Option<u32>,
    /// The rank that called `shmem_global_exit`, and its status.
    global_exit: Option<(u32, i32)>,
}

/// What the serving thread said when it finished.
enum ServerNews {
    /// It failed (and printed why).
    Failed,
    /// A rank ended the job with `shmem_global_exit(status)`.
    GlobalExit { rank: u32, status: i32 },
}

/// The private directory of one run, removed when the run ends.
pub(crate) struct RunDir(pub(crate) PathBuf);

impl RunDir {
    /// `$TMPDIR/rshmem-<pid>-<nanos>`, mode 0700: only this user can reach the socket.
    pub(crate) fn create() -> anyhow::Result<RunDir> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!("rshmem-{}-{nanos}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .with_context(|| format!("cannot create the run directory {}", path.display()))?;
        Ok(RunDir(path))
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The command line with `--` put after PROGRAM in `rshmem run -n N PROGRAM ARGS...`, so that
/// every argument after PROGRAM is PROGRAM's even where `rshmem run` has an option of that name
/// (`rshmem run -n 2 ./bench --seed 3`). clap alone passes on ARGS only from the first one it
/// does not know. Any other command line comes back as it was.
pub(crate) fn program_args_verbatim(mut argv: Vec<OsString>) -> Vec<OsString> {
    // The options of `rshmem run` that take a value, so that the value is not taken for
    // PROGRAM.
    const WITH_VALUE: [&str; 9] = [
        "-n",
        "--np",
        "--sim",
        "--timeout-s",
        "--pes",
        "--topology",
        "--semantics",
        "--seed",
        "--trace",
    ];
    if argv.get(1).is_none_or(|a| a != "run") {
        return argv;
    }
    let mut launcher = false;
    let mut i = 2;
    while let Some(arg) = argv.get(i).and_then(|a| a.to_str()) {
        if arg == "--" {
            // PROGRAM is already escaped.
            return argv;
        }
        if WITH_VALUE.contains(&arg) {
            launcher |= arg == "-n" || arg == "--np";
            i += 2;
        } else if arg.starts_with('-') && arg.len() > 1 {
            // `-n2`, `--np=2`, or an option without a value.
            launcher |=
                arg.starts_with("--np=") || (arg.starts_with("-n") && !arg.starts_with("--"));
            i += 1;
        } else {
            if launcher {
                argv.insert(i + 1, OsString::from("--"));
            }
            return argv;
        }
    }
    argv
}

/// Runs `program` as `n_ranks` processes and waits for all of them.
///
/// # Errors
/// When `n_ranks` is 0, the program cannot be found or started, or the bootstrap socket cannot
/// be created. A rank that fails is not an error: it is reported on stderr and in the exit
/// status.
pub(crate) fn main(
    n_ranks: u32,
    program: &str,
    args: &[String],
    options: &LaunchArgs,
) -> anyhow::Result<ExitCode> {
    let timeout_s = options.timeout_s;
    if n_ranks == 0 {
        bail!("-n 0: a run needs at least one process; pass -n 1 or more");
    }
    let program = resolve(program)?;
    let dir = RunDir::create()?;
    let socket = dir.0.join("bootstrap.sock");
    let server = BootstrapServer::bind(&socket, n_ranks)?;
    let start = Instant::now();
    let timeout = (timeout_s > 0).then(|| Duration::from_secs(timeout_s));
    let deadline = start + timeout.unwrap_or(Duration::from_secs(NO_DEADLINE_S));
    let serving = thread::Builder::new()
        .name("rshmem-bootstrap".to_string())
        .spawn(move || server.serve(deadline))
        .context("cannot start the bootstrap server's thread")?;

    // Declared after `dir`, so dropped (the daemon quit) before the run's directory goes.
    let mps = if options.gpu && options.share_gpus {
        match mps::for_shared_gpus(n_ranks, &dir.0) {
            mps::Mps::Started(daemon) => Some(daemon),
            mps::Mps::Without(why) => {
                eprintln!("rshmem run: ranks that share a GPU run without CUDA MPS: {why}");
                None
            }
            mps::Mps::NotShared => None,
        }
    } else {
        None
    };
    let mut children = Vec::with_capacity(n_ranks as usize);
    for rank in 0..n_ranks {
        let mut command = Command::new(&program);
        command
            .args(args)
            .env(RANK_VAR, rank.to_string())
            .env(N_RANKS_VAR, n_ranks.to_string())
            .env(SOCKET_VAR, &socket)
            .envs(options.exports.iter().map(|(k, v)| (k, v)));
        if options.share_gpus {
            command.env(SHARE_GPUS_VAR, "1");
        }
        if let Some(daemon) = &mps {
            command.envs(daemon.env());
        }
        if options.gpu {
            command.env(BACKEND_VAR, "cuda");
        }
        // As mpirun does: standard input goes to rank 0 only, so that ranks do not race for it.
        if rank > 0 {
            command.stdin(Stdio::null());
        }
        match command.spawn() {
            Ok(child) => children.push(child),
            Err(e) => {
                for child in &mut children {
                    let _ = child.kill();
                    let _ = child.wait();
                }
                return Err(e)
                    .with_context(|| format!("cannot start rank {rank} ({})", program.display()));
            }
        }
    }

    let mut activities = RankActivities::new(&dir.0, n_ranks);
    let outcome = supervise(&mut children, start, timeout, serving, &mut activities);
    report(&outcome, timeout_s, &activities);
    drop(mps);
    drop(dir);
    Ok(exit_code(&outcome))
}

/// Finds the program as the shell would: a name with a slash is a path, any other is looked
/// up in `PATH`. Done before any rank starts, so that a typo is one clear error, not N.
pub(crate) fn resolve(program: &str) -> anyhow::Result<PathBuf> {
    let hint = || {
        if workloads::lookup(program).is_ok() {
            format!(
                "; `{program}` is a built-in workload: drop -n to simulate it (`rshmem run \
                 {program}`), or name a program of that name with a path (`./{program}`)"
            )
        } else {
            String::new()
        }
    };
    if program.contains('/') {
        let path = PathBuf::from(program);
        if !is_executable(&path) {
            bail!("program {program} is not an executable file{}", hint());
        }
        return Ok(path);
    }
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path_var)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
        .with_context(|| format!("program {program} not found in PATH{}", hint()))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Waits for every rank; kills the rest `GRACE_MS` after the first failure (a rank's non-zero
/// exit or signal, or the bootstrap server's error), at once after a global exit, and all of
/// them at the timeout.
fn supervise(
    children: &mut [Child],
    start: Instant,
    timeout: Option<Duration>,
    serving: JoinHandle<Result<ServeEnd, BootstrapError>>,
    activities: &mut RankActivities,
) -> Outcome {
    let mut outcome = Outcome {
        ends: vec![None; children.len()],
        first_failed: None,
        global_exit: None,
    };
    let ends = &mut outcome.ends;
    let mut serving = Some(serving);
    // The first failure: which rank (None for the bootstrap server) and when.
    let mut failed: Option<(Option<u32>, Instant)> = None;
    loop {
        for (rank, child) in (0u32..).zip(children.iter_mut()) {
            if ends[rank as usize].is_some() {
                continue;
            }
            match child.try_wait() {
                Ok(Some(status)) => {
                    ends[rank as usize] = Some(End::Exited(status));
                    if !status.success() && failed.is_none() {
                        failed = Some((Some(rank), Instant::now()));
                    }
                }
                Ok(None) => {}
                // The child cannot be waited for: count it as failed and kill it below.
                Err(_) => {
                    if failed.is_none() {
                        failed = Some((Some(rank), Instant::now()));
                    }
                }
            }
        }
        outcome.first_failed = failed.and_then(|(rank, _)| rank);
        match server_news(&mut serving) {
            Some(ServerNews::GlobalExit { rank, status }) => {
                end_at_global_exit(children, ends, rank);
                outcome.global_exit = Some((rank, status));
                return outcome;
            }
            Some(ServerNews::Failed) if failed.is_none() => failed = Some((None, Instant::now())),
            _ => {}
        }
        if ends.iter().all(Option::is_some) {
            // Why wait for the server: the ranks may all have exited a poll before it saw them
            // go, and its report ("rank K left", a global exit) is what names the culprit.
            let give_up = Instant::now() + Duration::from_millis(GRACE_MS);
            while serving.is_some() && Instant::now() < give_up {
                if let Some(ServerNews::GlobalExit { rank, status }) = server_news(&mut serving) {
                    outcome.global_exit = Some((rank, status));
                }
                thread::sleep(Duration::from_millis(POLL_MS));
            }
            return outcome;
        }
        let now = Instant::now();
        activities.poll(now);
        if timeout.is_some_and(|t| now >= start + t) {
            kill_rest(children, ends, End::KilledAtTimeout);
            return outcome;
        }
        if let Some((rank, at)) = failed
            && now >= at + Duration::from_millis(GRACE_MS)
        {
            let end = rank.map_or(End::KilledAfterBootstrap, |rank| End::KilledAfter { rank });
            kill_rest(children, ends, end);
            return outcome;
        }
        thread::sleep(Duration::from_millis(POLL_MS));
    }
}

/// `rank` called `shmem_global_exit`: every other rank is killed now, and `rank` itself, which
/// is exiting (and may be flushing its output), gets the grace period before it is killed too.
fn end_at_global_exit(children: &mut [Child], ends: &mut [Option<End>], rank: u32) {
    let caller = rank as usize;
    for (i, (child, end)) in children.iter_mut().zip(ends.iter_mut()).enumerate() {
        if i != caller {
            kill(child, end, End::KilledAtGlobalExit);
        }
    }
    let give_up = Instant::now() + Duration::from_millis(GRACE_MS);
    while let (Some(child), Some(end @ None)) = (children.get_mut(caller), ends.get_mut(caller))
        && Instant::now() < give_up
    {
        if let Ok(Some(status)) = child.try_wait() {
            *end = Some(End::Exited(status));
        } else {
            thread::sleep(Duration::from_millis(POLL_MS));
        }
    }
    kill_rest(children, ends, End::KilledAtGlobalExit);
}

fn kill_rest(children: &mut [Child], ends: &mut [Option<End>], why: End) {
    for (child, end) in children.iter_mut().zip(ends.iter_mut()) {
        kill(child, end, why);
    }
}

/// Kills one rank unless it has ended, and records how it ended.
fn kill(child: &mut Child, end: &mut Option<End>, why: End) {
    if end.is_some() {
        return;
    }
    let _ = child.kill();
    // Reap it, so that no zombie outlives the run; a rank that exited on its own in the
    // meantime keeps its own status.
    *end = Some(match child.wait() {
        Ok(status) if status.signal() != Some(9) => End::Exited(status),
        _ => why,
    });
}

/// Joins the bootstrap server's thread once it has finished, printing its error; says how it
/// ended unless every rank simply left.
fn server_news(
    serving: &mut Option<JoinHandle<Result<ServeEnd, BootstrapError>>>,
) -> Option<ServerNews> {
    if !serving.as_ref().is_some_and(JoinHandle::is_finished) {
        return None;
    }
    match serving.take()?.join() {
        Ok(Ok(ServeEnd::AllLeft)) => None,
        Ok(Ok(ServeEnd::GlobalExit { rank, status })) => {
            Some(ServerNews::GlobalExit { rank, status })
        }
        Ok(Err(e)) => {
            eprintln!("rshmem run: {e}");
            Some(ServerNews::Failed)
        }
        Err(_) => {
            eprintln!("rshmem run: the bootstrap server's thread panicked");
            None
        }
    }
}

/// One line on stderr per rank that did not exit 0, and a count; after a global exit, the one
/// line that names its caller (the others were ended on purpose).
fn report(outcome: &Outcome, timeout_s: u64, activities: &RankActivities) {
    let now = Instant::now();
    if let Some((rank, status)) = outcome.global_exit {
        eprintln!("rshmem run: rank {rank} called shmem_global_exit({status})");
        return;
    }
    let ends = &outcome.ends;
    let (mut n_failed, mut n_killed) = (0, 0);
    for (rank, end) in ends.iter().enumerate() {
        if matches!(
            end,
            Some(
                End::KilledAfter { .. }
                    | End::KilledAtTimeout
                    | End::KilledAfterBootstrap
                    | End::KilledAtGlobalExit
            )
        ) {
            n_killed += 1;
        } else if !matches!(end, Some(End::Exited(status)) if status.success()) {
            n_failed += 1;
        }
        let line = match end {
            Some(End::Exited(status)) if status.success() => continue,
            Some(End::Exited(status)) => match (status.code(), status.signal()) {
                (Some(code), _) => format!("rank {rank} exited with status {code}"),
                (None, Some(sig)) => {
                    format!("rank {rank} was killed by signal {sig}{}", signal_name(sig))
                }
                (None, None) => format!("rank {rank} ended abnormally ({status})"),
            },
            Some(End::KilledAfter { rank: first }) => format!(
                "rank {rank} was killed by the launcher {} s after rank {first} failed",
                GRACE_MS / 1000
            ),
            Some(End::KilledAtTimeout) => format!(
                "rank {rank} was killed by the launcher: --timeout-s {timeout_s} passed; {}",
                activities.describe(rank as u32, now)
            ),
            Some(End::KilledAfterBootstrap) => format!(
                "rank {rank} was killed by the launcher {} s after the bootstrap failed",
                GRACE_MS / 1000
            ),
            Some(End::KilledAtGlobalExit) => {
                format!("rank {rank} was killed by the launcher at a global exit")
            }
            None => format!("rank {rank}: its end is unknown"),
        };
        eprintln!("rshmem run: {line}");
    }
    if n_failed + n_killed > 0 {
        eprintln!(
            "rshmem run: {n_failed} of {} ranks failed, {n_killed} killed by the launcher",
            ends.len()
        );
    }
}

/// The status a rank passed to `shmem_global_exit` after a global exit, as `exit(status)`
/// would leave it (its low 8 bits). Else 0 when every rank exited 0. Otherwise, as mpirun does, the status of the first rank seen to
/// fail on its own (else the lowest such rank): its exit code, or 128 + its signal as a shell
/// reports it; 1 when every failure was the launcher's kill.
///
/// "First seen" is as good as the launcher's polling: ranks that fail within one poll of each
/// other (a rank and the peers the bootstrap told of it) are seen in rank order.
fn exit_code(outcome: &Outcome) -> ExitCode {
    if let Some((_, status)) = outcome.global_exit {
        // Truncation on purpose: a process's exit status is the low byte of what it passed.
        return ExitCode::from(status.to_le_bytes()[0]);
    }
    let Outcome {
        ends, first_failed, ..
    } = outcome;
    if ends
        .iter()
        .all(|e| matches!(e, Some(End::Exited(s)) if s.success()))
    {
        return ExitCode::SUCCESS;
    }
    let status_of = |e: &Option<End>| match e {
        Some(End::Exited(s)) if !s.success() => s
            .code()
            .or_else(|| s.signal().map(|sig| 128 + sig))
            .and_then(|c| u8::try_from(c).ok())
            .filter(|&c| c != 0),
        _ => None,
    };
    let first = first_failed
        .and_then(|rank| ends.get(rank as usize))
        .and_then(status_of)
        .or_else(|| ends.iter().find_map(status_of));
    ExitCode::from(first.unwrap_or(1))
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        1 => " (SIGHUP)",
        2 => " (SIGINT)",
        3 => " (SIGQUIT)",
        4 => " (SIGILL)",
        6 => " (SIGABRT)",
        7 => " (SIGBUS)",
        8 => " (SIGFPE)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        13 => " (SIGPIPE)",
        15 => " (SIGTERM)",
        _ => "",
    }
}
