//! One execution of a litmus test on the simulator.

use hw::{Launcher, Semantics, Topology};
use model::litmus::{Config, Litmus, Modifier, Outcome};
use sim::{Sim, SimBackend, SimBuilder, SimReport};

use crate::{ExecutionError, PesFailed, outcome_of_pes, run_pe};

/// One execution: its outcome, or why some PE did not finish (a wait never satisfied, a
/// deadlock, a panic), and the simulator's report either way.
#[derive(Debug)]
pub struct Execution {
    /// The outcome, or every PE's error.
    pub outcome: Result<Outcome, PesFailed>,
    /// What the simulator reports (with the choices made, when exploring).
    pub report: SimReport,
}

/// The semantics the simulator runs a configuration with.
pub fn semantics(config: &Config) -> Semantics {
    if config.nvshmem() {
        Semantics::Nvshmem
    } else {
        Semantics::OpenShmem15
    }
}

/// Runs `test` once under `config` on a simulator that `customise` finishes configuring
/// (seed, exploration prefix, faults).
///
/// # Errors
/// [`ExecutionError`] (its topology or launch) if the run could not start.
pub fn run_once(
    test: &Litmus,
    config: &Config,
    customise: impl FnOnce(SimBuilder) -> SimBuilder,
) -> Result<Execution, ExecutionError> {
    run_on(
        crate::topology(config, test.n_pes)?,
        test,
        config,
        customise,
    )
}

/// [`run_once`] on a machine already built for `config` (a search over many executions
/// builds it once).
///
/// # Errors
/// [`ExecutionError`] (its launch) if the run could not start.
pub fn run_on(
    topology: Topology,
    test: &Litmus,
    config: &Config,
    customise: impl FnOnce(SimBuilder) -> SimBuilder,
) -> Result<Execution, ExecutionError> {
    let builder = Sim::builder(topology)
        .pes(test.n_pes)
        .semantics(semantics(config))
        .pcie_read_flush(config.has(Modifier::PcieReadFlush))
        .ib_coherent(config.has(Modifier::IbCoherent))
        // `os-net`: only puts and atomics that fetch nothing are posted, signals are single
        // atomics (docs/ordering.md).
        .network_transport(config.network_transport())
        // A litmus PE needs little stack; small stacks keep an execution cheap.
        .stack_bytes(64 << 10);
    let sim = customise(builder).build()?;
    // `nbi-unfenced` has no simulator switch: the program is rewritten instead (`unfenced.rs`).
    let unfenced;
    let program = if config.has(Modifier::NbiUnfenced) {
        unfenced = crate::unfenced::unfence_nbi(test);
        &unfenced
    } else {
        test
    };
    let (results, report) = sim.launch(|dev| run_pe::<SimBackend>(program, config, &dev))?;
    let outcome = outcome_of_pes(test, results);
    Ok(Execution { outcome, report })
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::litmus::{
        Cmp, Condition, Ctx, Instr, Loc, Observable, Prop, PutKind, Quantifier, Reg, Span, Value,
        VarId,
    };

    /// Message passing: P0 puts x then f to P1 (with or without a fence); P1 waits for f and
    /// loads x. Written as data so that this test does not depend on the parser.
    fn message_passing(fence: bool) -> Litmus {
        let (x, f) = (VarId(0), VarId(1));
        let put = |var, value| Instr::Put {
            kind: PutKind::Put,
            dst: Loc { var, pe: 1 },
            value: Value::Const(value),
            ctx: Ctx::DEFAULT,
        };
        let mut p0 = vec![put(x, 1)];
        if fence {
            p0.push(Instr::Fence { ctx: Ctx::DEFAULT });
        }
        p0.push(put(f, 1));
        let p1 = vec![
            Instr::Wait {
                var: f,
                cmp: Cmp::Eq,
                value: Value::Const(1),
            },
            Instr::Load {
                reg: Reg(0),
                var: x,
            },
        ];
        let spans = |p: Vec<Instr>| p.into_iter().map(|i| (i, Span::default())).collect();
        Litmus {
            name: "MP".into(),
            source: "test".into(),
            n_pes: 2,
            vars: vec!["x".into(), "f".into()],
            init: vec![],
            programs: vec![spans(p0), spans(p1)],
            condition: Condition {
                quantifier: Quantifier::Exists,
                prop: Prop::Atom {
                    lhs: Observable::Reg { pe: 1, reg: Reg(0) },
                    cmp: Cmp::Eq,
                    rhs: 0,
                },
            },
            expect: vec![],
        }
    }

    fn outcomes(test: &Litmus, config: &Config) -> std::collections::BTreeSet<Outcome> {
        (0..64)
            .map(|seed| {
                run_once(test, config, |b| b.seed(seed))
                    .unwrap()
                    .outcome
                    .unwrap()
            })
            .collect()
    }

    #[test]
    fn a_fence_orders_message_passing_and_its_absence_shows() {
        for config in [Config::NV_NVL, Config::NV_IB] {
            let weak = outcomes(&message_passing(false), &config);
            let fenced = outcomes(&message_passing(true), &config);
            // Outcome: (P1:r0, x@... none) = the loaded value of x.
            assert!(weak.contains(&Outcome(vec![0])), "{config}: {weak:?}");
            assert_eq!(fenced, [Outcome(vec![1])].into(), "{config}");
        }
    }
}
