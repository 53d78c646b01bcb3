//! `rshmem info` as a user runs it, and the table `rshmem run` prints under SHMEM_INFO.

use std::process::{Command, Output};

/// Runs the binary with the runtime's variables set to `vars` only (none inherited).
fn rshmem(args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rshmem"));
    for var in rshmem::config::table() {
        command.env_remove(var.name);
    }
    command
        .args(args)
        .envs(vars.iter().copied())
        .output()
        .expect("the binary runs")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn info_lists_every_variable_with_type_default_and_meaning() {
    let text = stdout(&rshmem(&["info"], &[]));
    let mut lines = text.lines();
    let header = lines.next().expect("a header");
    for column in ["NAME", "TYPE", "DEFAULT", "VALUE", "MEANING"] {
        assert!(header.contains(column), "{header}");
    }
    // The table, then the line that says which bootstrap a program started here would take,
    // then what libfabric offers.
    let rows: Vec<&str> = lines
        .take_while(|l| !l.starts_with("bootstrap: "))
        .collect();
    let after: Vec<&str> = text.lines().skip(rows.len() + 2).collect();
    assert!(
        after.first().is_some_and(|l| l.starts_with("network: ")),
        "{text}"
    );
    let table = rshmem::config::table();
    assert_eq!(rows.len(), table.len(), "{text}");
    for (row, var) in rows.iter().zip(table) {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cells[..4],
            [var.name, var.kind().name(), var.default, var.default],
            "{row}"
        );
        assert!(row.ends_with(var.doc), "{row}");
    }
}

/// The network lines say what libfabric offers, narrowed by `FI_PROVIDER` as libfabric
/// narrows it, or what to install.
#[test]
fn info_says_what_libfabric_offers_under_fi_provider() {
    let text = stdout(&rshmem(&["info"], &[("FI_PROVIDER", "sockets")]));
    let network: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("network: "))
        .collect();
    let first = network
        .first()
        .unwrap_or_else(|| panic!("no network line in {text}"));
    if first.contains("cannot load") {
        assert!(first.contains("apt-get install libfabric1"), "{first}");
        eprintln!("skipped the providers: libfabric is not installed here");
        return;
    }
    assert!(first.starts_with("network: libfabric "), "{first}");
    assert!(
        network.len() > 1,
        "sockets offers RMA and atomics over loopback: {text}"
    );
    for provider in &network[1..] {
        assert!(
            provider.starts_with("  sockets on ")
                && provider.contains("puts ordered before atomics"),
            "{provider}"
        );
    }
    let none = stdout(&rshmem(&["info"], &[("FI_PROVIDER", "no-such-provider")]));
    assert!(
        none.contains("offers no provider") && none.contains("FI_PROVIDER=no-such-provider"),
        "{none}"
    );
}

#[test]
fn info_json_shows_the_environment_values() {
    let out = rshmem(
        &["info", "--json"],
        &[
            ("SHMEM_DEVICE_SYMMETRIC_SIZE", "2G"),
            ("SHMEM_SYMMETRIC_HEAP_DEFAULT", "host"),
            ("SHMEM_SYMMETRIC_SIZE", "64m"),
        ],
    );
    let rows: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let row = |name: &str| {
        rows.as_array()
            .expect("an array")
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("{name} is missing"))
            .clone()
    };
    let device = row("SHMEM_DEVICE_SYMMETRIC_SIZE");
    assert_eq!(
        (
            &device["value"],
            &device["set"],
            &device["default"],
            &device["type"]
        ),
        (&"2g".into(), &true.into(), &"1g".into(), &"size".into())
    );
    assert_eq!(row("SHMEM_SYMMETRIC_HEAP_DEFAULT")["value"], "HOST");
    assert_eq!(row("SHMEM_SYMMETRIC_SIZE")["value"], "64m");
    let timeout = row("RSHMEM_WAIT_TIMEOUT_MS");
    assert_eq!(
        (&timeout["value"], &timeout["set"]),
        (&"60000".into(), &false.into())
    );
    assert!(timeout["meaning"].as_str().is_some_and(|m| !m.is_empty()));
}

#[test]
fn a_malformed_value_fails_naming_the_variable() {
    for (name, value) in [
        ("SHMEM_SYMMETRIC_SIZE", "lots"),
        ("SHMEM_DEVICE_SYMMETRIC_SIZE", "1.5g"),
        ("SHMEM_SYMMETRIC_HEAP_DEFAULT", "gpu"),
    ] {
        let out = rshmem(&["info"], &[(name, value)]);
        assert_eq!(out.status.code(), Some(2), "{name}={value}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(name) && stderr.contains(value), "{stderr}");
    }
}

#[test]
fn run_prints_the_table_to_stderr_under_shmem_info() {
    let args = ["run", "hello", "--pes", "2", "--json"];
    let out = rshmem(&args, &[("SHMEM_INFO", "1")]);
    let summary: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(summary["ok"], true);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("SHMEM_DEVICE_SYMMETRIC_SIZE") && stderr.contains("SHMEM_INFO"),
        "{stderr}"
    );
    let quiet = rshmem(&args, &[]);
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("SHMEM_INFO"));
}
