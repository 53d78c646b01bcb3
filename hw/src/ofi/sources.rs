//! The copies of posted writes' sources, which an endpoint keeps until the writes complete
//! (the caller may change its bytes as soon as the call returns), then keeps warm for the next
//! writes.
//!
//! Why keep them: a fresh allocation per posted put cost more than the put. Freeing a window
//! of 32 KiB copies gave the memory back to the kernel and the next window faulted it in
//! again; the windowed stream of 32 KiB puts ran at 60 % of raw libfabric's, and at 108 %
//! with no copy at all (BENCHMARKS.md, "The network path beside raw libfabric").

/// The most bytes of spare buffers kept for reuse.
const SPARE_MAX_BYTES: usize = 8 << 20;

/// The sources of writes in flight, and spare buffers for the next ones.
#[derive(Debug, Default)]
pub(super) struct Sources {
    in_flight: Vec<Vec<u8>>,
    spare: Vec<Vec<u8>>,
    spare_bytes: usize,
}

impl Sources {
    /// How many writes' sources are kept until they complete.
    pub(super) fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// A copy of `data` in a spare buffer where there is one.
    pub(super) fn copy_of(&mut self, data: &[u8]) -> Vec<u8> {
        let mut buffer = match self.spare.pop() {
            Some(buffer) => {
                self.spare_bytes -= buffer.capacity();
                buffer
            }
            None => Vec::with_capacity(data.len()),
        };
        buffer.extend_from_slice(data);
        buffer
    }

    /// Keeps `source` until [`Sources::retire_all`]: a write reads it until it completes. Its
    /// heap bytes do not move while it is kept (a `Vec` moves its header, not its bytes).
    pub(super) fn keep(&mut self, source: Vec<u8>) {
        self.in_flight.push(source);
    }

    /// Every write kept for has completed: its buffer becomes a spare, up to
    /// [`SPARE_MAX_BYTES`] of them.
    pub(super) fn retire_all(&mut self) {
        for mut buffer in self.in_flight.drain(..) {
            if self.spare_bytes + buffer.capacity() > SPARE_MAX_BYTES {
                continue;
            }
            buffer.clear();
            self.spare_bytes += buffer.capacity();
            self.spare.push(buffer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A retired buffer is reused with its bytes where they were, and the spares stay
    /// within their bound.
    #[test]
    fn buffers_are_reused_within_the_bound() {
        let mut sources = Sources::default();
        let first = sources.copy_of(&[7u8; 4096]);
        let at = first.as_ptr();
        sources.keep(first);
        assert_eq!(sources.in_flight(), 1);
        sources.retire_all();
        assert_eq!(sources.in_flight(), 0);
        let again = sources.copy_of(&[9u8; 100]);
        assert_eq!((again.as_ptr(), again.as_slice()), (at, &[9u8; 100][..]));
        sources.keep(again);
        for _ in 0..3 {
            let big = sources.copy_of(&vec![1u8; 4 << 20]);
            sources.keep(big);
        }
        sources.retire_all();
        assert!(sources.spare_bytes <= SPARE_MAX_BYTES);
        assert_eq!(
            sources.spare_bytes,
            sources.spare.iter().map(Vec::capacity).sum::<usize>()
        );
    }
}
