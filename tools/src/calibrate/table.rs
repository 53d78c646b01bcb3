//! The report of a calibration: each modelled metric, measured and simulated, its error and
//! whether it is within target, as aligned text or as markdown for BENCHMARKS.md; then the
//! measured metrics the simulator does not model, with why.

use crate::bench::lines::{Line, Metric};

use super::catalogue;
use super::measured::Measured;

/// One modelled metric, both ways.
#[derive(Debug)]
pub(super) struct Row {
    metric: Metric,
    measured: f64,
    simulated: f64,
}

impl Row {
    /// (simulated - measured) / measured.
    fn error(&self) -> f64 {
        (self.simulated - self.measured) / self.measured
    }

    pub(super) fn within_target(&self) -> bool {
        self.error().abs() <= self.tolerance()
    }

    fn tolerance(&self) -> f64 {
        catalogue::tolerance_at(&self.metric, self.measured)
    }

    /// The row's cells: metric, measured, simulated, error, target, within.
    fn cells(&self) -> [String; 6] {
        [
            self.metric.to_string(),
            format!("{:.3}", self.measured),
            format!("{:.3}", self.simulated),
            format!("{:+.2} %", 100.0 * self.error()),
            format!("±{:.0} %", 100.0 * self.tolerance()),
            if self.within_target() {
                "yes"
            } else {
                "**no**"
            }
            .to_string(),
        ]
    }
}

const HEADER: [&str; 6] = [
    "metric",
    "measured",
    "simulated",
    "error",
    "target",
    "within",
];

/// The rows of every modelled metric, in the order of `metrics`.
pub(super) fn rows(metrics: &[Metric], measured: &Measured, simulated: &[Line]) -> Vec<Row> {
    metrics
        .iter()
        .cloned()
        .map(|metric| {
            let simulated = simulated
                .iter()
                .find(|l| *l.metric() == metric)
                .map(Line::value)
                .unwrap_or_else(|| panic!("the simulated bench reports {metric}"));
            Row {
                measured: measured.modelled[&metric],
                simulated,
                metric,
            }
        })
        .collect()
}

/// The comparison as a markdown table, then the metrics left out as a list.
pub(super) fn markdown(rows: &[Row], measured: &Measured) -> String {
    let mut out = format!(
        "| {} |\n|---|---:|---:|---:|---:|---|\n",
        HEADER.join(" | ")
    );
    for row in rows {
        out.push_str(&format!("| {} |\n", row.cells().join(" | ")));
    }
    if !measured.not_modelled.is_empty() {
        out.push_str("\nNot modelled by the simulator:\n\n");
        for (reason, metrics) in left_out(measured) {
            let names: Vec<String> = metrics.iter().map(|m| format!("`{m}`")).collect();
            out.push_str(&format!("- {}: {reason}.\n", names.join(", ")));
        }
    }
    out
}

/// The comparison as aligned text, then the metrics left out.
pub(super) fn text(rows: &[Row], measured: &Measured) -> String {
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|row| row.cells().map(|c| c.replace("**", "")))
        .collect();
    let width = |i: usize| {
        cells
            .iter()
            .map(|c| c[i].chars().count())
            .chain([HEADER[i].len()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..HEADER.len()).map(width).collect();
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            // The metric and the verdict read left to right; numbers line up on the right.
            .map(|(i, (cell, &w))| match i {
                0 | 5 => format!("{cell:<w$}"),
                _ => format!("{cell:>w$}"),
            })
            .collect();
        padded.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(&HEADER.map(String::from));
    for row in &cells {
        out.push_str(&line(row));
    }
    if !measured.not_modelled.is_empty() {
        out.push_str("\nnot modelled by the simulator:\n");
        for (reason, metrics) in left_out(measured) {
            let names: Vec<String> = metrics.iter().map(ToString::to_string).collect();
            out.push_str(&format!("  {}: {reason}\n", names.join(", ")));
        }
    }
    out
}

/// The measured metrics the simulator does not model, by why, each in file order.
fn left_out(measured: &Measured) -> Vec<(&'static str, Vec<&Metric>)> {
    let mut groups: Vec<(&'static str, Vec<&Metric>)> = Vec::new();
    for (line, reason) in &measured.not_modelled {
        match groups.iter_mut().find(|(r, _)| r == reason) {
            Some((_, metrics)) => metrics.push(line.metric()),
            None => groups.push((reason, vec![line.metric()])),
        }
    }
    groups
}
