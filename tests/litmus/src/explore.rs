//! Every execution of a litmus test on the simulator: a depth-first search over the
//! simulator's choices, each execution replayable from its choice string (`replay.rs`).

use std::collections::BTreeMap;

use model::litmus::{Config, Litmus, Outcome};

use crate::{ExecutionError, run_on};

/// Executions after which an exploration gives up (and says so).
pub const EXECUTION_LIMIT: u64 = 200_000;

/// What an exhaustive exploration of the simulator found.
#[derive(Debug, Default)]
pub struct Exploration {
    /// Every outcome produced, with the choice string of its first execution.
    pub outcomes: BTreeMap<Outcome, String>,
    /// Executions run.
    pub executions: u64,
    /// Executions that did not finish, by choice string, with the error.
    pub failures: Vec<(String, ExecutionError)>,
    /// Whether every execution was run (false when the limit stopped it).
    pub complete: bool,
}

/// Timing choices per delay: four PEs can need a fourth round (one PE's write must land
/// between two other PEs' reads, each of which may itself be late).
fn rounds(test: &Litmus) -> u32 {
    if test.n_pes >= 4 { 4 } else { 3 }
}

/// A simulator that runs the execution `prefix` names, with the timing every exploration of
/// `test` uses, and `faults` on.
pub(crate) fn exploring(
    mut builder: sim::SimBuilder,
    test: &Litmus,
    faults: &[sim::Fault],
    prefix: sim::Choices,
    round_ns: u64,
) -> sim::SimBuilder {
    for &fault in faults {
        builder = builder.fault(fault);
    }
    builder.explore(sim::Explore {
        rounds: rounds(test),
        round_ns: Some(round_ns),
        ..sim::Explore::new(prefix)
    })
}

/// Explores every execution of `test` under `config` on a simulator with `faults` on.
pub fn explore(test: &Litmus, config: &Config, faults: &[sim::Fault]) -> Exploration {
    let mut found = Exploration::default();
    let topology = match crate::topology(config, test.n_pes) {
        Ok(topology) => topology,
        Err(e) => {
            // No machine, so no execution of this test can run.
            found.failures.push((String::new(), e.into()));
            return found;
        }
    };
    // Found once here rather than by every run (it costs a route search per PE).
    let round_ns =
        sim::Explore::default_round_ns(&topology, &sim::costs::Timing::default(), test.n_pes);
    let summary = sim::explore::dfs(EXECUTION_LIMIT, |prefix| {
        let run = run_on(topology.clone(), test, config, |b| {
            exploring(b, test, faults, prefix.clone(), round_ns)
        });
        let execution = match run {
            Ok(execution) => execution,
            Err(e) => {
                // The machine cannot even start: no execution of this test can.
                found.failures.push((prefix.to_string(), e));
                return Vec::new();
            }
        };
        let trace = execution.report.choice_trace.unwrap_or_default();
        let witness = sim::Choices::from_trace(&trace).to_string();
        match execution.outcome {
            Ok(outcome) => {
                found.outcomes.entry(outcome).or_insert(witness);
            }
            Err(error) => found.failures.push((witness, error.into())),
        }
        trace
    });
    found.executions = summary.executions;
    found.complete = summary.complete;
    found
}
