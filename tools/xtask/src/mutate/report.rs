//! The report: one row per mutant, and the Markdown summary that ends the output (and that
//! `--report` writes): the commands, what killed each mutant, the kill rate.

use std::fmt::Write as _;
use std::time::Duration;

use super::mutants::Mutant;

/// A duration as a person reads it: `1m05s`, or `4.2s` under a minute.
pub(crate) fn secs(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// One mutant's result.
pub(crate) struct Row {
    pub(crate) mutant: Mutant,
    /// `Some((command number from 1, reason))` if killed.
    pub(crate) killed_by: Option<(usize, String)>,
    pub(crate) took: Duration,
}

/// The Markdown summary: the commands, one row per mutant, the kill rate.
pub(crate) fn summary(commands: &[String], rows: &[Row], total: usize, took: Duration) -> String {
    let mut s = String::new();
    let killed = rows.iter().filter(|r| r.killed_by.is_some()).count();
    let _ = writeln!(
        s,
        "Commands, in order (the first that fails kills the mutant):\n"
    );
    for (c, cmd) in commands.iter().enumerate() {
        let _ = writeln!(s, "{}. `{cmd}`", c + 1);
    }
    let _ = writeln!(
        s,
        "\n| # | site | mutation | result | time |\n| --- | --- | --- | --- | --- |"
    );
    for (n, r) in rows.iter().enumerate() {
        let result = match &r.killed_by {
            Some((c, why)) => format!("killed by {c}: {why}"),
            None => "**SURVIVED**".into(),
        };
        let _ = writeln!(
            s,
            "| {} | `{}` | `{}` | {} | {} |",
            n + 1,
            r.mutant.site(),
            r.mutant.describe,
            result,
            secs(r.took)
        );
    }
    let rate = if rows.is_empty() {
        0.0
    } else {
        100.0 * killed as f64 / rows.len() as f64
    };
    let _ = writeln!(
        s,
        "\n{killed} of {} mutants killed ({rate:.0} %){}, in {}.",
        rows.len(),
        if rows.len() < total {
            format!("; {} of {total} not run (interrupted)", total - rows.len())
        } else {
            String::new()
        },
        secs(took)
    );
    for r in rows.iter().filter(|r| r.killed_by.is_none()) {
        let _ = writeln!(s, "survivor: {}: {}", r.mutant.site(), r.mutant.describe);
    }
    s
}
