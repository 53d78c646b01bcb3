//! The metrics of `rshmem bench` the simulator predicts, how close it must come to each, and
//! which parameter of the topology each one fits.
//!
//! Every metric the bench measures is modelled. A simulated PE issues operations one after
//! another and its links carry them; what it lacks of a GPU, the topology's timing supplies
//! as costs: how long each mover (a thread, a warp, a block, the whole GPU, the copy engine)
//! takes to copy a put of a size, what a kernel launch, a plain access of the PE's own
//! memory, the GPU's start-up and the mapping of memory cost.

use std::collections::BTreeMap;

use sim::Machine;

use super::bench::Bench;
use super::bench_on_sim::{self, Part};
use super::measured::Measured;
use super::params::{Mover, Param, Params};
use crate::bench::lines::{Line, Metric};

/// The sizes of `put_bw` that the bench puts with 32 thread blocks, which a simulated PE
/// issues whole ([`Mover::Device`]); below them the bench puts with one block.
pub(super) const DEVICE_PUT_BYTES: [u64; 5] = [1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20];

/// The sizes of `put_bw` that the bench puts with one block of 1024 threads.
pub(super) const BLOCK_PUT_BW_BYTES: [u64; 4] = [4 << 10, 16 << 10, 64 << 10, 256 << 10];

/// The sizes of `host_put_on_stream`.
pub(super) const HOST_PUT_BYTES: [u64; 5] = [4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20];

/// The sizes of `small_put`, by one warp and by one block.
pub(super) const SMALL_PUT_BYTES: [u64; 6] =
    [1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20];

/// The sizes of `put_signal_pingpong`, each put by one thread.
pub(super) const SIGNAL_BYTES: [u64; 3] = [8, 512, 32 << 10];

/// The size of the bench's sum reduction (floats).
pub(super) const REDUCE_BYTES: u64 = 8192;

/// The bytes `malloc_1GiB_ms` allocates.
pub(super) const MALLOC_BYTES: u64 = 1 << 30;

/// Every metric of the bench, in the bench's order.
pub(super) fn modelled() -> Vec<Metric> {
    let mut metrics = vec![
        Metric::new(None, None, "init_ms"),
        Metric::new(None, None, "malloc_1GiB_ms"),
    ];
    let put_bw = BLOCK_PUT_BW_BYTES.iter().chain(&DEVICE_PUT_BYTES);
    metrics.extend(put_bw.map(|&b| Metric::new(Some("put_bw"), Some(b), "GBps")));
    for &bytes in &HOST_PUT_BYTES {
        for key in ["GBps", "us_per_op"] {
            metrics.push(Metric::new(Some("host_put_on_stream"), Some(bytes), key));
        }
    }
    for &bytes in &SMALL_PUT_BYTES {
        for key in ["warp_GBps", "block_GBps"] {
            metrics.push(Metric::new(Some("small_put"), Some(bytes), key));
        }
    }
    metrics.extend(
        SIGNAL_BYTES
            .iter()
            .map(|&b| Metric::new(Some("put_signal_pingpong"), Some(b), "half_rtt_us")),
    );
    metrics.extend([
        Metric::new(None, None, "device_barrier_all_us"),
        Metric::new(Some("sum_reduce_on_stream"), Some(REDUCE_BYTES), "us"),
        Metric::new(
            Some("sum_reduce_on_stream"),
            Some(REDUCE_BYTES),
            "algbw_GBps",
        ),
        Metric::new(Some("sum_reduce_in_kernel"), Some(REDUCE_BYTES), "us"),
        Metric::new(Some("p_pingpong"), None, "half_rtt_us"),
        Metric::new(None, None, "fetch_add_latency_us"),
    ]);
    metrics
}

/// The parameter that `metric` fits, or `None` for the four latencies that the link's
/// latency, the poll, the fence and the release fit together (`fit.rs`).
///
/// Why one owner per metric: each of these parameters moves its metrics one to one (a put's
/// time follows its mover's point at its size, a launched reduction its launch) and barely
/// moves any other, so each is fitted to its own metrics.
pub(super) fn owner(metric: &Metric) -> Option<Param> {
    let bytes = metric.bytes();
    let point = |mover: Mover| {
        let size = bytes.expect("every put metric is of a size");
        Some(Param::Point(mover, mover.point_of(size)?))
    };
    match (metric.group(), metric.key()) {
        (None, "init_ms") => Some(Param::StartupNs),
        (None, "malloc_1GiB_ms") => Some(Param::MapNsPerByte),
        (Some("put_bw"), _) if DEVICE_PUT_BYTES.contains(&bytes?) => point(Mover::Device),
        (Some("put_bw"), _) => point(Mover::Block),
        (Some("host_put_on_stream"), _) => point(Mover::Engine),
        (Some("small_put"), "warp_GBps") => point(Mover::Warp),
        (Some("small_put"), _) => point(Mover::Block),
        (Some("put_signal_pingpong"), _) if bytes? > SIGNAL_BYTES[0] => point(Mover::Thread),
        (Some("sum_reduce_on_stream"), _) => Some(Param::LaunchNs),
        (Some("sum_reduce_in_kernel"), _) => Some(Param::LocalAccessNs),
        _ => None,
    }
}

/// The two-PE bench of `rshmem bench`, on a pair of GPUs joined by one link.
pub(super) struct TwoPe {
    metrics: Vec<Metric>,
}

impl TwoPe {
    pub(super) fn new() -> TwoPe {
        TwoPe {
            metrics: modelled(),
        }
    }
}

/// The latency group: the four latencies fit them together.
const LATENCY_GROUP: [Param; 4] = [
    Param::LatencyNs,
    Param::PollNs,
    Param::FenceNs,
    Param::ReleaseNs,
];

impl Bench for TwoPe {
    fn metrics(&self) -> &[Metric] {
        &self.metrics
    }

    fn n_parts(&self) -> usize {
        Part::ALL.len()
    }

    fn run(&self, machine: &Machine, part: usize) -> anyhow::Result<Vec<Line>> {
        bench_on_sim::run(machine, Part::ALL[part])
    }

    fn latency_group(&self) -> &[Param] {
        &LATENCY_GROUP
    }

    fn fits_latency_group(&self, metric: &Metric) -> bool {
        owner(metric).is_none()
    }

    fn latency_parts(&self) -> Vec<usize> {
        let latencies = Part::ALL.iter().position(|&p| p == Part::Latencies);
        latencies.into_iter().collect()
    }

    /// Every owned metric pays its parameter once per operation, but the in-kernel
    /// reduction, which makes three local accesses (load one's vector, load the peer's,
    /// store the sums: `bench_on_sim.rs`), and the allocation, whose time is its bytes over
    /// the mapping rate.
    fn owner(&self, metric: &Metric) -> Option<(Param, f64)> {
        let param = owner(metric)?;
        let times = match param {
            Param::LocalAccessNs => 3.0,
            Param::MapNsPerByte => MALLOC_BYTES as f64,
            _ => 1.0,
        };
        Some((param, times))
    }

    fn first_guess(&self, measured: &Measured, start: &Params) -> Params {
        first_guess(measured, start)
    }
}

/// The first guess: `start` with every owned parameter set from the measurement directly
/// (see the module's step 1), and the link at least as fast as the fastest put.
fn first_guess(measured: &Measured, start: &Params) -> Params {
    let time = |group: Option<&str>, bytes: Option<u64>, key: &str| {
        let metric = Metric::new(group, bytes, key);
        time_ns(&metric, measured.modelled[&metric])
    };
    let mut params = start.clone();
    let mut owned: BTreeMap<Param, Vec<f64>> = BTreeMap::new();
    for (metric, &value) in &measured.modelled {
        if let Some(param @ Param::Point(..)) = owner(metric) {
            owned.entry(param).or_default().push(time_ns(metric, value));
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
    let reduce = REDUCE_BYTES;
    params[Param::LaunchNs] = (time(Some("sum_reduce_on_stream"), Some(reduce), "us")
        - time(Some("sum_reduce_in_kernel"), Some(reduce), "us"))
    .max(0.0);
    params[Param::StartupNs] = time(None, None, "init_ms");
    params[Param::MapNsPerByte] = time(None, None, "malloc_1GiB_ms") / MALLOC_BYTES as f64;
    params
}

/// How far the simulated value may be from the measured one, as a fraction of it: 5 % for
/// bandwidths and 10 % for times (docs/targets.md).
pub(super) fn tolerance(metric: &Metric) -> f64 {
    if metric.higher_is_better() {
        0.05
    } else {
        0.10
    }
}

/// What a value printed with three decimals (as the benchmarks print them) may be off by.
const PRINTED_RESOLUTION: f64 = 0.0005;

/// How far the simulated value may be from `measured`, the measured value of `metric`, as a
/// fraction of it: [`tolerance`] of any value the printed one may stand for, so the
/// rounding adds to it (a collective's bandwidth of 8 B, printed 0.001 GB/s, is known to
/// ±50 % before the target; one of 50 GB/s to ±0.001 %).
pub(super) fn tolerance_at(metric: &Metric, measured: f64) -> f64 {
    tolerance(metric) + PRINTED_RESOLUTION / measured
}

/// The time a value stands for, in ns: a time in µs or ms, or a bandwidth's time per
/// operation (the bytes it counts over GB/s, which are bytes per ns). The fit works on times because
/// the simulator's parameters add up to them.
pub(super) fn time_ns(metric: &Metric, value: f64) -> f64 {
    if metric.higher_is_better() {
        super::collectives::received_bytes(metric) as f64 / value
    } else if metric.key().ends_with("ms") {
        value * 1e6
    } else {
        value * 1e3
    }
}

/// Why the simulator does not model a measured metric that [`modelled`] does not list.
pub(super) const NOT_A_BENCH_METRIC: &str =
    "not a metric of rshmem bench; the simulator models every metric the bench measures";
