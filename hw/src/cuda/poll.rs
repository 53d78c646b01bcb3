//! Polling the GPU until something holds or a deadline passes: the CUDA backend's waits.
//!
//! A copy or kernel often completes within microseconds, so the first polls spin; later ones
//! sleep, with the pause doubling up to a bound so that a long wait costs little CPU and
//! still notices completion within about a tenth of a millisecond.

use std::time::Duration;

use crate::sync::{self, Clock};
use crate::types::Instant;

/// The first pause between polls.
const FIRST_PAUSE_NS: u64 = 1_000;
/// The longest pause between polls.
const MAX_PAUSE_NS: u64 = 100_000;
/// Pauses shorter than this spin: a sleep takes about this long at least on Linux.
const SPIN_BELOW_NS: u64 = 50_000;

/// Exponentially growing pauses between polls.
#[derive(Debug)]
struct Backoff {
    pause_ns: u64,
}

impl Backoff {
    fn new() -> Backoff {
        Backoff {
            pause_ns: FIRST_PAUSE_NS,
        }
    }

    fn pause(&mut self) {
        let pause = Duration::from_nanos(self.pause_ns);
        if self.pause_ns < SPIN_BELOW_NS {
            let start = std::time::Instant::now();
            while start.elapsed() < pause {
                std::hint::spin_loop();
            }
        } else {
            std::thread::sleep(pause);
        }
        self.pause_ns = (self.pause_ns * 2).min(MAX_PAUSE_NS);
    }
}

/// Calls `check` until it returns `Some` or an error, pausing between calls, and gives up
/// with `Ok(None)` once the run's clock (nanoseconds since `start`) has passed `deadline`.
/// `check` runs at least once, and once more after the deadline passed, so a condition that
/// holds by the deadline is never missed.
pub(crate) fn poll_until<T, E>(
    start: &Clock,
    deadline: Instant,
    mut check: impl FnMut() -> Result<Option<T>, E>,
) -> Result<Option<T>, E> {
    let mut backoff = Backoff::new();
    loop {
        let late = sync::nanos_since(start) > deadline.0;
        if let Some(value) = check()? {
            return Ok(Some(value));
        }
        if late {
            return Ok(None);
        }
        backoff.pause();
    }
}

#[cfg(all(test, not(any(rshmem_loom, rshmem_shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_up_to_the_bound() {
        let mut b = Backoff::new();
        let mut seen = Vec::new();
        for _ in 0..10 {
            seen.push(b.pause_ns);
            b.pause();
        }
        assert_eq!(&seen[..3], &[1_000, 2_000, 4_000]);
        assert_eq!(*seen.last().unwrap(), MAX_PAUSE_NS);
    }

    #[test]
    fn polling_gives_up_after_the_deadline_and_checks_once_more() {
        let start = sync::clock_now();
        let mut calls = 0;
        let got: Result<Option<()>, ()> = poll_until(&start, Instant(2_000_000), || {
            calls += 1;
            Ok(None)
        });
        assert_eq!(got, Ok(None));
        assert!(sync::nanos_since(&start) >= 2_000_000);
        assert!(calls >= 2, "{calls}");
    }

    #[test]
    fn polling_returns_the_first_value_and_errors() {
        let start = sync::clock_now();
        let mut n = 0;
        let got: Result<Option<u32>, ()> = poll_until(&start, Instant(u64::MAX), || {
            n += 1;
            Ok((n == 3).then_some(n))
        });
        assert_eq!(got, Ok(Some(3)));
        let failed: Result<Option<u32>, &str> = poll_until(&start, Instant(0), || Err("lost"));
        assert_eq!(failed, Err("lost"));
    }
}
