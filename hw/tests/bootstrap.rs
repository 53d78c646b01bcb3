//! The node-local bootstrap (`hw::bootstrap`): a server and clients on threads of this process,
//! each over a real Unix domain socket. Deadlines are short so that a hang fails the test
//! instead of stalling it.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use hw::bootstrap::{
    BootstrapClient, BootstrapEnv, BootstrapError, BootstrapServer, MAX_MESSAGE_BYTES, N_RANKS_VAR,
    RANK_VAR, SOCKET_VAR, ServeEnd,
};

/// A socket path of this test alone (tests run in parallel threads of one process).
fn socket(test: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("rshmem-bt-{}-{test}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn env(path: &Path, rank: u32, n_ranks: u32) -> BootstrapEnv {
    BootstrapEnv {
        rank,
        n_ranks,
        socket: path.to_path_buf(),
    }
}

fn soon(ms: u64) -> Instant {
    Instant::now() + Duration::from_millis(ms)
}

fn serve(
    path: &Path,
    n_ranks: u32,
    deadline_ms: u64,
) -> thread::JoinHandle<Result<ServeEnd, BootstrapError>> {
    let server = BootstrapServer::bind(path, n_ranks).expect("bind");
    thread::spawn(move || server.serve(soon(deadline_ms)))
}

#[test]
fn three_ranks_two_rounds_return_every_message_in_rank_order() {
    let path = socket("rounds");
    let server = serve(&path, 3, 10_000);
    let clients: Vec<_> = (0..3)
        .map(|rank| {
            let env = env(&path, rank, 3);
            thread::spawn(move || {
                let mut c = BootstrapClient::connect(&env, soon(10_000)).expect("connect");
                assert_eq!((c.rank(), c.n_ranks()), (rank, 3));
                // Ranks arrive in different orders; the answer is in rank order regardless.
                thread::sleep(Duration::from_millis(u64::from(2 - rank) * 30));
                let first = c.allgather(format!("key of {rank}").as_bytes(), soon(10_000));
                // Sizes differ per rank, one message is empty.
                let second = c.allgather(&vec![rank as u8; rank as usize * 1000], soon(10_000));
                (first.expect("round 1"), second.expect("round 2"))
            })
        })
        .collect();
    for handle in clients {
        let (first, second) = handle.join().unwrap();
        let expected: Vec<Vec<u8>> = (0..3).map(|r| format!("key of {r}").into_bytes()).collect();
        assert_eq!(first, expected);
        let expected: Vec<Vec<u8>> = (0..3u8).map(|r| vec![r; r as usize * 1000]).collect();
        assert_eq!(second, expected);
    }
    assert_eq!(
        server.join().unwrap().expect("every rank said goodbye"),
        ServeEnd::AllLeft
    );
    assert!(!path.exists(), "the server removes its socket file");
}

#[test]
fn one_rank_needs_no_peers() {
    let path = socket("single");
    let server = serve(&path, 1, 10_000);
    let mut c = BootstrapClient::connect(&env(&path, 0, 1), soon(10_000)).unwrap();
    assert_eq!(
        c.allgather(b"alone", soon(10_000)).unwrap(),
        vec![b"alone".to_vec()]
    );
    drop(c);
    server.join().unwrap().unwrap();
}

#[test]
fn a_rank_that_leaves_before_a_round_fails_the_others_naming_it() {
    let path = socket("leaves");
    let server = serve(&path, 3, 20_000);
    let start = Instant::now();
    // Why the channel: ranks 0 and 2 must have joined before rank 1 leaves. A rank that
    // connects after the server has failed the run is told at connect, which is the next test.
    let (joined, all_joined) = std::sync::mpsc::channel();
    let waiting: Vec<_> = [0, 2]
        .into_iter()
        .map(|rank| {
            let env = env(&path, rank, 3);
            let joined = joined.clone();
            thread::spawn(move || {
                let mut c = BootstrapClient::connect(&env, soon(20_000)).unwrap();
                joined.send(rank).unwrap();
                c.allgather(b"mine", soon(20_000))
            })
        })
        .collect();
    for _ in 0..2 {
        all_joined.recv().unwrap();
    }
    // Rank 1 joins and leaves (a process that exits before its first collective).
    let early = BootstrapClient::connect(&env(&path, 1, 3), soon(20_000)).unwrap();
    drop(early);
    for handle in waiting {
        match handle.join().unwrap() {
            Err(BootstrapError::PeerLost { waited_for }) => assert_eq!(waited_for, vec![1]),
            other => panic!("expected PeerLost naming rank 1, got {other:?}"),
        }
    }
    let err = server.join().unwrap().unwrap_err();
    assert!(matches!(&err, BootstrapError::PeerLost { waited_for } if *waited_for == [1]));
    assert!(err.to_string().contains("rank 1 left"), "{err}");
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "no wait for the deadline"
    );
}

/// A rank that speaks the wire format by hand: 16-byte header (kind, rank, length), then bytes.
#[test]
fn a_rank_that_connects_after_the_run_failed_is_told_why_at_connect() {
    let path = socket("late");
    let server = serve(&path, 3, 20_000);
    let waiting = {
        let env = env(&path, 0, 3);
        thread::spawn(move || {
            let mut c = BootstrapClient::connect(&env, soon(20_000)).unwrap();
            c.allgather(b"mine", soon(20_000))
        })
    };
    let early = BootstrapClient::connect(&env(&path, 1, 3), soon(20_000)).unwrap();
    drop(early);
    // Rank 0 is told first: the run has failed before rank 2 comes.
    assert!(matches!(
        waiting.join().unwrap(),
        Err(BootstrapError::PeerLost { waited_for }) if waited_for == [1]
    ));
    let start = Instant::now();
    match BootstrapClient::connect(&env(&path, 2, 3), soon(20_000)) {
        Err(BootstrapError::PeerLost { waited_for }) => assert_eq!(waited_for, vec![1]),
        other => panic!("expected PeerLost naming rank 1 at connect, got {other:?}"),
    }
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "told, not timed out"
    );
    assert!(matches!(
        server.join().unwrap(),
        Err(BootstrapError::PeerLost { .. })
    ));
}

fn frame(kind: u32, rank: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&rank.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

fn read_frame(s: &mut UnixStream) -> (u32, u32, Vec<u8>) {
    let mut header = [0u8; 16];
    s.read_exact(&mut header).unwrap();
    let kind = u32::from_le_bytes(header[0..4].try_into().unwrap());
    let rank = u32::from_le_bytes(header[4..8].try_into().unwrap());
    let len = u64::from_le_bytes(header[8..16].try_into().unwrap());
    let mut payload = vec![0; len as usize];
    s.read_exact(&mut payload).unwrap();
    (kind, rank, payload)
}

#[test]
fn a_rank_that_crashes_after_a_round_fails_the_next_round_naming_it() {
    let path = socket("crash");
    let server = serve(&path, 3, 20_000);
    let start = Instant::now();
    let others: Vec<_> = [0, 2]
        .into_iter()
        .map(|rank| {
            let env = env(&path, rank, 3);
            thread::spawn(move || {
                let mut c = BootstrapClient::connect(&env, soon(20_000)).unwrap();
                let first = c.allgather(&[rank as u8], soon(20_000)).expect("round 1");
                assert_eq!(first, vec![vec![0], vec![1], vec![2]]);
                c.allgather(&[rank as u8], soon(20_000))
            })
        })
        .collect();
    // Rank 1 by hand: hello (n_ranks 3, version 1), one round, then its socket closes with no
    // goodbye, as when the process is killed.
    let mut hello = Vec::new();
    hello.extend_from_slice(&3u32.to_le_bytes());
    hello.extend_from_slice(&1u32.to_le_bytes());
    let mut s = loop {
        match UnixStream::connect(&path) {
            Ok(s) => break s,
            Err(_) => thread::sleep(Duration::from_millis(10)),
        }
    };
    s.write_all(&frame(1, 1, &hello)).unwrap();
    assert_eq!(read_frame(&mut s).0, 2, "accepted");
    s.write_all(&frame(3, 1, &[1])).unwrap();
    for r in 0..3 {
        let (kind, rank, payload) = read_frame(&mut s);
        assert_eq!((kind, rank, payload), (3, r, vec![r as u8]));
    }
    drop(s);
    for handle in others {
        match handle.join().unwrap() {
            Err(BootstrapError::PeerLost { waited_for }) => assert_eq!(waited_for, vec![1]),
            other => panic!("expected PeerLost naming rank 1, got {other:?}"),
        }
    }
    assert!(matches!(
        server.join().unwrap(),
        Err(BootstrapError::PeerLost { waited_for }) if waited_for == [1]
    ));
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "no wait for the deadline"
    );
}

#[test]
fn a_rank_that_never_comes_is_named_when_the_deadline_passes() {
    let path = socket("deadline");
    let server = serve(&path, 2, 500);
    let mut c = BootstrapClient::connect(&env(&path, 0, 2), soon(5_000)).unwrap();
    let start = Instant::now();
    match c.allgather(b"x", soon(5_000)) {
        Err(BootstrapError::Deadline { waited_for }) => assert_eq!(waited_for, vec![1]),
        other => panic!("expected Deadline naming rank 1, got {other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(3));
    let err = server.join().unwrap().unwrap_err();
    assert!(matches!(&err, BootstrapError::Deadline { waited_for } if *waited_for == [1]));
    assert!(err.to_string().contains("rank 1"), "{err}");
    // The client is unusable after a failure, and says so instead of hanging.
    assert!(matches!(
        c.allgather(b"again", soon(1_000)),
        Err(BootstrapError::Protocol(_))
    ));
}

#[test]
fn a_client_deadline_without_a_server_answer_is_a_deadline_error() {
    let path = socket("client-deadline");
    let server = serve(&path, 2, 20_000);
    let mut c0 = BootstrapClient::connect(&env(&path, 0, 2), soon(5_000)).unwrap();
    let start = Instant::now();
    match c0.allgather(b"x", soon(300)) {
        Err(BootstrapError::Deadline { waited_for }) => assert!(waited_for.is_empty()),
        other => panic!("expected Deadline, got {other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(3));
    // Rank 0 is gone without a goodbye while no one else waits in a round; rank 1 then joins
    // the round alone and is told rank 0 left.
    drop(c0);
    let mut c1 = BootstrapClient::connect(&env(&path, 1, 2), soon(5_000)).unwrap();
    let result = c1.allgather(b"y", soon(5_000));
    // Rank 0 had sent its message before it left, so round 1 completes for rank 1.
    assert_eq!(result.unwrap(), vec![b"x".to_vec(), b"y".to_vec()]);
    drop(c1);
    server.join().unwrap().unwrap();
}

#[test]
fn a_global_exit_ends_the_serve_at_once_and_tells_the_waiting_ranks() {
    let path = socket("global-exit");
    let server = serve(&path, 3, 20_000);
    let start = Instant::now();
    let (joined, all_joined) = std::sync::mpsc::channel();
    let waiting: Vec<_> = [0, 1]
        .into_iter()
        .map(|rank| {
            let env = env(&path, rank, 3);
            let joined = joined.clone();
            thread::spawn(move || {
                let mut c = BootstrapClient::connect(&env, soon(20_000)).unwrap();
                joined.send(rank).unwrap();
                c.allgather(b"mine", soon(20_000))
            })
        })
        .collect();
    for _ in 0..2 {
        all_joined.recv().unwrap();
    }
    // Rank 2 never joins the round: it ends the job, and its client is then dropped (as the
    // process exits), which must not turn the global exit into a lost peer.
    let ender = BootstrapClient::connect(&env(&path, 2, 3), soon(20_000)).unwrap();
    ender.global_exit(-3).expect("the frame is written");
    drop(ender);
    for handle in waiting {
        match handle.join().unwrap() {
            Err(
                e @ BootstrapError::GlobalExit {
                    rank: 2,
                    status: -3,
                },
            ) => {
                assert!(e.to_string().contains("shmem_global_exit(-3)"), "{e}");
            }
            other => panic!("expected GlobalExit from rank 2, got {other:?}"),
        }
    }
    assert_eq!(
        server.join().unwrap().unwrap(),
        ServeEnd::GlobalExit {
            rank: 2,
            status: -3
        }
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "no deadline wait"
    );
}

#[test]
fn a_global_exit_with_status_zero_still_ends_the_job() {
    let path = socket("global-exit-0");
    let server = serve(&path, 2, 20_000);
    let other = BootstrapClient::connect(&env(&path, 1, 2), soon(20_000)).unwrap();
    let ender = BootstrapClient::connect(&env(&path, 0, 2), soon(20_000)).unwrap();
    ender.global_exit(0).unwrap();
    assert_eq!(
        server.join().unwrap().unwrap(),
        ServeEnd::GlobalExit { rank: 0, status: 0 }
    );
    drop(other);
}

#[test]
fn a_malformed_global_exit_is_a_protocol_error() {
    let path = socket("global-exit-bad");
    let server = serve(&path, 1, 10_000);
    let mut hello = Vec::new();
    hello.extend_from_slice(&1u32.to_le_bytes());
    hello.extend_from_slice(&1u32.to_le_bytes());
    let mut s = loop {
        match UnixStream::connect(&path) {
            Ok(s) => break s,
            Err(_) => thread::sleep(Duration::from_millis(10)),
        }
    };
    s.write_all(&frame(1, 0, &hello)).unwrap();
    assert_eq!(read_frame(&mut s).0, 2, "accepted");
    // Kind 9 (global exit) with two bytes of status instead of four.
    s.write_all(&frame(9, 0, &[1, 2])).unwrap();
    let err = server.join().unwrap().unwrap_err();
    assert!(matches!(err, BootstrapError::Protocol(_)), "{err}");
    assert!(err.to_string().contains("not 4"), "{err}");
}

#[test]
fn a_duplicate_rank_is_rejected() {
    let path = socket("duplicate");
    let server = serve(&path, 2, 10_000);
    let mut first = BootstrapClient::connect(&env(&path, 0, 2), soon(10_000)).unwrap();
    match BootstrapClient::connect(&env(&path, 0, 2), soon(10_000)) {
        Err(BootstrapError::Rejected { rank: 0, reason }) => {
            assert!(reason.contains("already connected"), "{reason}");
        }
        other => panic!("expected Rejected, got {other:?}"),
    }
    assert!(matches!(
        server.join().unwrap(),
        Err(BootstrapError::Rejected { rank: 0, .. })
    ));
    // The rank that was there first hears why the run ended.
    let err = first.allgather(b"x", soon(2_000)).unwrap_err();
    assert!(err.to_string().contains("already connected"), "{err}");
}

#[test]
fn a_different_number_of_ranks_is_rejected() {
    let path = socket("mismatch");
    let server = serve(&path, 2, 10_000);
    match BootstrapClient::connect(&env(&path, 1, 3), soon(10_000)) {
        Err(BootstrapError::Rejected { rank: 1, reason }) => {
            assert!(reason.contains("3 ranks"), "{reason}");
        }
        other => panic!("expected Rejected, got {other:?}"),
    }
    assert!(server.join().unwrap().is_err());
}

#[test]
fn connect_waits_for_a_server_that_binds_late() {
    let path = socket("late");
    let client = {
        let env = env(&path, 0, 1);
        thread::spawn(move || {
            let mut c = BootstrapClient::connect(&env, soon(10_000))?;
            c.allgather(b"late", soon(10_000))
        })
    };
    thread::sleep(Duration::from_millis(200));
    let server = serve(&path, 1, 10_000);
    assert_eq!(client.join().unwrap().unwrap(), vec![b"late".to_vec()]);
    server.join().unwrap().unwrap();
}

#[test]
fn connect_without_a_server_fails_at_the_deadline_naming_the_variable() {
    let path = socket("nobody");
    let start = Instant::now();
    let err = BootstrapClient::connect(&env(&path, 0, 1), soon(200)).unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(3));
    assert!(matches!(err, BootstrapError::Io { .. }));
    assert!(err.to_string().contains(SOCKET_VAR), "{err}");
}

#[test]
fn a_message_over_the_limit_is_refused_before_sending() {
    let path = socket("large");
    let server = serve(&path, 1, 10_000);
    let mut c = BootstrapClient::connect(&env(&path, 0, 1), soon(10_000)).unwrap();
    let big = vec![0u8; MAX_MESSAGE_BYTES as usize + 1];
    assert!(matches!(
        c.allgather(&big, soon(10_000)),
        Err(BootstrapError::TooLarge { .. })
    ));
    // The client is still usable.
    assert_eq!(
        c.allgather(b"ok", soon(10_000)).unwrap(),
        vec![b"ok".to_vec()]
    );
    drop(c);
    server.join().unwrap().unwrap();
}

#[test]
fn zero_ranks_cannot_be_served() {
    let path = socket("zero");
    assert!(matches!(
        BootstrapServer::bind(&path, 0),
        Err(BootstrapError::InvalidArgument(_))
    ));
}

fn from(vars: &[(&str, &str)]) -> Result<Option<BootstrapEnv>, BootstrapError> {
    let map: HashMap<String, OsString> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), OsString::from(v)))
        .collect();
    BootstrapEnv::from_vars(|name| map.get(name).cloned())
}

fn env_error(vars: &[(&str, &str)]) -> String {
    match from(vars) {
        Err(e @ BootstrapError::Env(_)) => e.to_string(),
        other => panic!("expected an Env error for {vars:?}, got {other:?}"),
    }
}

#[test]
fn the_environment_is_read_and_malformed_values_name_their_variable() {
    assert_eq!(from(&[]).unwrap(), None, "not launched by rshmem");
    let full = [
        (RANK_VAR, "2"),
        (N_RANKS_VAR, "4"),
        (SOCKET_VAR, "/tmp/x.sock"),
    ];
    assert_eq!(
        from(&full).unwrap(),
        Some(BootstrapEnv {
            rank: 2,
            n_ranks: 4,
            socket: PathBuf::from("/tmp/x.sock")
        })
    );

    let e = env_error(&[(RANK_VAR, "0")]);
    assert!(
        e.contains(N_RANKS_VAR) && e.contains(SOCKET_VAR) && e.contains("rshmem run -n"),
        "{e}"
    );
    let e = env_error(&[(RANK_VAR, "x"), (N_RANKS_VAR, "4"), (SOCKET_VAR, "/s")]);
    assert!(e.contains("RSHMEM_RANK=x"), "{e}");
    let e = env_error(&[(RANK_VAR, "0"), (N_RANKS_VAR, "-1"), (SOCKET_VAR, "/s")]);
    assert!(e.contains("RSHMEM_N_RANKS=-1"), "{e}");
    let e = env_error(&[(RANK_VAR, "4"), (N_RANKS_VAR, "4"), (SOCKET_VAR, "/s")]);
    assert!(
        e.contains("RSHMEM_RANK=4") && e.contains("RSHMEM_N_RANKS=4"),
        "{e}"
    );
    let e = env_error(&[(RANK_VAR, "0"), (N_RANKS_VAR, "0"), (SOCKET_VAR, "/s")]);
    assert!(e.contains("RSHMEM_N_RANKS=0"), "{e}");
    let e = env_error(&[(RANK_VAR, "0"), (N_RANKS_VAR, "1"), (SOCKET_VAR, "")]);
    assert!(e.contains(SOCKET_VAR), "{e}");
}
