//! The event trace: a rolling hash of everything that happened (the determinism check), and
//! optionally spans for a Chrome/Perfetto timeline (one track per PE and per link direction).

use std::fmt::Write as _;

use hw::Topology;

/// Mixes one word into the hash (the splitmix64 finaliser: every input bit moves every
/// output bit, so two traces that differ anywhere hash differently with high probability).
fn mix(hash: u64, word: u64) -> u64 {
    let mut z = (hash ^ word).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
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

    /// Adds one event, given as words, to the hash.
    pub(crate) fn record(&mut self, words: &[u64]) {
        self.records += 1;
        for &w in words {
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
}

impl Timeline {
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
        let mut a = Trace::new(false);
        a.record(&[1, 2]);
        a.record(&[3]);
        let mut b = Trace::new(false);
        b.record(&[3]);
        b.record(&[1, 2]);
        let mut c = Trace::new(false);
        c.record(&[1, 2]);
        c.record(&[3]);
        assert_ne!(a.hash, b.hash);
        assert_eq!(a.hash, c.hash);
        assert_eq!(a.records, 2);
    }
}
