//! The unique-id bootstrap (`hw::bootstrap::uid`) with its ranks as threads of this test: an
//! allgather through rank 0's relay, and the refusals that name the problem (another job's
//! id, a rank out of range, a rank that never comes).

#![cfg(any(feature = "process", feature = "cuda"))]

use std::thread;
use std::time::{Duration, Instant};

use hw::bootstrap::uid::{self, UNIQUE_ID_BYTES};
use hw::bootstrap::{Bootstrap, BootstrapError};

fn soon(s: u64) -> Instant {
    Instant::now() + Duration::from_secs(s)
}

/// Opens `n` ranks of the job of `id` on threads; each returns what `body` makes of its
/// bootstrap, or the error of its opening.
fn ranks<R: Send + 'static>(
    id: [u8; UNIQUE_ID_BYTES],
    n: u32,
    open: impl Fn(u32) -> bool + Send + Sync + Copy + 'static,
    deadline_s: u64,
    body: impl Fn(Box<dyn Bootstrap>) -> R + Send + Sync + Copy + 'static,
) -> Vec<Result<R, BootstrapError>> {
    let handles: Vec<_> = (0..n)
        .filter(|&r| open(r))
        .map(|rank| thread::spawn(move || uid::open(&id, rank, n, soon(deadline_s)).map(body)))
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

/// One test, run in order: the listener `get_unique_id` opens is the process's, as it is in
/// a program.
#[test]
fn ranks_join_through_rank_0_s_relay_and_bad_ids_and_ranks_are_refused_by_name() {
    // Every rank gets every rank's message, in rank order, and its node.
    let id = uid::get_unique_id().unwrap();
    assert!(!uid::is_simulated(&id));
    let all = ranks(
        id,
        3,
        |_| true,
        30,
        |mut b| {
            let rank = b.rank();
            let got = b.allgather(&[rank as u8; 3], soon(30)).unwrap();
            b.barrier(soon(30)).unwrap();
            (rank, b.size(), b.node(), got)
        },
    );
    for result in all {
        let (rank, size, node, got) = result.unwrap();
        assert_eq!(size, 3);
        assert_eq!((node.local_rank, node.local_size), (rank, 3), "one host");
        assert_eq!(got, vec![vec![0; 3], vec![1; 3], vec![2; 3]]);
    }

    // An id of zeroes, or a simulated one, is refused with the fix.
    let e = uid::open(&[0; UNIQUE_ID_BYTES], 1, 2, soon(5)).unwrap_err();
    assert!(e.to_string().contains("nvshmemx_get_uniqueid"), "{e}");
    let e = uid::open(&uid::simulated_unique_id(), 0, 2, soon(5)).unwrap_err();
    assert!(e.to_string().contains("simulated"), "{e}");

    // A rank out of range.
    let id = uid::get_unique_id().unwrap();
    let e = uid::open(&id, 2, 2, soon(5)).unwrap_err();
    assert!(e.to_string().contains("rank 2 of 2"), "{e}");

    // A rank with another job's key: flip a byte of the key, which follows the address.
    let mut other = id;
    other[30] ^= 0xff;
    let stranger = thread::spawn(move || uid::open(&other, 1, 2, soon(20)).map(drop));
    let results = ranks(id, 2, |r| r == 0, 20, |_| ());
    let e = stranger.join().unwrap().unwrap_err().to_string();
    assert!(e.contains("another job's key"), "{e}");
    assert!(results[0].is_err(), "rank 0 hears of the refusal");

    // A rank that never comes is named when the relay gives up on it.
    let id = uid::get_unique_id().unwrap();
    let results = ranks(id, 3, |r| r != 2, 8, |_| ());
    for result in results {
        let e = result.unwrap_err();
        assert!(
            matches!(&e, BootstrapError::Deadline { waited_for } if waited_for == &[2]),
            "{e}"
        );
    }
}
