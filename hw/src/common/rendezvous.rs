//! The bootstrap all-gather ([`crate::Device::exchange`]): a reusable rendezvous.
//!
//! PEs deposit their bytes under one lock; the last to arrive publishes the gathered bytes
//! (one shared [`Exchanged`] that every PE of the episode holds, not a copy each), resets the
//! count and bumps the generation, and wakes the others. A waiter sleeps until the
//! generation moves past the one it arrived in. Reuse is safe: the next episode cannot
//! complete (and overwrite the published result) before every PE arrived in it, that is after
//! every PE took the previous result. The mutex gives every PE's actions before the exchange
//! a happens-before edge to every PE's actions after it.

use crate::error::QueueError;
use crate::exchanged::Exchanged;
use crate::sync::{self, Clock, Condvar, Mutex};
use crate::types::{Instant, Pe};

#[derive(Debug)]
struct State {
    /// Completed episodes.
    generation: u64,
    /// Each PE's bytes in the current episode.
    slots: Vec<Option<Vec<u8>>>,
    arrived: u32,
    /// The result of the last completed episode.
    result: Option<Exchanged>,
}

/// A reusable all-gather over a fixed set of PEs.
#[derive(Debug)]
pub(crate) struct Rendezvous {
    state: Mutex<State>,
    cv: Condvar,
}

impl Rendezvous {
    pub(crate) fn new(n_pes: u32) -> Rendezvous {
        Rendezvous {
            state: Mutex::new(State {
                generation: 0,
                slots: vec![None; n_pes as usize],
                arrived: 0,
                result: None,
            }),
            cv: Condvar::new(),
        }
    }

    /// [`crate::Device::exchange`] for `pe`: [`Rendezvous::all_gather`] with the contract's
    /// deadline (`deadline` nanoseconds after `start`) and its error, which names the PEs that
    /// never arrived.
    pub(crate) fn exchange(
        &self,
        pe: Pe,
        mine: &[u8],
        start: &Clock,
        deadline: Instant,
    ) -> Result<Exchanged, QueueError> {
        self.all_gather(pe, mine, sync::clock_after(start, deadline.0))
            .map_err(|missing| {
                let list: Vec<String> = missing.iter().map(|p| p.0.to_string()).collect();
                QueueError::Deadline {
                    pe,
                    waiting_for: format!(
                        "the bootstrap exchange; PEs {} never arrived",
                        list.join(", ")
                    ),
                    deadline,
                }
            })
    }

    /// Deposits `mine` for `pe` and returns every PE's bytes in PE order, or on timeout the
    /// PEs that had not arrived.
    pub(crate) fn all_gather(
        &self,
        pe: Pe,
        mine: &[u8],
        deadline: Option<Clock>,
    ) -> Result<Exchanged, Vec<Pe>> {
        let mut st = sync::lock(&self.state);
        let slot = &mut st.slots[pe.idx()];
        assert!(slot.is_none(), "{pe} entered one exchange twice");
        *slot = Some(mine.to_vec());
        st.arrived += 1;
        if st.arrived as usize == st.slots.len() {
            let all: Exchanged = st
                .slots
                .iter_mut()
                .map(|s| s.take().unwrap_or_default())
                .collect();
            st.arrived = 0;
            st.generation += 1;
            st.result = Some(Exchanged::clone(&all));
            self.cv.notify_all();
            return Ok(all);
        }
        let generation = st.generation;
        loop {
            let (g, timed_out) = sync::wait(&self.cv, st, deadline);
            st = g;
            if st.generation != generation {
                let all = st
                    .result
                    .as_ref()
                    .expect("a completed episode has a result");
                return Ok(Exchanged::clone(all));
            }
            if timed_out {
                // Leave the episode so the others can still report who is missing.
                st.slots[pe.idx()] = None;
                st.arrived -= 1;
                let missing = (0..st.slots.len() as u32)
                    .map(Pe)
                    .filter(|p| *p != pe && st.slots[p.idx()].is_none())
                    .collect();
                return Err(missing);
            }
        }
    }
}
