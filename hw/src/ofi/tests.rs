//! The libfabric probe against the machine's library: CI installs Debian's `libfabric1`, whose
//! `tcp;ofi_rxm`, `sockets` and `shm` providers offer RDM endpoints with RMA and atomics over
//! loopback (../docs/multi-node.md).

use super::{OfiError, Progress, probe, probe_library};

/// A library that is not there is an error that names it and what to install.
#[test]
fn a_missing_library_names_what_to_install() {
    let err = probe_library("libfabric-not-installed.so.9").expect_err("no such library");
    let text = err.to_string();
    assert!(matches!(err, OfiError::Load { .. }), "{err:?}");
    assert!(
        text.contains("libfabric-not-installed.so.9")
            && text.contains("apt-get install libfabric1"),
        "{text}"
    );
}

/// A library without libfabric's functions is refused by name, not called.
#[test]
fn a_library_without_the_functions_is_refused() {
    let err = probe_library("libc.so.6").expect_err("libc is not libfabric");
    assert!(err.to_string().contains("it has no fi_"), "{err}");
}

/// Where libfabric is installed, the TCP provider (alone or under `ofi_rxm`) or `sockets`
/// offers RDM endpoints with RMA and atomics, described in full.
#[test]
fn the_installed_library_offers_a_loopback_provider() {
    let offer = match probe() {
        Ok(offer) => offer,
        Err(OfiError::Load { why, .. }) => {
            eprintln!("skipped: libfabric is not installed here ({why})");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    if std::env::var_os("FI_PROVIDER").is_some() {
        eprintln!("skipped: FI_PROVIDER narrows what libfabric offers");
        return;
    }
    assert!(offer.version.starts_with("1.") || offer.version.starts_with("2."));
    let loopback = offer
        .providers
        .iter()
        .find(|p| p.name == "tcp;ofi_rxm" || p.name == "sockets")
        .unwrap_or_else(|| panic!("no tcp;ofi_rxm or sockets in {:#?}", offer.providers));
    assert!(loopback.max_message_bytes > 0, "{loopback}");
    assert_ne!(loopback.data_progress, Progress::Unspecified, "{loopback}");
    // Every provider listed orders something or says it orders nothing; either way the
    // description says what a fence between a put and an atomic costs.
    let line = loopback.to_string();
    eprintln!("libfabric {}: {line}", offer.version);
    assert!(
        line.starts_with(&loopback.name) && line.contains("ordering"),
        "{line}"
    );
}

/// Two endpoints of `provider` in this process; `None`, saying why, without libfabric.
fn two_endpoints(provider: &std::ffi::CStr) -> Option<(super::Endpoint, super::Endpoint)> {
    let open = || super::Endpoint::open(Some(provider), 2);
    match (open(), open()) {
        (Ok(a), Ok(b)) => Some((a, b)),
        (Err(OfiError::Load { why, .. }), _) => {
            eprintln!("skipped: libfabric is not installed here ({why})");
            None
        }
        (Err(e), _) | (_, Err(e)) => panic!("{provider:?}: {e}"),
    }
}

/// Two endpoints of one provider in this process, each with a registered region: puts,
/// gets and atomics of one reach the other's memory, for each loopback provider installed.
#[test]
fn two_endpoints_put_get_and_update_each_others_memory() {
    use super::{AtomicOp, AtomicWidth, Place};
    use std::ffi::CStr;

    let providers: [&CStr; 2] = [c"tcp;ofi_rxm", c"sockets"];
    for provider in providers {
        // Declared first, so dropped after the endpoints that registered them.
        let (mut a_words, mut b_words) = (vec![0u64; 64], vec![0u64; 64]);
        let Some((a, b)) = two_endpoints(provider) else {
            return;
        };
        assert_eq!(a.provider(), provider.to_str().unwrap());
        let names = vec![a.name().unwrap(), b.name().unwrap()];
        // SAFETY: both vectors outlive the endpoints (dropped after them, at the end of the
        // iteration), and are read below only with volatile reads.
        let (_, key) = unsafe {
            (
                a.register(a_words.as_mut_ptr().cast(), 512).unwrap(),
                b.register(b_words.as_mut_ptr().cast(), 512).unwrap(),
            )
        };
        a.insert_peers(&names).unwrap();
        b.insert_peers(&names).unwrap();
        let (a, b) = (&a, &b);
        let at = |offset| Place {
            peer: 1,
            key,
            offset,
        };
        let mut move_b = || b.progress().expect("b progresses");
        let word = |i: usize| {
            // SAFETY: an element of `b_words`, written by the provider.
            unsafe { std::ptr::read_volatile(b_words.as_ptr().add(i)) }
        };

        a.put(at(8), &0x1122_3344_5566_7788u64.to_le_bytes(), &mut move_b)
            .unwrap();
        a.quiet(&mut move_b).unwrap();
        assert_eq!(word(1), 0x1122_3344_5566_7788, "{provider:?}: put");

        let mut got = [0u8; 8];
        a.get(at(8), &mut got, &mut move_b).unwrap();
        assert_eq!(
            u64::from_le_bytes(got),
            0x1122_3344_5566_7788,
            "{provider:?}: get"
        );

        let add = (AtomicOp::Sum, AtomicWidth::U64);
        a.atomic(at(16), add, 5, &mut move_b).unwrap();
        a.atomic(at(16), add, 7, &mut move_b).unwrap();
        a.quiet(&mut move_b).unwrap();
        assert_eq!(word(2), 12, "{provider:?}: two adds");
        let before = a.fetch_atomic(at(16), add, 30, None, &mut move_b).unwrap();
        assert_eq!((before, word(2)), (12, 42), "{provider:?}: fetch-add");

        let swap = (AtomicOp::Write, AtomicWidth::U64);
        let kept = a
            .fetch_atomic(at(16), swap, 9, Some(41), &mut move_b)
            .unwrap();
        assert_eq!(
            (kept, word(2)),
            (42, 42),
            "{provider:?}: a compare that fails"
        );
        let taken = a
            .fetch_atomic(at(16), swap, 9, Some(42), &mut move_b)
            .unwrap();
        assert_eq!(
            (taken, word(2)),
            (42, 9),
            "{provider:?}: a compare that holds"
        );

        // A 32-bit add into the upper half of word 3 leaves the lower half alone.
        let add32 = (AtomicOp::Sum, AtomicWidth::U32);
        a.atomic(at(28), add32, 3, &mut move_b).unwrap();
        a.quiet(&mut move_b).unwrap();
        assert_eq!(word(3), 3 << 32, "{provider:?}: 32-bit add");
        eprintln!("{provider:?}: put, get and atomics reached the peer");
        let _ = &mut a_words;
    }
}

/// A peer that never calls into libfabric again does not hang a get: it fails after the
/// endpoint's patience, saying what may have happened.
#[test]
fn a_peer_that_stopped_is_given_up_on() {
    use super::Place;
    use std::time::Duration;

    let mut words = vec![0u64; 8];
    let Some((a, b)) = two_endpoints(c"tcp;ofi_rxm") else {
        return;
    };
    // SAFETY: `words` outlives both endpoints (declared first, dropped last); nothing reads
    // it.
    let key = unsafe { b.register(words.as_mut_ptr().cast(), 64) }.unwrap();
    let names = vec![a.name().unwrap(), b.name().unwrap()];
    a.insert_peers(&names).unwrap();
    b.insert_peers(&names).unwrap();
    a.set_patience(Duration::from_millis(300));
    let mut out = [0u8; 8];
    let at = Place {
        peer: 1,
        key,
        offset: 0,
    };
    // `b` is never moved: the get's data never comes.
    let err = a
        .get(at, &mut out, &mut || {})
        .expect_err("b never answers");
    assert!(
        matches!(err, OfiError::Stalled { waited_ms, .. } if waited_ms >= 300),
        "{err}"
    );
    assert!(
        err.to_string().contains("stopped calling into libfabric"),
        "{err}"
    );
    drop((a, b));
    let _ = &mut words;
}
