//! What is fuzzed: one [`Target`] per reader of untrusted text, each with its seed corpus from
//! the repository, its structured generator and the real code it drives.

mod cli;
mod config;
mod litmus;
mod topology;

use std::path::Path;

use super::rng::Rng;

/// One reader of untrusted input.
#[derive(Debug)]
pub(crate) struct Target {
    pub(crate) name: &'static str,
    /// Seed inputs read or written from the repository at `root`.
    pub(crate) corpus: fn(root: &Path) -> anyhow::Result<Vec<Vec<u8>>>,
    /// An input made from the format's grammar, valid more often than not.
    pub(crate) generate: fn(&mut Rng) -> Vec<u8>,
    /// Words of the format that mutations insert.
    pub(crate) dictionary: &'static [&'static str],
    /// Separates the entries of inputs that are lists (argument vectors, environments).
    pub(crate) separator: u8,
    /// Runs one input through the real code: `Ok` when accepted, the error text when refused.
    /// A panic or a hang is a finding.
    pub(crate) run: fn(&[u8]) -> Result<(), String>,
}

/// Every target, in the order `--target all` runs them.
pub(crate) static TARGETS: [&Target; 4] = [
    &topology::TARGET,
    &litmus::TARGET,
    &config::TARGET,
    &cli::TARGET,
];

/// The target called `name`.
pub(crate) fn by_name(name: &str) -> Option<&'static Target> {
    TARGETS.iter().copied().find(|t| t.name == name)
}

/// The input as text, as a file reader would take it: bytes that are not UTF-8 are refused.
pub(crate) fn text(input: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(input).map_err(|e| format!("stream did not contain valid UTF-8: {e}"))
}

/// The entries of a list input (`separator`-separated).
pub(crate) fn entries(input: &[u8], separator: u8) -> impl Iterator<Item = &[u8]> {
    input
        .split(move |&b| b == separator)
        .filter(|e| !e.is_empty())
}
