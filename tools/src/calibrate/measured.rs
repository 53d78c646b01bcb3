//! The measured side of a calibration: the lines `rshmem bench --raw FILE` wrote, checked and
//! split into the metrics the simulator models and the rest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::bench::lines::{self, Line, Metric, ParseError};

use super::catalogue;

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
}

/// What a bench run measured.
#[derive(Debug)]
pub(crate) struct Measured {
    /// The value of every metric the simulator models.
    pub(super) modelled: BTreeMap<Metric, f64>,
    /// The lines of the metrics it does not model, in file order.
    pub(super) not_modelled: Vec<Line>,
}

/// Reads the bench lines at `path`.
///
/// # Errors
/// [`MeasuredError`] naming the file, and the line where there is one.
pub(super) fn read(path: &Path) -> Result<Measured, MeasuredError> {
    let text = std::fs::read_to_string(path).map_err(|source| MeasuredError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, path)
}

/// Reads bench lines from `text`, which came from `path`.
///
/// # Errors
/// As [`read`], but for the reading.
pub(super) fn parse(text: &str, path: &Path) -> Result<Measured, MeasuredError> {
    let path = || path.to_path_buf();
    let numbered = lines::parse_numbered(text).map_err(|source| MeasuredError::Malformed {
        path: path(),
        source,
    })?;
    let wanted = catalogue::modelled();
    let mut first_line: BTreeMap<Metric, usize> = BTreeMap::new();
    let mut measured = Measured {
        modelled: BTreeMap::new(),
        not_modelled: Vec::new(),
    };
    for (line, value) in numbered {
        let metric = value.metric().clone();
        if let Some(&first) = first_line.get(&metric) {
            return Err(MeasuredError::Duplicate {
                path: path(),
                line,
                first,
                metric,
            });
        }
        first_line.insert(metric.clone(), line);
        if !wanted.contains(&metric) {
            measured.not_modelled.push(value);
            continue;
        }
        // Only values the fit computes with must be positive; the others are only shown.
        if !(value.value() > 0.0 && value.value().is_finite()) {
            return Err(MeasuredError::NotPositive {
                path: path(),
                line,
                metric,
                value: value.value(),
            });
        }
        measured.modelled.insert(metric, value.value());
    }
    let missing: Vec<Metric> = wanted
        .into_iter()
        .filter(|m| !measured.modelled.contains_key(m))
        .collect();
    if !missing.is_empty() {
        return Err(MeasuredError::Missing {
            path: path(),
            missing,
        });
    }
    Ok(measured)
}
