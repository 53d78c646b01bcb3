//! Replay: one execution of a litmus test on the simulator run again from the choice string an
//! exploration recorded for it, with its outcome judged by the model and, when asked, its
//! timeline as a trace.

use model::litmus::{Config, Litmus, Outcome};
use model::om::{ModelError, allowed_outcomes};
use sim::SimReport;

use crate::explore::exploring;
use crate::{ExecutionError, PesFailed, run_on};

/// What one replayed execution showed.
#[derive(Debug)]
pub struct Replay {
    /// Its outcome and the model's verdict on it, or why some PE did not finish.
    pub outcome: Result<ReplayedOutcome, PesFailed>,
    /// What the simulator reports (simulated time, events, choices).
    pub report: SimReport,
    /// The execution's timeline as Chrome/Perfetto trace-event JSON, when asked for.
    pub chrome_trace: Option<String>,
}

/// The outcome of a replayed execution, and whether the model allows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayedOutcome {
    /// The outcome.
    pub outcome: Outcome,
    /// Whether the model allows it under the configuration.
    pub allowed: bool,
}

/// Why an execution could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The execution could not run.
    #[error(transparent)]
    Execution(#[from] ExecutionError),
    /// The model could not enumerate the test's outcomes, so the outcome has no verdict.
    #[error("the model cannot run {test}: {source}")]
    Model {
        /// The test's name.
        test: String,
        /// Why.
        source: ModelError,
    },
    /// A trace was asked for but the simulator recorded no timeline.
    #[error("the simulator recorded no timeline")]
    NoTimeline,
}

/// Runs again the one execution of `test` under `config` that `choices` names (a choice string
/// of an exploration with the same `faults`: [`crate::Exploration::outcomes`]) and asks the
/// model whether its outcome is allowed. With `trace`, the timeline comes back as a trace.
///
/// # Errors
/// [`ReplayError`] if the execution could not run or the model could not judge its outcome.
pub fn replay(
    test: &Litmus,
    config: &Config,
    faults: &[sim::Fault],
    choices: &sim::Choices,
    trace: bool,
) -> Result<Replay, ReplayError> {
    let topology = crate::topology(config, test.n_pes).map_err(ExecutionError::from)?;
    let round_ns =
        sim::Explore::default_round_ns(&topology, &sim::costs::Timing::default(), test.n_pes);
    let execution = run_on(topology.clone(), test, config, |b| {
        exploring(b, test, faults, choices.clone(), round_ns).timeline(trace)
    })?;
    let outcome = match execution.outcome {
        Ok(outcome) => {
            let allowed = allowed_outcomes(test, config)
                .map_err(|source| ReplayError::Model {
                    test: test.name.clone(),
                    source,
                })?
                .outcomes
                .contains(&outcome);
            Ok(ReplayedOutcome { outcome, allowed })
        }
        Err(failed) => Err(failed),
    };
    let chrome_trace = if trace {
        let timeline = execution
            .report
            .timeline
            .as_ref()
            .ok_or(ReplayError::NoTimeline)?;
        Some(timeline.to_chrome_json(&topology))
    } else {
        None
    };
    Ok(Replay {
        outcome,
        report: execution.report,
        chrome_trace,
    })
}
