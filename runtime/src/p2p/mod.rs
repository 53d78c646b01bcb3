//! The point-to-point API (docs/p2p.md): what one PE does to another PE's symmetric memory,
//! and how it orders and waits for it.
//!
//! Every operation is a method of [`Ctx`](crate::Ctx) (or of [`Shmem`](crate::Shmem) where the
//! PE as a whole takes part), defined in an `impl` block in the file of its family:
//! - `rma.rs`: put, get and their variants; `sized.rs`: put8..put128 and get8..get128;
//!   `strided.rs`: iput/iget and ibput/ibget;
//! - `amo.rs`: remote atomics; `amo_nbi.rs`: the non-blocking fetching ones, landed by quiet;
//! - `signal.rs`: put-with-signal; `wait.rs`: waits and tests on one word; `wait_set.rs`: on
//!   many words; `wait_narrow.rs`: on 16-bit words;
//! - `lock.rs`: the distributed locks;
//! - `ordering.rs`: fence, quiet and the world barriers;
//! - `on_stream.rs`: the operations that run in order on a context's stream.

mod amo;
pub(crate) mod amo_nbi;
pub(crate) mod lock;
mod on_stream;
mod ordering;
mod rma;
mod signal;
mod sized;
mod strided;
pub(crate) mod wait;
pub(crate) mod wait_narrow;
mod wait_set;
