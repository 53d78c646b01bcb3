//! The event queue: events ordered by virtual time, ties broken by insertion order.
//!
//! Time never goes backwards in the simulator: every event is queued at or after the time of
//! the last event taken out. That allows a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan,
//! 1990), which beats a binary heap by far here: a run keeps up to a million events queued,
//! and a binary heap pays a cache miss per level on every pop, while a radix heap appends to
//! and scans arrays. This one has 256 buckets per level (one digit of eight bits), so an
//! event is moved at most once per digit in which its time differs from the current time:
//! at most once for the tens of microseconds ahead that operations travel.

mod packed;

use crate::trace::OpCode;

use packed::{Packed, Spill};

/// Something that happens at a point in virtual time.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Event {
    /// A PE continues running.
    Resume { pe: u32 },
    /// A posted operation enters the network.
    Issue { op: u32 },
    /// An in-flight operation reaches its target.
    Deliver { op: u32 },
    /// The response of an operation (a get's data, a fetched value) reaches its source.
    Complete { op: u32 },
    /// The acknowledgement of an operation without a response reaches its source: the
    /// operation's kind (as in the trace), queue and ticket.
    Ack { op: OpCode, queue: u32, ticket: u64 },
    /// One pending InfiniBand write becomes visible at its target.
    Drain { pe: u32, write_id: u64 },
}

/// Bits of time per level.
const DIGIT_BITS: u32 = 8;
/// Buckets per level.
const DIGITS: usize = 1 << DIGIT_BITS;
/// Levels that cover 64-bit times.
const LEVELS: usize = (u64::BITS as usize).div_ceil(DIGIT_BITS as usize);
/// Words of a level's occupancy bitmap.
const WORDS: usize = DIGITS / 64;

/// Events per chunk of a bucket.
const CHUNK: usize = 32;
/// No chunk.
const NIL: u32 = u32::MAX;

/// A piece of a bucket. Buckets are lists of chunks from one shared pool rather than vectors
/// of their own: the buckets fill and empty in turn, and vectors would each keep the memory
/// of their fullest moment (five times the events ever queued at once, in a big run), while
/// chunks go back to the pool and are reused warm.
#[derive(Clone, Copy, Debug)]
struct Chunk {
    events: [(u64, Packed); CHUNK],
    next: u32,
}

/// A bucket: a list of chunks, read from `head_pos` in the first, filled to `tail_len` in
/// the last.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    head: u32,
    tail: u32,
    head_pos: usize,
    tail_len: usize,
}

const EMPTY: Bucket = Bucket {
    head: NIL,
    tail: NIL,
    head_pos: 0,
    tail_len: 0,
};

impl Bucket {
    fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

/// The chunks of all buckets.
#[derive(Debug)]
struct Pool {
    chunks: Vec<Chunk>,
    /// Chunks not in any bucket, linked through `next`.
    free: u32,
}

impl Pool {
    fn append(&mut self, bucket: &mut Bucket, at_ns: u64, event: Packed) {
        if bucket.is_empty() || bucket.tail_len == CHUNK {
            let chunk = self.take();
            if bucket.is_empty() {
                *bucket = Bucket {
                    head: chunk,
                    tail: chunk,
                    head_pos: 0,
                    tail_len: 0,
                };
            } else {
                self.chunks[bucket.tail as usize].next = chunk;
                bucket.tail = chunk;
                bucket.tail_len = 0;
            }
        }
        self.chunks[bucket.tail as usize].events[bucket.tail_len] = (at_ns, event);
        bucket.tail_len += 1;
    }

    fn take(&mut self) -> u32 {
        if self.free == NIL {
            self.chunks.push(Chunk {
                events: [(0, Packed::default()); CHUNK],
                next: NIL,
            });
            return (self.chunks.len() - 1) as u32;
        }
        let chunk = self.free;
        self.free = self.chunks[chunk as usize].next;
        self.chunks[chunk as usize].next = NIL;
        chunk
    }

    fn release(&mut self, chunk: u32) {
        self.chunks[chunk as usize].next = self.free;
        self.free = chunk;
    }
}

#[derive(Debug)]
pub(crate) struct EventQueue {
    /// The time of the event taken out last; no event is queued before it.
    last_ns: u64,
    /// The events at exactly `last_ns`, in insertion order.
    current: Bucket,
    /// `levels[l][d]`: the events whose time differs from `last_ns` first (from the top) in
    /// digit `l`, where it is `d`. Every event of level `l` is later than every event of the
    /// levels below, and within a level a smaller digit means earlier. Boxed: 48 KiB that
    /// would otherwise be copied each time a world is built and moved into place, which
    /// costs a litmus test's short runs more than the run itself.
    levels: Box<[[Bucket; DIGITS]; LEVELS]>,
    /// Per level, bit `d` is set when bucket `d` holds events.
    occupied: [[u64; WORDS]; LEVELS],
    pool: Pool,
    /// The events too large to pack.
    spill: Spill,
    len: usize,
    /// The earliest time outside `current`, once [`EventQueue::next_time_ns`] looked it up.
    /// Looking must not move events the way a pop does: that would advance `last_ns`, and an
    /// event may still be queued between the last pop and the next event.
    next_ns: Option<u64>,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            last_ns: 0,
            current: EMPTY,
            levels: vec![[EMPTY; DIGITS]; LEVELS]
                .into_boxed_slice()
                .try_into()
                .expect("LEVELS levels"),
            occupied: [[0; WORDS]; LEVELS],
            pool: Pool {
                chunks: Vec::new(),
                free: NIL,
            },
            spill: Spill::default(),
            len: 0,
            next_ns: None,
        }
    }
}

/// Where an event at `at_ns` goes when the current time is `last_ns`: `None` for `current`,
/// else (level, digit).
fn place(last_ns: u64, at_ns: u64) -> Option<(usize, usize)> {
    let differ = last_ns ^ at_ns;
    if differ == 0 {
        return None;
    }
    let level = (u64::BITS - 1 - differ.leading_zeros()) / DIGIT_BITS;
    let digit = (at_ns >> (level * DIGIT_BITS)) as usize % DIGITS;
    Some((level as usize, digit))
}

// Why ties keep insertion order: events of equal time always sit in the same bucket (where an
// event goes depends only on its time and `last_ns`, and a refill moves a whole bucket), a
// push appends, and a refill moves a bucket's events in their order into buckets that were
// empty (it only ever empties the lowest occupied bucket, into lower levels). So equal-time
// events reach `current` in the order they were pushed, and `current` is taken from the front.
impl EventQueue {
    /// Queues `event` at `at_ns`, which must not be before the last event taken out.
    pub(crate) fn push(&mut self, at_ns: u64, event: Event) {
        assert!(
            at_ns >= self.last_ns,
            "event at {at_ns} ns queued after time {} ns (time went backwards)",
            self.last_ns
        );
        self.len += 1;
        let event = self.spill.pack(event);
        match place(self.last_ns, at_ns) {
            None => self.pool.append(&mut self.current, at_ns, event),
            Some((level, digit)) => {
                self.pool
                    .append(&mut self.levels[level][digit], at_ns, event);
                self.occupied[level][digit / 64] |= 1 << (digit % 64);
                self.next_ns = self.next_ns.map(|t| t.min(at_ns));
            }
        }
    }

    pub(crate) fn pop(&mut self) -> Option<(u64, Event)> {
        if !self.refill() {
            return None;
        }
        let c = &mut self.current;
        let (at_ns, packed) = self.pool.chunks[c.head as usize].events[c.head_pos];
        c.head_pos += 1;
        let chunk_end = if c.head == c.tail { c.tail_len } else { CHUNK };
        if c.head_pos == chunk_end {
            let done = c.head;
            if c.head == c.tail {
                *c = EMPTY;
            } else {
                c.head = self.pool.chunks[done as usize].next;
                c.head_pos = 0;
            }
            self.pool.release(done);
        }
        self.len -= 1;
        Some((at_ns, self.spill.take(packed)))
    }

    /// The time of the next event; takes `&mut self` to remember it until the next pop.
    pub(crate) fn next_time_ns(&mut self) -> Option<u64> {
        if !self.current.is_empty() {
            return Some(self.last_ns);
        }
        if self.next_ns.is_none() {
            let (level, digit) = self.lowest()?;
            self.next_ns = Some(self.earliest(level, digit));
        }
        self.next_ns
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The event `k` pops after the next one, if it is known without moving events (it is
    /// at the same time as the next one, in the same chunk).
    pub(crate) fn ahead(&self, k: usize) -> Option<Event> {
        let c = &self.current;
        let chunk_end = if c.head == c.tail { c.tail_len } else { CHUNK };
        (!c.is_empty() && c.head_pos + k < chunk_end).then(|| {
            self.spill
                .peek(self.pool.chunks[c.head as usize].events[c.head_pos + k].1)
        })
    }

    /// Every queued event, in no particular order (for failure reports).
    pub(crate) fn iter(&self) -> impl Iterator<Item = Event> + '_ {
        std::iter::once(&self.current)
            .chain(self.levels.iter().flatten())
            .flat_map(|&bucket| self.events_of(bucket))
            .map(|(_, packed)| self.spill.peek(packed))
    }

    /// The events of `bucket`, in order.
    fn events_of(&self, bucket: Bucket) -> impl Iterator<Item = (u64, Packed)> + '_ {
        let mut chunk = bucket.head;
        let mut pos = bucket.head_pos;
        std::iter::from_fn(move || {
            if chunk == NIL {
                return None;
            }
            let c = &self.pool.chunks[chunk as usize];
            let end = if chunk == bucket.tail {
                bucket.tail_len
            } else {
                CHUNK
            };
            let event = c.events[pos];
            pos += 1;
            if pos == end {
                chunk = if chunk == bucket.tail { NIL } else { c.next };
                pos = 0;
            }
            Some(event)
        })
    }

    /// The earliest time in occupied bucket `digit` of `level`.
    fn earliest(&self, level: usize, digit: usize) -> u64 {
        self.earliest_of(level, self.levels[level][digit])
    }

    fn earliest_of(&self, level: usize, bucket: Bucket) -> u64 {
        let mut times = self.events_of(bucket).map(|(t, _)| t);
        if level == 0 {
            // A level-0 bucket holds one time only.
            times.next()
        } else {
            times.min()
        }
        .expect("occupied")
    }

    /// The occupied bucket with the earliest events.
    fn lowest(&self) -> Option<(usize, usize)> {
        self.occupied.iter().enumerate().find_map(|(level, words)| {
            let (word, bits) = words.iter().enumerate().find(|&(_, &bits)| bits != 0)?;
            Some((level, 64 * word + bits.trailing_zeros() as usize))
        })
    }

    /// Makes `current` hold the earliest events; returns false when nothing is queued.
    fn refill(&mut self) -> bool {
        if !self.current.is_empty() {
            return true;
        }
        let Some((level, digit)) = self.lowest() else {
            return false;
        };
        self.occupied[level][digit / 64] &= !(1 << (digit % 64));
        let moving = std::mem::replace(&mut self.levels[level][digit], EMPTY);
        self.last_ns = match self.next_ns.take() {
            Some(t) => t,
            None => self.earliest_of(level, moving),
        };
        if level == 0 {
            // Events of one level-0 bucket share every digit: they are all at `last_ns`.
            self.current = moving;
            return true;
        }
        let mut chunk = moving.head;
        let mut pos = moving.head_pos;
        while chunk != NIL {
            let end = if chunk == moving.tail {
                moving.tail_len
            } else {
                CHUNK
            };
            for i in pos..end {
                let (at_ns, event) = self.pool.chunks[chunk as usize].events[i];
                match place(self.last_ns, at_ns) {
                    None => self.pool.append(&mut self.current, at_ns, event),
                    Some((l, d)) => {
                        self.pool.append(&mut self.levels[l][d], at_ns, event);
                        self.occupied[l][d / 64] |= 1 << (d % 64);
                    }
                }
            }
            let next = if chunk == moving.tail {
                NIL
            } else {
                self.pool.chunks[chunk as usize].next
            };
            self.pool.release(chunk);
            chunk = next;
            pos = 0;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events are small: the queue holds millions of them.
    #[test]
    fn an_event_is_two_words() {
        assert_eq!(std::mem::size_of::<Event>(), 16);
    }

    #[test]
    fn pops_in_time_order_then_insertion_order() {
        let mut q = EventQueue::default();
        q.push(5, Event::Resume { pe: 1 });
        q.push(3, Event::Resume { pe: 2 });
        q.push(5, Event::Resume { pe: 0 });
        q.push(4, Event::Drain { pe: 9, write_id: 1 });
        assert_eq!(q.next_time_ns(), Some(3));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (3, Event::Resume { pe: 2 }),
                (4, Event::Drain { pe: 9, write_id: 1 }),
                (5, Event::Resume { pe: 1 }),
                (5, Event::Resume { pe: 0 }),
            ]
        );
        assert!(q.is_empty());
    }

    /// Against a sorted reference, with pushes between pops as the world does them: every
    /// push at or after the last pop, many equal times, times far apart.
    #[test]
    fn matches_a_stable_sort_under_interleaved_pushes() {
        let mut q = EventQueue::default();
        let mut reference: Vec<(u64, u64, u32)> = Vec::new();
        let mut popped = Vec::new();
        let mut expected = Vec::new();
        let mut x: u64 = 12345;
        let mut seq = 0;
        let mut now = 0;
        for round in 0..2000u32 {
            for _ in 0..(round % 5) {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let delta = match x >> 62 {
                    0 => 0,
                    1 => (x >> 20) % 8,
                    2 => (x >> 20) % 5000,
                    _ => (x >> 8) % (1 << 40),
                };
                seq += 1;
                q.push(now + delta, Event::Resume { pe: seq });
                reference.push((now + delta, u64::from(seq), seq));
            }
            if round % 7 == 0 {
                reference.sort();
                assert_eq!(q.next_time_ns(), reference.first().map(|r| r.0));
            }
            if round % 3 != 0 {
                reference.sort();
                if !reference.is_empty() {
                    let (t, _, pe) = reference.remove(0);
                    expected.push((t, Event::Resume { pe }));
                    let got = q.pop().expect("queued");
                    now = got.0;
                    popped.push(got);
                }
            }
        }
        reference.sort();
        expected.extend(
            reference
                .iter()
                .map(|&(t, _, pe)| (t, Event::Resume { pe })),
        );
        popped.extend(std::iter::from_fn(|| q.pop()));
        assert_eq!(popped, expected);
    }
}
