//! The bootstrap exchange: every PE contributes bytes, blocks, and resumes with everyone's
//! once the last arrived, after the cost of an out-of-band round (`WorldParams::exchange_ns`).

use hw::{Exchanged, MemKind};

use crate::trace::Record;

use super::{Blocked, World};

/// The contributions to the exchange under way.
#[derive(Debug, Default)]
pub(super) struct Exchange {
    arrivals: Vec<Option<Vec<u8>>>,
    pub(super) arrived: u32,
    /// The last result whose segment keys were found to describe their segments, with the
    /// offset and kinds they were read at: every PE imports from the one shared result, and
    /// the first PE's check answers for the others.
    keys_checked: Option<(Exchanged, usize, Vec<MemKind>)>,
}

impl Exchange {
    /// An exchange among `n_pes` PEs, none arrived.
    pub(super) fn new(n_pes: u32) -> Exchange {
        Exchange {
            arrivals: vec![None; n_pes as usize],
            arrived: 0,
            keys_checked: None,
        }
    }
}

impl World {
    /// Records `pe`'s contribution; when it is the last, every PE gets the result.
    /// Returns whether the exchange completed.
    pub(crate) fn arrive(&mut self, pe: u32, mine: Vec<u8>) {
        if self.part.is_some() {
            self.arrive_across(pe, mine);
            return;
        }
        let slot = &mut self.exchange.arrivals[pe as usize];
        assert!(slot.is_none(), "PE {pe} entered an exchange twice");
        *slot = Some(mine);
        self.exchange.arrived += 1;
        self.block(pe, Blocked::Exchange, u64::MAX);
        if self.exchange.arrived < self.n_pes {
            return;
        }
        // Why one shared result: a copy per PE would be n² bytes.
        let all: Exchanged = self
            .exchange
            .arrivals
            .iter_mut()
            .map(|a| a.take().unwrap_or_default())
            .collect();
        self.exchange.arrived = 0;
        let at = self.sim_time_ns() + self.params.exchange_ns;
        self.trace.record(Record::Exchange { at_ns: at });
        for p in 0..self.n_pes {
            if let Some(Blocked::Exchange) = self.pes[p as usize].blocked {
                self.pes[p as usize].exchange_result = Some(Exchanged::clone(&all));
                self.wake(p, at, Ok(()));
            }
        }
    }

    pub(crate) fn take_exchange(&mut self, pe: u32) -> Option<Exchanged> {
        self.pes[pe as usize].exchange_result.take()
    }

    /// Whether the segment keys of `all` at `offset` for `kinds` were checked already.
    pub(crate) fn keys_checked(&self, all: &Exchanged, offset: usize, kinds: &[MemKind]) -> bool {
        self.exchange
            .keys_checked
            .as_ref()
            .is_some_and(|(checked, at, of)| {
                checked.same_result(all) && *at == offset && of.as_slice() == kinds
            })
    }

    /// Remembers that the segment keys of `all` at `offset` for `kinds` describe their
    /// segments.
    pub(crate) fn remember_keys_checked(
        &mut self,
        all: &Exchanged,
        offset: usize,
        kinds: &[MemKind],
    ) {
        self.exchange.keys_checked = Some((Exchanged::clone(all), offset, kinds.to_vec()));
    }
}
