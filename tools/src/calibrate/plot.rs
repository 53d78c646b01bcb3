//! The calibration as a picture (`rshmem calibrate --svg FILE`): for each bandwidth the bench
//! measures at several sizes (for the collectives, each collective's in a kernel at each PE
//! count), the measured points and the simulated line, GB/s against bytes on logarithmic
//! axes, one panel per series, so a reader sees at a glance where the simulator follows the
//! GPUs and where it does not.

use std::fmt::Write;

use crate::bench::lines::{Line, Metric};
use crate::svg::xml;

use super::measured::Measured;

/// A series of one panel: the metric group, PE count and key whose sizes it plots, and its
/// title.
pub(super) struct Series {
    group: String,
    n_pes: Option<u32>,
    key: &'static str,
    title: String,
}

/// The two-PE bench's series: its four bandwidths.
pub(super) fn two_pe_series() -> Vec<Series> {
    TWO_PE_SERIES
        .iter()
        .map(|&(group, key, title)| Series {
            group: group.to_string(),
            n_pes: None,
            key,
            title: title.to_string(),
        })
        .collect()
}

/// The collectives' series: each collective's bandwidth in a kernel, at each PE count
/// measured.
pub(super) fn collective_series(pe_counts: impl IntoIterator<Item = u32>) -> Vec<Series> {
    let mut series = Vec::new();
    for n_pes in pe_counts {
        for collective in ["broadcast", "fcollect", "alltoall", "sum_reduce"] {
            let group = format!("{collective}_in_kernel");
            series.push(Series {
                title: format!("{group}, {n_pes} PEs"),
                group,
                n_pes: Some(n_pes),
                key: "algbw_GBps",
            });
        }
    }
    series
}

const TWO_PE_SERIES: [(&str, &str, &str); 4] = [
    (
        "put_bw",
        "GBps",
        "put_bw: 1 block below 1 MiB, 32 blocks from there",
    ),
    (
        "host_put_on_stream",
        "GBps",
        "host_put_on_stream (copy engine)",
    ),
    ("small_put", "warp_GBps", "small_put, one warp"),
    ("small_put", "block_GBps", "small_put, one block"),
];

const PANEL_W: f64 = 420.0;
const PANEL_H: f64 = 260.0;
const MARGIN_L: f64 = 56.0;
const MARGIN_B: f64 = 40.0;
const MARGIN_T: f64 = 30.0;
const GAP: f64 = 24.0;

/// One size of a series: bytes, measured and simulated GB/s.
type Point = (u64, f64, f64);

/// The SVG of the fit: `measured` against `simulated` in `series`, titled `title`.
pub(super) fn svg(
    measured: &Measured,
    simulated: &[Line],
    series: &[Series],
    title: &str,
) -> String {
    let panels: Vec<(&str, Vec<Point>)> = series
        .iter()
        .map(|s| (s.title.as_str(), points(measured, simulated, s)))
        .collect();
    let rows = panels.len().div_ceil(2) as f64;
    let width = 2.0 * (PANEL_W + GAP) + GAP;
    let height = rows * (PANEL_H + GAP) + GAP + 40.0;
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{GAP}\" y=\"26\" font-size=\"15\">{}</text>\n\
         <text x=\"{}\" y=\"26\" text-anchor=\"end\"><tspan fill=\"#c0392b\">● measured</tspan> \
         <tspan fill=\"#2471a3\">— simulated</tspan></text>\n",
        xml(title),
        width - GAP
    );
    for (i, (name, points)) in panels.iter().enumerate() {
        let x = GAP + (i % 2) as f64 * (PANEL_W + GAP);
        let y = 40.0 + GAP + (i / 2) as f64 * (PANEL_H + GAP);
        panel(&mut out, x, y, name, points);
    }
    out.push_str("</svg>\n");
    out
}

/// The sizes of `series`, with both values, smallest first.
fn points(measured: &Measured, simulated: &[Line], series: &Series) -> Vec<Point> {
    let mut points: Vec<Point> = measured
        .modelled
        .iter()
        .filter(|(m, _)| {
            m.group() == Some(series.group.as_str())
                && m.n_pes() == series.n_pes
                && m.key() == series.key
        })
        .filter_map(|(m, &value)| {
            let bytes = m.bytes()?;
            let sim = simulated.iter().find(|l| l.metric() == m)?.value();
            Some((bytes, value, sim))
        })
        .collect();
    points.sort_by_key(|p| p.0);
    points
}

/// One panel at (`x`, `y`): axes, ticks, the simulated line and the measured points.
fn panel(out: &mut String, x: f64, y: f64, name: &str, points: &[Point]) {
    let _ = writeln!(
        out,
        "<g transform=\"translate({x},{y})\">\n\
         <rect width=\"{PANEL_W}\" height=\"{PANEL_H}\" fill=\"none\" stroke=\"#ccc\"/>\n\
         <text x=\"{MARGIN_L}\" y=\"18\" font-weight=\"bold\">{}</text>",
        xml(name)
    );
    if let Some(scale) = Scale::of(points) {
        scale.axes(out);
        let line: Vec<String> = points
            .iter()
            .map(|&(b, _, sim)| format!("{:.1},{:.1}", scale.x(b), scale.y(sim)))
            .collect();
        let _ = writeln!(
            out,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"#2471a3\" stroke-width=\"2\"/>",
            line.join(" ")
        );
        for &(bytes, gbps, sim) in points {
            let error = 100.0 * (sim - gbps) / gbps;
            let _ = writeln!(
                out,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"#c0392b\"><title>{} B: \
                 measured {gbps:.3} GB/s, simulated {sim:.3} ({error:+.2} %)</title></circle>",
                scale.x(bytes),
                scale.y(gbps),
                bytes
            );
        }
    }
    out.push_str("</g>\n");
}

/// Where bytes and GB/s fall in a panel: both axes logarithmic.
struct Scale {
    bytes: (f64, f64),
    gbps: (f64, f64),
}

impl Scale {
    fn of(points: &[Point]) -> Option<Scale> {
        let first = points.first()?;
        let last = points.last()?;
        let values = points.iter().flat_map(|p| [p.1, p.2]);
        let low = values.clone().fold(f64::INFINITY, f64::min);
        let high = values.fold(0.0, f64::max);
        // Whole decades around the values, so the ticks read 1, 10, 100 GB/s.
        Some(Scale {
            bytes: ((first.0 as f64).log2() - 0.5, (last.0 as f64).log2() + 0.5),
            gbps: (
                low.log10().floor(),
                high.log10().ceil().max(low.log10().floor() + 1.0),
            ),
        })
    }

    fn x(&self, bytes: u64) -> f64 {
        let (lo, hi) = self.bytes;
        MARGIN_L + ((bytes as f64).log2() - lo) / (hi - lo) * (PANEL_W - MARGIN_L - 12.0)
    }

    fn y(&self, gbps: f64) -> f64 {
        let (lo, hi) = self.gbps;
        PANEL_H - MARGIN_B - (gbps.log10() - lo) / (hi - lo) * (PANEL_H - MARGIN_B - MARGIN_T)
    }

    /// The axes with a tick per power of four bytes (of sixteen over a wide range) and per
    /// decade of GB/s.
    fn axes(&self, out: &mut String) {
        let step = if self.bytes.1 - self.bytes.0 > 13.0 {
            4
        } else {
            2
        };
        let (bottom, right) = (PANEL_H - MARGIN_B, PANEL_W - 12.0);
        let _ = writeln!(
            out,
            "<path d=\"M{MARGIN_L},{MARGIN_T}V{bottom}H{right}\" fill=\"none\" stroke=\"#333\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">bytes</text>\n\
             <text x=\"14\" y=\"{:.1}\" transform=\"rotate(-90 14 {:.1})\" \
             text-anchor=\"middle\">GB/s</text>",
            (MARGIN_L + right) / 2.0,
            PANEL_H - 6.0,
            (MARGIN_T + bottom) / 2.0,
            (MARGIN_T + bottom) / 2.0
        );
        let mut exp = self.bytes.0.ceil() as u32;
        exp = exp.next_multiple_of(step);
        while f64::from(exp) <= self.bytes.1 {
            let x = self.x(1 << exp);
            let _ = writeln!(
                out,
                "<line x1=\"{x:.1}\" y1=\"{bottom}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>\
                 <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                bottom + 4.0,
                bottom + 16.0,
                size(1 << exp)
            );
            exp += step;
        }
        let mut decade = self.gbps.0;
        while decade <= self.gbps.1 {
            let y = self.y(10f64.powf(decade));
            let _ = writeln!(
                out,
                "<line x1=\"{MARGIN_L}\" y1=\"{y:.1}\" x2=\"{right}\" y2=\"{y:.1}\" \
                 stroke=\"#eee\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                MARGIN_L - 4.0,
                y + 4.0,
                10f64.powf(decade)
            );
            decade += 1.0;
        }
    }
}

/// `bytes` as the bench names sizes: `4 KiB`, `1 MiB`.
fn size(bytes: u64) -> String {
    Metric::new(None, Some(bytes), "")
        .to_string()
        .trim()
        .to_string()
}
