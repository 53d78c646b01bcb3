//! Benchmark results as NVSHMEM's benchmark prints them (`name [pes=N] [bytes=N] key=value ...`,
//! or bare `key=value` pairs), so that one parser reads both runs and lines of the same name
//! compare; and the comparison table with the targets of docs/targets.md.

use std::collections::BTreeMap;
use std::fmt;

/// One measured value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Line {
    metric: Metric,
    value: f64,
}

impl Line {
    /// A bare value named `key`; [`Line::field`] turns it into field `f` of group `key`.
    pub(crate) fn new(key: &str, bytes: Option<u64>, value: f64) -> Line {
        Line {
            metric: Metric::new(None, bytes, key),
            value,
        }
    }

    /// What the line measures.
    pub(crate) fn metric(&self) -> &Metric {
        &self.metric
    }

    /// The measured value.
    pub(crate) fn value(&self) -> f64 {
        self.value
    }

    pub(crate) fn field(self, field: &str) -> Line {
        Line {
            metric: Metric {
                group: Some(self.metric.key),
                key: field.into(),
                ..self.metric
            },
            value: self.value,
        }
    }

    /// The line, measured with `n_pes` PEs (the collectives, which are measured at several).
    pub(crate) fn pes(self, n_pes: u32) -> Line {
        Line {
            metric: self.metric.pes(n_pes),
            value: self.value,
        }
    }
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let metric = &self.metric;
        if let Some(group) = &metric.group {
            write!(f, "{group} ")?;
        }
        if let Some(n_pes) = metric.n_pes {
            write!(f, "pes={n_pes} ")?;
        }
        if let Some(bytes) = metric.bytes {
            write!(f, "bytes={bytes} ")?;
        }
        write!(f, "{}={:.3}", metric.key, self.value)
    }
}

/// What a line measures, without its value: the key of a comparison.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Metric {
    /// The group (`put_bw`), or `None` for a bare `key=value`.
    group: Option<String>,
    /// How many PEs took part, for groups measured at several counts (the collectives);
    /// `None` for the two-PE metrics.
    n_pes: Option<u32>,
    /// The transfer size, for groups measured per size.
    bytes: Option<u64>,
    /// What the value is (`GBps`, `half_rtt_us`, or the bare key).
    key: String,
}

impl Metric {
    /// The metric of group `group` (`None` for a bare key) at `bytes`, named `key`.
    pub(crate) fn new(group: Option<&str>, bytes: Option<u64>, key: &str) -> Metric {
        Metric {
            group: group.map(str::to_string),
            n_pes: None,
            bytes,
            key: key.to_string(),
        }
    }

    /// The metric, measured with `n_pes` PEs.
    pub(crate) fn pes(self, n_pes: u32) -> Metric {
        Metric {
            n_pes: Some(n_pes),
            ..self
        }
    }

    pub(crate) fn n_pes(&self) -> Option<u32> {
        self.n_pes
    }

    pub(crate) fn group(&self) -> Option<&str> {
        self.group.as_deref()
    }

    pub(crate) fn bytes(&self) -> Option<u64> {
        self.bytes
    }

    pub(crate) fn key(&self) -> &str {
        &self.key
    }

    /// Bandwidths are better higher; times lower.
    pub(crate) fn higher_is_better(&self) -> bool {
        self.key.contains("GBps")
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(group) = &self.group {
            write!(f, "{group} ")?;
        }
        if let Some(n_pes) = self.n_pes {
            write!(f, "{n_pes} PEs ")?;
        }
        if let Some(bytes) = self.bytes {
            write!(f, "{} ", size(bytes))?;
        }
        f.write_str(&self.key)
    }
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// GB/s (10^9 bytes per second) of `iters` transfers of `bytes` in `ms`.
pub(crate) fn gbps(bytes: u64, iters: u32, ms: f64) -> f64 {
    bytes as f64 * f64::from(iters) / (ms * 1e6)
}

/// Half a round trip in µs, of `iters` round trips in `ms`.
pub(crate) fn half_rtt_us(ms: f64, iters: u32) -> f64 {
    us_per_op(ms, iters) / 2.0
}

/// µs per operation, of `iters` operations in `ms`.
pub(crate) fn us_per_op(ms: f64, iters: u32) -> f64 {
    ms * 1e3 / f64::from(iters)
}

/// A line of benchmark output that does not parse.
#[derive(Debug, thiserror::Error)]
#[error(
    "line {line}: {text:?} is not `name [pes=N] [bytes=N] key=value ...` nor `key=value ...` \
     with numbers for values"
)]
pub(crate) struct ParseError {
    /// 1-based.
    pub(crate) line: usize,
    pub(crate) text: String,
}

/// Every value of a benchmark's output. Lines starting with `#` and lines without `=` (log
/// text) are skipped.
///
/// # Errors
/// A line with `=` that is not `name [pes=N] [bytes=N] key=value ...` nor `key=value ...`
/// with numbers for values, naming the line.
pub(crate) fn parse(text: &str) -> Result<Vec<Line>, ParseError> {
    Ok(parse_numbered(text)?
        .into_iter()
        .map(|(_, line)| line)
        .collect())
}

/// [`parse`], with the 1-based number of the text line each value came from.
///
/// # Errors
/// As [`parse`].
pub(crate) fn parse_numbered(text: &str) -> Result<Vec<(usize, Line)>, ParseError> {
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let raw = raw.trim();
        if raw.starts_with('#') || !raw.contains('=') {
            continue;
        }
        let bad = || ParseError {
            line: i + 1,
            text: raw.to_string(),
        };
        let mut tokens = raw.split_whitespace().peekable();
        let group = match tokens.peek() {
            Some(t) if !t.contains('=') => tokens.next().map(str::to_string),
            _ => None,
        };
        let mut bytes = None;
        let mut n_pes = None;
        for token in tokens {
            let (key, value) = token.split_once('=').ok_or_else(bad)?;
            if key == "bytes" {
                bytes = Some(value.parse().map_err(|_| bad())?);
                continue;
            }
            if key == "pes" {
                n_pes = Some(value.parse().map_err(|_| bad())?);
                continue;
            }
            let line = Line {
                metric: Metric {
                    group: group.clone(),
                    n_pes,
                    bytes,
                    key: key.to_string(),
                },
                value: value.parse().map_err(|_| bad())?,
            };
            lines.push((i + 1, line));
        }
    }
    Ok(lines)
}

/// A target of docs/targets.md for one metric.
struct Target {
    /// As written in the table.
    text: &'static str,
    /// Whether rshmem's value meets it, given NVSHMEM's if there is one.
    met: fn(ours: f64, nvshmem: Option<f64>) -> Option<bool>,
}

fn target(metric: &Metric) -> Option<Target> {
    let (group, bytes, key) = (metric.group.as_deref(), metric.bytes, metric.key.as_str());
    Some(match (group, bytes, key) {
        (Some("put_bw"), Some(b), "GBps") if b == 256 << 20 => Target {
            text: ">= 390 GB/s",
            met: |o, _| Some(o >= 390.0),
        },
        (Some("put_bw"), Some(b), "GBps") if b == 1 << 20 => Target {
            text: ">= 370 GB/s",
            met: |o, _| Some(o >= 370.0),
        },
        (Some("small_put"), Some(b), "block_GBps") if b == 64 << 10 => Target {
            text: ">= 1.2x NVSHMEM",
            met: |o, n| n.map(|n| o >= 1.2 * n),
        },
        (Some("host_put_on_stream"), Some(4096), "us_per_op") => Target {
            text: "<= 1.2 us",
            met: |o, _| Some(o <= 1.2),
        },
        (Some("host_put_on_stream"), Some(b), "GBps") if b == 256 << 20 => Target {
            text: ">= 394 GB/s",
            met: |o, _| Some(o >= 394.0),
        },
        (Some("p_pingpong"), None, "half_rtt_us") => Target {
            text: "<= 1.0 us",
            met: |o, _| Some(o <= 1.0),
        },
        (None, None, "fetch_add_latency_us") => Target {
            text: "<= 0.8 us",
            met: |o, _| Some(o <= 0.8),
        },
        (Some("put_signal_pingpong"), Some(8), "half_rtt_us") => Target {
            text: "<= 1.8 us",
            met: |o, _| Some(o <= 1.8),
        },
        (None, None, "device_barrier_all_us") => Target {
            text: "<= 2.0 us",
            met: |o, _| Some(o <= 2.0),
        },
        (Some("sum_reduce_on_stream"), Some(8192), "us") => Target {
            text: "<= 4 us",
            met: |o, _| Some(o <= 4.0),
        },
        (None, None, "init_ms") => Target {
            text: "<= NVSHMEM / 2",
            met: |o, n| n.map(|n| o <= n / 2.0),
        },
        _ => return None,
    })
}

/// The markdown table of rshmem's lines beside NVSHMEM's (if given): each metric, both
/// values, the speedup (above 1: rshmem is better) and the target with whether it is met.
/// NVSHMEM's metrics that rshmem did not measure are listed too. With `shared_gpu` (both PEs
/// on one GPU) no target is judged: that traffic never crosses NVLink.
pub(crate) fn table(ours: &[Line], nvshmem: Option<&[Line]>, shared_gpu: bool) -> String {
    let theirs: BTreeMap<Metric, f64> = nvshmem
        .unwrap_or_default()
        .iter()
        .map(|l| (l.metric.clone(), l.value))
        .collect();
    let mut rows = vec![
        "| metric | rshmem | NVSHMEM | speedup | target | met |".to_string(),
        "|---|---|---|---|---|---|".to_string(),
    ];
    let mut seen = Vec::new();
    for line in ours {
        let metric = line.metric.clone();
        let their = theirs.get(&metric).copied();
        let speedup = their.map(|t| {
            if metric.higher_is_better() {
                line.value / t
            } else {
                t / line.value
            }
        });
        let (target_text, met) = match target(&metric) {
            Some(_) if shared_gpu => ("n/a: one GPU", None),
            Some(t) => (t.text, (t.met)(line.value, their)),
            None => ("", None),
        };
        rows.push(format!(
            "| {metric} | {:.3} | {} | {} | {target_text} | {} |",
            line.value,
            their.map_or("-".into(), |t| format!("{t:.3}")),
            speedup.map_or("-".into(), |s| format!("{s:.2}x")),
            match met {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "",
            }
        ));
        seen.push(metric);
    }
    for (metric, value) in &theirs {
        if !seen.contains(metric) {
            let (target_text, met) = target(metric).map_or(("", ""), |t| (t.text, "**no**"));
            rows.push(format!(
                "| {metric} | not measured | {value:.3} | - | {target_text} | {met} |"
            ));
        }
    }
    rows.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const NVSHMEM: &str = "## NVSHMEM\ninit_ms=877.1 malloc_1GiB_ms=12.50\n\
        # nvshmem device put_nbi_block bandwidth PE0->PE1 (GB/s, 10^9 B)\n\
        put_bw bytes=268435456 GBps=361.0\n\
        small_put bytes=65536 warp_GBps=10.00 block_GBps=40.00\n\
        p_pingpong half_rtt_us=1.250\n\
        sum_reduce_on_stream bytes=8192 us=7.60 algbw_GBps=1.1\n\
        broadcast_on_stream pes=8 bytes=4096 us=9.50\n";

    #[test]
    fn nvshmem_output_parses_into_groups_sizes_and_keys() {
        let lines = parse(NVSHMEM).unwrap();
        let shown: Vec<String> = lines.iter().map(ToString::to_string).collect();
        assert_eq!(shown[0], "init_ms=877.100");
        assert_eq!(shown[2], "put_bw bytes=268435456 GBps=361.000");
        assert_eq!(shown[4], "small_put bytes=65536 block_GBps=40.000");
        assert_eq!(shown[8], "broadcast_on_stream pes=8 bytes=4096 us=9.500");
        assert_eq!(lines[8].metric().n_pes(), Some(8));
        assert_eq!(
            lines[8].metric().to_string(),
            "broadcast_on_stream 8 PEs 4 KiB us"
        );
        assert_eq!(lines.len(), 9);
    }

    #[test]
    fn a_value_that_is_not_a_number_names_its_line() {
        let e = parse("put_bw bytes=4096 GBps=fast")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 1"), "{e}");
    }

    #[test]
    fn the_table_compares_like_with_like_and_checks_targets() {
        let theirs = parse(NVSHMEM).unwrap();
        let ours = vec![
            Line::new("init_ms", None, 300.0),
            Line::new("put_bw", Some(256 << 20), 380.0).field("GBps"),
            Line::new("small_put", Some(64 << 10), 50.0).field("block_GBps"),
            Line::new("p_pingpong", None, 1.0).field("half_rtt_us"),
        ];
        let table = table(&ours, Some(&theirs), false);
        assert!(
            table.contains("| init_ms | 300.000 | 877.100 | 2.92x | <= NVSHMEM / 2 | yes |"),
            "{table}"
        );
        assert!(
            table.contains(
                "| put_bw 256 MiB GBps | 380.000 | 361.000 | 1.05x | >= 390 GB/s | **no** |"
            ),
            "{table}"
        );
        assert!(
            table.contains(
                "| small_put 64 KiB block_GBps | 50.000 | 40.000 | 1.25x | >= 1.2x NVSHMEM | yes |"
            ),
            "{table}"
        );
        assert!(
            table.contains("| p_pingpong half_rtt_us | 1.000 | 1.250 | 1.25x | <= 1.0 us | yes |"),
            "{table}"
        );
        assert!(
            table.contains("| sum_reduce_on_stream 8 KiB us | not measured | 7.600 |"),
            "{table}"
        );
    }
}
