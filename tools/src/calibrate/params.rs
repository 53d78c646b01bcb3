//! What a calibration changes, as numbers a fit can move, and back into a topology: the link
//! that joins PE 0 and PE 1, and the topology's timing: poll, fence, the movers' copy curves,
//! launches, local accesses, start-up and mapping.
//!
//! `issue_ns` is not among them: every latency pays one issue per one-way trip, as it pays
//! the link's latency, so no bench metric tells the two apart (a fetch-add is one issue and
//! two trips, a ping-pong half one issue, one trip and a poll: trading issue time for latency
//! and poll time fits both). It keeps the topology's value, and the fitted latency absorbs
//! its error. Nor is `transfer_ns`: the movers' curves hold every put's start-up, so the
//! fit sets it to 0.

use std::collections::BTreeMap;
use std::ops::{Index, IndexMut};

use anyhow::bail;
use hw::Pe;
use hw::topology::{LinkId, TopologyBuilder};
use sim::Machine;
use sim::costs::{CopyCurve, CopyTimes, Timing};

use super::catalogue::{
    BLOCK_PUT_BW_BYTES, DEVICE_PUT_BYTES, HOST_PUT_BYTES, SIGNAL_BYTES, SMALL_PUT_BYTES,
};

/// A mover whose copy curve a calibration fits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Mover {
    Device,
    Block,
    Warp,
    Thread,
    Engine,
}

impl Mover {
    pub(super) const ALL: [Mover; 5] = [
        Mover::Device,
        Mover::Block,
        Mover::Warp,
        Mover::Thread,
        Mover::Engine,
    ];

    /// The sizes the bench measures this mover at: its curve's points.
    pub(super) fn sizes(self) -> Vec<u64> {
        match self {
            Mover::Device => DEVICE_PUT_BYTES.to_vec(),
            Mover::Block => {
                let mut sizes: Vec<u64> = SMALL_PUT_BYTES
                    .iter()
                    .chain(&BLOCK_PUT_BW_BYTES)
                    .copied()
                    .collect();
                sizes.sort_unstable();
                sizes.dedup();
                sizes
            }
            Mover::Warp => SMALL_PUT_BYTES.to_vec(),
            // 8 B is left to the latencies: one word costs the thread next to nothing.
            Mover::Thread => SIGNAL_BYTES[1..].to_vec(),
            Mover::Engine => HOST_PUT_BYTES.to_vec(),
        }
    }

    /// The index of the point at `bytes`, if the curve has one there.
    pub(super) fn point_of(self, bytes: u64) -> Option<usize> {
        self.sizes().iter().position(|&b| b == bytes)
    }

    /// The key of the curve in a topology file's `[timing.copy]`.
    pub(super) fn key(self) -> &'static str {
        match self {
            Mover::Device => "device",
            Mover::Block => "block",
            Mover::Warp => "warp",
            Mover::Thread => "thread",
            Mover::Engine => "engine",
        }
    }

    /// The mover's curve in `times`.
    pub(super) fn curve(self, times: &CopyTimes) -> &CopyCurve {
        match self {
            Mover::Device => &times.device,
            Mover::Block => &times.block,
            Mover::Warp => &times.warp,
            Mover::Thread => &times.thread,
            Mover::Engine => &times.engine,
        }
    }

    fn curve_mut(self, times: &mut CopyTimes) -> &mut CopyCurve {
        match self {
            Mover::Device => &mut times.device,
            Mover::Block => &mut times.block,
            Mover::Warp => &mut times.warp,
            Mover::Thread => &mut times.thread,
            Mover::Engine => &mut times.engine,
        }
    }
}

/// A parameter the fit moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Param {
    /// The link's one-way latency.
    LatencyNs,
    /// `Timing::poll_ns`.
    PollNs,
    /// `Timing::fence_ns`.
    FenceNs,
    /// `Timing::release_ns`.
    ReleaseNs,
    /// The inverse of the link's bandwidth.
    LinkNsPerByte,
    /// The time of a mover's curve at its point of that index.
    Point(Mover, usize),
    /// `Timing::launch_ns`.
    LaunchNs,
    /// `Timing::local_access_ns`.
    LocalAccessNs,
    /// `Timing::startup_ns`.
    StartupNs,
    /// The inverse of `Timing::map_bytes_per_s`: times are linear in it.
    MapNsPerByte,
}

impl Param {
    /// Every parameter.
    pub(super) fn all() -> Vec<Param> {
        let mut params = vec![
            Param::LatencyNs,
            Param::PollNs,
            Param::FenceNs,
            Param::ReleaseNs,
            Param::LinkNsPerByte,
        ];
        for mover in Mover::ALL {
            params.extend((0..mover.sizes().len()).map(|i| Param::Point(mover, i)));
        }
        params.extend([
            Param::LaunchNs,
            Param::LocalAccessNs,
            Param::StartupNs,
            Param::MapNsPerByte,
        ]);
        params
    }

    /// The four the latencies fit together (`fit.rs`).
    pub(super) const LATENCY_GROUP: [Param; 4] = [
        Param::LatencyNs,
        Param::PollNs,
        Param::FenceNs,
        Param::ReleaseNs,
    ];
}

/// A value for each [`Param`].
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Params(BTreeMap<Param, f64>);

impl Index<Param> for Params {
    type Output = f64;
    fn index(&self, param: Param) -> &f64 {
        &self.0[&param]
    }
}

impl IndexMut<Param> for Params {
    fn index_mut(&mut self, param: Param) -> &mut f64 {
        self.0.get_mut(&param).expect("every parameter has a value")
    }
}

impl Params {
    /// The link's bandwidth in GB/s.
    pub(super) fn gbps(&self) -> f64 {
        1.0 / self[Param::LinkNsPerByte]
    }

    /// The mapping rate in GB/s; `None` when mapping is free.
    pub(super) fn map_gbps(&self) -> Option<f64> {
        let ns_per_byte = self[Param::MapNsPerByte];
        (ns_per_byte > 0.0).then(|| 1.0 / ns_per_byte)
    }
}

/// What a calibration fits: a machine, and the link of it that joins the bench's two GPUs.
#[derive(Debug)]
pub(super) struct Subject {
    base: Machine,
    link: LinkId,
}

impl Subject {
    /// The machine of `base`, whose first two GPUs must be joined by one link.
    ///
    /// # Errors
    /// Fewer than two GPUs, or a route from PE 0 to PE 1 over other than one link.
    pub(super) fn new(base: Machine) -> anyhow::Result<Subject> {
        let topology = &base.topology;
        if topology.n_gpus() < 2 {
            bail!(
                "topology {:?} has {} GPU; the bench runs two PEs, one per GPU",
                topology.name(),
                topology.n_gpus()
            );
        }
        let path = topology.routes_from(Pe(0)).path_to(topology, Pe(1));
        let [hop] = path.hops.as_slice() else {
            bail!(
                "topology {:?} routes PE 0 to PE 1 over {} links; a calibration fits the one \
                 link that joins the bench's two GPUs, so give a topology whose first two GPUs \
                 are linked directly (such as h200x2)",
                topology.name(),
                path.hops.len()
            );
        };
        let link = hop.link;
        Ok(Subject { link, base })
    }

    /// The link the calibration fits.
    pub(super) fn link(&self) -> LinkId {
        self.link
    }

    /// The machine the calibration started from.
    pub(super) fn base(&self) -> &Machine {
        &self.base
    }

    /// The parameters of `machine`, the base or a fit of it. A free curve reads as zeros at
    /// its points.
    pub(super) fn params_of(&self, machine: &Machine) -> Params {
        let link = machine.topology.link(self.link);
        let timing = machine.timing;
        let mut values = BTreeMap::new();
        for param in Param::all() {
            let value = match param {
                Param::LatencyNs => link.latency_ns as f64,
                Param::PollNs => timing.poll_ns as f64,
                Param::FenceNs => timing.fence_ns as f64,
                Param::ReleaseNs => timing.release_ns as f64,
                Param::LinkNsPerByte => 1e9 / link.bandwidth_bytes_per_s as f64,
                Param::Point(mover, i) => mover.curve(&timing.copy).ns(mover.sizes()[i]) as f64,
                Param::LaunchNs => timing.launch_ns as f64,
                Param::LocalAccessNs => timing.local_access_ns as f64,
                Param::StartupNs => timing.startup_ns as f64,
                Param::MapNsPerByte => match timing.map_bytes_per_s {
                    0 => 0.0,
                    rate => 1e9 / rate as f64,
                },
            };
            values.insert(param, value);
        }
        Params(values)
    }

    /// The base machine with `params`, as the machine holds them: times in whole
    /// nanoseconds, none below zero, each curve's times never falling with size, rates in
    /// whole bytes per second; `transfer_ns` 0, the movers' curves holding the start-ups.
    pub(super) fn with(&self, params: &Params) -> Machine {
        let ns = |param: Param| params[param].max(0.0).round() as u64;
        let mut copy = CopyTimes::FREE;
        for mover in Mover::ALL {
            let mut last_ns = 0;
            let points: Vec<(u64, u64)> = mover
                .sizes()
                .into_iter()
                .enumerate()
                .map(|(i, bytes)| {
                    last_ns = ns(Param::Point(mover, i)).max(last_ns);
                    (bytes, last_ns)
                })
                .collect();
            *mover.curve_mut(&mut copy) = if points.iter().all(|&(_, ns)| ns == 0) {
                CopyCurve::FREE
            } else {
                CopyCurve::new(&points).expect("sizes rise and times do not fall")
            };
        }
        let per_byte = |param: Param| {
            let ns_per_byte = params[param];
            if ns_per_byte > 0.0 {
                (1e9 / ns_per_byte).round().max(1.0) as u64
            } else {
                0
            }
        };
        let base = &self.base.topology;
        let graph = base.graph();
        let mut builder = TopologyBuilder::new(base.name());
        builder.local_bytes_per_s(base.local_bytes_per_s());
        let timing = Timing {
            poll_ns: ns(Param::PollNs),
            fence_ns: ns(Param::FenceNs),
            release_ns: ns(Param::ReleaseNs),
            transfer_ns: 0,
            copy,
            launch_ns: ns(Param::LaunchNs),
            local_access_ns: ns(Param::LocalAccessNs),
            startup_ns: ns(Param::StartupNs),
            map_bytes_per_s: per_byte(Param::MapNsPerByte),
            ..self.base.timing
        };
        let nodes: Vec<_> = graph
            .node_weights()
            .map(|node| builder.node(node.name.clone(), node.kind))
            .collect();
        for edge in graph.edge_indices() {
            let (a, b) = graph.edge_endpoints(edge).expect("the edge exists");
            let mut link = graph[edge];
            if LinkId(edge.index() as u32) == self.link {
                link.latency_ns = ns(Param::LatencyNs);
                link.bandwidth_bytes_per_s = per_byte(Param::LinkNsPerByte).max(1);
            }
            builder.link(nodes[a.index()], nodes[b.index()], link);
        }
        // The base was valid and the fit changes no node, link or positive bandwidth.
        let topology = builder
            .build()
            .expect("a fitted topology is as valid as its base");
        Machine { topology, timing }
    }
}
