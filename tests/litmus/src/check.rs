//! The cross-check of one litmus test under one configuration: the outcomes the model allows,
//! the outcomes an exhaustive exploration of the simulator produces, and the expected
//! observation must all agree; so must the ways an execution blocks forever (hangs), which
//! the condition's observation does not count (docs/ordering.md, "Hangs").

use std::collections::BTreeSet;
use std::time::Instant;

use model::litmus::{Config, Expectation, Hang, Litmus, Observation, Outcome};

use model::om::ModelError;

use crate::{Exploration, explore};

/// What the checker found for one (test, configuration).
#[derive(Debug)]
pub struct Check {
    /// The configuration.
    pub config: Config,
    /// The observation the file expects.
    pub expected: Observation,
    /// The expectation is marked `(model)`.
    pub model_derived: bool,
    /// The expectation says `hangs`: some executions block forever.
    pub expects_hangs: bool,
    /// The outcomes the model allows, or why the model could not say.
    pub model: Result<BTreeSet<Outcome>, ModelError>,
    /// The ways the model's executions block forever.
    pub model_hangs: BTreeSet<Hang>,
    /// Model states visited.
    pub model_states: u64,
    /// The simulator's exploration.
    pub sim: Exploration,
    /// Everything that disagrees; empty when the check matches.
    pub problems: Vec<String>,
    /// Wall time of the whole check.
    pub seconds: f64,
}

impl Check {
    /// Whether model, simulator and expectation agree.
    pub fn matches(&self) -> bool {
        self.problems.is_empty()
    }

    /// The observation of the condition over the model's outcomes.
    pub fn model_observation(&self, test: &Litmus) -> Option<Observation> {
        self.model.as_ref().ok().and_then(|o| test.observe(o))
    }

    /// The observation of the condition over the simulator's outcomes; `Undefined` for a
    /// test with undefined behaviour, which is not explored.
    pub fn sim_observation(&self, test: &Litmus) -> Option<Observation> {
        if matches!(self.model, Err(ModelError::Undefined(_))) {
            return Some(Observation::Undefined);
        }
        test.observe(self.sim.outcomes.keys())
    }
}

/// Checks `test` under every configuration it has an `expect` line for, on a simulator with
/// `faults` switched on (none for a real check).
pub fn check_all(test: &Litmus, faults: &[sim::Fault]) -> Vec<Check> {
    test.expect.iter().map(|e| check(test, e, faults)).collect()
}

/// Checks `test` under the configuration of `expectation`.
pub fn check(test: &Litmus, expectation: &Expectation, faults: &[sim::Fault]) -> Check {
    let started = Instant::now();
    let config = &expectation.config;
    let model_result = model::om::allowed_outcomes(test, config);
    let model_states = model_result.as_ref().map_or(0, |r| r.states);
    let model_hangs = model_result
        .as_ref()
        .map(|r| r.hangs.clone())
        .unwrap_or_default();
    let model = model_result.map(|r| r.outcomes);
    // A test with undefined behaviour, or one that cannot be written under this
    // configuration, has no outcomes to compare: the simulator is not run.
    let sim = match &model {
        Err(ModelError::Undefined(_) | ModelError::DoesNotApply(_)) => Exploration {
            complete: true,
            ..Exploration::default()
        },
        _ => explore(test, config, faults),
    };
    let mut check = Check {
        config: config.clone(),
        expected: expectation.observation,
        model_derived: expectation.model_derived,
        expects_hangs: expectation.hangs,
        model,
        model_hangs,
        model_states,
        sim,
        problems: Vec::new(),
        seconds: 0.0,
    };
    check.problems = problems(test, &check);
    check.seconds = started.elapsed().as_secs_f64();
    check
}

fn problems(test: &Litmus, check: &Check) -> Vec<String> {
    let mut problems = Vec::new();
    let observables = test.observables();
    let show = |o: &Outcome| test.show_outcome(&observables, o);
    let model = match &check.model {
        Ok(model) => model,
        Err(ModelError::Undefined(_)) if check.expected == Observation::Undefined => {
            return Vec::new();
        }
        Err(e @ (ModelError::Undefined(_) | ModelError::DoesNotApply(_))) => {
            return vec![e.to_string()];
        }
        Err(e) => return vec![format!("the model failed: {e}")],
    };
    if check.expected == Observation::Undefined {
        return vec![
            "the file expects undefined behaviour, but the test has none that the format \
             detects"
                .to_string(),
        ];
    }
    match test.observe(model) {
        Some(seen) if seen == check.expected => {}
        seen => problems.push(format!(
            "the model observes {} but the file expects {:?}",
            seen.map_or("no outcome at all".to_string(), |s| format!("{s:?}")),
            check.expected
        )),
    }
    for (outcome, witness) in &check.sim.outcomes {
        if !model.contains(outcome) {
            problems.push(format!(
                "the simulator produced an outcome the model forbids: {} (replay: choices {witness})",
                show(outcome)
            ));
        }
    }
    let missed: Vec<String> = model
        .iter()
        .filter(|o| !check.sim.outcomes.contains_key(*o))
        .map(show)
        .collect();
    if !missed.is_empty() {
        problems.push(format!(
            "the model allows outcomes the simulator never produced: {}",
            missed.join(" | ")
        ));
    }
    if check.expects_hangs == check.model_hangs.is_empty() {
        problems.push(if check.expects_hangs {
            "the file says the test hangs but no execution of the model blocks forever".to_string()
        } else {
            let hangs: Vec<String> = check.model_hangs.iter().map(Hang::to_string).collect();
            format!(
                "the model has executions that block forever, which the file does not expect \
                 (write `hangs` after the observation): {}",
                hangs.join(" | ")
            )
        });
    }
    for (hang, witness) in &check.sim.hangs {
        if !check.model_hangs.contains(hang) {
            problems.push(format!(
                "the simulator produced a {hang}, which the model does not have (replay: choices {witness})"
            ));
        }
    }
    let missed: Vec<String> = check
        .model_hangs
        .iter()
        .filter(|h| !check.sim.hangs.contains_key(*h))
        .map(Hang::to_string)
        .collect();
    if !missed.is_empty() {
        problems.push(format!(
            "the model has hangs the simulator never produced: {}",
            missed.join(" | ")
        ));
    }
    for (witness, error) in check.sim.failures.iter().take(3) {
        problems.push(format!(
            "an execution did not finish: {error} (replay: choices {witness})"
        ));
    }
    if !check.sim.complete {
        problems.push(format!(
            "the exploration stopped at its limit of {} executions",
            check.sim.executions
        ));
    }
    problems
}
