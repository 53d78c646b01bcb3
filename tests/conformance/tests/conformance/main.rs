//! The conformance bodies on the simulator and on the host backend, and the simulator's
//! determinism, in one test binary (one link instead of three).

mod determinism;
mod host;
mod on_sim;
