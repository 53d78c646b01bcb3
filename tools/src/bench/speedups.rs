//! The collectives' speedups at a glance: one row per collective, form and PE count, one
//! column per size, each cell NVSHMEM's time over rshmem's (above 1: rshmem is faster). The
//! per-collective tables hold the values behind every cell.

use std::collections::BTreeMap;

use super::collectives::{Collective, Form, SIZES};
use super::lines::{Line, size};

/// The time of each `(line name, PEs, bytes)` in `lines`: its `us` field.
fn times(lines: &[Line]) -> BTreeMap<(String, u32, Option<u64>), f64> {
    lines
        .iter()
        .filter(|l| l.metric().key() == "us")
        .filter_map(|l| {
            let metric = l.metric();
            Some((
                (metric.group()?.to_string(), metric.n_pes()?, metric.bytes()),
                l.value(),
            ))
        })
        .collect()
}

/// The markdown matrix of speedups of `ours` over `theirs`; cells below 1 are bold, cells
/// either side lacks are `-`. The barrier has one column, under the first size's.
pub(super) fn matrix(ours: &[Line], theirs: &[Line]) -> String {
    let (ours, theirs) = (times(ours), times(theirs));
    let mut pe_counts: Vec<u32> = ours.keys().map(|(_, n, _)| *n).collect();
    pe_counts.sort_unstable();
    pe_counts.dedup();
    let mut header = "| collective | PEs |".to_string();
    let mut rule = "|---|---:|".to_string();
    for &bytes in &SIZES {
        header.push_str(&format!(" {} |", size(bytes)));
        rule.push_str("---:|");
    }
    let mut rows = vec![header, rule];
    for collective in Collective::ALL {
        for form in Form::ALL {
            let name = collective.line_name(form);
            for &n_pes in &pe_counts {
                let sizes: Vec<Option<u64>> = if collective.is_sized() {
                    SIZES.iter().map(|&b| Some(b)).collect()
                } else {
                    vec![None]
                };
                let cells: Vec<String> = sizes
                    .iter()
                    .map(|&bytes| {
                        let key = (name.clone(), n_pes, bytes);
                        match (ours.get(&key), theirs.get(&key)) {
                            (Some(&o), Some(&t)) if o > 0.0 => speedup_cell(t / o),
                            _ => "-".to_string(),
                        }
                    })
                    .collect();
                if cells.iter().all(|c| c == "-") {
                    continue;
                }
                let blank = SIZES.len() - cells.len();
                rows.push(format!(
                    "| {name} | {n_pes} | {}{} |",
                    cells.join(" | "),
                    " | ".repeat(blank)
                ));
            }
        }
    }
    rows.join("\n")
}

/// A speedup, bold where rshmem is slower.
fn speedup_cell(speedup: f64) -> String {
    if speedup < 1.0 {
        format!("**{speedup:.2}**")
    } else {
        format!("{speedup:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::lines::parse;

    #[test]
    fn each_cell_is_nvshmem_time_over_ours_and_slower_cells_are_bold() {
        let ours = parse(
            "barrier_all_in_kernel pes=4 us=2.0\n\
             broadcast_on_stream pes=4 bytes=8 us=10.0 algbw_GBps=0.001\n\
             broadcast_on_stream pes=4 bytes=67108864 us=1000.0 algbw_GBps=67.1\n",
        )
        .unwrap();
        let theirs = parse(
            "barrier_all_in_kernel pes=4 us=5.0\n\
             broadcast_on_stream pes=4 bytes=8 us=8.0 algbw_GBps=0.001\n",
        )
        .unwrap();
        let table = matrix(&ours, &theirs);
        assert!(table.starts_with("| collective | PEs | 8 B |"), "{table}");
        assert!(
            table.contains("| barrier_all_in_kernel | 4 | 2.50 | "),
            "{table}"
        );
        // 8 B: 8 / 10; 64 MiB: NVSHMEM has no line, so no speedup.
        assert!(
            table.contains("| broadcast_on_stream | 4 | **0.80** | - |"),
            "{table}"
        );
        assert!(table.trim_end().ends_with("| - |"), "{table}");
        assert!(
            !table.contains("in_kernel | 4 | -"),
            "rows with no pair are left out: {table}"
        );
    }
}
