//! The collective benchmark (barrier_all, broadcast, fcollect, alltoall and the sum reduction
//! over every PE, `on_stream` and `in_kernel`, at several PE counts) as a fit of an NVSwitch
//! machine sees it: which of its lines a run has, and which parameter each one fits.
//!
//! Every collective of the device API is a block's copies between two barriers, so the
//! lines own the parameters thus (docs/calibration.md):
//! - the barriers in a kernel, with the largest broadcast at the most PEs, fit the switch's
//!   latency and bandwidth together (Gauss-Newton): the barrier is flights through the switch,
//!   and seven PEs pulling one root's data at once is the switch link's bandwidth;
//! - every line on a stream fits the launch, which it pays once per collective;
//! - broadcast, fcollect and alltoall in a kernel fit the block's copy
//!   curve at their size (paying it once, once per PE pulled, or once per peer pushed);
//! - the pushed reduction in a kernel fits the local access, which it pays three times;
//! - the pulled reduction fits nothing: its loads and adds are slower than a block's copies
//!   on GPUs, which the simulator does not model (docs/calibration.md).

use std::collections::{BTreeMap, BTreeSet};

use sim::Machine;
use sim::costs::MAX_CURVE_POINTS;

use super::bench::Bench;
use super::collectives_on_sim::{self, Run};
use super::measured::Measured;
use super::params::{Mover, Param, Params};
pub(super) use crate::bench::collectives::{Collective, Form};
use crate::bench::lines::{Line, Metric};

/// The collective and form of a line's group, if it is one of the benchmark's.
pub(super) fn parse_group(group: &str) -> Option<(Collective, Form)> {
    Collective::parse_line_name(group)
}

/// Whether `metric` is a line of the collective benchmark: a known collective and form, with
/// a PE count, a size where it moves data, and one of its keys.
pub(super) fn is_collective(metric: &Metric) -> bool {
    let Some((collective, _)) = metric.group().and_then(parse_group) else {
        return false;
    };
    metric.n_pes().is_some()
        && metric.bytes().is_some() == (collective != Collective::BarrierAll)
        && collective.keys().contains(&metric.key())
}

/// The bytes one PE's dest receives per collective, which its `algbw_GBps` counts: fcollect
/// and alltoall `n_pes × bytes`, the others `bytes`.
pub(super) fn received_bytes(metric: &Metric) -> u64 {
    let bytes = metric.bytes().expect("every bandwidth is of a size");
    match metric.group().and_then(parse_group) {
        Some((collective, _)) => collective.received_bytes(metric.n_pes().unwrap_or(1), bytes),
        None => bytes,
    }
}

/// Bytes of every PE's synchronisation memory after its header: the collectives' scratch
/// (`RSHMEM_SYNC_BYTES - RSHMEM_SYNC_HEADER_BYTES` of `rshmem_device.cuh`).
pub(super) const SCRATCH_BYTES: u64 = 2_097_152 - 8192;

/// Whether the device API's sum reduction of `bytes` over `n_pes` pushes (every PE's data
/// fits half the scratch) rather than pulls.
pub(super) fn reduce_pushes(n_pes: u32, bytes: u64) -> bool {
    u64::from(n_pes) * bytes <= SCRATCH_BYTES / 2
}

/// The most bytes, all PEs' chunks together, that the device API's fcollect and alltoall
/// push (RSHMEM_PUSH_COPY_BYTES of rshmem_device.cuh).
pub(super) const PUSH_COPY_BYTES: u64 = 256 << 10;

/// Whether the device API's fcollect or alltoall of `bytes` a chunk over `n_pes` pushes
/// through the scratch rather than pulls.
pub(super) fn copy_pushes(n_pes: u32, bytes: u64) -> bool {
    u64::from(n_pes) * bytes <= PUSH_COPY_BYTES
}

/// The collective benchmark's lines of one run.
pub(super) struct Collectives {
    metrics: Vec<Metric>,
    runs: Vec<Run>,
    block_sizes: Vec<u64>,
    /// The broadcast in a kernel that the latency group fits the bandwidth to: the largest
    /// size at the most PEs measured.
    widest_broadcast: Option<(u32, u64)>,
}

impl Collectives {
    /// The collective lines of `measured`, which hold only such lines (`measured.rs`).
    pub(super) fn new(measured: &Measured) -> Collectives {
        let mut metrics: Vec<Metric> = measured.modelled.keys().cloned().collect();
        metrics.sort_by_key(order);
        // By PE count and the collective simulated: alltoall's lines are fcollect's run.
        let mut runs: BTreeMap<(u32, Collective), Measurements> = BTreeMap::new();
        let mut block_sizes = BTreeSet::new();
        let mut widest_broadcast = None;
        for metric in &metrics {
            let (collective, form) = metric
                .group()
                .and_then(parse_group)
                .expect("measured.rs keeps only collective lines");
            let n_pes = metric.n_pes().expect("a collective line has a PE count");
            let simulated = match collective {
                Collective::Alltoall => Collective::Fcollect,
                c => c,
            };
            let entry = runs.entry((n_pes, simulated)).or_default();
            entry.0.insert(collective);
            entry.1.insert((form, metric.bytes()));
            if let Some(bytes) = metric.bytes()
                && collective != Collective::SumReduce
            {
                block_sizes.insert(bytes);
            }
            if let (Collective::Broadcast, Form::InKernel, Some(bytes)) =
                (collective, form, metric.bytes())
            {
                widest_broadcast = widest_broadcast.max(Some((n_pes, bytes)));
            }
        }
        let runs = runs
            .into_iter()
            .flat_map(|((n_pes, collective), measurements)| {
                simulations(n_pes, collective, measurements, widest_broadcast)
            })
            .collect();
        Collectives {
            metrics,
            runs,
            block_sizes: curve_sizes(block_sizes.into_iter().collect()),
            widest_broadcast,
        }
    }

    /// The sizes of the block's curve: every size the pulls are measured at, but at most
    /// [`MAX_CURVE_POINTS`], keeping the smallest and the largest (the sizes between the
    /// smallest two cost a block about the same).
    pub(super) fn block_sizes(&self) -> Vec<u64> {
        self.block_sizes.clone()
    }

    /// The PE counts measured.
    pub(super) fn pe_counts(&self) -> BTreeSet<u32> {
        self.runs.iter().map(|r| r.n_pes).collect()
    }

    fn point(&self, bytes: u64) -> Option<Param> {
        let i = self.block_sizes.iter().position(|&b| b == bytes)?;
        Some(Param::Point(Mover::Block, i))
    }
}

/// The collectives a simulation reports, and its measurements.
type Measurements = (BTreeSet<Collective>, BTreeSet<(Form, Option<u64>)>);

/// The simulations of `collective`'s `measurements` at `n_pes`: one, but the broadcast that
/// the latency group fits to is simulated alone, so that each of the group's steps reruns
/// only it.
fn simulations(
    n_pes: u32,
    collective: Collective,
    (reported, mut measurements): Measurements,
    widest_broadcast: Option<(u32, u64)>,
) -> Vec<Run> {
    let reported: Vec<Collective> = reported.into_iter().collect();
    let run = |measurements: Vec<(Form, Option<u64>)>| Run {
        n_pes,
        collective,
        reported: reported.clone(),
        measurements,
    };
    let mut runs = Vec::new();
    if let Some((n, bytes)) = widest_broadcast
        && collective == Collective::Broadcast
        && n == n_pes
    {
        measurements.remove(&(Form::InKernel, Some(bytes)));
        runs.push(run(vec![(Form::InKernel, Some(bytes))]));
    }
    if !measurements.is_empty() {
        runs.push(run(measurements.into_iter().collect()));
    }
    runs
}

/// `sizes` (rising) cut to [`MAX_CURVE_POINTS`] by dropping the second smallest.
fn curve_sizes(mut sizes: Vec<u64>) -> Vec<u64> {
    while sizes.len() > MAX_CURVE_POINTS {
        sizes.remove(1);
    }
    sizes
}

/// Where a metric sorts: PE count, collective and form, size, bandwidth after time.
type Order = (Option<u32>, Option<(Collective, Form)>, Option<u64>, bool);

/// The table's order: by PE count, collective, form, size, then time before bandwidth.
fn order(metric: &Metric) -> Order {
    (
        metric.n_pes(),
        metric.group().and_then(parse_group),
        metric.bytes(),
        metric.higher_is_better(),
    )
}

/// The latency group: the switch links' latency and bandwidth. Poll and fence keep the
/// topology's values: a barrier pays each once per flight, as it pays the latency, so the
/// collectives cannot tell them apart (docs/calibration.md).
const LATENCY_GROUP: [Param; 2] = [Param::LatencyNs, Param::LinkNsPerByte];

impl Bench for Collectives {
    fn metrics(&self) -> &[Metric] {
        &self.metrics
    }

    fn n_parts(&self) -> usize {
        self.runs.len()
    }

    fn run(&self, machine: &Machine, part: usize) -> anyhow::Result<Vec<Line>> {
        collectives_on_sim::run(machine, &self.runs[part])
    }

    fn latency_group(&self) -> &[Param] {
        &LATENCY_GROUP
    }

    fn fits_latency_group(&self, metric: &Metric) -> bool {
        let Some((collective, Form::InKernel)) = metric.group().and_then(parse_group) else {
            return false;
        };
        match collective {
            Collective::BarrierAll => true,
            Collective::Broadcast => metric.n_pes().zip(metric.bytes()) == self.widest_broadcast,
            _ => false,
        }
    }

    fn latency_parts(&self) -> Vec<usize> {
        let widest = self
            .widest_broadcast
            .map(|(n, bytes)| (n, vec![(Form::InKernel, Some(bytes))]));
        (0..self.runs.len())
            .filter(|&i| {
                let run = &self.runs[i];
                run.collective == Collective::BarrierAll
                    || (run.collective == Collective::Broadcast
                        && Some((run.n_pes, run.measurements.clone())) == widest)
            })
            .collect()
    }

    fn owner(&self, metric: &Metric) -> Option<(Param, f64)> {
        let (collective, form) = metric.group().and_then(parse_group)?;
        let n_pes = f64::from(metric.n_pes()?);
        if form == Form::OnStream {
            return Some((Param::LaunchNs, 1.0));
        }
        if self.fits_latency_group(metric) {
            return None;
        }
        let bytes = metric.bytes()?;
        match collective {
            Collective::BarrierAll => None,
            Collective::Broadcast => Some((self.point(bytes)?, 1.0)),
            // Pushed: the block's put of `bytes` to each peer.
            Collective::Fcollect | Collective::Alltoall if copy_pushes(metric.n_pes()?, bytes) => {
                Some((self.point(bytes)?, n_pes - 1.0))
            }
            Collective::Fcollect | Collective::Alltoall => Some((self.point(bytes)?, n_pes)),
            Collective::SumReduce if reduce_pushes(metric.n_pes()?, bytes) => {
                Some((Param::LocalAccessNs, 3.0))
            }
            // Pulled, a reduction's loads from every PE and its adds run slower than a
            // block's copies (on two H200s 9.7 to 15 GB/s against 49), which the simulator
            // does not model; owning the copy curve, it would drag it off the copies.
            Collective::SumReduce => None,
        }
    }

    /// Each point of the block's curve: the time per copy of its size in a kernel, less the
    /// two barriers around it (the barrier measured at the same PE count), averaged over
    /// the collectives that own it; the launch: the time on a stream less the time in a
    /// kernel, averaged over every line measured both ways. The switch keeps the topology's
    /// latency and bandwidth, and the local access its value.
    fn first_guess(&self, measured: &Measured, start: &Params) -> Params {
        let us_ns = |metric: &Metric| measured.modelled.get(metric).map(|us| us * 1e3);
        let mut points: BTreeMap<Param, Vec<f64>> = BTreeMap::new();
        let mut launches = Vec::new();
        for metric in self.metrics.iter().filter(|m| m.key() == "us") {
            let Some((param, times)) = self.owner(metric) else {
                continue;
            };
            let time_ns = us_ns(metric).expect("a metric of the run");
            if param == Param::LaunchNs {
                let kernel = Metric::new(
                    Some(
                        &metric
                            .group()
                            .expect("a group")
                            .replace("_on_stream", "_in_kernel"),
                    ),
                    metric.bytes(),
                    "us",
                );
                let n_pes = metric.n_pes().expect("a PE count");
                if let Some(in_kernel_ns) = us_ns(&kernel.pes(n_pes)) {
                    launches.push(time_ns - in_kernel_ns);
                }
                continue;
            }
            if let Param::Point(..) = param {
                let group = Collective::BarrierAll.line_name(Form::InKernel);
                let barrier = Metric::new(Some(&group), None, "us");
                let barrier_ns = metric
                    .n_pes()
                    .and_then(|n| us_ns(&barrier.pes(n)))
                    .unwrap_or(0.0);
                points
                    .entry(param)
                    .or_default()
                    .push((time_ns - 2.0 * barrier_ns) / times);
            }
        }
        let mut params = start.clone();
        let mean = |values: &[f64]| (values.iter().sum::<f64>() / values.len() as f64).max(0.0);
        for (param, values) in points {
            params[param] = mean(&values);
        }
        if !launches.is_empty() {
            params[Param::LaunchNs] = mean(&launches);
        }
        params
    }
}

/// Why a two-PE line is left out of a fit of the collectives.
pub(super) const TWO_PE_LINE: &str = "a line of the two-PE bench; a fit of an NVSwitch \
    topology models the collectives (`pes=N` lines) only";
