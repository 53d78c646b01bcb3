//! PMI's `finalize`, said once per process: when the bootstrap is dropped, or at exit for a
//! program whose PE still runs when it returns from `main` (a C program keeps its bootstrap
//! after `shmem_finalize`). MPICH's Hydra counts a rank that closes its PMI connection
//! without `finalize` as failed, whatever its exit status, and ends the job's other ranks.

use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use super::wire::Line;
use crate::bootstrap::BootstrapError;

/// How long `finalize` waits for the server's answer: the process is ending.
const ANSWER_WAIT: Duration = Duration::from_millis(500);

/// Says `finalize` in one protocol on its connection and reads the answer.
pub(super) type SayFn = fn(&mut Line, Instant) -> Result<(), BootstrapError>;

/// The connection to finalize (a second descriptor of the bootstrap's socket), and how.
static PENDING: Mutex<Option<(Line, SayFn)>> = Mutex::new(None);
static AT_EXIT: Once = Once::new();

fn take() -> Option<(Line, SayFn)> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// Finalizes `line`'s connection with `say` when the bootstrap is dropped or the process
/// exits, whichever comes first.
pub(super) fn arm(line: Line, say: SayFn) {
    *PENDING.lock().unwrap_or_else(|e| e.into_inner()) = Some((line, say));
    AT_EXIT.call_once(|| {
        // SAFETY: registers a function that takes no arguments and only writes to a socket.
        unsafe { libc::atexit(at_exit) };
    });
}

/// Says `finalize` now unless it was said or the job was aborted. Best effort: a launcher
/// that is gone has nothing to finalize.
pub(super) fn now() {
    if let Some((mut line, say)) = take()
        && let Err(e) = say(&mut line, Instant::now() + ANSWER_WAIT)
    {
        tracing::debug!(error = %e, "PMI finalize was not answered");
    }
}

/// Never says `finalize`: the job is being aborted, and the launcher reads the exit status.
pub(super) fn disarm() {
    drop(take());
}

extern "C" fn at_exit() {
    now();
}
