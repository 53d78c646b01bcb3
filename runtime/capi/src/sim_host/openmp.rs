//! OpenMP on the simulator: a program built with `-fopenmp` runs its parallel regions with a
//! team of one thread there.
//!
//! Why: libgomp's threads wait for each other (at the end of a parallel region, in its barriers
//! and locks) with raw `futex` system calls, which no interposed function sees, so a team of
//! simulated threads would block the one OS thread that runs every PE and the run would hang.
//! A team of one is a valid OpenMP execution of every conforming program, and it keeps the run
//! reproducible; the price is that the simulator does not interleave the team's threads (run the
//! program as processes for that). The host says so once on standard error.

use std::ffi::c_int;
use std::io::Write;

/// If libgomp is loaded, asks it for teams of one thread from now on: the ICV of the initial
/// thread, which is the OS thread that runs every simulated PE.
pub(crate) fn one_thread_per_team() {
    // SAFETY: a symbol lookup in the objects already loaded; a null answer means no OpenMP.
    let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"omp_set_num_threads".as_ptr()) };
    if found.is_null() {
        return;
    }
    // SAFETY: OpenMP's `void omp_set_num_threads(int)`.
    let set_num_threads =
        unsafe { std::mem::transmute::<*mut libc::c_void, extern "C" fn(c_int)>(found) };
    set_num_threads(1);
    // Why ignore a failed write: the note is advice; the run goes on either way.
    let _ = writeln!(
        std::io::stderr(),
        "rshmem: the program uses OpenMP, whose threads wait on futexes the simulator cannot \
         schedule: its parallel regions run with one thread on the simulator (run it as \
         processes for teams of threads)"
    );
}
