//! Which metrics of `rshmem bench` the simulator models, how close it must come to each, and
//! why it leaves the others out.
//!
//! A simulated PE issues operations one after another and its links carry them; it has no
//! threads, no host, no driver. So the simulator models the metrics whose time is set by
//! issue, flight, fences, polling and the link, and leaves out those set by how many GPU
//! threads copy the data, by the host's CUDA calls, or by start-up.

use crate::bench::lines::Metric;

/// The sizes of `put_bw` the simulator models: from 1 MiB the bench puts with 32 thread
/// blocks, which keep NV18 busy, so the link and the transfers' start-up set the time.
pub(super) const PUT_BW_BYTES: [u64; 5] = [1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20];

/// The put_signal ping-pong size the simulator models: one word, which the calling thread
/// stores at once.
pub(super) const SIGNAL_BYTES: u64 = 8;

/// The size of the bench's sum reduction (floats).
pub(super) const REDUCE_BYTES: u64 = 8192;

/// Every metric the simulator models, in the bench's order.
pub(super) fn modelled() -> Vec<Metric> {
    let mut metrics: Vec<Metric> = PUT_BW_BYTES
        .iter()
        .map(|&bytes| Metric::new(Some("put_bw"), Some(bytes), "GBps"))
        .collect();
    metrics.extend([
        Metric::new(
            Some("put_signal_pingpong"),
            Some(SIGNAL_BYTES),
            "half_rtt_us",
        ),
        Metric::new(None, None, "device_barrier_all_us"),
        Metric::new(Some("sum_reduce_in_kernel"), Some(REDUCE_BYTES), "us"),
        Metric::new(Some("p_pingpong"), None, "half_rtt_us"),
        Metric::new(None, None, "fetch_add_latency_us"),
    ]);
    metrics
}

/// Whether the fit counts `metric`, or only predicts it. The in-kernel reduction is predicted
/// only: most of its time on the GPU is its block of threads copying and adding, which a
/// simulated PE does not have, so counting it would drag the fence cost (which it shares with
/// put-with-signal and the barrier) away from what those two measure.
pub(super) fn counted_in_fit(metric: &Metric) -> bool {
    metric.group() != Some("sum_reduce_in_kernel")
}

/// How far the simulated value may be from the measured one, as a fraction of it: 5 % for
/// bandwidths and 10 % for latencies (issue 4).
pub(super) fn tolerance(metric: &Metric) -> f64 {
    if metric.higher_is_better() {
        0.05
    } else {
        0.10
    }
}

/// The time a modelled value stands for, in ns: a latency in µs, or a bandwidth's time per
/// operation (its bytes over GB/s, which are bytes per ns). The fit works on times because
/// the simulator's parameters add up to them.
pub(super) fn time_ns(metric: &Metric, value: f64) -> f64 {
    if metric.higher_is_better() {
        let bytes = metric
            .bytes()
            .expect("every modelled bandwidth is of a size");
        bytes as f64 / value
    } else {
        assert!(
            metric.key().ends_with("us"),
            "modelled latencies are in µs: {metric}"
        );
        value * 1e3
    }
}

/// Why the simulator does not model `metric`, a metric that [`modelled`] does not list.
pub(super) fn why_not_modelled(metric: &Metric) -> &'static str {
    match (metric.group(), metric.key()) {
        (None, "init_ms" | "malloc_1GiB_ms") => {
            "host time of starting CUDA (contexts, bootstrap, mapping the heap); a simulated \
             start-up is an exchange, and memory costs nothing to map"
        }
        (Some("put_bw"), _) => {
            "below 1 MiB the bench puts with one thread block, whose copying, not the link, \
             sets the time; a simulated PE has no threads"
        }
        (Some("small_put"), _) => {
            "one warp or one thread block copies, at its own rate, not the link's; a \
             simulated PE has no threads"
        }
        (Some("host_put_on_stream"), _) => {
            "a host-initiated copy on a CUDA stream costs the driver's microseconds per call \
             and runs on the copy engine; a topology has one issue cost, the GPU's"
        }
        (Some("sum_reduce_on_stream"), _) => {
            "each reduction is a kernel launched from the host, whose cost is the driver's and \
             the GPU's front end's; the simulator models the reduction itself \
             (sum_reduce_in_kernel)"
        }
        (Some("put_signal_pingpong"), _) => {
            "beyond one word, the one GPU thread that calls put_signal copies the data, at its \
             own rate, not the link's; a simulated PE has no threads"
        }
        _ => "not a metric of rshmem bench that the simulator models",
    }
}
