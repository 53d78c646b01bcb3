//! A plan checked against a machine, and drawn into what the world applies.

use hw::Topology;
use hw::topology::LinkId;

use super::links;
use super::{Factor, FaultPlan, FaultPlanError, Injection, Interval, LinkScale, Pick};

/// How long a stall drawn at random lasts at most, in microseconds.
const RANDOM_STALL_MAX_US: u64 = 50;
/// A slow PE drawn at random is 2 to this many times slower.
const RANDOM_SLOWDOWN_MAX: u64 = 8;
/// A link drawn at random runs at a half to one over this of its speed.
const RANDOM_LINK_SLOWDOWN_MAX: u64 = 10;

/// A [`FaultPlan`] whose PEs and links exist on the machine of a run
/// ([`FaultPlan::check`]); what [`crate::SimBuilder::inject`] takes.
#[derive(Clone, Debug)]
pub struct CheckedPlan {
    items: Vec<Checked>,
    n_pes: u32,
}

/// The links a selector names, and how the report writes them.
#[derive(Clone, Debug)]
struct Selected {
    label: String,
    ids: Vec<LinkId>,
}

#[derive(Clone, Debug)]
enum Checked {
    SlowPe {
        pe: Pick<u32>,
        factor: Pick<Factor>,
    },
    Link {
        links: Pick<Selected>,
        scale: Pick<LinkScale>,
    },
    Stall {
        links: Pick<Selected>,
        during: Pick<Interval>,
    },
    Crash {
        pe: Pick<u32>,
        at_ns: Pick<u64>,
    },
}

impl FaultPlan {
    /// Checks the plan against a run of `n_pes` PEs on `topology`: every PE it names runs, and
    /// every link selector names links.
    ///
    /// # Errors
    /// [`FaultPlanError`] naming the first item at fault, what is wrong and what to write.
    pub fn check(&self, topology: &Topology, n_pes: u32) -> Result<CheckedPlan, FaultPlanError> {
        let items = self
            .items
            .iter()
            .map(|item| check_item(item, topology, n_pes))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CheckedPlan { items, n_pes })
    }
}

fn check_item(
    item: &Injection,
    topology: &Topology,
    n_pes: u32,
) -> Result<Checked, FaultPlanError> {
    let fail = |problem: String| FaultPlanError {
        item: item.to_string(),
        problem,
    };
    let pe = |pe: &Pick<u32>| match *pe {
        Pick::Given(p) if p >= n_pes => Err(fail(format!(
            "PE {p} does not exist: this run has {n_pes} PEs (0 to {}); name one of them or \
             write `random`",
            n_pes - 1
        ))),
        ref p => Ok(p.clone()),
    };
    let select = |links: &Pick<String>| match links {
        Pick::Given(selector) => links::select(topology, selector)
            .map(|ids| {
                Pick::Given(Selected {
                    label: selector.clone(),
                    ids,
                })
            })
            .map_err(fail),
        Pick::Random if topology.n_links() == 0 => Err(fail(format!(
            "topology {:?} has no links to draw one from",
            topology.name()
        ))),
        Pick::Random => Ok(Pick::Random),
    };
    Ok(match item {
        Injection::SlowPe { pe: p, factor } => Checked::SlowPe {
            pe: pe(p)?,
            factor: factor.clone(),
        },
        Injection::Link { links, scale } => Checked::Link {
            links: select(links)?,
            scale: scale.clone(),
        },
        Injection::Stall { links, during } => Checked::Stall {
            links: select(links)?,
            during: during.clone(),
        },
        Injection::Crash { pe: p, at_ns } => Checked::Crash {
            pe: pe(p)?,
            at_ns: at_ns.clone(),
        },
    })
}

/// A plan with every random part drawn: what the world applies.
#[derive(Clone, Debug, Default)]
pub(crate) struct Resolved {
    /// Per PE, how many times as long its own time takes; empty when no PE is slow.
    pub(crate) pe_slowdown: Vec<Factor>,
    pub(crate) link_scales: Vec<(LinkId, LinkScale)>,
    pub(crate) stalls: Vec<(LinkId, Interval)>,
    /// `(at_ns, pe)`, earliest first, one per PE (its earliest).
    pub(crate) crashes: Vec<(u64, u32)>,
    /// The plan as drawn, in the spec's syntax.
    pub(crate) drawn: String,
}

impl CheckedPlan {
    /// Draws the plan's random parts with `draw` (a value below its argument, from the run's
    /// choice source), item by item in the order written. Random times fall in `window`.
    pub(crate) fn draw(
        &self,
        topology: &Topology,
        window: Interval,
        draw: &mut dyn FnMut(u64) -> u64,
    ) -> Resolved {
        let mut out = Resolved::default();
        let mut drawn = Vec::new();
        let n_links = u64::from(topology.n_links());
        for item in &self.items {
            let written = match item {
                Checked::SlowPe { pe, factor } => {
                    let pe = given_or(pe, || draw(u64::from(self.n_pes)) as u32);
                    let factor = given_or(factor, || {
                        let times = 2 + draw(RANDOM_SLOWDOWN_MAX - 1);
                        Factor::from_milli(times * 1000).expect("positive")
                    });
                    if out.pe_slowdown.is_empty() {
                        out.pe_slowdown = vec![Factor::ONE; self.n_pes as usize];
                    }
                    let slot = &mut out.pe_slowdown[pe as usize];
                    *slot =
                        Factor::from_milli(slot.apply(factor.milli()).max(1)).expect("positive");
                    Injection::SlowPe {
                        pe: Pick::Given(pe),
                        factor: Pick::Given(factor),
                    }
                }
                Checked::Link { links, scale } => {
                    let links = self.links(topology, links, n_links, draw);
                    let scale = given_or(scale, || {
                        let slower = 2 + draw(RANDOM_LINK_SLOWDOWN_MAX - 1);
                        LinkScale::Speed(Factor::from_milli(1000 / slower).expect("positive"))
                    });
                    out.link_scales
                        .extend(links.ids.iter().map(|&l| (l, scale)));
                    Injection::Link {
                        links: Pick::Given(links.label),
                        scale: Pick::Given(scale),
                    }
                }
                Checked::Stall { links, during } => {
                    let links = self.links(topology, links, n_links, draw);
                    let during = given_or(during, || {
                        let from_ns = random_time(window, draw);
                        let length_ns = 1000 * (1 + draw(RANDOM_STALL_MAX_US));
                        Interval {
                            from_ns,
                            to_ns: from_ns + length_ns,
                        }
                    });
                    out.stalls.extend(links.ids.iter().map(|&l| (l, during)));
                    Injection::Stall {
                        links: Pick::Given(links.label),
                        during: Pick::Given(during),
                    }
                }
                Checked::Crash { pe, at_ns } => {
                    let pe = given_or(pe, || draw(u64::from(self.n_pes)) as u32);
                    let at_ns = given_or(at_ns, || random_time(window, draw));
                    out.crashes.push((at_ns, pe));
                    Injection::Crash {
                        pe: Pick::Given(pe),
                        at_ns: Pick::Given(at_ns),
                    }
                }
            };
            drawn.push(written.to_string());
        }
        out.crashes.sort_unstable();
        let mut seen = Vec::new();
        out.crashes.retain(|&(_, pe)| {
            let first = !seen.contains(&pe);
            seen.push(pe);
            first
        });
        out.drawn = drawn.join(", ");
        out
    }

    /// The links of a selector, or one link drawn at random.
    fn links(
        &self,
        topology: &Topology,
        links: &Pick<Selected>,
        n_links: u64,
        draw: &mut dyn FnMut(u64) -> u64,
    ) -> Selected {
        given_or(links, || {
            let link = LinkId(draw(n_links) as u32);
            Selected {
                label: links::label(topology, link),
                ids: vec![link],
            }
        })
    }
}

/// A time drawn in `window`.
fn random_time(window: Interval, draw: &mut dyn FnMut(u64) -> u64) -> u64 {
    window.from_ns + draw(window.to_ns - window.from_ns)
}

fn given_or<T: Clone>(pick: &Pick<T>, random: impl FnOnce() -> T) -> T {
    match pick {
        Pick::Given(value) => value.clone(),
        Pick::Random => random(),
    }
}
