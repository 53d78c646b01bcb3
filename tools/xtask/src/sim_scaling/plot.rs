//! The sweep as a picture: wall seconds and peak resident memory against PEs, both axes
//! logarithmic, one line per workload; a run stopped at a limit is a cross at what it had
//! reached by then, so the reader sees where the simulator stops scaling and why.

use std::fmt::Write as _;

use tools::svg::xml;

use super::{Outcome, Point};

const PANEL_W: f64 = 460.0;
const PANEL_H: f64 = 320.0;
const MARGIN_L: f64 = 60.0;
const MARGIN_R: f64 = 14.0;
const MARGIN_B: f64 = 44.0;
const MARGIN_T: f64 = 30.0;
const GAP: f64 = 24.0;
const TOP: f64 = 64.0;
/// Line colours, one per workload in order.
const COLOURS: [&str; 6] = [
    "#2471a3", "#c0392b", "#27ae60", "#8e44ad", "#d35400", "#7f8c8d",
];

/// What a panel plots of a point: its value, whether the run was stopped there.
type Value = fn(&Outcome) -> Option<(f64, bool)>;

fn wall_s(outcome: &Outcome) -> Option<(f64, bool)> {
    match outcome {
        Outcome::Ran(m) => Some((m.wall_s, false)),
        Outcome::Stopped { wall_s, .. } => Some((*wall_s, true)),
        Outcome::Failed { .. } | Outcome::Skipped => None,
    }
}

fn rss_gib(outcome: &Outcome) -> Option<(f64, bool)> {
    let gib = |bytes: u64| bytes as f64 / (1u64 << 30) as f64;
    match outcome {
        Outcome::Ran(m) => Some((gib(m.rss_bytes), false)),
        Outcome::Stopped { rss_bytes, .. } => Some((gib(*rss_bytes), true)),
        Outcome::Failed { .. } | Outcome::Skipped => None,
    }
}

/// The SVG of `points`.
pub(super) fn svg(points: &[Point]) -> String {
    let mut workloads: Vec<&str> = Vec::new();
    for p in points {
        if !workloads.contains(&p.workload.as_str()) {
            workloads.push(&p.workload);
        }
    }
    let width = 2.0 * PANEL_W + 3.0 * GAP;
    let height = TOP + PANEL_H + GAP;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{GAP}\" y=\"24\" font-size=\"15\">The simulator at scale: one run of each \
         workload per PE count, seed 1 (× = stopped at a limit)</text>"
    );
    let mut x = GAP;
    for (i, workload) in workloads.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let _ = writeln!(
            out,
            "<text x=\"{x}\" y=\"46\" fill=\"{colour}\">● {}</text>",
            xml(workload)
        );
        x += 24.0 + 7.0 * workload.len() as f64;
    }
    let panels: [(&str, &str, Value); 2] = [
        ("wall time", "s", wall_s),
        ("peak resident memory", "GiB", rss_gib),
    ];
    for (i, (title, unit, value)) in panels.into_iter().enumerate() {
        let left = GAP + i as f64 * (PANEL_W + GAP);
        panel(&mut out, left, title, unit, value, points, &workloads);
    }
    out.push_str("</svg>\n");
    out
}

/// One panel whose left edge is at `left`.
fn panel(
    out: &mut String,
    left: f64,
    title: &str,
    unit: &str,
    value: Value,
    points: &[Point],
    workloads: &[&str],
) {
    let _ = writeln!(
        out,
        "<g transform=\"translate({left},{TOP})\">\n\
         <rect width=\"{PANEL_W}\" height=\"{PANEL_H}\" fill=\"none\" stroke=\"#ccc\"/>\n\
         <text x=\"{MARGIN_L}\" y=\"18\" font-weight=\"bold\">{title} ({unit})</text>"
    );
    let plotted: Vec<(&Point, f64, bool)> = points
        .iter()
        .filter_map(|p| value(&p.outcome).map(|(v, stopped)| (p, v, stopped)))
        .collect();
    if let Some(scale) = Scale::of(plotted.iter().map(|&(p, v, _)| (p.pes, v))) {
        scale.axes(out, unit);
        for (i, workload) in workloads.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let mine: Vec<_> = plotted
                .iter()
                .filter(|(p, ..)| p.workload == *workload)
                .collect();
            let line: Vec<String> = mine
                .iter()
                .map(|&&(p, v, _)| format!("{:.1},{:.1}", scale.x(p.pes), scale.y(v)))
                .collect();
            let _ = writeln!(
                out,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"/>",
                line.join(" ")
            );
            for &&(p, v, stopped) in &mine {
                let (cx, cy) = (scale.x(p.pes), scale.y(v));
                let tip = format!(
                    "{workload}, {} PEs: {v:.3} {unit}{}",
                    p.pes,
                    if stopped { ", stopped here" } else { "" }
                );
                if stopped {
                    let _ = writeln!(
                        out,
                        "<path d=\"M{:.1},{:.1}l10,10m0,-10l-10,10\" stroke=\"{colour}\" \
                         stroke-width=\"2.5\"><title>{}</title></path>",
                        cx - 5.0,
                        cy - 5.0,
                        xml(&tip)
                    );
                } else {
                    let _ = writeln!(
                        out,
                        "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"3.5\" fill=\"{colour}\">\
                         <title>{}</title></circle>",
                        xml(&tip)
                    );
                }
            }
        }
    }
    out.push_str("</g>\n");
}

/// Where PEs and values fall in a panel: PEs on a log-2 axis, values on whole decades.
struct Scale {
    log2_pes: (f64, f64),
    log10_value: (f64, f64),
}

impl Scale {
    fn of(points: impl Iterator<Item = (u32, f64)> + Clone) -> Option<Scale> {
        let low_pes = points.clone().map(|p| p.0).min()?;
        let high_pes = points.clone().map(|p| p.0).max()?;
        let positive = points.map(|p| p.1.max(1e-4));
        let low = positive.clone().fold(f64::INFINITY, f64::min);
        let high = positive.fold(0.0, f64::max);
        let (low, high) = (low.log10().floor(), high.log10().ceil());
        Some(Scale {
            log2_pes: (
                f64::from(low_pes).log2() - 0.3,
                f64::from(high_pes).log2() + 0.3,
            ),
            log10_value: (low, high.max(low + 1.0)),
        })
    }

    fn x(&self, pes: u32) -> f64 {
        let (lo, hi) = self.log2_pes;
        MARGIN_L + (f64::from(pes).log2() - lo) / (hi - lo) * (PANEL_W - MARGIN_L - MARGIN_R)
    }

    fn y(&self, value: f64) -> f64 {
        let (lo, hi) = self.log10_value;
        let at = (value.max(1e-4).log10() - lo) / (hi - lo);
        PANEL_H - MARGIN_B - at * (PANEL_H - MARGIN_B - MARGIN_T)
    }

    /// Ticks at each power of two of PEs from the lowest and each decade of value, with the
    /// axes' names.
    fn axes(&self, out: &mut String, unit: &str) {
        let (bottom, right) = (PANEL_H - MARGIN_B, PANEL_W - MARGIN_R);
        let _ = writeln!(
            out,
            "<path d=\"M{MARGIN_L},{MARGIN_T}V{bottom}H{right}\" fill=\"none\" stroke=\"#333\"/>"
        );
        let (lo, hi) = self.log2_pes;
        for power in lo.ceil() as u32..=hi.floor() as u32 {
            let pes = 1u32 << power;
            let x = self.x(pes);
            let _ = writeln!(
                out,
                "<path d=\"M{x:.1},{bottom}v5\" stroke=\"#333\"/>\
                 <text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{pes}</text>",
                bottom + 17.0
            );
        }
        let (lo, hi) = self.log10_value;
        for decade in lo as i32..=hi as i32 {
            let value = 10f64.powi(decade);
            let y = self.y(value);
            let label = if decade < 0 {
                format!("{value:.*}", (-decade) as usize)
            } else {
                format!("{value:.0}")
            };
            let _ = writeln!(
                out,
                "<path d=\"M{MARGIN_L},{y:.1}H{right}\" stroke=\"#eee\"/>\
                 <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>",
                MARGIN_L - 6.0,
                y + 4.0
            );
        }
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">PEs (simulated GPUs)</text>\
             <text transform=\"translate(14,{:.1}) rotate(-90)\" text-anchor=\"middle\">{unit}</text>",
            (MARGIN_L + right) / 2.0,
            PANEL_H - 8.0,
            (MARGIN_T + bottom) / 2.0
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::ran;
    use super::*;

    #[test]
    fn every_run_is_drawn_and_a_stopped_one_is_a_cross() {
        let points = [
            ran("hello", 8, 0.01, 6 << 20),
            ran("hello", 4096, 0.8, 128 << 20),
            Point {
                workload: "alltoall".into(),
                pes: 4096,
                outcome: Outcome::Stopped {
                    why: "over 600 s".into(),
                    wall_s: 600.0,
                    rss_bytes: 5 << 30,
                },
            },
            Point {
                workload: "alltoall".into(),
                pes: 16384,
                outcome: Outcome::Skipped,
            },
        ];
        let svg = svg(&points);
        assert_eq!(svg.matches("<circle").count(), 4, "two runs in two panels");
        assert_eq!(svg.matches("stopped here").count(), 2, "{svg}");
        assert!(svg.contains("hello, 4096 PEs: 0.800 s"), "{svg}");
        assert!(!svg.contains("16384 PEs:"), "a skipped run is not drawn");
        assert!(svg.contains(">4096</text>") && svg.contains(">8</text>"));
        assert!(svg.ends_with("</svg>\n"));
    }

    #[test]
    fn values_fall_inside_the_panel() {
        let scale = Scale::of([(8, 0.004), (16384, 700.0)].into_iter()).unwrap();
        for (pes, v) in [(8, 0.004), (16384, 700.0), (512, 1.0)] {
            let (x, y) = (scale.x(pes), scale.y(v));
            assert!((MARGIN_L..=PANEL_W - MARGIN_R).contains(&x), "{x}");
            assert!((MARGIN_T..=PANEL_H - MARGIN_B).contains(&y), "{y}");
        }
        assert!(scale.y(1.0) < scale.y(0.01), "larger values higher up");
    }
}
