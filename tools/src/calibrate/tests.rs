//! The calibration checked against the simulator itself: a bench run simulated on a topology
//! with known parameters is the measurement, and the fit must find those parameters again.
//! Plus the reading of measured files and the refusal of topologies it cannot fit.

use std::path::Path;

use hw::topology::{Timing, Topology};

use super::bench_on_sim::{self, Part};
use super::measured::{self, MeasuredError};
use super::params::{Machine, Param, Params};
use super::{catalogue, fit, table};
use crate::bench::lines::Metric;

/// The h200x2 preset with every fitted parameter changed: what "the GPUs" are in these tests.
fn truth() -> Topology {
    let machine = Machine::new(sim::topology::load("h200x2").unwrap()).unwrap();
    let mut params = machine.params_of(machine.base());
    params[Param::LatencyNs] = 380.0;
    params[Param::NsPerByte] = 1.0 / 352.5;
    params[Param::PollNs] = 400.0;
    params[Param::FenceNs] = 700.0;
    params[Param::TransferNs] = 120.0;
    machine.with(&params)
}

/// The bench lines of a run, as `rshmem bench --raw` writes them, with some lines of metrics
/// the simulator does not model among them.
fn raw(topology: &Topology) -> String {
    let mut text = String::from("init_ms=140.000\nmalloc_1GiB_ms=1.100\n");
    for part in [Part::Puts, Part::Latencies] {
        for line in bench_on_sim::run(topology, part).unwrap() {
            text.push_str(&format!("{line}\n"));
        }
    }
    text.push_str("small_put bytes=65536 warp_GBps=40.000\nput_bw bytes=4096 GBps=12.000\n");
    text
}

fn assert_near(what: &str, found: f64, expected: f64, tolerance: f64) {
    assert!(
        (found - expected).abs() <= tolerance,
        "{what}: found {found}, expected {expected} ± {tolerance}"
    );
}

#[test]
fn a_fit_finds_the_parameters_of_a_simulated_run_and_meets_every_target() {
    let truth = truth();
    let measured = measured::parse(&raw(&truth), Path::new("truth.raw")).unwrap();
    let machine = Machine::new(sim::topology::load("h200x2").unwrap()).unwrap();
    let fit = fit::fit(&machine, &measured, &mut |_| {}).unwrap();

    let expected: Params = machine.params_of(&truth);
    let found = fit.fitted;
    assert_near("latency ns", found[Param::LatencyNs], 380.0, 10.0);
    assert_near("bandwidth GB/s", found.gbps(), expected.gbps(), 0.5);
    assert_near("poll ns", found[Param::PollNs], 400.0, 15.0);
    assert_near("fence ns", found[Param::FenceNs], 700.0, 15.0);
    assert_near("transfer ns", found[Param::TransferNs], 120.0, 10.0);
    assert_eq!(fit.topology.timing().issue_ns, Timing::default().issue_ns);

    let rows = table::rows(&measured, &fit.simulated);
    let markdown = table::markdown(&rows, &measured);
    assert!(rows.iter().all(table::Row::within_target), "{markdown}");
    assert_eq!(rows.len(), catalogue::modelled().len());
    assert!(
        markdown.contains("| put_bw 256 MiB GBps |"),
        "one row per metric: {markdown}"
    );
    assert!(
        markdown.contains("- `init_ms`, `malloc_1GiB_ms`: host time of starting CUDA"),
        "{markdown}"
    );
    assert!(
        markdown.contains("- `put_bw 4 KiB GBps`: below 1 MiB"),
        "{markdown}"
    );

    // The file it writes is the fitted topology.
    let text = super::toml_file(&fit, Path::new("truth.raw"), "h200x2");
    let back = sim::topology::file::parse(&text, "fitted.toml").unwrap();
    assert_eq!(back.timing(), fit.topology.timing());
    assert_eq!(machine.params_of(&back), fit.fitted);
}

#[test]
fn the_bandwidth_curve_comes_in_closed_form_from_the_put_sizes() {
    // Hockney's curve with a 150 ns start-up at 360 GB/s, the other metrics anything.
    let mut text = String::new();
    for bytes in catalogue::PUT_BW_BYTES {
        let gbps = bytes as f64 / (150.0 + bytes as f64 / 360.0);
        text.push_str(&format!("put_bw bytes={bytes} GBps={gbps:.6}\n"));
    }
    text.push_str(
        "put_signal_pingpong bytes=8 half_rtt_us=2\ndevice_barrier_all_us=2\n\
         sum_reduce_in_kernel bytes=8192 us=7\np_pingpong half_rtt_us=1\n\
         fetch_add_latency_us=1\n",
    );
    let measured = measured::parse(&text, Path::new("curve.raw")).unwrap();
    let machine = Machine::new(sim::topology::load("h200x2").unwrap()).unwrap();
    let start = machine.params_of(machine.base());
    let curve = fit::bandwidth_curve(&measured, start);
    assert_near("start-up ns", curve[Param::TransferNs], 150.0, 0.5);
    assert_near("bandwidth GB/s", curve.gbps(), 360.0, 0.01);
    assert_eq!(curve[Param::LatencyNs], start[Param::LatencyNs]);
}

#[test]
fn the_simulated_bench_reports_exactly_the_modelled_metrics() {
    let h200x2 = sim::topology::load("h200x2").unwrap();
    let mut lines = bench_on_sim::run(&h200x2, Part::Puts).unwrap();
    lines.extend(bench_on_sim::run(&h200x2, Part::Latencies).unwrap());
    let metrics: Vec<&Metric> = lines.iter().map(|l| l.metric()).collect();
    let modelled = catalogue::modelled();
    assert_eq!(metrics, modelled.iter().collect::<Vec<_>>());
}

/// A whole measured file, as [`raw`] writes it but without simulating: the modelled lines
/// with made-up values.
const GOOD: &str = "init_ms=140.000
put_bw bytes=1048576 GBps=344.500
put_bw bytes=4194304 GBps=356.600
put_bw bytes=16777216 GBps=359.700
put_bw bytes=67108864 GBps=360.500
put_bw bytes=268435456 GBps=360.700
put_signal_pingpong bytes=8 half_rtt_us=2.170
device_barrier_all_us=2.560
sum_reduce_in_kernel bytes=8192 us=2.400
p_pingpong half_rtt_us=1.224
fetch_add_latency_us=0.915
";

fn read_err(text: &str) -> String {
    let err = measured::parse(text, Path::new("m.raw")).unwrap_err();
    // As the command prints it: the error and its causes.
    format!("{:#}", anyhow::Error::from(err))
}

#[test]
fn a_good_file_splits_into_modelled_and_not_modelled() {
    let measured = measured::parse(GOOD, Path::new("m.raw")).unwrap();
    assert_eq!(measured.modelled.len(), catalogue::modelled().len());
    assert_eq!(measured.not_modelled.len(), 1);
}

#[test]
fn malformed_files_are_refused_naming_the_file_the_line_and_the_problem() {
    let err = read_err(&GOOD.replace("GBps=356.600", "GBps=fast"));
    assert!(err.starts_with("m.raw: line 3: "), "{err}");
    assert!(err.contains("with numbers for values"), "{err}");

    let err = read_err(&GOOD.replace("half_rtt_us=1.224", "half_rtt_us=-1"));
    assert_eq!(
        err,
        "m.raw:10: p_pingpong half_rtt_us is -1; a measured time or bandwidth is a positive \
         number"
    );

    let err = read_err(&format!("{GOOD}fetch_add_latency_us=0.9\n"));
    assert!(
        err.starts_with("m.raw:12: fetch_add_latency_us was given already at line 11"),
        "{err}"
    );

    let err = read_err(&GOOD.replace("device_barrier_all_us=2.560\n", ""));
    assert!(
        err.starts_with(
            "m.raw lacks 1 of the metrics the simulator models: device_barrier_all_us;"
        ),
        "{err}"
    );
    let err = read_err("## rshmem on nothing\n");
    assert!(err.contains("lacks 10 of the metrics"), "{err}");
    assert!(err.contains("put_bw 1 MiB GBps"), "{err}");

    let err = measured::read(Path::new("no/such.raw")).unwrap_err();
    assert!(matches!(err, MeasuredError::Io { .. }));
    assert!(err.to_string().contains("no/such.raw"), "{err}");
}

#[test]
fn a_topology_without_one_link_between_the_bench_pes_is_refused() {
    let err = Machine::new(sim::topology::load("hgx8").unwrap()).unwrap_err();
    assert!(
        err.to_string().contains("routes PE 0 to PE 1 over 2 links"),
        "{err}"
    );
}
