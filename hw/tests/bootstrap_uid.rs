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

/// A free TCP port of this host, for an address fixed in advance (a session id).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The variables of `pairs` only, as a `lookup` for `get_unique_id_from`.
fn vars(pairs: &[(&str, String)]) -> impl FnMut(&str) -> Option<std::ffi::OsString> {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(name, value)| (name.to_string(), value.clone()))
        .collect();
    move |name| pairs.iter().find(|(n, _)| n == name).map(|(_, v)| v.into())
}

/// Two ranks of the job of `id` exchange their ranks.
fn two_ranks_exchange(id: [u8; UNIQUE_ID_BYTES], what: &str) {
    let all = ranks(
        id,
        2,
        |_| true,
        20,
        |mut b| b.allgather(&[b.rank() as u8], soon(20)).unwrap(),
    );
    for result in all {
        assert_eq!(
            result.unwrap_or_else(|e| panic!("{what}: {e}")),
            vec![vec![0], vec![1]]
        );
    }
}

/// The link-local IPv6 address of some interface of this host and the interface's name, from
/// `/proc/net/if_inet6`; `None` where there is none.
fn link_local() -> Option<(String, String)> {
    let table = std::fs::read_to_string("/proc/net/if_inet6").ok()?;
    table.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (hex, name) = (fields.first()?, fields.last()?);
        if !hex.starts_with("fe80") || hex.len() != 32 {
            return None;
        }
        let groups: Vec<&str> = (0..8).map(|i| &hex[i * 4..i * 4 + 4]).collect();
        let ip: std::net::Ipv6Addr = groups.join(":").parse().ok()?;
        Some((ip.to_string(), name.to_string()))
    })
}

#[test]
fn ipv6_loopback_a_link_local_address_and_a_session_id_lead_ranks_to_rank_0() {
    // AF_INET6 on the loopback interface: ::1.
    let id = uid::get_unique_id_from(vars(&[
        (uid::SOCK_FAMILY_VAR, "AF_INET6".into()),
        (uid::SOCK_IFNAME_VAR, "=lo".into()),
    ]))
    .unwrap();
    two_ranks_exchange(id, "::1");

    // A session id: rank 0 opens the listener when it joins.
    let session = format!("127.0.0.1:{}", free_port());
    let id = uid::get_unique_id_from(vars(&[(uid::SESSION_ID_VAR, session.clone())])).unwrap();
    two_ranks_exchange(id, &session);
    let session = format!("[::1]:{}", free_port());
    let id = uid::get_unique_id_from(vars(&[(uid::SESSION_ID_VAR, session.clone())])).unwrap();
    two_ranks_exchange(id, &session);

    // A link-local address needs its interface's scope, which the id carries: by the
    // interface's automatic choice, and by a session id that names the interface.
    let Some((ip, interface)) = link_local() else {
        eprintln!("skipped the link-local cases: no interface here has an fe80:: address");
        return;
    };
    let id = uid::get_unique_id_from(vars(&[
        (uid::SOCK_FAMILY_VAR, "AF_INET6".into()),
        (uid::SOCK_IFNAME_VAR, format!("={interface}")),
    ]))
    .unwrap();
    two_ranks_exchange(id, &format!("an address of {interface}"));
    let session = format!("[{ip}%{interface}]:{}", free_port());
    let id = uid::get_unique_id_from(vars(&[(uid::SESSION_ID_VAR, session.clone())])).unwrap();
    two_ranks_exchange(id, &session);
}

/// The variables by which `a_global_exit_ends_every_rank_of_a_unique_id_job` tells its
/// children the id (hex) and their rank.
const CHILD_ID_VAR: &str = "RSHMEM_TEST_UID_ID";
const CHILD_RANK_VAR: &str = "RSHMEM_TEST_UID_RANK";
const CHILD_RANKS: u32 = 3;
const EXIT_STATUS: i32 = 7;

/// A rank of the job of the parent test, when its variables are set (otherwise nothing):
/// rank 1 ends the job with a global exit; the others sleep outside any bootstrap call, and
/// must be ended by it.
#[test]
fn global_exit_child() {
    let (Some(hex), Some(rank)) = (
        std::env::var_os(CHILD_ID_VAR),
        std::env::var_os(CHILD_RANK_VAR),
    ) else {
        return;
    };
    let hex = hex.to_string_lossy().into_owned();
    let mut id = [0u8; UNIQUE_ID_BYTES];
    for (i, byte) in id.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
    }
    let rank: u32 = rank.to_string_lossy().parse().unwrap();
    let mut bootstrap = uid::open(&id, rank, CHILD_RANKS, soon(30)).unwrap();
    bootstrap.barrier(soon(30)).unwrap();
    if rank == 1 {
        let _ = bootstrap.global_exit(EXIT_STATUS);
        std::process::exit(EXIT_STATUS);
    }
    thread::sleep(Duration::from_secs(60));
    panic!("rank {rank} was not ended by rank 1's global exit");
}

#[test]
fn a_global_exit_ends_every_rank_of_a_unique_id_job_not_only_those_in_a_bootstrap_call() {
    // A session id, so that the child that is rank 0 listens, not this process.
    let session = format!("127.0.0.1:{}", free_port());
    let id = uid::get_unique_id_from(vars(&[(uid::SESSION_ID_VAR, session)])).unwrap();
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let exe = std::env::current_exe().unwrap();
    let start = Instant::now();
    let mut children: Vec<_> = (0..CHILD_RANKS)
        .map(|rank| {
            std::process::Command::new(&exe)
                .args(["global_exit_child", "--exact", "--nocapture"])
                .env(CHILD_ID_VAR, &hex)
                .env(CHILD_RANK_VAR, rank.to_string())
                .spawn()
                .unwrap()
        })
        .collect();
    let deadline = soon(20);
    let mut statuses = Vec::new();
    for (rank, child) in children.iter_mut().enumerate() {
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                statuses.push(status.code());
                break;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                statuses.push(None);
                eprintln!("rank {rank} was still running 20 s after the start: killed");
                break;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
    assert_eq!(statuses, vec![Some(EXIT_STATUS); CHILD_RANKS as usize]);
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "{:?}",
        start.elapsed()
    );
}
