//! The `[timing]` and `[timing.copy]` tables of a topology file: the per-operation costs and
//! the movers' copy curves ([`Timing`]), and the GPU's own copy rate (`local_gbps`, which the
//! topology keeps because a PE's route to itself runs at it). A key left out keeps its default
//! (`Timing::default`); a mover without a curve copies for free.

use crate::costs::{CopyCurve, CopyTimes, Timing};
use serde::Deserialize;
use toml::Spanned;

use super::{SpanError, gbps_to_bytes_per_s};

/// `[timing]`. Field names are the file's keys.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TimingSpec {
    issue_ns: Option<u64>,
    nic_ns: Option<u64>,
    poll_ns: Option<u64>,
    local_gbps: Option<Spanned<f64>>,
    fence_ns: Option<u64>,
    release_ns: Option<u64>,
    transfer_ns: Option<u64>,
    launch_ns: Option<u64>,
    local_access_ns: Option<u64>,
    startup_ns: Option<u64>,
    map_gbps: Option<Spanned<f64>>,
    copy: Option<CopySpec>,
}

/// `[timing.copy]`: each mover's curve as `[[bytes, ns], ...]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CopySpec {
    device: Option<Spanned<Vec<(u64, u64)>>>,
    block: Option<Spanned<Vec<(u64, u64)>>>,
    warp: Option<Spanned<Vec<(u64, u64)>>>,
    thread: Option<Spanned<Vec<(u64, u64)>>>,
    engine: Option<Spanned<Vec<(u64, u64)>>>,
}

/// The GPU's own copy rate `[timing]` names (`local_gbps`), if it names one.
pub(super) fn read_local_bytes_per_s(spec: &TimingSpec) -> Result<Option<u64>, SpanError> {
    spec.local_gbps
        .as_ref()
        .map(|gbps| gbps_to_bytes_per_s(gbps, "local_gbps"))
        .transpose()
}

/// The costs `[timing]` names, and the defaults of those it leaves out.
pub(super) fn read_timing(spec: &TimingSpec) -> Result<Timing, SpanError> {
    let defaults = Timing::default();
    Ok(Timing {
        issue_ns: spec.issue_ns.unwrap_or(defaults.issue_ns),
        nic_ns: spec.nic_ns.unwrap_or(defaults.nic_ns),
        poll_ns: spec.poll_ns.unwrap_or(defaults.poll_ns),
        fence_ns: spec.fence_ns.unwrap_or(defaults.fence_ns),
        // A file that names only a fence priced put-with-signal's release with it, as the
        // simulator did before the release had a cost of its own.
        release_ns: spec
            .release_ns
            .or(spec.fence_ns)
            .unwrap_or(defaults.release_ns),
        transfer_ns: spec.transfer_ns.unwrap_or(defaults.transfer_ns),
        copy: match &spec.copy {
            Some(copy) => read_copy(copy)?,
            None => defaults.copy,
        },
        launch_ns: spec.launch_ns.unwrap_or(defaults.launch_ns),
        local_access_ns: spec.local_access_ns.unwrap_or(defaults.local_access_ns),
        startup_ns: spec.startup_ns.unwrap_or(defaults.startup_ns),
        map_bytes_per_s: match &spec.map_gbps {
            Some(gbps) => gbps_to_bytes_per_s(gbps, "map_gbps")?,
            None => defaults.map_bytes_per_s,
        },
    })
}

/// The movers' curves `[timing.copy]` names; a mover left out copies for free.
fn read_copy(spec: &CopySpec) -> Result<CopyTimes, SpanError> {
    let curve = |points: &Option<Spanned<Vec<(u64, u64)>>>, key: &str| match points {
        None => Ok(CopyCurve::FREE),
        Some(points) => CopyCurve::new(points.get_ref()).map_err(|e| {
            (
                points.span(),
                format!("timing.copy.{key}: {e} (each point is [bytes, ns])"),
            )
        }),
    };
    Ok(CopyTimes {
        device: curve(&spec.device, "device")?,
        block: curve(&spec.block, "block")?,
        warp: curve(&spec.warp, "warp")?,
        thread: curve(&spec.thread, "thread")?,
        engine: curve(&spec.engine, "engine")?,
    })
}
