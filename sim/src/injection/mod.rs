//! Fault injection: slow PEs, slow or stalled links and crashed PEs in an ordinary seeded run
//! (docs/faults.md).
//!
//! Not to be confused with [`crate::Fault`], the test-only broken ordering rules that the
//! litmus cross-check must catch. An injection keeps every ordering rule and changes the
//! machine instead, as real hardware can: a PE whose own time runs slower, links that carry
//! less or take longer, a link that carries nothing for a while, a PE that dies. A correct
//! program keeps its results under the slowdowns and stalls; a crash ends the run with a
//! report that names the crashed PE and what every other PE waited for.
//!
//! A [`FaultPlan`] is parsed from a spec such as `slow-pe=3:4x, crash=random`. Against a
//! machine it becomes a [`CheckedPlan`] (PEs and links exist), and when a run starts its
//! random parts (a victim, a time, a factor, a link) are drawn from the world's one choice
//! source (`world/chance.rs`), so the seed reproduces the run, injections included.

mod links;
mod parse;
mod plan;

use std::fmt;

pub use plan::CheckedPlan;

/// A set of injections for one run, as written on the command line (`--faults`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultPlan {
    items: Vec<Injection>,
}

impl FaultPlan {
    /// The plan's injections, in the order written.
    pub fn items(&self) -> &[Injection] {
        &self.items
    }

    /// Whether the plan injects nothing (`none`).
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// This plan's injections, then `other`'s.
    pub fn and(mut self, other: FaultPlan) -> FaultPlan {
        self.items.extend(other.items);
        self
    }

    /// Whether the plan may crash a PE.
    pub fn has_crash(&self) -> bool {
        self.items
            .iter()
            .any(|i| matches!(i, Injection::Crash { .. }))
    }
}

/// One injection. Each part is given or drawn at random when the run starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Injection {
    /// `slow-pe=PE:Fx`: the PE's own time (issuing operations, fences, polls, local accesses,
    /// kernel launches) takes `factor` times as long.
    SlowPe {
        /// The slow PE.
        pe: Pick<u32>,
        /// How many times as long.
        factor: Pick<Factor>,
    },
    /// `link=LINKS:SCALE`: the selected links' bandwidth or latency scaled.
    Link {
        /// Which links (a selector, see docs/faults.md).
        links: Pick<String>,
        /// How they change.
        scale: Pick<LinkScale>,
    },
    /// `stall=LINKS:FROM..TO`: the selected links carry nothing, in either direction, during
    /// the interval; a transfer under way pauses and resumes after it.
    Stall {
        /// Which links.
        links: Pick<String>,
        /// When, in simulated time.
        during: Pick<Interval>,
    },
    /// `crash=PE@TIME`: the PE stops for good at that simulated time.
    Crash {
        /// The PE that crashes.
        pe: Pick<u32>,
        /// When, in simulated nanoseconds.
        at_ns: Pick<u64>,
    },
}

/// A part of an injection: given, or drawn from the run's choice source when it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pick<T> {
    /// As written.
    Given(T),
    /// Drawn at the start of the run (written `random`, or left out).
    Random,
}

/// A positive multiplier in thousandths (`4x` is 4000, `0.25x` is 250): whole numbers keep
/// the simulator's arithmetic integral, so a run does not depend on floating point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Factor {
    milli: u64,
}

impl Factor {
    /// One: no change.
    pub const ONE: Factor = Factor { milli: 1000 };

    /// The factor `milli / 1000`; `None` for zero.
    pub fn from_milli(milli: u64) -> Option<Factor> {
        (milli > 0).then_some(Factor { milli })
    }

    /// The factor in thousandths.
    pub fn milli(self) -> u64 {
        self.milli
    }

    /// `value` times the factor, rounded up, never 0 for a nonzero value (a scaled
    /// bandwidth must stay a bandwidth).
    pub(crate) fn apply(self, value: u64) -> u64 {
        let scaled = (u128::from(value) * u128::from(self.milli)).div_ceil(1000);
        u64::try_from(scaled).unwrap_or(u64::MAX)
    }

    /// `value` divided by the factor, rounded up, never 0 for a nonzero value.
    pub(crate) fn divide(self, value: u64) -> u64 {
        let scaled = (u128::from(value) * 1000).div_ceil(u128::from(self.milli));
        u64::try_from(scaled).unwrap_or(u64::MAX)
    }
}

impl fmt::Display for Factor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, frac) = (self.milli / 1000, self.milli % 1000);
        if frac == 0 {
            write!(f, "{whole}x")
        } else {
            let frac = format!("{frac:03}");
            write!(f, "{whole}.{}x", frac.trim_end_matches('0'))
        }
    }
}

/// How `link=` changes its links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkScale {
    /// `Fx`: the link runs at `F` times its speed: bandwidth times `F`, latency divided by it.
    Speed(Factor),
    /// `bw=Fx`: bandwidth times `F`.
    Bandwidth(Factor),
    /// `lat=Fx`: latency times `F`.
    Latency(Factor),
}

impl LinkScale {
    /// A link's `(latency_ns, bandwidth_bytes_per_s)` after the change.
    pub(crate) fn apply(self, (latency_ns, bytes_per_s): (u64, u64)) -> (u64, u64) {
        match self {
            LinkScale::Speed(f) => (f.divide(latency_ns), f.apply(bytes_per_s)),
            LinkScale::Bandwidth(f) => (latency_ns, f.apply(bytes_per_s)),
            LinkScale::Latency(f) => (f.apply(latency_ns), bytes_per_s),
        }
    }
}

impl fmt::Display for LinkScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkScale::Speed(x) => write!(f, "{x}"),
            LinkScale::Bandwidth(x) => write!(f, "bw={x}"),
            LinkScale::Latency(x) => write!(f, "lat={x}"),
        }
    }
}

/// An interval of simulated time, `from_ns` included, `to_ns` not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Interval {
    /// Its start.
    pub from_ns: u64,
    /// Its end, after its start.
    pub to_ns: u64,
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", Time(self.from_ns), Time(self.to_ns))
    }
}

/// A simulated time written as the spec writes it: `50us`, `73.214us`, `2ms`.
#[derive(Clone, Copy, Debug)]
pub struct Time(pub u64);

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns >= 1_000_000 && ns.is_multiple_of(1_000_000) {
            write!(f, "{}ms", ns / 1_000_000)
        } else if ns.is_multiple_of(1000) {
            write!(f, "{}us", ns / 1000)
        } else {
            let frac = format!("{:03}", ns % 1000);
            write!(f, "{}.{}us", ns / 1000, frac.trim_end_matches('0'))
        }
    }
}

impl<T: fmt::Display> fmt::Display for Pick<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pick::Given(value) => write!(f, "{value}"),
            Pick::Random => f.write_str("random"),
        }
    }
}

impl fmt::Display for Injection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Injection::SlowPe { pe, factor } => write!(f, "slow-pe={pe}:{factor}"),
            Injection::Link { links, scale } => write!(f, "link={links}:{scale}"),
            Injection::Stall { links, during } => write!(f, "stall={links}:{during}"),
            Injection::Crash { pe, at_ns } => match at_ns {
                Pick::Given(ns) => write!(f, "crash={pe}@{}", Time(*ns)),
                Pick::Random => write!(f, "crash={pe}@random"),
            },
        }
    }
}

impl fmt::Display for FaultPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.items.is_empty() {
            return f.write_str("none");
        }
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

/// A fault spec that does not parse, or names a PE or link the machine lacks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("fault {item:?}: {problem}")]
pub struct FaultPlanError {
    /// The item of the spec at fault, as written.
    pub item: String,
    /// What is wrong with it, and how to write it instead.
    pub problem: String,
}

/// What the injections of a run did, for its report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InjectionReport {
    /// The plan as it ran, every random part drawn (`slow-pe=3:4x, crash=5@73.214us`): the
    /// same spec with the same seed gives this again.
    pub drawn: String,
    /// Each planned crash, in time order.
    pub crashes: Vec<CrashOutcome>,
    /// Operations that reached a crashed PE and were lost.
    pub lost_ops: u64,
}

impl InjectionReport {
    /// The PEs that did crash (not those that finished before their crash time).
    pub fn crashed_pes(&self) -> impl Iterator<Item = u32> + '_ {
        self.crashes.iter().filter(|c| c.happened).map(|c| c.pe)
    }
}

/// One planned crash and whether it happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrashOutcome {
    /// The PE.
    pub pe: u32,
    /// When it was to crash, in simulated nanoseconds.
    pub at_ns: u64,
    /// Whether it crashed; `false` when it had finished its program before.
    pub happened: bool,
}

impl CrashOutcome {
    /// How the report names the crash: `PE 2 crashed at 50us (injected)`.
    pub fn message(&self) -> String {
        if self.happened {
            format!("PE {} crashed at {} (injected)", self.pe, Time(self.at_ns))
        } else {
            format!(
                "PE {} finished before its injected crash at {}",
                self.pe,
                Time(self.at_ns)
            )
        }
    }
}
