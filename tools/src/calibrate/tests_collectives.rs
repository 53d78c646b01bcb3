//! The fit of an NVSwitch machine to the collectives, checked against the simulator itself:
//! the collectives simulated on `hgx8` with its switch, copy curve, launch and local access
//! changed by known amounts are the measurement, and the fit from the textbook `hgx8` must
//! find those values again. Plus the refusal of runs it cannot fit.

use std::path::Path;

use sim::Machine;

use super::bench::Bench;
use super::collectives::{Collective, Collectives, Form};
use super::collectives_on_sim::{self, Run};
use super::measured::{self, MeasuredError};
use super::params::{Mover, Param, Params, Subject};
use super::{fit, plot, table};

/// Sizes of the round trip: fewer than the benchmark's nine, so that the test takes
/// seconds, but small and large enough that the switch's bandwidth shows (2 MiB from one
/// root to seven PEs at once).
const SIZES: [u64; 4] = [8, 4096, 256 << 10, 2 << 20];

/// The block's copy times at [`SIZES`] on "the GPUs": about 84 GB/s at 2 MiB, so seven
/// pulls from one root at once need more than the switch link carries.
const PLANTED_BLOCK_NS: [f64; 4] = [300.0, 420.0, 3600.0, 25_000.0];

fn hgx8() -> Machine {
    sim::topology::load("hgx8").unwrap()
}

/// The lines of a run of the collective benchmark on `machine`: every collective in both
/// forms, at 4 and 8 PEs and each of `sizes`.
fn raw(machine: &Machine, sizes: &[u64]) -> String {
    let mut text = String::from("# the collectives, simulated\n");
    for n_pes in [4, 8] {
        // fcollect's simulation reports alltoall's lines too.
        for collective in Collective::ALL
            .into_iter()
            .filter(|&c| c != Collective::Alltoall)
        {
            let sizes: Vec<Option<u64>> = match collective {
                Collective::BarrierAll => vec![None],
                _ => sizes.iter().copied().map(Some).collect(),
            };
            let measurements = Form::ALL
                .iter()
                .flat_map(|&form| sizes.iter().map(move |&bytes| (form, bytes)))
                .collect();
            let reported = match collective {
                Collective::Fcollect => vec![Collective::Fcollect, Collective::Alltoall],
                c => vec![c],
            };
            let run = Run {
                n_pes,
                collective,
                reported,
                measurements,
            };
            for line in collectives_on_sim::run(machine, &run).unwrap() {
                text.push_str(&format!("{line}\n"));
            }
        }
    }
    text
}

/// hgx8's parameters with the switch 30 % slower to cross and 15 % narrower, the block's
/// curve (`block_ns` at the subject's sizes), a launch and a local access planted.
fn truth(machine: &Subject, block_ns: &[f64]) -> Params {
    let mut params = machine.params_of(machine.base());
    params[Param::LatencyNs] *= 1.3;
    params[Param::LinkNsPerByte] /= 0.85;
    for (i, &ns) in block_ns.iter().enumerate() {
        params[Param::Point(Mover::Block, i)] = ns;
    }
    params[Param::LaunchNs] = 2500.0;
    params[Param::LocalAccessNs] = 350.0;
    params
}

fn assert_near(what: &str, found: f64, expected: f64, tolerance: f64) {
    assert!(
        (found - expected).abs() <= tolerance * expected.abs(),
        "{what}: found {found}, expected {expected} ± {:.1} %",
        100.0 * tolerance
    );
}

#[test]
fn a_fit_of_hgx8_finds_the_planted_switch_curve_and_launch_and_meets_every_target() {
    let base = hgx8();
    let n_gpus = base.topology.n_gpus();
    // The subject only to plant the truth; the fit's own comes from the measurement.
    let planting = Subject::switch(base.clone(), SIZES.to_vec()).unwrap();
    let expected = truth(&planting, &PLANTED_BLOCK_NS);
    let text = raw(&planting.with(&expected), &SIZES);
    let measured =
        measured::parse_collectives(&text, Path::new("truth.raw"), "hgx8", n_gpus).unwrap();
    let bench = Collectives::new(&measured);
    assert_eq!(bench.block_sizes(), SIZES.to_vec());
    let machine = Subject::switch(base, bench.block_sizes()).unwrap();
    let fit = fit::fit(&machine, &bench, &measured, &mut |_| {}).unwrap();

    let rows = table::rows(bench.metrics(), &measured, &fit.simulated);
    let markdown = table::markdown(&rows, &measured);
    assert!(rows.iter().all(table::Row::within_target), "{markdown}");
    assert_eq!(rows.len(), 2 * (2 + 4 * SIZES.len() * 2 * 2), "{markdown}");

    let found = &fit.fitted;
    assert_near(
        "switch latency",
        found[Param::LatencyNs],
        expected[Param::LatencyNs],
        0.05,
    );
    assert_near("switch GB/s", found.gbps(), expected.gbps(), 0.03);
    assert_near("launch", found[Param::LaunchNs], 2500.0, 0.05);
    // From 256 KiB a block's copy is most of each collective's time, so its point is pinned.
    // At 4 KiB the copies are a third of a pushed fcollect's time and less of a broadcast's,
    // so metrics within target leave the point looser (the fit of this run finds it within
    // a quarter); 8 B is lost in the flags' latency.
    for (i, ns) in PLANTED_BLOCK_NS.into_iter().enumerate().skip(1) {
        let tolerance = if SIZES[i] < 256 << 10 { 0.25 } else { 0.05 };
        assert_near(
            &format!("block at {} B", SIZES[i]),
            found[Param::Point(Mover::Block, i)],
            ns,
            tolerance,
        );
    }
    // poll and fence are not the collectives' to fit: they keep hgx8's.
    assert_eq!(fit.machine.timing.poll_ns, hgx8().timing.poll_ns);
    assert_eq!(fit.machine.timing.fence_ns, hgx8().timing.fence_ns);

    // What it prints: the switch's links and only what the collectives fit.
    let changes = super::changes(&machine, &fit);
    assert!(
        changes.contains("the 8 GPU-to-NVSwitch links' latency: 225 ns -> "),
        "{changes}"
    );
    assert!(changes.contains("timing.copy.block: 8 B "), "{changes}");
    assert!(!changes.contains("poll_ns"), "{changes}");
    // The picture: each collective's bandwidth in a kernel at each PE count.
    let svg = plot::svg(
        &measured,
        &fit.simulated,
        &plot::collective_series(bench.pe_counts()),
        "hgx8",
    );
    assert_eq!(svg.matches("<polyline").count(), 4 * 2, "{svg}");
    assert_eq!(svg.matches("<circle").count(), 4 * 2 * SIZES.len(), "{svg}");

    // The file it writes is the fitted topology.
    let file = super::toml_file(&machine, &fit, Path::new("truth.raw"), "hgx8");
    assert!(file.contains("run of the collective benchmark"), "{file}");
    let back = sim::topology::file::parse(&file, "fitted.toml").unwrap();
    assert_eq!(back.timing, fit.machine.timing);
    assert_eq!(machine.params_of(&back), fit.fitted);
}

fn read_err(text: &str) -> String {
    let err = measured::parse_collectives(text, Path::new("c.raw"), "hgx8", 8).unwrap_err();
    format!("{:#}", anyhow::Error::from(err))
}

#[test]
fn runs_an_nvswitch_fit_cannot_use_are_refused_naming_the_problem_and_the_fix() {
    let good = "barrier_all_in_kernel pes=8 us=3.100\n";
    let err = read_err(&format!(
        "{good}broadcast_in_kernel pes=16 bytes=8 us=9.0\n"
    ));
    assert!(
        err.starts_with("c.raw:2: broadcast_in_kernel 16 PEs 8 B us was measured on 16 PEs;"),
        "{err}"
    );
    assert!(err.contains("give a topology with that many GPUs"), "{err}");

    let err = read_err(&format!("{good}allreduce_in_kernel pes=8 bytes=8 us=9.0\n"));
    assert!(
        err.starts_with("c.raw:2: allreduce_in_kernel 8 PEs 8 B us is no line of the collective"),
        "{err}"
    );
    let err = read_err(&format!("{good}broadcast_in_kernel pes=8 us=9.0\n"));
    assert!(
        err.contains("is no line of the collective benchmark"),
        "{err}"
    );

    let err = read_err("p_pingpong half_rtt_us=1.2\ninit_ms=280\n");
    assert!(
        err.starts_with("c.raw has no lines of the collective benchmark"),
        "{err}"
    );
    assert!(err.contains("--preset h200x2"), "{err}");

    let err = read_err(&format!("{good}barrier_all_on_stream pes=1 us=2.0\n"));
    assert!(
        err.contains("a collective is fitted on 2 to 8 PEs"),
        "{err}"
    );

    let err = measured::parse_collectives(good, Path::new("c.raw"), "hgx8", 4).unwrap_err();
    assert!(
        matches!(&err, MeasuredError::PesOutOfRange { metric, n_gpus: 4, .. }
            if metric.n_pes() == Some(8)),
        "{err}"
    );
}

#[test]
fn a_topology_file_of_an_nvswitch_machine_is_fitted_as_one() {
    let path = std::env::temp_dir().join(format!("rshmem-hgx8-{}.toml", std::process::id()));
    std::fs::write(&path, sim::topology::write::to_toml(&hgx8())).unwrap();
    let loaded = sim::topology::load(path.to_str().unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(Subject::is_switch(&loaded));
    let subject = Subject::switch(loaded, vec![8, 4096]).unwrap();
    assert_eq!(subject.params_of(subject.base()), {
        let preset = Subject::switch(hgx8(), vec![8, 4096]).unwrap();
        preset.params_of(preset.base())
    });
}

#[test]
fn two_pe_lines_beside_the_collectives_are_shown_as_left_out() {
    let text = "init_ms=280\nbarrier_all_in_kernel pes=4 us=3.100\n";
    let measured = measured::parse_collectives(text, Path::new("c.raw"), "hgx8", 8).unwrap();
    assert_eq!(measured.modelled.len(), 1);
    let bench = Collectives::new(&measured);
    let lines = collectives_on_sim::run(
        &hgx8(),
        &Run {
            n_pes: 4,
            collective: Collective::BarrierAll,
            reported: vec![Collective::BarrierAll],
            measurements: vec![(Form::InKernel, None)],
        },
    )
    .unwrap();
    let rows = table::rows(bench.metrics(), &measured, &lines);
    let markdown = table::markdown(&rows, &measured);
    assert!(
        markdown.contains("| barrier_all_in_kernel 4 PEs us | 3.100 |"),
        "{markdown}"
    );
    assert!(
        markdown.contains("- `init_ms`: a line of the two-PE bench; a fit of an NVSwitch"),
        "{markdown}"
    );
    // And the two-PE fit says the same of collective lines.
    let two_pe = measured::parse(text, Path::new("c.raw"));
    assert!(two_pe.is_err(), "a two-PE fit needs every bench metric");
}

/// Every size of the collective benchmark, and the block's planted curve at the eight its
/// fit keeps (all but 64 B).
const SPEC_SIZES: [u64; 9] = [
    8,
    64,
    512,
    4096,
    32 << 10,
    256 << 10,
    2 << 20,
    16 << 20,
    64 << 20,
];
const SPEC_BLOCK_NS: [f64; 8] = [
    300.0, 330.0, 420.0, 1000.0, 3600.0, 25_000.0, 195_000.0, 780_000.0,
];

/// Writes a synthetic run of every line of the collective benchmark at 4 and 8 PEs, simulated
/// on hgx8 with the planted values of the round trip, to the file `RSHMEM_SYNTHETIC_RAW`
/// names (default `hgx8.synthetic.raw`): what `rshmem calibrate --preset hgx8` is timed on
/// (docs/calibration.md). Made by the simulator, not measured on GPUs.
#[test]
#[ignore = "writes a file to time the fit on; run by hand with --ignored"]
fn write_a_synthetic_run_of_every_collective_line() {
    let mut sizes = SPEC_SIZES.to_vec();
    sizes.remove(1);
    let planting = Subject::switch(hgx8(), sizes).unwrap();
    let machine = planting.with(&truth(&planting, &SPEC_BLOCK_NS));
    let text = format!(
        "# synthetic: the collectives simulated on hgx8 with its switch 30 % slower to cross \
         and 15 % narrower,\n# a block curve, launch and local access planted; not measured on \
         GPUs\n{}",
        raw(&machine, &SPEC_SIZES)
    );
    let path = std::env::var("RSHMEM_SYNTHETIC_RAW").unwrap_or("hgx8.synthetic.raw".into());
    std::fs::write(&path, text).unwrap();
}
