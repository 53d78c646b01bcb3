//! Every execution of a litmus test on the simulator: a depth-first search over the
//! simulator's choices, each execution replayable from its choice string (`replay.rs`).

use std::collections::BTreeMap;

use model::litmus::{Config, Hang, Instr, Litmus, Outcome};

use crate::{ExecutionError, hang_of, run_on};

/// Executions after which an exploration gives up (and says so).
pub const EXECUTION_LIMIT: u64 = 200_000;

/// What an exhaustive exploration of the simulator found.
#[derive(Debug, Default)]
pub struct Exploration {
    /// Every outcome produced, with the choice string of its first execution.
    pub outcomes: BTreeMap<Outcome, String>,
    /// Every way an execution blocked forever (the simulator's deadlock report), with the
    /// choice string of its first execution.
    pub hangs: BTreeMap<Hang, String>,
    /// Executions run.
    pub executions: u64,
    /// Executions that did not finish, by choice string, with the error.
    pub failures: Vec<(String, ExecutionError)>,
    /// Whether every execution was run (false when the limit stopped it).
    pub complete: bool,
}

/// Timing choices per delay: four PEs can need a fourth round (one PE's write must land
/// between two other PEs' gets or loads, each of which may itself be late). Reads by atomics
/// take the newest value whatever has drained, so a test of four PEs that reads only with
/// atomics needs only three rounds, and a fourth would multiply its executions by the many
/// drain choices its pending atomic updates make.
fn rounds(test: &Litmus) -> u32 {
    let plain_reads = test
        .programs
        .iter()
        .flatten()
        .any(|(instr, _)| matches!(instr, Instr::Get { .. } | Instr::Load { .. }));
    if test.n_pes >= 4 && plain_reads { 4 } else { 3 }
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
            Err(error) => match hang_of(&error) {
                Some(hang) => {
                    found.hangs.entry(hang).or_insert(witness);
                }
                None => found.failures.push((witness, error.into())),
            },
        }
        trace
    });
    found.executions = summary.executions;
    found.complete = summary.complete;
    found
}
