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
    /// Words of the format that mutations insert, in lists (a reader's own keyword list
    /// where it exports one, then the fuzzer's further words).
    pub(crate) dictionary: &'static [&'static [&'static str]],
    /// Separates the entries of inputs that are lists (argument vectors, environments).
    pub(crate) separator: u8,
    /// Runs one input through the real code: `Ok` when accepted, the error when refused.
    /// A panic or a hang is a finding.
    pub(crate) run: fn(&[u8]) -> Result<(), Refusal>,
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

/// Why a reader refused an input: its message, and the kind of mistake, which the summary
/// counts ("distinct errors"): the error's variant where the reader has typed errors, else
/// the message with the input's own text blanked ([`error_class`]).
#[derive(Debug)]
pub(crate) struct Refusal {
    pub(crate) class: String,
    pub(crate) message: String,
}

impl Refusal {
    /// A refusal counted by its message's [`error_class`].
    pub(crate) fn from_message(message: String) -> Refusal {
        Refusal {
            class: error_class(&message),
            message,
        }
    }
}

/// The input as text, as a file reader would take it: bytes that are not UTF-8 are refused.
pub(crate) fn text(input: &[u8]) -> Result<&str, Refusal> {
    std::str::from_utf8(input).map_err(|e| Refusal {
        class: "not UTF-8".to_string(),
        message: format!("stream did not contain valid UTF-8: {e}"),
    })
}

/// The entries of a list input (`separator`-separated).
pub(crate) fn entries(input: &[u8], separator: u8) -> impl Iterator<Item = &[u8]> {
    input
        .split(move |&b| b == separator)
        .filter(|e| !e.is_empty())
}

/// The first line of an error message with numbers and quoted text blanked, so that "line 3"
/// and "line 4" of the same mistake count once (clap's errors go on with the usage).
///
/// Words with a `/` are blanked to `/`: the paths in messages are the input, not the mistake.
/// A quote opens after a space or a bracket and closes before a space, punctuation or the
/// end, so that quotes inside the quoted input (`found '"it's"'`) do not end it.
pub(crate) fn error_class(message: &str) -> String {
    let line: Vec<char> = message
        .chars()
        .take_while(|&c| c != '\n' && c != '\r')
        .collect();
    let is_quote = |c: char| matches!(c, '\'' | '"' | '`');
    let opens = |i: usize| i == 0 || matches!(line[i - 1], ' ' | '(' | '[' | '=' | ':');
    let closes = |i: usize| {
        line.get(i + 1)
            .is_none_or(|&c| c.is_whitespace() || matches!(c, ',' | ';' | ':' | ')' | ']' | '.'))
    };
    let mut out = String::new();
    let mut i = 0;
    while i < line.len() && out.len() < 120 {
        let c = line[i];
        if is_quote(c) && opens(i) {
            // The quote's end: the last closing quote of its kind before the next opening one.
            // A quote that never closes holds the rest of the line.
            let end = (i + 1..line.len()).find(|&j| line[j] == c && closes(j));
            out.push(c);
            out.push(c);
            i = end.map_or(line.len(), |end| end + 1);
            continue;
        }
        if c.is_ascii_digit() {
            if !out.ends_with('#') {
                out.push('#');
            }
        } else {
            out.push(c);
        }
        i += 1;
    }
    let words: Vec<&str> = out
        .split(' ')
        .map(|w| if w.contains('/') { "/" } else { w })
        .collect();
    words.join(" ")
}
