//! The fit: the parameters under which the simulated bench comes closest to the measured one.
//!
//! The simulator is the model; the fit only asks it. Every time the bench reports is, on the
//! simulator, nearly a sum of the parameters (latencies, polls, fences, a mover's time for a
//! size, launches, local accesses), so each step is nearly linear:
//!
//! The benchmark (`bench.rs`: the two-PE bench or the collectives) says which metrics there
//! are, how to simulate them and which parameter each fits.
//!
//! 1. First guess in closed form from the measurement (`Bench::first_guess`).
//! 2. Rounds, each simulating the whole benchmark once:
//!    - the latency group (for the two-PE bench the link's latency, poll, fence and release,
//!      fitted to the four latencies; for the collectives the switch's latency and bandwidth,
//!      fitted to the barriers and the largest broadcast) by Gauss-Newton: one simulation of
//!      the group's parts per parameter gives the simulator's sensitivities (finite
//!      differences), a linear model whose least-squares solution is the next guess; a step
//!      that does not lower the error is halved. Errors are weighed by their targets (5 % or
//!      10 %), and a faint pull toward the starting topology (a ridge) keeps the solve well
//!      posed;
//!    - every other parameter by a secant step on the metrics it owns (`Bench::owner`): it
//!      moves them nearly one to one and barely moves any other, so each is solved on its
//!      own, all at once, its slope learnt from the round before.
//! 3. It stops when every error is under a twentieth of its target, or after
//!    [`MAX_ROUNDS`].

use std::collections::BTreeMap;

use sim::Machine;

use super::bench::{self, Bench};
use super::catalogue;
use super::lsq;
use super::measured::Measured;
use super::params::{Param, Params, Subject};
use crate::bench::lines::{Line, Metric};

/// At most this many rounds; three or four usually suffice, and the collectives of `hgx8` in
/// `tests_collectives.rs` need more than eight since a transfer takes its route's links one
/// after another (docs/topology-format.md, "Model").
const MAX_ROUNDS: u32 = 10;

/// Gauss-Newton steps of the latency group per round.
const LATENCY_STEPS: u32 = 2;

/// A step that does not lower the error is halved at most this often.
const MAX_HALVINGS: u32 = 3;

/// The fit ends once every error is below this fraction of its target (0.25 % for a
/// bandwidth, 0.5 % for a time): closer is noise, from the jitter's draws and from rounding
/// to whole nanoseconds.
const CLOSE_ENOUGH: f64 = 0.05;

/// The weight of the pull toward the starting topology, against errors counted in targets:
/// a parameter 100 ns away costs what an error of a thousandth of a target does.
const RIDGE: f64 = 1e-6;

/// What a calibration found.
#[derive(Debug)]
pub(super) struct Fit {
    /// The parameters of the starting topology.
    pub(super) start: Params,
    /// The fitted parameters, as the fitted topology holds them.
    pub(super) fitted: Params,
    /// The fitted machine.
    pub(super) machine: Machine,
    /// The bench as the simulator runs it on the fitted topology.
    pub(super) simulated: Vec<Line>,
    /// How many simulations it took (each part of the bench counts one).
    pub(super) runs: u32,
}

/// Fits `machine` to `measured` of `bench`, calling `on_run` with the count after every
/// simulation.
///
/// # Errors
/// A simulated run failed.
pub(super) fn fit(
    machine: &Subject,
    bench: &dyn Bench,
    measured: &Measured,
    on_run: &mut dyn FnMut(u32),
) -> anyhow::Result<Fit> {
    let start = machine.params_of(machine.base());
    let mut fitter = Fitter {
        machine,
        bench,
        targets: Targets::new(bench, measured),
        start: start.clone(),
        runs: 0,
        on_run,
    };
    let all: Vec<usize> = (0..bench.n_parts()).collect();
    let mut current = fitter.evaluate(&bench.first_guess(measured, &start), &all, None)?;
    let mut secant = Secant::new();
    for _ in 0..MAX_ROUNDS {
        if current.residuals.iter().all(|r| r.abs() < CLOSE_ENOUGH) {
            break;
        }
        for _ in 0..LATENCY_STEPS {
            match fitter.improve_latencies(&current)? {
                Some(better) => current = better,
                None => break,
            }
        }
        let gaps = fitter.targets.gaps(bench, &current.lines);
        let next = secant.step(&current.params, &gaps);
        current = fitter.evaluate(&next, &all, None)?;
    }
    Ok(Fit {
        start,
        fitted: current.params,
        machine: current.machine,
        simulated: current.lines.into_values().flatten().collect(),
        runs: fitter.runs,
    })
}

/// The measured values as the fit compares them: times, with their tolerances.
struct Targets {
    metrics: Vec<Metric>,
    times_ns: Vec<f64>,
    tolerances: Vec<f64>,
}

impl Targets {
    fn new(bench: &dyn Bench, measured: &Measured) -> Targets {
        let metrics = bench.metrics().to_vec();
        let times_ns = metrics
            .iter()
            .map(|m| catalogue::time_ns(m, measured.modelled[m]))
            .collect();
        let tolerances = metrics
            .iter()
            .map(|m| catalogue::tolerance_at(m, measured.modelled[m]))
            .collect();
        Targets {
            metrics,
            times_ns,
            tolerances,
        }
    }

    /// Each metric's simulated and measured time, in the order of `metrics`.
    fn times<'a>(
        &'a self,
        lines: &'a BTreeMap<PartKey, Vec<Line>>,
    ) -> impl Iterator<Item = (&'a Metric, f64, f64, f64)> + 'a {
        self.metrics
            .iter()
            .zip(&self.times_ns)
            .zip(&self.tolerances)
            .map(move |((metric, &measured_ns), &tolerance)| {
                let line = lines
                    .values()
                    .flatten()
                    .find(|l| l.metric() == metric)
                    .unwrap_or_else(|| panic!("the simulated bench reports {metric}"));
                let simulated_ns = catalogue::time_ns(metric, line.value());
                (metric, simulated_ns, measured_ns, tolerance)
            })
    }

    /// Each metric's error in units of its tolerance: 1.0 is a simulated time 5 % (for a
    /// bandwidth) or 10 % (for a time) above the measured one.
    fn residuals(&self, lines: &BTreeMap<PartKey, Vec<Line>>) -> Vec<f64> {
        self.times(lines)
            .map(|(_, simulated, measured, tolerance)| {
                (simulated - measured) / (measured * tolerance)
            })
            .collect()
    }

    /// The residuals of the metrics that the latency group fits.
    fn latency_residuals(
        &self,
        bench: &dyn Bench,
        lines: &BTreeMap<PartKey, Vec<Line>>,
    ) -> Vec<f64> {
        self.times(lines)
            .filter(|(metric, ..)| bench.fits_latency_group(metric))
            .map(|(_, simulated, measured, tolerance)| {
                (simulated - measured) / (measured * tolerance)
            })
            .collect()
    }

    /// For each owned parameter, how far it should move to close its metrics' gaps (how far
    /// their simulated times are above the measured ones): the least-squares step of the
    /// linear model in which a metric's time moves by the number of times its operation pays
    /// the parameter, errors weighed by their targets as the residuals are. For a parameter
    /// of one metric that is its gap per payment.
    fn gaps(
        &self,
        bench: &dyn Bench,
        lines: &BTreeMap<PartKey, Vec<Line>>,
    ) -> BTreeMap<Param, f64> {
        let mut sums: BTreeMap<Param, (f64, f64)> = BTreeMap::new();
        for (metric, simulated, measured, tolerance) in self.times(lines) {
            if let Some((param, times)) = bench.owner(metric) {
                let weight = (measured * tolerance).powi(-2);
                let entry = sums.entry(param).or_default();
                entry.0 += weight * times * (simulated - measured);
                entry.1 += weight * times * times;
            }
        }
        sums.into_iter()
            .map(|(param, (moved, norm))| (param, moved / norm))
            .collect()
    }
}

/// Parts as map keys: their index, in the benchmark's order.
type PartKey = usize;

/// The bench simulated with some parameters, and how far it is from the measurement.
struct Evaluation {
    /// The parameters as the topology holds them (rounded).
    params: Params,
    machine: Machine,
    /// Each part's lines.
    lines: BTreeMap<PartKey, Vec<Line>>,
    residuals: Vec<f64>,
}

/// The secant steps of the owned parameters: each parameter's slope (how its metrics' gap
/// moves per unit of it, about one since gaps count per payment), learnt from the last two
/// rounds.
struct Secant {
    slopes: BTreeMap<Param, f64>,
    last: Option<(Params, BTreeMap<Param, f64>)>,
}

impl Secant {
    fn new() -> Secant {
        Secant {
            slopes: BTreeMap::new(),
            last: None,
        }
    }

    /// `params` with each owned parameter moved to close its gap.
    fn step(&mut self, params: &Params, gaps: &BTreeMap<Param, f64>) -> Params {
        if let Some((last_params, last_gaps)) = &self.last {
            for (&param, &gap) in gaps {
                let moved = params[param] - last_params[param];
                let slope = (gap - last_gaps[&param]) / moved;
                let prior = 1.0;
                // Only a slope near the structure's is believed: a parameter whose metric sat
                // at a bound (rounding, another cost) looks flat or steep for one round.
                if moved.abs() > 0.0 && slope > prior / 4.0 && slope < prior * 4.0 {
                    self.slopes.insert(param, slope);
                }
            }
        }
        let mut next = params.clone();
        for (&param, &gap) in gaps {
            let slope = self.slopes.get(&param).copied().unwrap_or(1.0);
            next[param] = (params[param] - gap / slope).max(0.0);
        }
        self.last = Some((params.clone(), gaps.clone()));
        next
    }
}

struct Fitter<'a> {
    machine: &'a Subject,
    bench: &'a dyn Bench,
    targets: Targets,
    start: Params,
    runs: u32,
    on_run: &'a mut dyn FnMut(u32),
}

impl Fitter<'_> {
    /// Where each latency parameter is, in the units the linear solve works in
    /// (`bench::unit`) from the start.
    fn scaled(&self, params: &Params) -> Vec<f64> {
        self.bench
            .latency_group()
            .iter()
            .map(|&p| (params[p] - self.start[p]) / bench::unit(p))
            .collect()
    }

    /// Simulates `parts` with `params`, taking the other parts' lines from `reuse`.
    fn evaluate(
        &mut self,
        params: &Params,
        parts: &[usize],
        reuse: Option<&Evaluation>,
    ) -> anyhow::Result<Evaluation> {
        let machine = self.machine.with(params);
        let mut lines = reuse.map(|e| e.lines.clone()).unwrap_or_default();
        for &part in parts {
            lines.insert(part, self.bench.run(&machine, part)?);
            self.runs += 1;
            (self.on_run)(self.runs);
        }
        let residuals = self.targets.residuals(&lines);
        Ok(Evaluation {
            params: self.machine.params_of(&machine),
            machine,
            lines,
            residuals,
        })
    }

    /// The latency group's cost: its squared residuals plus the ridge's pull.
    fn latency_cost(&self, evaluation: &Evaluation) -> f64 {
        let residuals = self
            .targets
            .latency_residuals(self.bench, &evaluation.lines);
        let pull: f64 = self.scaled(&evaluation.params).iter().map(|x| x * x).sum();
        residuals.iter().map(|r| r * r).sum::<f64>() + RIDGE * pull
    }

    /// One Gauss-Newton step of the latency group from `current`, rerunning the latencies
    /// only, halved until it lowers the group's cost; `None` when no step does, or rounding
    /// leaves nothing to move.
    fn improve_latencies(&mut self, current: &Evaluation) -> anyhow::Result<Option<Evaluation>> {
        let (bench, group) = (self.bench, self.bench.latency_group());
        let parts = bench.latency_parts();
        let residuals = self.targets.latency_residuals(bench, &current.lines);
        let mut columns = Vec::with_capacity(group.len());
        for &param in group {
            let value = current.params[param];
            let mut params = current.params.clone();
            params[param] += (0.05 * value).max(0.2 * bench::unit(param));
            let moved = self.evaluate(&params, &parts, Some(current))?;
            let change = (moved.params[param] - value) / bench::unit(param);
            let after = self.targets.latency_residuals(bench, &moved.lines);
            columns.push(
                after
                    .iter()
                    .zip(&residuals)
                    .map(|(a, b)| (a - b) / change)
                    .collect::<Vec<f64>>(),
            );
        }
        let jacobian: Vec<Vec<f64>> = (0..residuals.len())
            .map(|i| columns.iter().map(|column| column[i]).collect())
            .collect();
        let x = self.scaled(&current.params);
        let Some(step) = lsq::step(&jacobian, &residuals, &x, RIDGE) else {
            return Ok(None);
        };
        let cost = self.latency_cost(current);
        let mut fraction = 1.0;
        for _ in 0..=MAX_HALVINGS {
            let mut params = current.params.clone();
            for (&param, dx) in group.iter().zip(&step) {
                params[param] = (params[param] + fraction * dx * bench::unit(param)).max(0.0);
            }
            let rounded = self.machine.params_of(&self.machine.with(&params));
            if rounded == current.params {
                return Ok(None);
            }
            let candidate = self.evaluate(&rounded, &parts, Some(current))?;
            if self.latency_cost(&candidate) < cost {
                return Ok(Some(candidate));
            }
            fraction /= 2.0;
        }
        Ok(None)
    }
}
