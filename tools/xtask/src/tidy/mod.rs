//! `cargo xtask tidy`: the architecture's invariants, checked by machine.
//!
//! - `host-facade`: no `std::sync` or `std::thread` in the host backend (`hw/src/host`) or in
//!   what backends share (`hw/src/common`) outside code that loom and shuttle builds never
//!   compile.
//! - `sim-determinism`: no OS clock or OS thread in the simulator outside tests, and no
//!   `HashMap`/`HashSet` anywhere in it, unless an item says why with the `#[allow]` of the
//!   matching clippy ban (sim/clippy.toml enforces the same through the types).
//! - `sim-chance-in-one-room`: every draw of the simulator's chooser is made in
//!   `sim/src/world/chance.rs`.
//! - `runtime-names-no-backend`: `runtime/src` names no concrete backend outside tests.
//! - `backends-apart`: none of `hw/src/cuda`, `hw/src/host` and `hw/src/process` imports
//!   another.
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

/// The repository root: two folders above this crate.
pub(crate) fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs every rule over the repository at `root`.
pub(crate) fn check_repository(root: &Path) -> anyhow::Result<Vec<Violation>> {
    let read =
        |path: &str| fs::read_to_string(root.join(path)).with_context(|| format!("reading {path}"));
    let mut found = Vec::new();
    for rule in &rules::SOURCE_RULES {
        let files = rules::rust_files(root, rule.scope)?;
        for path in files
            .iter()
            .filter(|path| !rule.except.contains(&path.as_str()))
        {
            found.extend(rule.check(path, &read(path)?));
        }
    }
    found.extend(config_doc::check(
        &config_doc::runtime_table(),
        &read(config_doc::DOC_PATH)?,
    ));

    Ok(found)
}

/// `cargo xtask tidy`: prints every violation; fails if there is one.
pub(crate) fn run() -> anyhow::Result<ExitCode> {
    let violations = check_repository(&repository_root())?;
    for violation in &violations {
        println!("{violation}");
    }
    if violations.is_empty() {
        println!("tidy: every rule holds");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("tidy: {} violations", violations.len());
        Ok(ExitCode::FAILURE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tidy_rule_holds_in_this_repository() {
        let violations = check_repository(&repository_root()).unwrap();
        let report: Vec<String> = violations.iter().map(|v| v.to_string()).collect();
        assert!(report.is_empty(), "tidy:\n{}", report.join("\n"));
    }
}
