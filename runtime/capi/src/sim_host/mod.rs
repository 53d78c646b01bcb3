//! The host of a simulated run: the program's own process, turned by `libshmem` into a
//! simulator whose PEs are coroutines, each running its own copy of the program.
//!
//! How a run starts: `rshmem run -n N --sim TOPOLOGY ./prog` (and `oshrun --sim`) starts
//! `./prog` once, with `RSHMEM_SIM` holding a [`Request`]. A constructor of `libshmem`, which
//! runs before the program's own constructors and its `main`, sees the variable and takes the
//! process over: it loads a copy of the program per PE (`copies.rs`), builds the simulator
//! with every PE's memory addressable and its static data in place (the copy's data
//! segment), and runs each copy's `main` as that PE's coroutine. When every PE has returned,
//! it writes the report (`report.rs`) and ends the process; the original program's `main`
//! never runs.
//!
//! Why in the program's process and not in the launcher: the copies must bind to the very
//! `libshmem` the program was linked with, and the simulator must write each PE's memory
//! itself, so that a PE's plain loads see exactly what the ordering rules allow, at no cost
//! per access. One OS thread runs everything, in the simulator's order: the same seed gives
//! the same run, whatever the OS does.
//!
//! How a PE ends: as a process would. `exit`, `_exit`, `_Exit`, `quick_exit` and returning
//! from `main` end that PE with its status, after its `atexit` handlers where a process runs
//! them (`exit.rs`), and the run goes on for the others; a failed call, a global exit or a
//! fatal signal ends the process, and the report names the PE (`ending.rs`).
//!
//! Threads: a thread a PE's program starts with `pthread_create` is a thread of that PE in the
//! simulator, still on the one OS thread (`threads/`).
//!
//! What a PE's program must not do: start threads by other means that call SHMEM (C11
//! `thrd_create`, `clone`: they are OS threads, refused at their first call), or use
//! thread-local variables of its own (refused at load).

pub(crate) mod check;
mod copies;
mod ending;
mod exit;
pub(crate) mod getopt;
mod image;
mod mpi;
mod openmp;
mod report;
mod threads;

use std::ffi::{c_char, c_int};
use std::io::Write;
use std::path::PathBuf;

use hw::any::AnyDevice;
use hw::{Backend, Device, LaunchError, Launcher, Semantics};
use serde::Deserialize;
use sim::{Explore, Sim, StaticRegion};

use crate::sim_host::copies::Copy;
use crate::sim_host::image::Image;
use crate::sim_host::report::Outcome;
use crate::state::{self, Slot};

/// The variable that carries a [`Request`] from the launcher.
const REQUEST_VAR: &str = "RSHMEM_SIM";

/// The stack of each PE's coroutine: a C program's, as a thread's default (committed only
/// as the program uses it).
const STACK_BYTES: usize = 8 << 20;

/// What the launcher asks the host to run.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Request {
    /// How many PEs.
    pes: u32,
    /// A topology preset or a topology file.
    topology: String,
    seed: u64,
    /// `nvshmem` or `openshmem-1.5`.
    semantics: String,
    /// Where to write a Chrome trace of the run.
    trace: Option<PathBuf>,
    /// Where to write the report.
    report: PathBuf,
    /// Run under the race detector.
    #[serde(default)]
    check: bool,
    /// Run one execution of the exploration mode instead of the seeded timing.
    #[serde(default)]
    explore: Option<ExploreRequest>,
    /// Make every kernel load of a peer's memory a get operation (no mapped loads).
    #[serde(default)]
    exact: bool,
}

/// The exploration mode's choices (`rshmem check --schedule delays`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExploreRequest {
    /// Late events to pick (0: every event on time, which counts the chance events).
    depth: u32,
    /// The chance events of the on-time run.
    n_choices: u64,
    /// How many rounds an event may be late.
    rounds: u32,
}

/// Why the host could not run the program.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HostError {
    /// The launcher's request is malformed.
    #[error(
        "the simulator's request in {REQUEST_VAR} is malformed ({0}); start the program with `rshmem run -n N --sim TOPOLOGY` or `oshrun --sim`"
    )]
    Request(String),
    /// The program cannot be loaded once per PE.
    #[error("cannot run {path} on the simulator: {reason}")]
    Image { path: String, reason: String },
    /// A PE's copy did not load.
    #[error("cannot load PE {pe}'s copy of the program: {reason}")]
    Load { pe: u32, reason: String },
    /// The simulator refused the machine or the run.
    #[error("{0}")]
    Sim(String),
    /// The PEs could not be started.
    #[error(transparent)]
    Launch(#[from] LaunchError),
}

/// The constructor that takes the process over when `RSHMEM_SIM` is set; glibc passes
/// `argc`, `argv` and `envp` to `.init_array` functions.
#[used]
#[unsafe(link_section = ".init_array")]
static HOST_ENTRY: extern "C" fn(c_int, *const *const c_char, *const *const c_char) = host_entry;

extern "C" fn host_entry(argc: c_int, argv: *const *const c_char, envp: *const *const c_char) {
    let Some(request) = std::env::var_os(REQUEST_VAR) else {
        return;
    };
    // SAFETY: constructors run before the program could start a thread, so nothing reads the
    // environment concurrently. Removed so that the PEs' programs, and what they start, do
    // not see it.
    unsafe { std::env::remove_var(REQUEST_VAR) };
    if let Err(err) = mpi::preload::ensure_shim(&request, argv) {
        std::process::exit(report::fail_early(&err));
    }
    let args = Args { argc, argv, envp };
    let status = match serde_json::from_str::<Request>(&request.to_string_lossy()) {
        Ok(request) => report::finish(&request, host(&request, &args)),
        Err(err) => report::fail_early(&HostError::Request(err.to_string())),
    };
    std::process::exit(status)
}

/// The program's arguments, as its `main` gets them.
struct Args {
    argc: c_int,
    argv: *const *const c_char,
    envp: *const *const c_char,
}

// SAFETY: the simulator runs every PE on this one thread; the pointers are only passed to
// the copies' `main`.
unsafe impl Sync for Args {}

/// Runs the program on the simulator as `request` says.
fn host(request: &Request, args: &Args) -> Result<Outcome, HostError> {
    ending::install(report::Report::early(request));
    state::simulate_on_this_thread();
    let image = Image::read(std::path::Path::new("/proc/self/exe"))?;
    let machine =
        sim::topology::load(&request.topology).map_err(|e| HostError::Sim(e.to_string()))?;
    let semantics: Semantics = request
        .semantics
        .parse()
        .map_err(|e: hw::UnknownSemantics| HostError::Request(e.to_string()))?;
    let copies = copies::load(&image, request.pes)?;
    openmp::one_thread_per_team();
    let regions = copies
        .iter()
        .map(|copy| StaticRegion {
            base: copy.data.start,
            len_bytes: (copy.data.end - copy.data.start) as u64,
        })
        .collect();
    let mut builder = Sim::builder(machine)
        .pes(request.pes)
        .seed(request.seed)
        .semantics(semantics)
        .timeline(request.trace.is_some())
        .addressable_memory(true)
        // Why not when exploring: an exploration's choices are the events, which mapped
        // loads skip; the detector refuses them itself.
        .mapped_loads(!request.exact && request.explore.is_none())
        .stack_bytes(STACK_BYTES);
    // SAFETY: each region is a loaded copy's data segment, which stays mapped for the run
    // (the copies are never unloaded).
    builder = unsafe { builder.static_data(regions) };
    if let Some(explore) = &request.explore {
        let prefix = sim::explore::random_delays(
            request.seed,
            explore.n_choices,
            explore.depth,
            explore.rounds,
        );
        builder = builder.explore(Explore {
            rounds: explore.rounds,
            ..Explore::new(prefix)
        });
    }
    let sim = builder.build().map_err(|e| HostError::Sim(e.to_string()))?;
    let topology = sim.topology().clone();
    mpi::install(&copies, |pe| topology.host_of(hw::Pe(pe)));
    let config = crate::start::config_with(&crate::start::sim_defaults(request.pes))
        .map_err(|e| HostError::Sim(e.to_string()))?;
    // Leaked: a slot stays current after its PE's `main` returns, and the copies' exit
    // handlers (C++ destructors) may still call the library when the host ends the process.
    let slots: &'static [Slot] = Box::leak((0..request.pes).map(|_| Slot::new()).collect());
    exit::install(slots, copies.iter().map(|copy| copy.base..copy.data.end));
    let pe_main = |device: AnyDevice| -> c_int {
        let pe = device.pe().0 as usize;
        run_copy(&slots[pe], &copies[pe], device, &config, args)
    };
    let wall = std::time::Instant::now();
    check::simulating();
    let outcome = if request.check {
        check::turn_on();
        let (results, checked) = launch(rshmem::check::Checked::new(sim), pe_main)?;
        Outcome::new(results, checked.backend, checked.races, &topology)
    } else {
        let (results, report) = launch(sim, pe_main)?;
        Outcome::new(results, report, Vec::new(), &topology)
    };
    Ok(outcome
        .with_wall_s(wall.elapsed().as_secs_f64())
        .with_image(image, &copies))
}

/// Launches `pe_main` on every PE of `launcher`, each PE's device erased.
fn launch<L>(
    launcher: L,
    pe_main: impl Fn(AnyDevice) -> c_int + Sync,
) -> Result<hw::LaunchOutput<c_int, L::Report>, LaunchError>
where
    L: Launcher,
    <L::B as Backend>::Device: 'static,
{
    launcher.launch(|device| pe_main(AnyDevice::new(device)))
}

/// One PE's life: its program's `main` on its own copy, with its own slot, until it returns
/// or exits, and the finalize the program left out.
fn run_copy(
    slot: &Slot,
    copy: &Copy,
    device: AnyDevice,
    config: &rshmem::Config,
    args: &Args,
) -> c_int {
    let pe = device.pe().0;
    slot.provide(device, config.clone());
    if let Some(vars) = copy.getopt {
        slot.getopt().set(vars);
    }
    // SAFETY: the slots are leaked, so they live until the process ends.
    unsafe { state::enter_slot(slot) };
    // SAFETY: `main` is the copy's, called as the C runtime calls it.
    let ended = exit::run_main(pe, move || unsafe {
        (copy.main)(args.argc, args.argv, args.envp)
    });
    let status = ended.status;
    ending::pe_ended(pe, status);
    // Why: a program that ends without shmem_finalize still takes part in the collective
    // finalize the others run. Why only with status 0: a PE that failed (an `exit(1)` after
    // an error) takes part in nothing more, as its process would not, so the others' next
    // collective waits for it and the deadlock report names it, instead of taking its
    // finalize for their barrier.
    if status == 0 {
        state::finalize("shmem_finalize (when the PE exited)");
    }
    drop(ended);
    status
}

pub(crate) use getopt::PeGetopt;

/// Records why the running PE is about to end the process (a failed call), for the report
/// of a simulated run; elsewhere nothing reads it.
pub(crate) fn note_why(why: String) {
    ending::note_why(why);
}

/// Ends the process with `status` through libc's `exit`, never just the running PE: what a
/// failed call does. On the simulator the status is the first PE's that exited non-zero, if
/// one did, as the process launcher's would be.
pub(crate) fn end_process(status: c_int) -> ! {
    exit::exit_process(ending::run_status(status))
}

/// On the simulator, ends the run for `shmem_global_exit(status)` of the running PE; returns
/// elsewhere.
pub(crate) fn global_exit_if_simulated(status: c_int) {
    if let Some(pe) = exit::running_pe() {
        ending::note_global_exit(pe, status);
        exit::exit_process(status)
    }
}

/// Records that `call` returned NULL to PE `pe` because a heap is too small (`why`), and
/// says so on standard error once per PE; on the simulator a crash of the PE names it.
pub(crate) fn note_failed_alloc(pe: u32, call: &str, why: &dyn std::fmt::Display) {
    let first = ending::note_failed_alloc(pe, || format!("{call} returned NULL ({why})"));
    if first {
        // Why one write of the whole line: as processes every PE writes to the same stderr at
        // once, and a line written in pieces would interleave with the others'. Why ignore a
        // failed write: the call returns NULL either way.
        let line = format!("rshmem: PE {pe}: {call}: {why}; it returns NULL (said once per PE)\n");
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
}
