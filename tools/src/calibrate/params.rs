//! What a calibration changes, as numbers a fit can move, and back into a topology: the link
//! that joins PE 0 and PE 1 (or every GPU-to-NVSwitch link, alike), and the topology's
//! timing: poll, fence, the movers' copy curves, launches, local accesses, start-up and
//! mapping; for the collectives only the links, the block's curve, launches and local
//! accesses (`collectives.rs`).
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
use hw::topology::{LinkId, NodeKind, TopologyBuilder};
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

/// A value for each [`Param`] a calibration moves.
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
    /// The value of `param`, if the calibration moves it.
    pub(super) fn get(&self, param: Param) -> Option<f64> {
        self.0.get(&param).copied()
    }

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

/// How the GPUs a calibration measures are joined: the links whose latency and bandwidth it
/// fits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Shape {
    /// PE 0 and PE 1 joined directly by one link (`h200x2`): the two-PE bench.
    Pair(LinkId),
    /// Every GPU linked to one NVSwitch (`hgx8`): the collectives. The links are alike, so one
    /// latency and one bandwidth stand for all of them.
    Switch(Vec<LinkId>),
}

/// What a calibration fits: a machine, the links of it that the measured GPUs cross, and the
/// movers whose curves it fits, each at the sizes its points sit at.
#[derive(Debug)]
pub(super) struct Subject {
    base: Machine,
    shape: Shape,
    curves: Vec<(Mover, Vec<u64>)>,
}

impl Subject {
    /// The machine of `base`, whose first two GPUs must be joined by one link, for the two-PE
    /// bench: every mover's curve at the sizes the bench measures it at.
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
                "topology {:?} routes PE 0 to PE 1 over {} links; a calibration to the two-PE \
                 bench fits the one link that joins its two GPUs, so give a topology whose first \
                 two GPUs are linked directly (such as h200x2), or measure the collectives \
                 (`pes=N` lines) to fit an NVSwitch machine",
                topology.name(),
                path.hops.len()
            );
        };
        let curves = Mover::ALL.iter().map(|&m| (m, m.sizes())).collect();
        Ok(Subject {
            shape: Shape::Pair(hop.link),
            base,
            curves,
        })
    }

    /// The machine of `base`, whose GPUs must each be linked to one NVSwitch, for the
    /// collectives: the block's curve (the collectives' one mover) at `block_sizes`.
    ///
    /// # Errors
    /// A topology whose GPUs do not all hang off one NVSwitch, one link each.
    pub(super) fn switch(base: Machine, block_sizes: Vec<u64>) -> anyhow::Result<Subject> {
        let links = switch_links(&base).ok_or_else(|| {
            anyhow::anyhow!(
                "topology {:?} is not one NVSwitch with every GPU linked to it; a calibration to \
                 the collectives fits the GPU-to-switch links, so give such a topology (such as \
                 hgx8)",
                base.topology.name()
            )
        })?;
        Ok(Subject {
            base,
            shape: Shape::Switch(links),
            curves: vec![(Mover::Block, block_sizes)],
        })
    }

    /// Whether `base` is one NVSwitch with every GPU linked to it, one link each.
    pub(super) fn is_switch(base: &Machine) -> bool {
        switch_links(base).is_some()
    }

    /// How the measured GPUs are joined.
    pub(super) fn shape(&self) -> &Shape {
        &self.shape
    }

    /// A link the calibration fits (every fitted link has the same values).
    pub(super) fn link(&self) -> LinkId {
        match &self.shape {
            Shape::Pair(link) => *link,
            Shape::Switch(links) => links[0],
        }
    }

    fn fits_link(&self, link: LinkId) -> bool {
        match &self.shape {
            Shape::Pair(fitted) => *fitted == link,
            Shape::Switch(links) => links.contains(&link),
        }
    }

    /// The movers whose curves the calibration fits, each with the sizes of its points.
    pub(super) fn curves(&self) -> &[(Mover, Vec<u64>)] {
        &self.curves
    }

    /// The sizes of `mover`'s points; none for a mover the calibration does not fit.
    pub(super) fn sizes(&self, mover: Mover) -> &[u64] {
        self.curves
            .iter()
            .find(|(m, _)| *m == mover)
            .map_or(&[], |(_, sizes)| sizes.as_slice())
    }

    /// The parameters the calibration moves.
    pub(super) fn params(&self) -> Vec<Param> {
        let mut params = vec![Param::LatencyNs];
        if let Shape::Pair(_) = self.shape {
            params.extend([Param::PollNs, Param::FenceNs, Param::ReleaseNs]);
        }
        params.push(Param::LinkNsPerByte);
        for (mover, sizes) in &self.curves {
            params.extend((0..sizes.len()).map(|i| Param::Point(*mover, i)));
        }
        params.extend([Param::LaunchNs, Param::LocalAccessNs]);
        if let Shape::Pair(_) = self.shape {
            params.extend([Param::StartupNs, Param::MapNsPerByte]);
        }
        params
    }

    /// The machine the calibration started from.
    pub(super) fn base(&self) -> &Machine {
        &self.base
    }

    /// The parameters of `machine`, the base or a fit of it. A free curve reads as zeros at
    /// its points.
    pub(super) fn params_of(&self, machine: &Machine) -> Params {
        let link = machine.topology.link(self.link());
        let timing = machine.timing;
        let mut values = BTreeMap::new();
        for param in self.params() {
            let value = match param {
                Param::LatencyNs => link.latency_ns as f64,
                Param::PollNs => timing.poll_ns as f64,
                Param::FenceNs => timing.fence_ns as f64,
                Param::ReleaseNs => timing.release_ns as f64,
                Param::LinkNsPerByte => 1e9 / link.bandwidth_bytes_per_s as f64,
                Param::Point(mover, i) => mover.curve(&timing.copy).ns(self.sizes(mover)[i]) as f64,
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
    /// whole bytes per second; the pair's `transfer_ns` 0, the movers' curves holding the
    /// start-ups. What the calibration does not move keeps the base's value.
    pub(super) fn with(&self, params: &Params) -> Machine {
        let ns = |param: Param| params[param].max(0.0).round() as u64;
        let base = self.base.timing;
        let or_base = |param: Param, value: u64| params.get(param).map_or(value, |_| ns(param));
        let mut copy = base.copy;
        for (mover, sizes) in &self.curves {
            let mut last_ns = 0;
            let points: Vec<(u64, u64)> = sizes
                .iter()
                .enumerate()
                .map(|(i, &bytes)| {
                    last_ns = ns(Param::Point(*mover, i)).max(last_ns);
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
        let topology = &self.base.topology;
        let graph = topology.graph();
        let mut builder = TopologyBuilder::new(topology.name());
        builder.local_bytes_per_s(topology.local_bytes_per_s());
        let timing = Timing {
            poll_ns: or_base(Param::PollNs, base.poll_ns),
            fence_ns: or_base(Param::FenceNs, base.fence_ns),
            release_ns: or_base(Param::ReleaseNs, base.release_ns),
            transfer_ns: match self.shape {
                Shape::Pair(_) => 0,
                Shape::Switch(_) => base.transfer_ns,
            },
            copy,
            launch_ns: ns(Param::LaunchNs),
            local_access_ns: ns(Param::LocalAccessNs),
            startup_ns: or_base(Param::StartupNs, base.startup_ns),
            map_bytes_per_s: params
                .get(Param::MapNsPerByte)
                .map_or(base.map_bytes_per_s, |_| per_byte(Param::MapNsPerByte)),
            ..base
        };
        let nodes: Vec<_> = graph
            .node_weights()
            .map(|node| builder.node(node.name.clone(), node.kind))
            .collect();
        for edge in graph.edge_indices() {
            let (a, b) = graph.edge_endpoints(edge).expect("the edge exists");
            let mut link = graph[edge];
            if self.fits_link(LinkId(edge.index() as u32)) {
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

/// The links of `base` if it is one NVSwitch with every GPU linked to it by one link, in
/// PE order.
fn switch_links(base: &Machine) -> Option<Vec<LinkId>> {
    let topology = &base.topology;
    let graph = topology.graph();
    let switches: Vec<_> = graph
        .node_indices()
        .filter(|&n| matches!(graph[n].kind, NodeKind::NvSwitch { .. }))
        .collect();
    let [switch] = switches.as_slice() else {
        return None;
    };
    if graph.node_count() != topology.n_gpus() as usize + 1 || topology.n_gpus() < 2 {
        return None;
    }
    (0..topology.n_gpus())
        .map(|pe| {
            let gpu = topology.gpu_node(Pe(pe));
            let edge = graph.find_edge(gpu, *switch)?;
            (graph.edges_connecting(gpu, *switch).count() == 1).then(|| LinkId(edge.index() as u32))
        })
        .collect()
}
