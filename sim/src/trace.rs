//! The event trace: a rolling hash of everything that happened (the determinism check), and
//! optionally spans for a Chrome/Perfetto timeline (one track per PE and per link direction).
//!
//! Every record is a [`Record`]: a tag number and its fields as 64-bit words, mixed into the
//! hash in order. docs/sim-trace.md describes each record; the words must never change for a
//! given run, or every golden hash moves.

use std::fmt::Write as _;

use hw::Topology;

use crate::entropy::splitmix64;

/// Mixes one word into the hash (the splitmix64 finaliser: every input bit moves every
/// output bit, so two traces that differ anywhere hash differently with high probability).
pub(crate) fn mix(hash: u64, word: u64) -> u64 {
    let mut state = hash ^ word;
    splitmix64(&mut state)
}

/// The kind of an operation, as the trace and acknowledgements carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum OpCode {
    Put = 1,
    Get = 2,
    Amo = 3,
    /// A put-with-signal, and the data of one whose signal went first.
    PutSignal = 4,
}

impl OpCode {
    /// The name shown in the timeline and in deadlock reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            OpCode::Put => "put",
            OpCode::Get => "get",
            OpCode::Amo => "amo",
            OpCode::PutSignal => "put_signal",
        }
    }
}

impl From<OpCode> for u64 {
    fn from(op: OpCode) -> u64 {
        op as u64
    }
}

/// One record of the trace. Each encodes as its tag and then its fields, in the order
/// written here (see [`Record::words`]); tag 4 is not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Record {
    /// Tag 1: an operation entered the network (`World::issue`) and will arrive at
    /// `arrive_ns`, carrying `bytes` to its target.
    Issue {
        op: OpCode,
        src: u32,
        dst: u32,
        issued_ns: u64,
        arrive_ns: u64,
        bytes: u64,
    },
    /// Tag 2: an operation reached its target and acted there.
    Deliver {
        op: OpCode,
        src: u32,
        dst: u32,
        at_ns: u64,
    },
    /// Tag 3: the response or acknowledgement of `pe`'s operation came back: its ticket is
    /// complete.
    Complete {
        op: OpCode,
        pe: u32,
        ticket: u64,
        at_ns: u64,
    },
    /// Tag 5: `pe` posted a fence at its own clock.
    Fence { pe: u32, clock_ns: u64 },
    /// Tag 6: a pending InfiniBand write to `pe` became visible on its own at `at_ns`.
    Drain {
        pe: u32,
        offset: u64,
        len: u64,
        at_ns: u64,
    },
    /// Tag 7: a consistency step made a pending write to `pe` visible.
    Flush { pe: u32, offset: u64, len: u64 },
    /// Tag 8: a bootstrap exchange completed; every PE resumes at `at_ns`.
    Exchange { at_ns: u64 },
    /// Tag 9: `pe`'s program returned (or panicked) with its clock at `clock_ns`.
    Finish { pe: u32, clock_ns: u64 },
    /// Tag 10: `pe`'s wait passed its deadline.
    Deadline { pe: u32, at_ns: u64 },
    /// Tag 11: the signal of a put-with-signal was applied before its data
    /// (`Fault::SignalBeforeData`, test-only).
    SignalBeforeData { src: u32, dst: u32, at_ns: u64 },
}

/// The most words a record encodes to ([`Record::Issue`]).
const MAX_WORDS: usize = 7;

impl Record {
    /// The record as the words the hash mixes, in order: the tag, then the fields.
    pub(crate) fn words(&self) -> ([u64; MAX_WORDS], usize) {
        // Why arrays of the full width, not slices copied in: the hash takes a record per
        // event, and a copy of a few words of run-time length is a call to `memcpy`.
        match *self {
            Record::Issue {
                op,
                src,
                dst,
                issued_ns,
                arrive_ns,
                bytes,
            } => (
                [
                    1,
                    op.into(),
                    src.into(),
                    dst.into(),
                    issued_ns,
                    arrive_ns,
                    bytes,
                ],
                7,
            ),
            Record::Deliver {
                op,
                src,
                dst,
                at_ns,
            } => ([2, op.into(), src.into(), dst.into(), at_ns, 0, 0], 5),
            Record::Complete {
                op,
                pe,
                ticket,
                at_ns,
            } => ([3, op.into(), pe.into(), ticket, at_ns, 0, 0], 5),
            Record::Fence { pe, clock_ns } => ([5, pe.into(), clock_ns, 0, 0, 0, 0], 3),
            Record::Drain {
                pe,
                offset,
                len,
                at_ns,
            } => ([6, pe.into(), offset, len, at_ns, 0, 0], 5),
            Record::Flush { pe, offset, len } => ([7, pe.into(), offset, len, 0, 0, 0], 4),
            Record::Exchange { at_ns } => ([8, at_ns, 0, 0, 0, 0, 0], 2),
            Record::Finish { pe, clock_ns } => ([9, pe.into(), clock_ns, 0, 0, 0, 0], 3),
            Record::Deadline { pe, at_ns } => ([10, pe.into(), at_ns, 0, 0, 0, 0], 3),
            Record::SignalBeforeData { src, dst, at_ns } => {
                ([11, src.into(), dst.into(), at_ns, 0, 0, 0], 4)
            }
        }
    }
}

#[derive(Debug)]
pub(crate) struct Trace {
    pub(crate) hash: u64,
    pub(crate) records: u64,
    pub(crate) timeline: Option<Timeline>,
}

impl Trace {
    pub(crate) fn new(with_timeline: bool) -> Trace {
        Trace {
            hash: 0,
            records: 0,
            timeline: with_timeline.then(Timeline::default),
        }
    }

    /// Adds one record to the hash.
    pub(crate) fn record(&mut self, record: Record) {
        self.records += 1;
        let (words, len) = record.words();
        for &w in &words[..len] {
            self.hash = mix(self.hash, w);
        }
    }
}

/// Where a span is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Track {
    Pe(u32),
    Link { link: u32, backward: bool },
}

#[derive(Clone, Debug)]
struct Span {
    track: Track,
    name: &'static str,
    start_ns: u64,
    duration_ns: u64,
    peer: u32,
    bytes: u64,
}

/// Spans for a timeline viewer.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    spans: Vec<Span>,
    /// When the operation in each slot was posted (its span's start), kept here rather than
    /// with every operation in flight, since only a timeline needs it.
    posted_ns: Vec<u64>,
}

impl Timeline {
    /// Notes that the operation now in `slot` was posted at `at_ns`.
    pub(crate) fn note_posted(&mut self, slot: u32, at_ns: u64) {
        let slot = slot as usize;
        if slot >= self.posted_ns.len() {
            self.posted_ns.resize(slot + 1, 0);
        }
        self.posted_ns[slot] = at_ns;
    }

    /// When the operation in `slot` was posted.
    pub(crate) fn posted_ns(&self, slot: u32) -> u64 {
        self.posted_ns[slot as usize]
    }

    pub(crate) fn span(
        &mut self,
        track: Track,
        name: &'static str,
        start_ns: u64,
        end_ns: u64,
        peer: u32,
        bytes: u64,
    ) {
        let duration_ns = end_ns.saturating_sub(start_ns);
        self.spans.push(Span {
            track,
            name,
            start_ns,
            duration_ns,
            peer,
            bytes,
        });
    }

    /// The number of spans recorded.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether no span was recorded.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The timeline in Chrome trace-event JSON (loads in Perfetto and chrome://tracing):
    /// process 1 holds a thread per PE, process 2 a thread per link direction.
    pub fn to_chrome_json(&self, topology: &Topology) -> String {
        let mut out = String::from("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
        let _ = write!(
            out,
            "{{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{{\"name\":\"PEs\"}}}},\n\
             {{\"ph\":\"M\",\"pid\":2,\"name\":\"process_name\",\"args\":{{\"name\":\"links\"}}}}"
        );
        for pe in 0..topology.n_gpus() {
            let _ = write!(
                out,
                ",\n{{\"ph\":\"M\",\"pid\":1,\"tid\":{pe},\"name\":\"thread_name\",\"args\":{{\"name\":\"PE {pe}\"}}}}"
            );
        }
        for link in 0..topology.n_links() {
            let (a, b) = topology.link_ends(hw::topology::LinkId(link));
            for (backward, from, to) in [(false, a, b), (true, b, a)] {
                let tid = link * 2 + u32::from(backward);
                let label = serde_json::to_string(&format!("{from} -> {to}")).unwrap_or_default();
                let _ = write!(
                    out,
                    ",\n{{\"ph\":\"M\",\"pid\":2,\"tid\":{tid},\"name\":\"thread_name\",\"args\":{{\"name\":{label}}}}}"
                );
            }
        }
        for s in &self.spans {
            let (pid, tid) = match s.track {
                Track::Pe(pe) => (1, pe),
                Track::Link { link, backward } => (2, link * 2 + u32::from(backward)),
            };
            let _ = write!(
                out,
                ",\n{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{tid},\"name\":\"{}\",\"ts\":{:.3},\"dur\":{:.3},\"args\":{{\"peer\":{},\"bytes\":{}}}}}",
                s.name,
                s.start_ns as f64 / 1000.0,
                s.duration_ns as f64 / 1000.0,
                s.peer,
                s.bytes
            );
        }
        out.push_str("\n]}\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_depends_on_order_and_content() {
        let first = Record::Finish { pe: 1, clock_ns: 2 };
        let second = Record::Exchange { at_ns: 3 };
        let mut a = Trace::new(false);
        a.record(first);
        a.record(second);
        let mut b = Trace::new(false);
        b.record(second);
        b.record(first);
        let mut c = Trace::new(false);
        c.record(first);
        c.record(second);
        assert_ne!(a.hash, b.hash);
        assert_eq!(a.hash, c.hash);
        assert_eq!(a.records, 2);
    }

    /// Golden encodings: the words of every record, as the hash has always mixed them. If
    /// this changes, every recorded trace hash changes.
    #[test]
    fn records_encode_to_their_tag_and_fields_in_order() {
        let (put, pe, peer) = (OpCode::Put, 3, 5);
        let cases: [(Record, &[u64]); 10] = [
            (
                Record::Issue {
                    op: put,
                    src: pe,
                    dst: peer,
                    issued_ns: 10,
                    arrive_ns: 20,
                    bytes: 8,
                },
                &[1, 1, 3, 5, 10, 20, 8],
            ),
            (
                Record::Deliver {
                    op: OpCode::PutSignal,
                    src: pe,
                    dst: peer,
                    at_ns: 20,
                },
                &[2, 4, 3, 5, 20],
            ),
            (
                Record::Complete {
                    op: OpCode::Get,
                    pe,
                    ticket: 7,
                    at_ns: 30,
                },
                &[3, 2, 3, 7, 30],
            ),
            (Record::Fence { pe, clock_ns: 40 }, &[5, 3, 40]),
            (
                Record::Drain {
                    pe,
                    offset: 64,
                    len: 8,
                    at_ns: 50,
                },
                &[6, 3, 64, 8, 50],
            ),
            (
                Record::Flush {
                    pe,
                    offset: 64,
                    len: 8,
                },
                &[7, 3, 64, 8],
            ),
            (Record::Exchange { at_ns: 60 }, &[8, 60]),
            (Record::Finish { pe, clock_ns: 70 }, &[9, 3, 70]),
            (Record::Deadline { pe, at_ns: 80 }, &[10, 3, 80]),
            (
                Record::SignalBeforeData {
                    src: pe,
                    dst: peer,
                    at_ns: 90,
                },
                &[11, 3, 5, 90],
            ),
        ];
        for (record, expected) in cases {
            let (words, len) = record.words();
            assert_eq!(&words[..len], expected, "{record:?}");
        }
        assert_eq!(OpCode::Amo as u8, 3);
    }
}
