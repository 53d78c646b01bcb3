//! The words of a PE's synchronisation memory (`rshmem_sync_t` of `rshmem_device.cuh`) in the
//! terms of the calls that wait on them, for the watchdog's report of a kernel stuck in a
//! barrier or collective: "nvshmem_barrier_all's arrival word of PE 2 (PE 2 writes it)" says
//! who never came, where a bare address says nothing.
//!
//! The offsets mirror the struct's layout, which the header pins with `static_assert`s on the
//! same numbers, so a change on either side fails a build.

use super::state::MAX_PES;

/// `offsetof(rshmem_sync_t, arrived)`: one u64 per PE after the barrier epoch.
const ARRIVED: u64 = 8;
/// `offsetof(rshmem_sync_t, reduce_epoch)`.
const REDUCE_EPOCH: u64 = ARRIVED + 8 * MAX_PES as u64;
/// `offsetof(rshmem_sync_t, pushed)`.
const PUSHED: u64 = REDUCE_EPOCH + 8;
/// `offsetof(rshmem_sync_t, grid_arrived)`, then `grid_generation`, two u32s.
const GRID: u64 = PUSHED + 8 * MAX_PES as u64;
/// `offsetof(rshmem_sync_t, team_barrier)`: per team slot, its epoch then a counter per round.
const TEAM_BARRIER: u64 = GRID + 8;
/// `RSHMEM_TEAM_SLOTS` and `1 + RSHMEM_TEAM_ROUNDS` of the header.
const TEAM_SLOTS: u64 = 64;
const TEAM_WORDS: u64 = 8;

/// The word at `offset` of a PE's synchronisation memory, or `None` past `rshmem_sync_t`
/// (the collectives' scratch, which no wait polls).
pub(crate) fn describe(offset: u64) -> Option<String> {
    let slot = |base: u64| (offset - base) / 8;
    Some(match offset {
        0 => "this PE's nvshmem_barrier_all count".to_string(),
        o if o < REDUCE_EPOCH => {
            let pe = slot(ARRIVED);
            format!("nvshmem_barrier_all's arrival word of PE {pe} (PE {pe} writes it)")
        }
        o if o < PUSHED => "this PE's count of pushed collectives".to_string(),
        o if o < GRID => {
            let pe = slot(PUSHED);
            format!("the pushed collectives' arrival word of PE {pe} (PE {pe} writes it)")
        }
        o if o < TEAM_BARRIER => "the grid barrier of this PE's on-stream collective".to_string(),
        o if o < TEAM_BARRIER + 8 * TEAM_SLOTS * TEAM_WORDS => {
            let word = slot(TEAM_BARRIER);
            let (team_slot, index) = (word / TEAM_WORDS, word % TEAM_WORDS);
            if index == 0 {
                format!("this PE's barrier count of the team in slot {team_slot}")
            } else {
                let round = index - 1;
                format!(
                    "the barrier counter of round {round} of the team in slot {team_slot} (the \
                     member {} places behind this PE in the team adds to it)",
                    1u64 << round
                )
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn barrier_words_name_the_pe_that_writes_them() {
        assert_eq!(
            describe(8 + 8 * 3).as_deref(),
            Some("nvshmem_barrier_all's arrival word of PE 3 (PE 3 writes it)")
        );
        assert_eq!(
            describe(1040 + 8 * 127).as_deref(),
            Some("the pushed collectives' arrival word of PE 127 (PE 127 writes it)")
        );
    }

    #[test]
    fn team_barrier_words_name_their_slot_and_round() {
        // Slot 3, word 2: round 1's counter.
        assert_eq!(
            describe(2072 + 3 * 64 + 16).as_deref(),
            Some(
                "the barrier counter of round 1 of the team in slot 3 (the member 2 places \
                 behind this PE in the team adds to it)"
            )
        );
        assert_eq!(
            describe(2072 + 5 * 64).as_deref(),
            Some("this PE's barrier count of the team in slot 5")
        );
        assert_eq!(describe(2072 + 64 * 64), None);
    }
}
