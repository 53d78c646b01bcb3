//! What a fit compares, whatever the benchmark: its metrics, the simulations that produce
//! them, and which parameter each one fits. Two benchmarks implement it: the two-PE bench
//! (`catalogue.rs`, on a pair of GPUs) and the collectives (`collectives.rs`, on an
//! NVSwitch machine); `fit.rs` fits either.

use sim::Machine;

use super::measured::Measured;
use super::params::{Param, Params};
use crate::bench::lines::{Line, Metric};

/// A benchmark as the fit sees it.
pub(super) trait Bench {
    /// The metrics the simulator predicts, in the order the table shows them.
    fn metrics(&self) -> &[Metric];

    /// How many simulations of its own the benchmark takes: its parts, each run alone so
    /// that its jitter draws never depend on another's.
    fn n_parts(&self) -> usize;

    /// PE 0's lines of part `part` simulated on `machine`.
    ///
    /// # Errors
    /// The run failed.
    fn run(&self, machine: &Machine, part: usize) -> anyhow::Result<Vec<Line>>;

    /// The parameters fitted together by Gauss-Newton, to the metrics of
    /// [`Bench::fits_latency_group`].
    fn latency_group(&self) -> &[Param];

    /// Whether the latency group is fitted to `metric`.
    fn fits_latency_group(&self, metric: &Metric) -> bool;

    /// The parts that hold the latency group's metrics: what each of its steps reruns.
    fn latency_parts(&self) -> Vec<usize>;

    /// The parameter that `metric` fits by secant steps, and how many times one operation
    /// of the metric pays it (the slope to assume before one is learnt); `None` for the
    /// latency group's metrics and those that are only checked.
    fn owner(&self, metric: &Metric) -> Option<(Param, f64)>;

    /// The first guess: `start` with what the measurement gives in closed form.
    fn first_guess(&self, measured: &Measured, start: &Params) -> Params;
}

/// How far each latency-group parameter moves per unit of the linear solve: 100 ns for a
/// time, a ten-thousandth of a ns per byte (4 % of NVLink's) for a bandwidth's inverse.
pub(super) fn unit(param: Param) -> f64 {
    match param {
        Param::LinkNsPerByte => 1e-4,
        _ => 100.0,
    }
}
