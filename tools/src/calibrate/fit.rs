//! The fit: the parameters under which the simulated bench comes closest to the measured one.
//!
//! The simulator is the model; the fit only asks it. Every time the bench reports is, on the
//! simulator, nearly a sum of the parameters (latencies, polls, fences, a mover's time for a
//! size, launches, local accesses), so each step is nearly linear:
//!
//! 1. First guess in closed form from the measurement: each point of a mover's curve is the
//!    measured time per put of its size, the start-up is the measured init, the mapping rate
//!    the measured 1 GiB allocation, a launch the launched reduction less the in-kernel one.
//!    The link keeps the topology's bandwidth, raised to the fastest put measured if it is
//!    slower (the link carries every mover's bytes, so it must not be what paces them).
//! 2. Rounds, each simulating the whole bench once:
//!    - the latency, poll and fence of the four latencies (p and put-with-signal ping-pongs,
//!      fetch-add, barrier) by Gauss-Newton: one simulation of the latencies per parameter
//!      gives the simulator's sensitivities (finite differences), a linear model whose
//!      least-squares solution is the next guess; a step that does not lower the error is
//!      halved. Errors are weighed by their targets (5 % or 10 %), and a faint pull toward
//!      the starting topology (a ridge) keeps the solve well posed;
//!    - every other parameter by a secant step on the metrics it owns
//!      (`catalogue::owner`): it moves them one to one and barely moves any other, so each
//!      is solved on its own, all at once, its slope learnt from the round before.
//! 3. It stops when every error is under a twentieth of its target, or after
//!    [`MAX_ROUNDS`].

use std::collections::BTreeMap;

use sim::Machine;

use super::bench_on_sim::{self, Part};
use super::catalogue::{self, MALLOC_BYTES};
use super::lsq;
use super::measured::Measured;
use super::params::{Param, Params, Subject};
use crate::bench::lines::{Line, Metric};

/// At most this many rounds; three or four usually suffice.
const MAX_ROUNDS: u32 = 6;

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

/// Fits `machine` to `measured`, calling `on_run` with the count after every simulation.
///
/// # Errors
/// A simulated run failed.
pub(super) fn fit(
    machine: &Subject,
    measured: &Measured,
    on_run: &mut dyn FnMut(u32),
) -> anyhow::Result<Fit> {
    let start = machine.params_of(machine.base());
    let mut fitter = Fitter {
        machine,
        targets: Targets::new(measured),
        start: start.clone(),
        runs: 0,
        on_run,
    };
    let mut current = fitter.evaluate(&first_guess(measured, &start), &Part::ALL, None)?;
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
        let gaps = fitter.targets.gaps(&current.lines);
        let next = secant.step(&current.params, &gaps);
        current = fitter.evaluate(&next, &Part::ALL, None)?;
    }
    Ok(Fit {
        start,
        fitted: current.params,
        machine: current.machine,
        simulated: current.lines.into_values().flatten().collect(),
        runs: fitter.runs,
    })
}

/// The first guess: `start` with every owned parameter set from the measurement directly
/// (see the module's step 1), and the link at least as fast as the fastest put.
pub(super) fn first_guess(measured: &Measured, start: &Params) -> Params {
    let time = |group: Option<&str>, bytes: Option<u64>, key: &str| {
        let metric = Metric::new(group, bytes, key);
        catalogue::time_ns(&metric, measured.modelled[&metric])
    };
    let mut params = start.clone();
    let mut owned: BTreeMap<Param, Vec<f64>> = BTreeMap::new();
    for (metric, &value) in &measured.modelled {
        if let Some(param @ Param::Point(..)) = catalogue::owner(metric) {
            owned
                .entry(param)
                .or_default()
                .push(catalogue::time_ns(metric, value));
        }
    }
    for (param, times) in owned {
        params[param] = times.iter().sum::<f64>() / times.len() as f64;
    }
    let fastest_gbps = measured
        .modelled
        .iter()
        .filter(|(m, _)| m.higher_is_better() && m.group() != Some("sum_reduce_on_stream"))
        .map(|(_, &v)| v)
        .fold(0.0, f64::max);
    if fastest_gbps > params.gbps() {
        params[Param::LinkNsPerByte] = 1.0 / fastest_gbps;
    }
    let reduce = catalogue::REDUCE_BYTES;
    params[Param::LaunchNs] = (time(Some("sum_reduce_on_stream"), Some(reduce), "us")
        - time(Some("sum_reduce_in_kernel"), Some(reduce), "us"))
    .max(0.0);
    params[Param::StartupNs] = time(None, None, "init_ms");
    params[Param::MapNsPerByte] = time(None, None, "malloc_1GiB_ms") / MALLOC_BYTES as f64;
    params
}

/// The measured values as the fit compares them: times, with their tolerances.
struct Targets {
    metrics: Vec<Metric>,
    times_ns: Vec<f64>,
    tolerances: Vec<f64>,
}

impl Targets {
    fn new(measured: &Measured) -> Targets {
        let metrics = catalogue::modelled();
        let times_ns = metrics
            .iter()
            .map(|m| catalogue::time_ns(m, measured.modelled[m]))
            .collect();
        let tolerances = metrics.iter().map(catalogue::tolerance).collect();
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

    /// The residuals of the four latencies that the latency group fits.
    fn latency_residuals(&self, lines: &BTreeMap<PartKey, Vec<Line>>) -> Vec<f64> {
        self.times(lines)
            .filter(|(metric, ..)| catalogue::owner(metric).is_none())
            .map(|(_, simulated, measured, tolerance)| {
                (simulated - measured) / (measured * tolerance)
            })
            .collect()
    }

    /// For each owned parameter, how far its metrics' simulated times are above the measured
    /// ones, in ns, on average.
    fn gaps(&self, lines: &BTreeMap<PartKey, Vec<Line>>) -> BTreeMap<Param, f64> {
        let mut sums: BTreeMap<Param, (f64, u32)> = BTreeMap::new();
        for (metric, simulated, measured, _) in self.times(lines) {
            if let Some(param) = catalogue::owner(metric) {
                let entry = sums.entry(param).or_default();
                entry.0 += simulated - measured;
                entry.1 += 1;
            }
        }
        sums.into_iter()
            .map(|(param, (sum, n))| (param, sum / f64::from(n)))
            .collect()
    }
}

/// Parts as map keys, in the bench's order.
type PartKey = usize;

fn key(part: Part) -> PartKey {
    Part::ALL
        .iter()
        .position(|&p| p == part)
        .expect("a part of the bench")
}

/// The bench simulated with some parameters, and how far it is from the measurement.
struct Evaluation {
    /// The parameters as the topology holds them (rounded).
    params: Params,
    machine: Machine,
    /// Each part's lines.
    lines: BTreeMap<PartKey, Vec<Line>>,
    residuals: Vec<f64>,
}

/// The secant steps of the owned parameters: each parameter's slope (how its metrics' time
/// moves per unit of it), learnt from the last two rounds.
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

    /// The slope to assume before any is learnt: one for a time the metric pays once per
    /// operation; three local accesses per reduction (load one's vector, load the peer's,
    /// store the sums: `bench_on_sim.rs`); the bytes of the allocation for the mapping.
    fn prior(param: Param) -> f64 {
        match param {
            Param::LocalAccessNs => 3.0,
            Param::MapNsPerByte => MALLOC_BYTES as f64,
            _ => 1.0,
        }
    }

    /// `params` with each owned parameter moved to close its gap.
    fn step(&mut self, params: &Params, gaps: &BTreeMap<Param, f64>) -> Params {
        if let Some((last_params, last_gaps)) = &self.last {
            for (&param, &gap) in gaps {
                let moved = params[param] - last_params[param];
                let slope = (gap - last_gaps[&param]) / moved;
                let prior = Self::prior(param);
                // Only a slope near the structure's is believed: a parameter whose metric sat
                // at a bound (rounding, another cost) looks flat or steep for one round.
                if moved.abs() > 0.0 && slope > prior / 4.0 && slope < prior * 4.0 {
                    self.slopes.insert(param, slope);
                }
            }
        }
        let mut next = params.clone();
        for (&param, &gap) in gaps {
            let slope = self
                .slopes
                .get(&param)
                .copied()
                .unwrap_or_else(|| Self::prior(param));
            next[param] = (params[param] - gap / slope).max(0.0);
        }
        self.last = Some((params.clone(), gaps.clone()));
        next
    }
}

struct Fitter<'a> {
    machine: &'a Subject,
    targets: Targets,
    start: Params,
    runs: u32,
    on_run: &'a mut dyn FnMut(u32),
}

impl Fitter<'_> {
    /// Where each latency parameter is, in the units the linear solve works in: multiples of
    /// 100 ns from the start.
    fn scaled(&self, params: &Params) -> Vec<f64> {
        Param::LATENCY_GROUP
            .iter()
            .map(|&p| (params[p] - self.start[p]) / 100.0)
            .collect()
    }

    /// Simulates `parts` with `params`, taking the other parts' lines from `reuse`.
    fn evaluate(
        &mut self,
        params: &Params,
        parts: &[Part],
        reuse: Option<&Evaluation>,
    ) -> anyhow::Result<Evaluation> {
        let machine = self.machine.with(params);
        let mut lines = reuse.map(|e| e.lines.clone()).unwrap_or_default();
        for &part in parts {
            lines.insert(key(part), bench_on_sim::run(&machine, part)?);
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
        let residuals = self.targets.latency_residuals(&evaluation.lines);
        let pull: f64 = self.scaled(&evaluation.params).iter().map(|x| x * x).sum();
        residuals.iter().map(|r| r * r).sum::<f64>() + RIDGE * pull
    }

    /// One Gauss-Newton step of the latency group from `current`, rerunning the latencies
    /// only, halved until it lowers the group's cost; `None` when no step does, or rounding
    /// leaves nothing to move.
    fn improve_latencies(&mut self, current: &Evaluation) -> anyhow::Result<Option<Evaluation>> {
        let residuals = self.targets.latency_residuals(&current.lines);
        let mut columns = Vec::with_capacity(Param::LATENCY_GROUP.len());
        for param in Param::LATENCY_GROUP {
            let value = current.params[param];
            let mut params = current.params.clone();
            params[param] += (0.05 * value).max(20.0);
            let moved = self.evaluate(&params, &[Part::Latencies], Some(current))?;
            let change = (moved.params[param] - value) / 100.0;
            let after = self.targets.latency_residuals(&moved.lines);
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
            for (&param, dx) in Param::LATENCY_GROUP.iter().zip(&step) {
                params[param] = (params[param] + fraction * dx * 100.0).max(0.0);
            }
            let rounded = self.machine.params_of(&self.machine.with(&params));
            if rounded == current.params {
                return Ok(None);
            }
            let candidate = self.evaluate(&rounded, &[Part::Latencies], Some(current))?;
            if self.latency_cost(&candidate) < cost {
                return Ok(Some(candidate));
            }
            fraction /= 2.0;
        }
        Ok(None)
    }
}
