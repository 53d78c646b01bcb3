//! `cargo xtask tidy`: the architecture's invariants, checked by machine.
//!
//! - `host-facade`: no `std::sync` or `std::thread` in the host backend (`hw/src/host`,
//!   `hw/src/threads.rs`) outside code that loom and shuttle builds never compile.
//! - `sim-determinism`: no OS clock or OS thread in the simulator outside tests, and no
//!   `HashMap`/`HashSet` anywhere in it, unless an item says why with the `#[allow]` of the
//!   matching clippy ban (sim/clippy.toml enforces the same through the types).
//! - `runtime-names-no-backend`: `runtime/src` names no concrete backend outside tests.
//! - `backends-apart`: `hw/src/cuda` does not import `hw/src/host`, nor the other way round.
//! - `config-doc`: docs/config.md documents exactly the runtime's configuration table.
//!
//! Each violation prints its file, line, rule and fix. `cargo test -p xtask` runs the same
//! checks as a test, so a workspace test run fails on a broken rule.

mod config_doc;
mod rules;

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

/// One broken rule at one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Violation {
    /// The file, relative to the repository root.
    pub(crate) path: String,
    pub(crate) line: usize,
    pub(crate) rule: &'static str,
    pub(crate) message: String,
    pub(crate) fix: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}\n    fix: {}",
            self.path, self.line, self.rule, self.message, self.fix
        )
    }
}

/// A violation that is known and being removed elsewhere: (file, text of the line).
///
/// Why a list: the CUDA backend's imports from the host backend are being moved out on
/// another branch; until it lands they are reported as known rather than failing the check.
/// An entry that no longer matches fails the check, so the list cannot outlive its reason:
/// delete the entry then.
const KNOWN_VIOLATIONS: &[(&str, &str)] = &[
    (
        "hw/src/cuda/world.rs",
        "use crate::host::rendezvous::Rendezvous;",
    ),
    ("hw/src/cuda/mod.rs", "use crate::host::single_host;"),
];

/// What a check of the repository found.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    /// Broken rules.
    pub(crate) violations: Vec<Violation>,
    /// Broken rules listed in [`KNOWN_VIOLATIONS`].
    pub(crate) known: Vec<Violation>,
}

/// The repository root: two folders above this crate.
pub(crate) fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs every rule over the repository at `root`.
pub(crate) fn check_repository(root: &Path) -> anyhow::Result<Findings> {
    let read =
        |path: &str| fs::read_to_string(root.join(path)).with_context(|| format!("reading {path}"));
    let mut found = Vec::new();
    for rule in &rules::SOURCE_RULES {
        for path in rules::rust_files(root, rule.scope)? {
            found.extend(rule.check(&path, &read(&path)?));
        }
    }
    found.extend(config_doc::check(
        &config_doc::runtime_table(),
        &read(config_doc::DOC_PATH)?,
    ));

    let mut findings = Findings::default();
    let mut matched = vec![false; KNOWN_VIOLATIONS.len()];
    for violation in found {
        let line_text = read(&violation.path)?
            .lines()
            .nth(violation.line - 1)
            .unwrap_or("")
            .trim()
            .to_owned();
        match KNOWN_VIOLATIONS
            .iter()
            .position(|&(path, text)| path == violation.path && text == line_text)
        {
            Some(n) => {
                matched[n] = true;
                findings.known.push(violation);
            }
            None => findings.violations.push(violation),
        }
    }
    for (&(path, text), _) in KNOWN_VIOLATIONS.iter().zip(matched).filter(|(_, m)| !m) {
        findings.violations.push(Violation {
            path: "tools/xtask/src/tidy/mod.rs".into(),
            line: 1,
            rule: "known-violations",
            message: format!("the known violation `{text}` in {path} is gone"),
            fix: "delete its entry from KNOWN_VIOLATIONS".into(),
        });
    }
    Ok(findings)
}

/// `cargo xtask tidy`: prints every violation; fails if there is one that is not known.
pub(crate) fn run() -> anyhow::Result<ExitCode> {
    let findings = check_repository(&repository_root())?;
    for known in &findings.known {
        println!("{known}\n    (known: being removed on another branch; KNOWN_VIOLATIONS)");
    }
    for violation in &findings.violations {
        println!("{violation}");
    }
    if findings.violations.is_empty() {
        println!(
            "tidy: every rule holds ({} known violations left)",
            findings.known.len()
        );
        Ok(ExitCode::SUCCESS)
    } else {
        println!("tidy: {} violations", findings.violations.len());
        Ok(ExitCode::FAILURE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tidy_rule_holds_in_this_repository() {
        let findings = check_repository(&repository_root()).unwrap();
        let report: Vec<String> = findings.violations.iter().map(|v| v.to_string()).collect();
        assert!(report.is_empty(), "tidy:\n{}", report.join("\n"));
    }
}
