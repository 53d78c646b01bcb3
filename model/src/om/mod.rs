//! SHMEM-OM: the operational model of the ordering rules, and its exhaustive enumerator.
//!
//! This is the oracle for litmus tests, restricted to what the litmus AST can say: one GPU
//! issuer per PE, `rdma_ordering = None`, `quiet_flushes_self =
//! Always`, no UB detection. The transitions, and the rule each one comes from, are listed in
//! `docs/ordering.md`, section "The model (model/)".
//!
//! - `state`: the machine state, encoded as small integers so that it hashes cheaply;
//! - `machine`: the test and topology, fixed during a search;
//! - `step`: the transitions a PE makes, and drains;
//! - `deliver`: the delivery of a message at its target;
//! - `explore`: the depth-first search over states.

mod deliver;
mod explore;
mod machine;
mod state;
mod step;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::fmt;

use crate::litmus::{Config, Hang, Litmus, Observation, Outcome};

/// Everything the model allows for one test under one configuration.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ModelResult {
    /// The allowed final outcomes; values in the order of [`Litmus::observables`].
    pub outcomes: BTreeSet<Outcome>,
    /// Every way an execution can block forever (a wait never satisfied, a barrier some PE
    /// never reaches): which PEs are blocked, at which lines.
    pub hangs: BTreeSet<Hang>,
    /// Distinct states visited.
    pub states: u64,
}

/// Why the model could not enumerate a test.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum ModelError {
    /// An `nv-mix` whose host list does not have one entry per PE.
    ConfigDoesNotFit {
        /// The configuration, as written.
        config: String,
        /// The test's PE count.
        n_pes: u32,
    },
    /// A `Litmus` whose `programs` do not have one entry per PE.
    ProgramsDoNotFit {
        /// Programs given.
        programs: usize,
        /// The test's PE count.
        n_pes: u32,
    },
    /// A program of 255 instructions or more (program counters and epochs are bytes).
    ProgramTooLong {
        /// The PE.
        pe: u32,
        /// Its instruction count.
        len: usize,
    },
    /// The state space exceeded the search's limit.
    TooManyStates {
        /// The limit.
        limit: u64,
    },
    /// The test has undefined behaviour; no outcome describes it, so it is not explored.
    Undefined(crate::litmus::Undefined),
    /// The test cannot be written under the configuration (`ld`/`st` of a peer across
    /// InfiniBand).
    DoesNotApply(crate::litmus::DoesNotApply),
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ConfigDoesNotFit { config, n_pes } => {
                write!(
                    f,
                    "configuration {config} does not place exactly {n_pes} PEs"
                )
            }
            Self::ProgramsDoNotFit { programs, n_pes } => {
                write!(f, "{programs} programs for {n_pes} PEs")
            }
            Self::ProgramTooLong { pe, len } => {
                write!(
                    f,
                    "program of P{pe} has {len} instructions; the model takes at most 254"
                )
            }
            Self::TooManyStates { limit } => write!(f, "more than {limit} states"),
            Self::Undefined(u) => write!(f, "undefined behaviour at line {}: {}", u.line, u.what),
            Self::DoesNotApply(d) => {
                write!(f, "the test does not apply at line {}: {}", d.line, d.what)
            }
        }
    }
}

impl std::error::Error for ModelError {}

/// Every outcome the rules allow for `test` under `config`.
///
/// # Errors
///
/// A configuration or test the model cannot represent, or a state space over its limit.
pub fn allowed_outcomes(test: &Litmus, config: &Config) -> Result<ModelResult, ModelError> {
    if let Some(undefined) = crate::litmus::undefined_behaviour(test) {
        return Err(ModelError::Undefined(undefined));
    }
    if let Some(reason) = crate::litmus::does_not_apply(test, config) {
        return Err(ModelError::DoesNotApply(reason));
    }
    let machine = machine::Machine::new(test, config)?;
    explore::explore(&machine, test)
}

/// One `expect` line checked against the model.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Check {
    /// The configuration.
    pub config: Config,
    /// The observation the test expects.
    pub expected: Observation,
    /// Whether the test expects executions that block forever (`hangs`).
    pub expects_hangs: bool,
    /// The observation of the model's outcomes; `None` if it allows no outcome at all.
    pub model: Option<Observation>,
    /// The model's enumeration.
    pub result: ModelResult,
}

impl Check {
    /// Whether the model agrees with the expectation, hangs included.
    pub fn agrees(&self) -> bool {
        self.model == Some(self.expected) && self.expects_hangs != self.result.hangs.is_empty()
    }
}

/// Runs the model under every configuration the test has an `expect` line for.
///
/// # Errors
///
/// The first configuration the model cannot enumerate.
pub fn check_expectations(test: &Litmus) -> Result<Vec<Check>, ModelError> {
    test.expect
        .iter()
        .map(|e| {
            let result = match allowed_outcomes(test, &e.config) {
                // An undefined test gives no outcome: the check agrees when it says so.
                Err(ModelError::Undefined(_)) => {
                    return Ok(Check {
                        config: e.config.clone(),
                        expected: e.observation,
                        expects_hangs: e.hangs,
                        model: Some(Observation::Undefined),
                        result: ModelResult {
                            outcomes: BTreeSet::new(),
                            hangs: BTreeSet::new(),
                            states: 0,
                        },
                    });
                }
                result => result?,
            };
            Ok(Check {
                config: e.config.clone(),
                expected: e.observation,
                expects_hangs: e.hangs,
                model: test.observe(&result.outcomes),
                result,
            })
        })
        .collect()
}
