//! Events as the queue stores them: one word each, so that a queued event with its time is
//! 16 bytes rather than 24. A big all-to-all keeps about ten million events queued at once
//! (4096 PEs); their chunks were 300 MB.
//!
//! The word's low three bits say which event it is, the rest hold its fields. An event whose
//! fields do not fit (a queue past 2^20, a ticket past 2^39, a PE past 2^24, a write id past
//! 2^37) is kept whole in a side table and the word holds its index there, so every event
//! comes back exactly as it went in.

use crate::slab::Slab;
use crate::trace::OpCode;

use super::Event;

/// One queued event, packed ([`Spill::pack`]).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Packed(u64);

const TAG_BITS: u32 = 3;
const TAG_MASK: u64 = (1 << TAG_BITS) - 1;

const RESUME: u64 = 0;
const ISSUE: u64 = 1;
const DELIVER: u64 = 2;
const COMPLETE: u64 = 3;
const ACK: u64 = 4;
const DRAIN: u64 = 5;
const SPILLED: u64 = 6;

/// Bits of an acknowledgement's operation kind, queue and ticket, from the low end.
const ACK_OP_BITS: u32 = 2;
const ACK_QUEUE_BITS: u32 = 20;
const ACK_TICKET_BITS: u32 = 64 - TAG_BITS - ACK_OP_BITS - ACK_QUEUE_BITS;

/// Bits of a drain's PE and write id, from the low end.
const DRAIN_PE_BITS: u32 = 24;
const DRAIN_WRITE_BITS: u32 = 64 - TAG_BITS - DRAIN_PE_BITS;

/// The events too large to pack.
#[derive(Debug, Default)]
pub(super) struct Spill {
    events: Slab<Event>,
}

/// `value` fits in `bits` bits.
fn fits(value: u64, bits: u32) -> bool {
    value >> bits == 0
}

fn op_code(bits: u64) -> OpCode {
    match bits {
        0 => OpCode::Put,
        1 => OpCode::Get,
        2 => OpCode::Amo,
        _ => OpCode::PutSignal,
    }
}

impl Spill {
    /// `event` as one word, spilling it if its fields do not fit.
    pub(super) fn pack(&mut self, event: Event) -> Packed {
        let word = |tag: u64, fields: u64| Packed(tag | fields << TAG_BITS);
        match event {
            Event::Resume { pe } => word(RESUME, u64::from(pe)),
            Event::Issue { op } => word(ISSUE, u64::from(op)),
            Event::Deliver { op } => word(DELIVER, u64::from(op)),
            Event::Complete { op } => word(COMPLETE, u64::from(op)),
            Event::Ack { op, queue, ticket }
                if fits(u64::from(queue), ACK_QUEUE_BITS) && fits(ticket, ACK_TICKET_BITS) =>
            {
                let op = u64::from(op as u8 - 1);
                let fields = op | u64::from(queue) << ACK_OP_BITS;
                word(ACK, fields | ticket << (ACK_OP_BITS + ACK_QUEUE_BITS))
            }
            Event::Drain { pe, write_id }
                if fits(u64::from(pe), DRAIN_PE_BITS) && fits(write_id, DRAIN_WRITE_BITS) =>
            {
                word(DRAIN, u64::from(pe) | write_id << DRAIN_PE_BITS)
            }
            Event::Ack { .. } | Event::Drain { .. } => {
                word(SPILLED, u64::from(self.events.insert(event)))
            }
        }
    }

    /// The event `packed` holds, which stays queued.
    pub(super) fn peek(&self, packed: Packed) -> Event {
        let fields = packed.0 >> TAG_BITS;
        let low = |bits: u32| fields & ((1 << bits) - 1);
        match packed.0 & TAG_MASK {
            RESUME => Event::Resume { pe: fields as u32 },
            ISSUE => Event::Issue { op: fields as u32 },
            DELIVER => Event::Deliver { op: fields as u32 },
            COMPLETE => Event::Complete { op: fields as u32 },
            ACK => Event::Ack {
                op: op_code(low(ACK_OP_BITS)),
                queue: (fields >> ACK_OP_BITS & ((1 << ACK_QUEUE_BITS) - 1)) as u32,
                ticket: fields >> (ACK_OP_BITS + ACK_QUEUE_BITS),
            },
            DRAIN => Event::Drain {
                pe: low(DRAIN_PE_BITS) as u32,
                write_id: fields >> DRAIN_PE_BITS,
            },
            _ => self.events.get(fields as u32),
        }
    }

    /// The event `packed` holds, taken off the queue: a spilled one's place is free again.
    pub(super) fn take(&mut self, packed: Packed) -> Event {
        if packed.0 & TAG_MASK == SPILLED {
            return self.events.remove((packed.0 >> TAG_BITS) as u32);
        }
        self.peek(packed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queued_event_with_its_time_is_two_words() {
        assert_eq!(std::mem::size_of::<(u64, Packed)>(), 16);
    }

    #[test]
    fn every_event_comes_back_as_it_went_in() {
        let mut spill = Spill::default();
        let ops = [OpCode::Put, OpCode::Get, OpCode::Amo, OpCode::PutSignal];
        let mut events = vec![
            Event::Resume { pe: u32::MAX },
            Event::Issue { op: 0 },
            Event::Deliver { op: u32::MAX },
            Event::Complete { op: 7 },
            Event::Drain { pe: 0, write_id: 0 },
            Event::Drain {
                pe: (1 << DRAIN_PE_BITS) - 1,
                write_id: (1 << DRAIN_WRITE_BITS) - 1,
            },
        ];
        for op in ops {
            events.push(Event::Ack {
                op,
                queue: (1 << ACK_QUEUE_BITS) - 1,
                ticket: (1 << ACK_TICKET_BITS) - 1,
            });
            events.push(Event::Ack {
                op,
                queue: 3,
                ticket: 0,
            });
        }
        let spilled = [
            Event::Ack {
                op: OpCode::Get,
                queue: 1 << ACK_QUEUE_BITS,
                ticket: 1,
            },
            Event::Ack {
                op: OpCode::Put,
                queue: 0,
                ticket: u64::MAX,
            },
            Event::Drain {
                pe: 1 << DRAIN_PE_BITS,
                write_id: 2,
            },
            Event::Drain {
                pe: 1,
                write_id: u64::MAX,
            },
        ];
        events.extend(spilled);
        let packed: Vec<Packed> = events.iter().map(|&e| spill.pack(e)).collect();
        assert_eq!(spill.events.places(), spilled.len());
        for (&event, &p) in events.iter().zip(&packed) {
            assert_eq!(spill.peek(p), event);
            assert_eq!(spill.take(p), event);
        }
        // Taken spilled events leave their places to the next ones.
        let again = spill.pack(spilled[0]);
        assert_eq!(spill.take(again), spilled[0]);
        assert_eq!(spill.events.places(), spilled.len());
    }
}
