//! The markdown table of a catalogue run on GPUs: per test, the GPUs its PEs ran on, its
//! executions, every outcome with its count (weak ones marked), the weak outcomes seen and
//! never seen, and any outcome the model forbids.
//!
//! An outcome is *weak* when the model allows it and no sequentially consistent interleaving
//! of the programs produces it ([`crate::sc_outcomes`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use model::litmus::{Litmus, Outcome};

use crate::gpu_placement::show_placements;

/// One test's results beside what the model allows and what SC gives.
#[derive(Clone, Debug)]
pub struct Tally<'a> {
    /// The test.
    pub test: &'a Litmus,
    /// The GPUs of each run of the test, as `hw::cuda::CudaBuilder::gpus` takes them: PE `i`
    /// on `gpus[i % len]`.
    pub gpus: Vec<Vec<u32>>,
    /// How often each outcome appeared.
    pub counts: BTreeMap<Outcome, u64>,
    /// The outcomes the model allows.
    pub allowed: BTreeSet<Outcome>,
    /// The outcomes of SC interleavings.
    pub sc: BTreeSet<Outcome>,
}

impl Tally<'_> {
    /// Executions counted.
    pub fn executions(&self) -> u64 {
        self.counts.values().sum()
    }

    /// The weak outcomes: allowed and not SC.
    pub fn weak(&self) -> BTreeSet<&Outcome> {
        self.allowed.difference(&self.sc).collect()
    }

    /// The weak outcomes that appeared.
    pub fn weak_seen(&self) -> BTreeSet<&Outcome> {
        self.weak()
            .into_iter()
            .filter(|o| self.counts.contains_key(*o))
            .collect()
    }

    /// The outcomes that appeared and the model forbids.
    pub fn forbidden(&self) -> Vec<&Outcome> {
        self.counts
            .keys()
            .filter(|o| !self.allowed.contains(*o))
            .collect()
    }

    fn show(&self, o: &Outcome) -> String {
        self.test.show_outcome(&self.test.observables(), o)
    }

    /// The test's row of the table.
    pub fn row(&self) -> String {
        let weak = self.weak();
        let outcomes: Vec<String> = self
            .counts
            .iter()
            .map(|(o, n)| {
                let mark = if weak.contains(o) {
                    " (weak)"
                } else if !self.allowed.contains(o) {
                    " (FORBIDDEN)"
                } else {
                    ""
                };
                format!("{} x{n}{mark}", self.show(o))
            })
            .collect();
        let unseen: Vec<String> = weak
            .iter()
            .filter(|o| !self.counts.contains_key(**o))
            .map(|o| self.show(o))
            .collect();
        let forbidden: Vec<String> = self.forbidden().into_iter().map(|o| self.show(o)).collect();
        format!(
            "| {} | {} | {} | {} | {} | {}/{} | {} | {} |",
            self.test.name,
            self.test.n_pes,
            show_placements(&self.gpus),
            self.executions(),
            outcomes.join("; "),
            self.weak_seen().len(),
            weak.len(),
            list_or_dash(&unseen),
            list_or_dash(&forbidden),
        )
    }
}

fn list_or_dash(items: &[String]) -> String {
    if items.is_empty() {
        "-".into()
    } else {
        items.join("; ")
    }
}

/// One line of a run: a test's tally, or why it gave none.
#[derive(Clone, Debug)]
pub enum TableLine<'a> {
    /// The test ran.
    Ran(Tally<'a>),
    /// It holds an instruction the GPU kernels (or the SC enumerator) do not know: listed,
    /// not run, and no failure of the run.
    NotOnGpu {
        /// The test's name.
        name: String,
        /// Its PEs.
        n_pes: u32,
        /// What is not known.
        reason: String,
    },
    /// It has undefined behaviour (an `expect ... undefined` line): no outcome is right or
    /// wrong, so it is listed, not run, and no failure of the run.
    Undefined {
        /// The test's name.
        name: String,
        /// Its PEs.
        n_pes: u32,
    },
    /// It could not run: its name, PEs, the GPUs it was to run on, and the error.
    Failed {
        /// The test's name.
        name: String,
        /// Its PEs.
        n_pes: u32,
        /// The GPUs of each run it started, the failed one last.
        gpus: Vec<Vec<u32>>,
        /// Why.
        error: String,
    },
}

/// The markdown table of `lines`, under a summary: weak outcomes seen of those allowed, tests
/// that showed one, forbidden outcomes, tests that did not run, and how many tests ran on each
/// GPU.
pub fn table(lines: &[TableLine]) -> String {
    let tallies: Vec<&Tally> = lines
        .iter()
        .filter_map(|l| match l {
            TableLine::Ran(t) => Some(t),
            TableLine::Failed { .. } | TableLine::NotOnGpu { .. } | TableLine::Undefined { .. } => {
                None
            }
        })
        .collect();
    let weak: usize = tallies.iter().map(|t| t.weak().len()).sum();
    let seen: usize = tallies.iter().map(|t| t.weak_seen().len()).sum();
    let with_weak = tallies.iter().filter(|t| !t.weak().is_empty()).count();
    let showing = tallies.iter().filter(|t| !t.weak_seen().is_empty()).count();
    let forbidden: usize = tallies.iter().map(|t| t.forbidden().len()).sum();
    let not_on_gpu = lines
        .iter()
        .filter(|l| matches!(l, TableLine::NotOnGpu { .. }))
        .count();
    let undefined = lines
        .iter()
        .filter(|l| matches!(l, TableLine::Undefined { .. }))
        .count();
    let failed = lines.len() - tallies.len() - not_on_gpu - undefined;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Weak outcomes seen: **{seen} of {weak}** allowed ({showing} of the {with_weak} tests \
         that have one showed at least one); forbidden outcomes: **{forbidden}**; tests that \
         did not run: {failed}; tests not on GPU: {not_on_gpu}; tests skipped for undefined \
         behaviour: {undefined}; tests per GPU: {}.\n",
        tests_per_gpu(&tallies)
    );
    s.push_str(
        "| test | PEs | GPUs | executions | outcomes (count) | weak seen | weak never seen | \
         forbidden |\n|---|---|---|---|---|---|---|---|\n",
    );
    for line in lines {
        match line {
            TableLine::Ran(t) => s.push_str(&t.row()),
            TableLine::Failed {
                name,
                n_pes,
                gpus,
                error,
            } => {
                let error = cell(error);
                let gpus = show_placements(gpus);
                let _ = write!(
                    s,
                    "| {name} | {n_pes} | {gpus} | 0 | did not run: {error} | - | - | - |"
                );
            }
            TableLine::NotOnGpu {
                name,
                n_pes,
                reason,
            } => {
                let reason = cell(reason);
                let _ = write!(
                    s,
                    "| {name} | {n_pes} | - | 0 | not on GPU: {reason} | - | - | - |"
                );
            }
            TableLine::Undefined { name, n_pes } => {
                let _ = write!(s, "| {name} | {n_pes} | - | 0 | {UNDEFINED} | - | - | - |");
            }
        }
        s.push('\n');
    }
    s
}

/// For each GPU some test ran on, how many tests did: `0: 40, 1: 38, ...`.
fn tests_per_gpu(tallies: &[&Tally]) -> String {
    let mut per_gpu: BTreeMap<u32, usize> = BTreeMap::new();
    for t in tallies {
        let gpus: BTreeSet<u32> = t.gpus.iter().flatten().copied().collect();
        for g in gpus {
            *per_gpu.entry(g).or_default() += 1;
        }
    }
    if per_gpu.is_empty() {
        return "none".into();
    }
    per_gpu
        .iter()
        .map(|(g, n)| format!("GPU {g} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The tests that ran fewer executions than `asked` (the time box ended them), with the
/// executions each ran.
pub fn short_of<'a>(lines: &'a [TableLine], asked: u64) -> Vec<(&'a str, u64)> {
    lines
        .iter()
        .filter_map(|l| match l {
            TableLine::Ran(t) if t.executions() < asked => {
                Some((t.test.name.as_str(), t.executions()))
            }
            _ => None,
        })
        .collect()
}

/// What the table and the progress say of a test with undefined behaviour.
pub const UNDEFINED: &str =
    "skipped: undefined behaviour (`expect ... undefined`), no outcome to check";

/// `text` as one cell of a markdown table.
fn cell(text: &str) -> String {
    text.replace('|', "/").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{catalogue_dir, load_paths, sc_outcomes};

    fn sb() -> Litmus {
        load_paths(&[catalogue_dir().join("f1-sb-put-put.litmus")])
            .expect("the test loads")
            .remove(0)
            .test
    }

    fn outcome(r0: u64, r1: u64) -> Outcome {
        Outcome(vec![r0, r1])
    }

    /// Store buffering's both-stale outcome is its one weak outcome: seen, it is marked and
    /// counted; an outcome outside the allowed set is named as forbidden.
    #[test]
    fn rows_mark_weak_and_forbidden_outcomes() {
        let test = sb();
        let sc = sc_outcomes(&test).unwrap();
        let mut allowed = sc.clone();
        allowed.insert(outcome(0, 0));
        let counts = BTreeMap::from([(outcome(0, 0), 3), (outcome(1, 1), 7), (outcome(2, 0), 1)]);
        let tally = Tally {
            test: &test,
            gpus: vec![vec![5, 0], vec![2, 7]],
            counts,
            allowed,
            sc,
        };
        assert_eq!(tally.executions(), 11);
        assert_eq!(
            tally.row(),
            "| F1+SB+put+put | 2 | 5,0 / 2,7 | 11 | P0:r0=0; P1:r1=0 x3 (weak); P0:r0=1; \
             P1:r1=1 x7; P0:r0=2; P1:r1=0 x1 (FORBIDDEN) | 1/1 | - | P0:r0=2; P1:r1=0 |"
        );
        let table = table(&[
            TableLine::Ran(tally),
            TableLine::Failed {
                name: "X".into(),
                n_pes: 2,
                gpus: vec![vec![3, 1]],
                error: "a | b".into(),
            },
            TableLine::NotOnGpu {
                name: "Y".into(),
                n_pes: 3,
                reason: "new".into(),
            },
            TableLine::Undefined {
                name: "Z".into(),
                n_pes: 2,
            },
        ]);
        assert!(
            table.starts_with(
                "Weak outcomes seen: **1 of 1** allowed (1 of the 1 tests that have one showed \
                 at least one); forbidden outcomes: **1**; tests that did not run: 1; tests not on \
                 GPU: 1; tests skipped for undefined behaviour: 1; tests per GPU: GPU 0 1, GPU 2 \
                 1, GPU 5 1, GPU 7 1."
            ),
            "{table}"
        );
        assert!(
            table.contains("| X | 2 | 3,1 | 0 | did not run: a / b | - | - | - |"),
            "{table}"
        );
        assert!(
            table.contains("| Z | 2 | - | 0 | skipped: undefined behaviour"),
            "{table}"
        );
    }

    /// A weak outcome never seen is listed as such.
    #[test]
    fn unseen_weak_outcomes_are_listed() {
        let test = sb();
        let sc = sc_outcomes(&test).unwrap();
        let mut allowed = sc.clone();
        allowed.insert(outcome(0, 0));
        let tally = Tally {
            test: &test,
            gpus: vec![vec![0]],
            counts: BTreeMap::from([(outcome(1, 1), 5)]),
            allowed,
            sc,
        };
        assert!(
            tally.row().ends_with("| 0/1 | P0:r0=0; P1:r1=0 | - |"),
            "{}",
            tally.row()
        );
    }

    /// Tests that ran fewer executions than asked are named with what they ran; tests that
    /// did not run are not counted as short, and one GPU shared by all is counted once a test.
    #[test]
    fn tests_short_of_the_count_are_named() {
        let test = sb();
        let sc = sc_outcomes(&test).unwrap();
        let ran = |n| {
            TableLine::Ran(Tally {
                test: &test,
                gpus: vec![vec![0], vec![0]],
                counts: BTreeMap::from([(outcome(1, 1), n)]),
                allowed: sc.clone(),
                sc: sc.clone(),
            })
        };
        let lines = [
            ran(100),
            ran(40),
            TableLine::Undefined {
                name: "Z".into(),
                n_pes: 2,
            },
        ];
        assert_eq!(short_of(&lines, 100), vec![("F1+SB+put+put", 40)]);
        assert!(short_of(&lines, 40).is_empty());
        assert!(
            table(&lines).contains("tests per GPU: GPU 0 2."),
            "{}",
            table(&lines)
        );
    }
}
