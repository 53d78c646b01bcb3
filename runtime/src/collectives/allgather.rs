//! The allgather engine: every member's block of a destination array reaches every member.
//! collect and fcollect are this alone; broadcast, and reductions split in pieces, end with it.
//!
//! On entry each member holds its own block in its destination array (or will be sent the
//! others in the same array). Every block lands at its final place on every member, and each
//! place is written once per call, so no landing area is overwritten while in use.

use hw::Backend;

use crate::collectives::blocks::Blocks;
use crate::collectives::call::Call;
use crate::collectives::plan::Allgather;
use crate::collectives::{PUSH, ROUND0, rounds};
use crate::error::ShmemError;
use crate::memory::allocator::Span;
use crate::memory::sym::as_bytes;

/// Spreads every member's block of `dest` (laid out as `blocks`) to every member, by
/// `algorithm`.
///
/// # Errors
/// [`ShmemError::Queue`] if an arrival does not come in time or the queue was lost.
pub(crate) fn allgather<B: Backend>(
    call: &Call<'_, B>,
    dest: Span,
    blocks: &Blocks,
    algorithm: Allgather,
) -> Result<(), ShmemError> {
    let n = call.n;
    match algorithm {
        Allgather::OneShot => {
            let arrivals = call.counter(PUSH, u64::from(n - 1));
            let span = blocks.span(dest, call.me);
            let mine = call.read::<u8>(span);
            for k in 1..n {
                call.send(call.ahead(k), &[(span, &mine)], PUSH)?;
            }
            call.wait(arrivals, u64::from(n - 1))
        }
        Allgather::Dissemination => {
            for round in 0..rounds(n) {
                // Round k: pass blocks me .. me + count (wrapping), all known by now, to the
                // member 2^k behind, which lacks exactly those.
                let arrival = call.counter(ROUND0 + round, 1);
                let reach = 1 << round;
                let count = reach.min(n - reach);
                let runs: Vec<(Span, Vec<u8>)> = blocks
                    .wrapping_runs(call.me, count)
                    .into_iter()
                    .map(|(first, count)| {
                        let span = blocks.run_span(dest, first, count);
                        (span, call.read::<u8>(span))
                    })
                    .collect();
                let pieces: Vec<(Span, &[u8])> = runs
                    .iter()
                    .map(|(span, data)| (*span, as_bytes(data)))
                    .collect();
                call.send(call.behind(reach), &pieces, ROUND0 + round)?;
                call.wait(arrival, 1)?;
            }
            Ok(())
        }
        Allgather::Ring => {
            // Step s: pass block me - s to the successor and get block me - s - 1. Why the
            // fences: every arrival comes from the predecessor and counts on one counter, so
            // they must land in order for a count to name a block.
            let arrivals = call.counter(PUSH, u64::from(n - 1));
            for step in 0..n - 1 {
                let span = blocks.span(dest, call.behind(step));
                let data = call.read::<u8>(span);
                call.fence()?;
                call.send(call.ahead(1), &[(span, &data)], PUSH)?;
                call.wait(arrivals, u64::from(step + 1))?;
            }
            Ok(())
        }
    }
}
