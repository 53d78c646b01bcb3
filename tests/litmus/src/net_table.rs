//! The markdown table of a catalogue run over processes (`litmus-net`): per test, its
//! executions, every outcome with its count (weak ones marked), the weak outcomes seen, the
//! allowed outcomes never seen, and any outcome the model forbids with how often it
//! appeared. The arithmetic of a tally is the GPU table's ([`Tally`]).

use std::fmt::Write as _;

use model::litmus::Outcome;

use crate::gpu_table::Tally;

/// One line of a run: a test's tally, or why it gave none.
#[derive(Clone, Debug)]
pub enum NetLine<'a> {
    /// The test ran, taking `seconds`.
    Ran {
        /// Its outcomes beside what the model allows.
        tally: Tally<'a>,
        /// Wall time of its executions.
        seconds: f64,
    },
    /// It does not apply, or cannot run here: listed with the reason, no failure.
    Skipped {
        /// The test's name.
        name: String,
        /// Why.
        reason: String,
    },
    /// It could not finish (a hang, a failed meeting): a failure of the run.
    Failed {
        /// The test's name.
        name: String,
        /// The error, naming the PE and the line.
        error: String,
    },
}

impl NetLine<'_> {
    /// The test's name.
    pub fn name(&self) -> &str {
        match self {
            NetLine::Ran { tally, .. } => &tally.test.name,
            NetLine::Skipped { name, .. } | NetLine::Failed { name, .. } => name,
        }
    }
}

fn show(tally: &Tally, o: &Outcome) -> String {
    tally.test.show_outcome(&tally.test.observables(), o)
}

/// The allowed outcomes of `tally` that never appeared.
pub fn allowed_unseen(tally: &Tally) -> Vec<String> {
    tally
        .allowed
        .iter()
        .filter(|o| !tally.counts.contains_key(*o))
        .map(|o| show(tally, o))
        .collect()
}

/// Each forbidden outcome that appeared, as `TEST: OUTCOME appeared N times`.
pub fn forbidden_lines(lines: &[NetLine]) -> Vec<String> {
    let mut out = Vec::new();
    for line in lines {
        if let NetLine::Ran { tally, .. } = line {
            for o in tally.forbidden() {
                out.push(format!(
                    "{}: {} appeared {} times of {}",
                    tally.test.name,
                    show(tally, o),
                    tally.counts[o],
                    tally.executions()
                ));
            }
        }
    }
    out
}

/// The one-paragraph summary of `lines`.
pub fn net_summary(lines: &[NetLine]) -> String {
    let tallies: Vec<&Tally> = lines
        .iter()
        .filter_map(|l| match l {
            NetLine::Ran { tally, .. } => Some(tally),
            _ => None,
        })
        .collect();
    let executions: u64 = tallies.iter().map(|t| t.executions()).sum();
    let min = tallies.iter().map(|t| t.executions()).min().unwrap_or(0);
    let forbidden: usize = tallies.iter().map(|t| t.forbidden().len()).sum();
    let weak: usize = tallies.iter().map(|t| t.weak().len()).sum();
    let seen: usize = tallies.iter().map(|t| t.weak_seen().len()).sum();
    let showing = tallies.iter().filter(|t| !t.weak_seen().is_empty()).count();
    let skipped = lines
        .iter()
        .filter(|l| matches!(l, NetLine::Skipped { .. }))
        .count();
    let failed = lines
        .iter()
        .filter(|l| matches!(l, NetLine::Failed { .. }))
        .count();
    let seconds: f64 = lines
        .iter()
        .map(|l| match l {
            NetLine::Ran { seconds, .. } => *seconds,
            _ => 0.0,
        })
        .sum();
    format!(
        "Tests run: {}, {executions} executions (at least {min} a test) in {seconds:.0} s; \
         forbidden outcomes: **{forbidden}**; weak outcomes seen: {seen} of {weak} allowed \
         ({showing} tests showed one); tests skipped: {skipped}; tests that did not finish: \
         {failed}.",
        tallies.len()
    )
}

/// The markdown table of `lines` under their summary.
pub fn net_table(lines: &[NetLine]) -> String {
    let mut s = net_summary(lines);
    s.push_str(
        "\n\n| test | executions | outcomes (count) | weak seen | allowed never seen | \
         forbidden | s |\n|---|---|---|---|---|---|---|\n",
    );
    for line in lines {
        match line {
            NetLine::Ran { tally, seconds } => {
                let weak = tally.weak();
                let outcomes: Vec<String> = tally
                    .counts
                    .iter()
                    .map(|(o, n)| {
                        let mark = if weak.contains(o) {
                            " (weak)"
                        } else if !tally.allowed.contains(o) {
                            " (FORBIDDEN)"
                        } else {
                            ""
                        };
                        format!("{} x{n}{mark}", show(tally, o))
                    })
                    .collect();
                let forbidden: Vec<String> = tally
                    .forbidden()
                    .into_iter()
                    .map(|o| format!("{} x{}", show(tally, o), tally.counts[o]))
                    .collect();
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {}/{} | {} | {} | {seconds:.1} |",
                    tally.test.name,
                    tally.executions(),
                    outcomes.join("; "),
                    tally.weak_seen().len(),
                    weak.len(),
                    dash(&allowed_unseen(tally)),
                    dash(&forbidden),
                );
            }
            NetLine::Skipped { name, reason } => {
                let _ = writeln!(
                    s,
                    "| {name} | 0 | skipped: {} | - | - | - | - |",
                    cell(reason)
                );
            }
            NetLine::Failed { name, error } => {
                let _ = writeln!(
                    s,
                    "| {name} | 0 | did not finish: {} | - | - | - | - |",
                    cell(error)
                );
            }
        }
    }
    s
}

fn dash(items: &[String]) -> String {
    if items.is_empty() {
        "-".into()
    } else {
        items.join("; ")
    }
}

fn cell(text: &str) -> String {
    text.replace('|', "/").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::{catalogue_dir, load_paths, sc_outcomes};

    /// A crafted allowed set that leaves out an outcome that appeared: the outcome is named
    /// as forbidden with its count, in the lines, the summary and the table; the allowed
    /// outcome that never appeared is listed.
    #[test]
    fn an_outcome_outside_the_allowed_set_is_reported() {
        let test = load_paths(&[catalogue_dir().join("f1-sb-put-put.litmus")])
            .expect("the test loads")
            .remove(0)
            .test;
        let sc = sc_outcomes(&test).unwrap();
        let both_old = Outcome(vec![0, 0]);
        let both_new = Outcome(vec![1, 1]);
        let mut allowed = sc.clone();
        allowed.insert(both_old.clone());
        // The check of the checker: the model's set without one outcome that appears.
        allowed.remove(&both_new);
        let tally = Tally {
            test: &test,
            gpus: Vec::new(),
            counts: BTreeMap::from([(both_new, 7), (Outcome(vec![1, 0]), 3)]),
            allowed,
            sc,
        };
        let lines = [
            NetLine::Ran {
                tally,
                seconds: 1.0,
            },
            NetLine::Skipped {
                name: "S".into(),
                reason: "line 3: ld | st".into(),
            },
        ];
        assert_eq!(
            forbidden_lines(&lines),
            ["F1+SB+put+put: P0:r0=1; P1:r1=1 appeared 7 times of 10"]
        );
        let table = net_table(&lines);
        assert!(
            table.contains("forbidden outcomes: **1**") && table.contains("tests skipped: 1"),
            "{table}"
        );
        assert!(table.contains("P0:r0=1; P1:r1=1 x7 (FORBIDDEN)"), "{table}");
        assert!(table.contains("| P0:r0=0; P1:r1=0"), "{table}");
        assert!(table.contains("skipped: line 3: ld / st"), "{table}");
    }
}
