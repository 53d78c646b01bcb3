//! The runtime's configuration (`rshmem::Config::from_lookup`, docs/config.md), the code
//! `Config::from_env` runs, over an environment given as `NAME=VALUE` entries.
//!
//! Seeds: every variable of the table with its default, a valid value and invalid ones.
//! Oracle beyond "no panic, no hang": a configuration written back as the table writes it
//! (`Config::resolved`) reads back to itself.

use std::collections::BTreeMap;
use std::path::Path;

use rshmem::ConfigError;
use rshmem::config::{VarKind, table};

use super::{Refusal, Target};
use crate::fuzz::rng::Rng;

pub(crate) static TARGET: Target = Target {
    name: "config",
    corpus,
    generate,
    dictionary: &[&[
        "SHMEM_SYMMETRIC_SIZE",
        "SHMEM_DEVICE_SYMMETRIC_SIZE",
        "SHMEM_SYMMETRIC_HEAP_DEFAULT",
        "RSHMEM_WAIT_TIMEOUT_MS",
        "RSHMEM_TEAMS_MAX",
        "RSHMEM_CONTEXTS_MAX",
        "SHMEM_INFO",
        "=",
        "k",
        "m",
        "g",
        "t",
        "b",
        "ib",
        "K",
        "GiB",
        "kb",
        "HOST",
        "DEVICE",
        "STATIC",
        "host",
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "y",
        "n",
        " ",
        "\t",
    ]],
    separator: b'\0',
    run,
};

/// Values of each kind, valid ones first.
fn values(kind: VarKind) -> &'static [&'static str] {
    match kind {
        VarKind::Size => &[
            "0", "4096", "512m", "1G", "2GiB", "64kb", "16t", "16383t", "16384t", "1gib", "1ib",
            "b", "", "-1", "1.5g", "g",
        ],
        VarKind::U64 => &["0", "3", "64", "65", "60000", " 7 ", "", "-3", "1e3", "x"],
        VarKind::Bool => &["1", "0", "", "TRUE", "off", " y ", "2", "maybe"],
        VarKind::Heap => &["HOST", "device", " Device ", "STATIC", "", "heap"],
    }
}

fn corpus(_root: &Path) -> anyhow::Result<Vec<Vec<u8>>> {
    let mut out = vec![Vec::new()];
    let defaults: Vec<String> = table()
        .iter()
        .map(|v| format!("{}={}", v.name, v.default))
        .collect();
    out.push(defaults.join("\0").into_bytes());
    for var in table() {
        for value in values(var.kind()) {
            out.push(format!("{}={value}", var.name).into_bytes());
        }
    }
    Ok(out)
}

/// The environment an input stands for: each entry split at its first `=`; bytes that are not
/// UTF-8 become U+FFFD, as `Config::from_env` reads them.
fn environment(input: &[u8]) -> BTreeMap<String, String> {
    super::entries(input, TARGET.separator)
        .filter_map(|entry| {
            let entry = String::from_utf8_lossy(entry);
            let (name, value) = entry.split_once('=')?;
            Some((name.to_string(), value.to_string()))
        })
        .collect()
}

fn run(input: &[u8]) -> Result<(), Refusal> {
    let env = environment(input);
    let config =
        rshmem::Config::from_lookup(|name| env.get(name).cloned()).map_err(|e| Refusal {
            class: config_class(&e),
            message: e.to_string(),
        })?;
    let written: BTreeMap<&str, String> = config
        .resolved()
        .into_iter()
        .map(|(var, value)| (var.name, value))
        .collect();
    let back = rshmem::Config::from_lookup(|name| written.get(name).cloned())
        .unwrap_or_else(|e| panic!("the table's own values do not read back: {e}: {written:?}"));
    assert_eq!(
        back, config,
        "the configuration changed on reading its table back"
    );
    Ok(())
}

/// The variable refused and what it expected.
fn config_class(error: &ConfigError) -> String {
    match error {
        ConfigError::Invalid { name, expected, .. } => {
            format!("invalid {name}: expected {expected}")
        }
    }
}

/// Some variables of the table (and one it does not have), each with a value of its kind or
/// of another.
fn generate(rng: &mut Rng) -> Vec<u8> {
    let vars = table();
    let entries: Vec<String> = (0..rng.range(0, vars.len() + 1))
        .map(|_| {
            let var = rng.pick(vars);
            let kind = if rng.one_in(4) {
                rng.pick(vars).kind()
            } else {
                var.kind()
            };
            let value = if rng.one_in(5) {
                rng.number()
            } else {
                (*rng.pick(values(kind))).to_string()
            };
            let name = if rng.one_in(20) {
                "SHMEM_UNKNOWN"
            } else {
                var.name
            };
            format!("{name}={value}")
        })
        .collect();
    entries.join("\0").into_bytes()
}
