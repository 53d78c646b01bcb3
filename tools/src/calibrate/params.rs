//! What a calibration changes: the link that joins PE 0 and PE 1 and the per-operation costs
//! of the topology's timing, as numbers a fit can move, and back into a topology.
//!
//! `issue_ns` is not among them: every modelled latency pays one issue per one-way trip, as
//! it pays the link's latency, so no bench metric tells the two apart (a fetch-add is one
//! issue and two trips, a ping-pong half one issue, one trip and a poll: trading issue time
//! for latency and poll time fits both). It keeps the topology's value, and the fitted
//! latency absorbs its error.

use std::ops::{Index, IndexMut};

use anyhow::bail;
use hw::Pe;
use hw::topology::{LinkId, Timing, Topology, TopologyBuilder};

/// A parameter the fit moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Param {
    /// The link's one-way latency.
    LatencyNs,
    /// The inverse of the link's bandwidth: times are linear in it.
    NsPerByte,
    /// `Timing::poll_ns`.
    PollNs,
    /// `Timing::fence_ns`.
    FenceNs,
    /// `Timing::transfer_ns`.
    TransferNs,
}

impl Param {
    pub(super) const ALL: [Param; 5] = [
        Param::LatencyNs,
        Param::NsPerByte,
        Param::PollNs,
        Param::FenceNs,
        Param::TransferNs,
    ];

    /// Whether the puts of the bench depend on the parameter beyond the final quiet's round
    /// trip.
    pub(super) fn shapes_puts(self) -> bool {
        matches!(self, Param::NsPerByte | Param::TransferNs)
    }

    /// Whether the parameter is a time in whole nanoseconds.
    fn is_ns(self) -> bool {
        self != Param::NsPerByte
    }
}

/// A value for each [`Param`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Params([f64; Param::ALL.len()]);

impl Index<Param> for Params {
    type Output = f64;
    fn index(&self, param: Param) -> &f64 {
        &self.0[param as usize]
    }
}

impl IndexMut<Param> for Params {
    fn index_mut(&mut self, param: Param) -> &mut f64 {
        &mut self.0[param as usize]
    }
}

impl Params {
    /// The link's bandwidth in GB/s.
    pub(super) fn gbps(&self) -> f64 {
        1.0 / self[Param::NsPerByte]
    }

    /// The lowest value each parameter may take: no time below zero, and no bandwidth above
    /// a petabyte per second (which would be a bandwidth the metrics do not constrain).
    pub(super) fn clamped(mut self) -> Params {
        for param in Param::ALL {
            let floor = if param.is_ns() { 0.0 } else { 1e-6 };
            self[param] = self[param].max(floor);
        }
        self
    }
}

/// A topology and the link of it that a calibration fits.
#[derive(Debug)]
pub(super) struct Machine {
    base: Topology,
    link: LinkId,
}

impl Machine {
    /// The machine of `base`, whose first two GPUs must be joined by one link.
    ///
    /// # Errors
    /// Fewer than two GPUs, or a route from PE 0 to PE 1 over other than one link.
    pub(super) fn new(base: Topology) -> anyhow::Result<Machine> {
        if base.n_gpus() < 2 {
            bail!(
                "topology {:?} has {} GPU; the bench runs two PEs, one per GPU",
                base.name(),
                base.n_gpus()
            );
        }
        let path = base.routes_from(Pe(0)).path_to(&base, Pe(1));
        let [hop] = path.hops.as_slice() else {
            bail!(
                "topology {:?} routes PE 0 to PE 1 over {} links; a calibration fits the one \
                 link that joins the bench's two GPUs, so give a topology whose first two GPUs \
                 are linked directly (such as h200x2)",
                base.name(),
                path.hops.len()
            );
        };
        Ok(Machine {
            link: hop.link,
            base,
        })
    }

    /// The link the calibration fits.
    pub(super) fn link(&self) -> LinkId {
        self.link
    }

    /// The topology the calibration started from.
    pub(super) fn base(&self) -> &Topology {
        &self.base
    }

    /// The parameters of `topology`, one of this machine's (the base, or a fit of it).
    pub(super) fn params_of(&self, topology: &Topology) -> Params {
        let link = topology.link(self.link);
        let timing = topology.timing();
        let mut params = Params([0.0; Param::ALL.len()]);
        params[Param::LatencyNs] = link.latency_ns as f64;
        params[Param::NsPerByte] = 1e9 / link.bandwidth_bytes_per_s as f64;
        params[Param::PollNs] = timing.poll_ns as f64;
        params[Param::FenceNs] = timing.fence_ns as f64;
        params[Param::TransferNs] = timing.transfer_ns as f64;
        params
    }

    /// The base topology with `params`, rounded as the topology holds them: times to whole
    /// nanoseconds, the bandwidth to whole bytes per second.
    pub(super) fn with(&self, params: &Params) -> Topology {
        let params = params.clamped();
        let ns = |param: Param| params[param].round() as u64;
        let graph = self.base.graph();
        let mut builder = TopologyBuilder::new(self.base.name());
        builder.timing(Timing {
            poll_ns: ns(Param::PollNs),
            fence_ns: ns(Param::FenceNs),
            transfer_ns: ns(Param::TransferNs),
            ..self.base.timing()
        });
        let nodes: Vec<_> = graph
            .node_weights()
            .map(|node| builder.node(node.name.clone(), node.kind))
            .collect();
        for edge in graph.edge_indices() {
            let (a, b) = graph.edge_endpoints(edge).expect("the edge exists");
            let mut link = graph[edge];
            if LinkId(edge.index() as u32) == self.link {
                link.latency_ns = ns(Param::LatencyNs);
                link.bandwidth_bytes_per_s =
                    (1e9 / params[Param::NsPerByte]).round().max(1.0) as u64;
            }
            builder.link(nodes[a.index()], nodes[b.index()], link);
        }
        // The base was valid and the fit changes no node, link or positive bandwidth.
        builder
            .build()
            .expect("a fitted topology is as valid as its base")
    }
}
