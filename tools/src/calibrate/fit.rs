//! The fit: the parameters under which the simulated bench comes closest to the measured one.
//!
//! The simulator is the model; the fit only asks it. Every time the bench reports is, on the
//! simulator, nearly a sum of the parameters (latencies, polls, fences, start-ups, bytes over
//! bandwidth, and the mean jitter, which grows with the latency), so this is nearly linear
//! least squares:
//!
//! 1. Closed form first. The bench's large puts go back to back, so each takes
//!    `transfer_ns + bytes × ns_per_byte` of the link; the straight line through the measured
//!    (bytes, time per put) points gives both, as intercept and slope.
//! 2. Then Gauss-Newton over every parameter and every modelled metric (each measured time
//!    once). One simulated run per parameter gives the simulator's sensitivities (finite
//!    differences), a linear model whose least-squares solution is the next guess; a step
//!    that does not lower the error is halved. Errors are weighed by their targets (5 % or
//!    10 %), so the fit minimises the sum of squared errors counted in targets. A faint pull
//!    toward the starting topology (a ridge) keeps the solve well posed should a parameter
//!    move no metric. The puts, seconds of simulation where the rest takes a fraction of one,
//!    are rerun only for the parameters that shape them (the bandwidth and the start-up): the
//!    others reach them only through the final quiet's round trip, under 0.5 % of their time,
//!    so their sensitivity is taken as nil.
//! 3. It stops when every error is under a twentieth of its target, when a step gains less
//!    than 1 %, or when rounding to whole nanoseconds leaves nothing to move.

use hw::Topology;

use super::bench_on_sim::{self, Part};
use super::catalogue::{self, PUT_BW_BYTES};
use super::lsq;
use super::measured::Measured;
use super::params::{Machine, Param, Params};
use crate::bench::lines::{Line, Metric};

/// At most this many Gauss-Newton steps; two or three usually suffice, the model being
/// nearly linear.
const MAX_STEPS: u32 = 8;

/// A step that does not lower the error is halved at most this often.
const MAX_HALVINGS: u32 = 3;

/// A step that lowers the error by less than this fraction ends the fit: a percent of the
/// sum of squares is a few thousandths of a target on each metric.
const MIN_GAIN: f64 = 0.01;

/// The fit ends once every error is below this fraction of its target (0.25 % for a
/// bandwidth, 0.5 % for a latency): closer is noise, from the jitter's draws and from
/// rounding to whole nanoseconds.
const CLOSE_ENOUGH: f64 = 0.05;

/// The weight of the pull toward the starting topology, against errors counted in targets:
/// a parameter 100 ns (or its starting bandwidth) away costs what an error of a thousandth of
/// a target does.
const RIDGE: f64 = 1e-6;

/// What a calibration found.
#[derive(Debug)]
pub(super) struct Fit {
    /// The parameters of the starting topology.
    pub(super) start: Params,
    /// The fitted parameters, as the fitted topology holds them.
    pub(super) fitted: Params,
    /// The fitted topology.
    pub(super) topology: Topology,
    /// The bench as the simulator runs it on the fitted topology.
    pub(super) simulated: Vec<Line>,
    /// How many simulations it took (the puts and the latencies are one each).
    pub(super) runs: u32,
}

/// Fits `machine` to `measured`, calling `on_run` with the count after every simulation.
///
/// # Errors
/// A simulated run failed.
pub(super) fn fit(
    machine: &Machine,
    measured: &Measured,
    on_run: &mut dyn FnMut(u32),
) -> anyhow::Result<Fit> {
    let start = machine.params_of(machine.base());
    let mut fitter = Fitter {
        machine,
        targets: Targets::new(measured),
        start,
        runs: 0,
        on_run,
    };
    let mut current = fitter.evaluate(&bandwidth_curve(measured, start))?;
    for _ in 0..MAX_STEPS {
        if current.residuals.iter().all(|r| r.abs() < CLOSE_ENOUGH) {
            break;
        }
        let Some(next) = fitter.improve(&current)? else {
            break;
        };
        let gain = (current.cost - next.cost) / current.cost;
        current = next;
        if gain < MIN_GAIN {
            break;
        }
    }
    let mut simulated = current.puts;
    simulated.extend(current.latencies);
    Ok(Fit {
        start,
        fitted: current.params,
        topology: current.topology,
        simulated,
        runs: fitter.runs,
    })
}

/// `start` with the link's bandwidth and the transfer start-up of the straight line through
/// the measured put sizes (time per put against bytes); `start` itself if the line does not
/// rise, which no real run gives.
pub(super) fn bandwidth_curve(measured: &Measured, start: Params) -> Params {
    let points: Vec<(f64, f64)> = PUT_BW_BYTES
        .iter()
        .map(|&bytes| {
            let metric = Metric::new(Some("put_bw"), Some(bytes), "GBps");
            (
                bytes as f64,
                catalogue::time_ns(&metric, measured.modelled[&metric]),
            )
        })
        .collect();
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let slope = sxy / sxx;
    if slope.is_nan() || slope <= 0.0 {
        return start;
    }
    let mut params = start;
    params[Param::NsPerByte] = slope;
    params[Param::TransferNs] = mean_y - slope * mean_x;
    params.clamped()
}

/// The measured values as the fit compares them: times, with their tolerances.
struct Targets {
    metrics: Vec<Metric>,
    times_ns: Vec<f64>,
    tolerances: Vec<f64>,
}

impl Targets {
    fn new(measured: &Measured) -> Targets {
        let metrics: Vec<Metric> = catalogue::modelled()
            .into_iter()
            .filter(catalogue::counted_in_fit)
            .collect();
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

    /// Each metric's error in units of its tolerance: 1.0 is a simulated time 5 % (for a
    /// bandwidth) or 10 % (for a latency) above the measured one.
    fn residuals(&self, puts: &[Line], latencies: &[Line]) -> Vec<f64> {
        self.metrics
            .iter()
            .zip(&self.times_ns)
            .zip(&self.tolerances)
            .map(|((metric, &measured_ns), &tolerance)| {
                let line = puts
                    .iter()
                    .chain(latencies)
                    .find(|l| l.metric() == metric)
                    .unwrap_or_else(|| panic!("the simulated bench reports {metric}"));
                let simulated_ns = catalogue::time_ns(metric, line.value());
                (simulated_ns - measured_ns) / (measured_ns * tolerance)
            })
            .collect()
    }
}

/// The modelled bench simulated with some parameters, and how far it is from the measurement.
struct Evaluation {
    /// The parameters as the topology holds them (rounded).
    params: Params,
    topology: Topology,
    /// The lines of [`Part::Puts`] and [`Part::Latencies`].
    puts: Vec<Line>,
    latencies: Vec<Line>,
    residuals: Vec<f64>,
    /// The squared residuals plus the ridge's pull.
    cost: f64,
}

struct Fitter<'a> {
    machine: &'a Machine,
    targets: Targets,
    start: Params,
    runs: u32,
    on_run: &'a mut dyn FnMut(u32),
}

impl Fitter<'_> {
    /// Where each parameter is, in the units the linear solve works in: multiples of 100 ns,
    /// or of the starting ns per byte, measured from the start.
    fn scaled(&self, params: &Params) -> Vec<f64> {
        Param::ALL
            .iter()
            .map(|&p| (params[p] - self.start[p]) / self.scale(p))
            .collect()
    }

    fn scale(&self, param: Param) -> f64 {
        match param {
            Param::NsPerByte => self.start[param],
            _ => 100.0,
        }
    }

    /// Runs the whole modelled bench with `params`.
    fn evaluate(&mut self, params: &Params) -> anyhow::Result<Evaluation> {
        let topology = self.machine.with(params);
        let puts = self.simulate(&topology, Part::Puts)?;
        self.evaluation(topology, puts)
    }

    /// Runs the latencies with `params`, and takes `puts` for the puts' lines.
    fn evaluation(&mut self, topology: Topology, puts: Vec<Line>) -> anyhow::Result<Evaluation> {
        let latencies = self.simulate(&topology, Part::Latencies)?;
        let params = self.machine.params_of(&topology);
        let residuals = self.targets.residuals(&puts, &latencies);
        let pull: f64 = self.scaled(&params).iter().map(|x| x * x).sum();
        let cost = residuals.iter().map(|r| r * r).sum::<f64>() + RIDGE * pull;
        Ok(Evaluation {
            params,
            topology,
            puts,
            latencies,
            residuals,
            cost,
        })
    }

    fn simulate(&mut self, topology: &Topology, part: Part) -> anyhow::Result<Vec<Line>> {
        let lines = bench_on_sim::run(topology, part)?;
        self.runs += 1;
        (self.on_run)(self.runs);
        Ok(lines)
    }

    /// One Gauss-Newton step from `current`, halved until it lowers the cost; `None` when
    /// no step does, or rounding leaves nothing to move.
    fn improve(&mut self, current: &Evaluation) -> anyhow::Result<Option<Evaluation>> {
        let columns = self.sensitivities(current)?;
        let jacobian: Vec<Vec<f64>> = (0..current.residuals.len())
            .map(|i| columns.iter().map(|column| column[i]).collect())
            .collect();
        let x = self.scaled(&current.params);
        let Some(step) = lsq::step(&jacobian, &current.residuals, &x, RIDGE) else {
            return Ok(None);
        };
        let mut fraction = 1.0;
        for _ in 0..=MAX_HALVINGS {
            let mut params = current.params;
            for (&param, dx) in Param::ALL.iter().zip(&step) {
                params[param] += fraction * dx * self.scale(param);
            }
            let params = self.machine.params_of(&self.machine.with(&params));
            if params == current.params {
                return Ok(None);
            }
            let candidate = self.evaluate(&params)?;
            if candidate.cost < current.cost {
                return Ok(Some(candidate));
            }
            fraction /= 2.0;
        }
        Ok(None)
    }

    /// How each residual moves per scaled unit of each parameter, by forward differences:
    /// changes large enough that whole-nanosecond rounding and the jitter's draws do not drown
    /// them. One column per parameter.
    fn sensitivities(&mut self, current: &Evaluation) -> anyhow::Result<Vec<Vec<f64>>> {
        let mut columns = Vec::with_capacity(Param::ALL.len());
        for param in Param::ALL {
            let value = current.params[param];
            let mut params = current.params;
            params[param] += match param {
                Param::NsPerByte => 0.02 * value,
                _ => (0.05 * value).max(20.0),
            };
            let moved = if param.shapes_puts() {
                self.evaluate(&params)?
            } else {
                self.evaluation(self.machine.with(&params), current.puts.clone())?
            };
            let change = (moved.params[param] - value) / self.scale(param);
            columns.push(
                moved
                    .residuals
                    .iter()
                    .zip(&current.residuals)
                    .map(|(after, before)| (after - before) / change)
                    .collect(),
            );
        }
        Ok(columns)
    }
}
