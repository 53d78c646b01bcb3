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
