//! PEs as threads of one process: the launch loop of the host and CUDA backends.
//!
//! Each PE runs on a thread of its own; a PE that panics becomes its [`PeFailure`] and the
//! others run on. The threads come from [`crate::sync`], so under shuttle they are shuttle's.

use crate::error::{LaunchError, PeFailure};
#[cfg(not(rshmem_loom))]
use crate::sync;
use crate::types::Pe;

/// Runs `run_pe` once per PE of `pes` (all of a run's PEs, or the ones this process runs),
/// each on its own thread, and returns each PE's result in PE order.
///
/// # Errors
/// [`LaunchError::Init`] if a thread could not be started.
///
/// # Panics
/// In loom builds, which have no scoped threads: loom models start their threads themselves.
pub(crate) fn run_pe_threads<R, F>(
    pes: std::ops::Range<u32>,
    run_pe: F,
) -> Result<Vec<Result<R, PeFailure>>, LaunchError>
where
    F: Fn(Pe) -> R + Sync,
    R: Send,
{
    #[cfg(rshmem_loom)]
    {
        let _ = (pes, run_pe);
        panic!("PE threads cannot run under loom; start threads and use HostWorld::device");
    }
    #[cfg(not(rshmem_loom))]
    {
        let run_pe = |pe: u32| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_pe(Pe(pe)))).map_err(
                |payload| PeFailure {
                    pe: Pe(pe),
                    message: panic_message(&*payload),
                },
            )
        };
        let run_pe = &run_pe;
        sync::scope(|s| {
            let handles = pes
                .map(|pe| spawn_pe(s, pe, move || run_pe(pe)).map(|h| (pe, h)))
                .collect::<Result<Vec<_>, LaunchError>>()?;
            Ok(handles
                .into_iter()
                .map(|(pe, h)| {
                    h.join().unwrap_or_else(|payload| {
                        Err(PeFailure {
                            pe: Pe(pe),
                            message: panic_message(&*payload),
                        })
                    })
                })
                .collect())
        })
    }
}

/// The message of a panic payload.
#[cfg(any(not(rshmem_loom), feature = "cuda", feature = "process"))]
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-string payload".into())
}

/// Starts PE `pe`'s thread in scope `s`.
#[cfg(not(any(rshmem_loom, rshmem_shuttle)))]
fn spawn_pe<'scope, T: Send + 'scope>(
    s: &'scope sync::Scope<'scope, '_>,
    pe: u32,
    f: impl FnOnce() -> T + Send + 'scope,
) -> Result<sync::ScopedJoinHandle<'scope, T>, LaunchError> {
    std::thread::Builder::new()
        .name(format!("rshmem-pe-{pe}"))
        .spawn_scoped(s, f)
        .map_err(|e| LaunchError::Init(format!("cannot start the thread of PE {pe}: {e}")))
}

/// Starts PE `pe`'s thread in scope `s` (shuttle's threads are not named).
#[cfg(all(rshmem_shuttle, not(rshmem_loom)))]
fn spawn_pe<'scope, T: Send + 'scope>(
    s: &'scope sync::Scope<'scope, '_>,
    _pe: u32,
    f: impl FnOnce() -> T + Send + 'scope,
) -> Result<sync::ScopedJoinHandle<'scope, T>, LaunchError> {
    Ok(s.spawn(f))
}
