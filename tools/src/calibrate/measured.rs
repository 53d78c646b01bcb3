//! The measured side of a calibration: the lines `rshmem bench --raw FILE` wrote (the two-PE
//! bench) or the collective benchmark printed, checked and split into the metrics the
//! simulator models and the rest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::bench::lines::{self, Line, Metric, ParseError};

use super::catalogue;
use super::collectives;

/// Why a file of measured bench lines cannot be calibrated against.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MeasuredError {
    #[error("cannot read the measured bench lines {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}", path.display())]
    Malformed {
        path: PathBuf,
        #[source]
        source: ParseError,
    },
    #[error(
        "{}:{line}: {metric} is {value}; a measured time or bandwidth is a positive number",
        path.display()
    )]
    NotPositive {
        path: PathBuf,
        line: usize,
        metric: Metric,
        value: f64,
    },
    #[error(
        "{}:{line}: {metric} was given already at line {first}; give the lines of one bench run",
        path.display()
    )]
    Duplicate {
        path: PathBuf,
        line: usize,
        first: usize,
        metric: Metric,
    },
    #[error(
        "{} lacks {} of the metrics the simulator models: {}; give the file that \
         `rshmem bench --raw FILE` wrote",
        path.display(),
        missing.len(),
        missing.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
    )]
    Missing { path: PathBuf, missing: Vec<Metric> },
    #[error(
        "{}:{line}: {metric} was measured on {} PEs; a collective is fitted on 2 to \
         {n_gpus} PEs, one per GPU of topology {topology:?}: give a topology with that many \
         GPUs, or leave those lines out",
        path.display(),
        metric.n_pes().unwrap_or(0)
    )]
    PesOutOfRange {
        path: PathBuf,
        line: usize,
        metric: Metric,
        topology: Box<str>,
        n_gpus: u32,
    },
    #[error(
        "{}:{line}: {metric} is no line of the collective benchmark (barrier_all, broadcast, \
         fcollect, alltoall or sum_reduce, then _on_stream or _in_kernel, with pes=N, us=X \
         and, but for the barrier, bytes=B and algbw_GBps=Y); correct the line or leave it out",
        path.display()
    )]
    UnknownCollective {
        path: PathBuf,
        line: usize,
        metric: Metric,
    },
    #[error(
        "{} has no lines of the collective benchmark (such as `barrier_all_in_kernel pes=8 \
         us=3.2`); topology {topology:?} is an NVSwitch machine, which is fitted to the \
         collectives: give the lines of a run of the collective benchmark, or fit a two-PE \
         bench run to a pair of GPUs (--preset h200x2)",
        path.display()
    )]
    NoCollectives { path: PathBuf, topology: String },
}

/// What a bench run measured.
#[derive(Debug)]
pub(crate) struct Measured {
    /// The value of every metric the simulator models.
    pub(super) modelled: BTreeMap<Metric, f64>,
    /// The lines of the metrics it does not model, in file order, each with why.
    pub(super) not_modelled: Vec<(Line, &'static str)>,
}

/// Reads the bench lines at `path`.
///
/// # Errors
/// [`MeasuredError`] naming the file, and the line where there is one.
#[cfg(test)]
pub(super) fn read(path: &Path) -> Result<Measured, MeasuredError> {
    parse(&read_text(path)?, path)
}

/// The text of the file at `path`.
///
/// # Errors
/// [`MeasuredError::Io`].
pub(super) fn read_text(path: &Path) -> Result<String, MeasuredError> {
    std::fs::read_to_string(path).map_err(|source| MeasuredError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Every value of `text`, which came from `path`, with its line number; no metric twice.
fn numbered(text: &str, path: &Path) -> Result<Vec<(usize, Line)>, MeasuredError> {
    let numbered = lines::parse_numbered(text).map_err(|source| MeasuredError::Malformed {
        path: path.to_path_buf(),
        source,
    })?;
    let mut first_line: BTreeMap<Metric, usize> = BTreeMap::new();
    for (line, value) in &numbered {
        let metric = value.metric();
        if let Some(&first) = first_line.get(metric) {
            return Err(MeasuredError::Duplicate {
                path: path.to_path_buf(),
                line: *line,
                first,
                metric: metric.clone(),
            });
        }
        first_line.insert(metric.clone(), *line);
    }
    Ok(numbered)
}

/// Adds `value`, of `metric` at `line`, to the modelled metrics: a positive number.
fn keep(
    measured: &mut Measured,
    path: &Path,
    line: usize,
    value: &Line,
) -> Result<(), MeasuredError> {
    // Only values the fit computes with must be positive; the others are only shown.
    if !(value.value() > 0.0 && value.value().is_finite()) {
        return Err(MeasuredError::NotPositive {
            path: path.to_path_buf(),
            line,
            metric: value.metric().clone(),
            value: value.value(),
        });
    }
    measured
        .modelled
        .insert(value.metric().clone(), value.value());
    Ok(())
}

/// Reads two-PE bench lines from `text`, which came from `path`: every metric of the bench
/// must be there.
///
/// # Errors
/// As [`read`], but for the reading.
pub(super) fn parse(text: &str, path: &Path) -> Result<Measured, MeasuredError> {
    let wanted = catalogue::modelled();
    let mut measured = Measured {
        modelled: BTreeMap::new(),
        not_modelled: Vec::new(),
    };
    for (line, value) in numbered(text, path)? {
        if value.metric().n_pes().is_some() {
            measured.not_modelled.push((value, COLLECTIVE_LINE));
        } else if wanted.contains(value.metric()) {
            keep(&mut measured, path, line, &value)?;
        } else {
            measured
                .not_modelled
                .push((value, catalogue::NOT_A_BENCH_METRIC));
        }
    }
    let missing: Vec<Metric> = wanted
        .into_iter()
        .filter(|m| !measured.modelled.contains_key(m))
        .collect();
    if !missing.is_empty() {
        return Err(MeasuredError::Missing {
            path: path.to_path_buf(),
            missing,
        });
    }
    Ok(measured)
}

/// Why a collective line is left out of a fit of the two-PE bench.
const COLLECTIVE_LINE: &str = "a line of the collective benchmark; the collectives are \
    fitted on an NVSwitch topology (--preset hgx8)";

/// Reads the collective benchmark's lines from `text`, which came from `path`, for
/// `topology` of `n_gpus` GPUs: every line with a PE count must be a collective's, at a
/// count the topology holds; lines without one (the two-PE bench's) are left out.
///
/// # Errors
/// As [`parse`], and [`MeasuredError::PesOutOfRange`], [`MeasuredError::UnknownCollective`],
/// [`MeasuredError::NoCollectives`].
pub(super) fn parse_collectives(
    text: &str,
    path: &Path,
    topology: &str,
    n_gpus: u32,
) -> Result<Measured, MeasuredError> {
    let mut measured = Measured {
        modelled: BTreeMap::new(),
        not_modelled: Vec::new(),
    };
    for (line, value) in numbered(text, path)? {
        let metric = value.metric();
        let Some(n_pes) = metric.n_pes() else {
            measured
                .not_modelled
                .push((value, collectives::TWO_PE_LINE));
            continue;
        };
        if !collectives::is_collective(metric) {
            return Err(MeasuredError::UnknownCollective {
                path: path.to_path_buf(),
                line,
                metric: metric.clone(),
            });
        }
        if !(2..=n_gpus).contains(&n_pes) {
            return Err(MeasuredError::PesOutOfRange {
                path: path.to_path_buf(),
                line,
                metric: metric.clone(),
                topology: topology.into(),
                n_gpus,
            });
        }
        keep(&mut measured, path, line, &value)?;
    }
    if measured.modelled.is_empty() {
        return Err(MeasuredError::NoCollectives {
            path: path.to_path_buf(),
            topology: topology.to_string(),
        });
    }
    Ok(measured)
}
