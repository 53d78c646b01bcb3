//! The entry point: run a SHMEM program on every PE of a launcher.

use std::sync::Arc;

use hw::{Backend, Device, LaunchError, Launcher, PeFailure};

use crate::config::Config;
use crate::error::ShmemError;
use crate::exit::ExitFlag;
use crate::shmem::Shmem;

/// Why one PE did not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum PeError {
    /// The PE's program panicked.
    #[error("{} panicked: {}", .0.pe, .0.message)]
    Failed(PeFailure),
    /// The PE could not be set up; its program did not run.
    #[error("PE {pe} failed to initialise: {source}")]
    Init {
        /// The PE.
        pe: u32,
        /// Why.
        source: ShmemError,
    },
    /// The PE's program returned, but the collective teardown failed (often because another
    /// PE failed and never reached it).
    #[error("PE {pe} failed to finalise: {source}")]
    Finalize {
        /// The PE.
        pe: u32,
        /// Why.
        source: ShmemError,
    },
    /// The run was ended by [`Shmem::global_exit`] before this PE's program and teardown
    /// completed (this PE may be the caller).
    #[error("the run was ended by PE {pe} calling global_exit({status})")]
    GlobalExit {
        /// The PE that called global_exit.
        pe: u32,
        /// The status it passed.
        status: i32,
    },
}

/// A run could not happen at all.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The launcher could not start the PEs.
    #[error("could not launch the PEs: {0}")]
    Launch(#[from] LaunchError),
}

/// What a run produced.
#[derive(Debug)]
pub struct RunOutput<R, Report> {
    /// The result of each PE this process ran, in PE order: every PE's, except in a process
    /// of a multi-process run (`rshmem run -n`), which has its own PE's only.
    pub results: Vec<Result<R, PeError>>,
    /// What the backend reports about the run (simulated time, counters, ...).
    pub report: Report,
}

impl<R, Report> RunOutput<R, Report> {
    /// The PE that ended the run with [`Shmem::global_exit`] and its status, if one did.
    pub fn global_exit(&self) -> Option<(u32, i32)> {
        self.results.iter().find_map(|result| match result {
            Err(PeError::GlobalExit { pe, status }) => Some((*pe, *status)),
            _ => None,
        })
    }

    /// Every PE's value and the report, if every PE succeeded.
    ///
    /// # Errors
    /// The error of the lowest-numbered PE that failed.
    pub fn all_ok(self) -> Result<(Vec<R>, Report), PeError> {
        let values = self
            .results
            .into_iter()
            .collect::<Result<Vec<R>, PeError>>()?;
        Ok((values, self.report))
    }
}

/// Runs `pe_main` on every PE that `launcher` starts.
///
/// Each PE is set up first (collectively: its heaps as `config` sizes them, its peers'
/// segments, the default queue, a barrier), then runs `pe_main`, then finalises
/// collectively (quiet and barrier_all), so a program need not end with a barrier of its own.
///
/// # Errors
/// [`RunError::Launch`] if the PEs could not be started. Failures of single PEs (a panic,
/// failed setup or teardown, a [`Shmem::global_exit`]) are in [`RunOutput::results`].
pub fn run<L, R, F>(
    launcher: L,
    config: Config,
    pe_main: F,
) -> Result<RunOutput<R, L::Report>, RunError>
where
    L: Launcher,
    R: Send,
    F: Fn(&Shmem<L::B>) -> R + Sync,
{
    let config = &config;
    let pe_main = &pe_main;
    let exit = &Arc::new(ExitFlag::default());
    let (results, report) = launcher
        .launch(move |device| exit.run(|| run_pe(device, config, pe_main, Arc::clone(exit))))?;
    let results = results
        .into_iter()
        .map(|result| result.map_err(PeError::Failed).and_then(|inner| inner))
        .collect();
    Ok(RunOutput { results, report })
}

/// Sets up one PE on `device` for a program that [`run()`] does not wrap: one whose own code
/// runs between setup and teardown, as a C program's `main` does between `shmem_init` and
/// `shmem_finalize`. The setup is the one `run` makes (collective over every PE of the
/// run); end the PE with [`Shmem::finalize`].
///
/// A global exit is the caller's to carry out: [`Shmem::global_exit`] unwinds, which only a
/// Rust program can catch, so a caller such as the C API ends its process instead.
///
/// # Errors
/// As the setup of [`run()`]: [`PeError::Init`]'s sources.
pub fn attach<B: Backend>(device: B::Device, config: Config) -> Result<Shmem<B>, ShmemError> {
    Shmem::init(device, config, Arc::new(ExitFlag::default()))
}

/// One PE's life: init, the program, finalize.
fn run_pe<B: Backend, R>(
    device: B::Device,
    config: &Config,
    pe_main: &impl Fn(&Shmem<B>) -> R,
    exit: Arc<ExitFlag>,
) -> Result<R, PeError> {
    let pe = device.pe().0;
    let shmem =
        Shmem::init(device, config.clone(), exit).map_err(|source| PeError::Init { pe, source })?;
    let value = pe_main(&shmem);
    shmem
        .finalize()
        .map_err(|source| PeError::Finalize { pe, source })?;
    Ok(value)
}
