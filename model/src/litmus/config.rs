//! What a test is checked under: a platform (rules and machine) and named modifiers, each a
//! stronger hardware rule or an alternative reading of a vendor text (docs/ordering.md,
//! "Configurations"); and the outcome of an execution that blocks forever.

use std::fmt;

use super::PeId;

/// The rules and machine of a configuration, before modifiers.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Platform {
    /// `nv-nvl`: NVSHMEM semantics, every pair of PEs on NVLink (one host).
    NvNvl,
    /// `nv-ib`: NVSHMEM semantics, every PE on its own host, every pair over InfiniBand.
    NvIb,
    /// `nv-mix(0|1 2)`: NVSHMEM semantics, PEs grouped into hosts (here P0 alone, P1 and P2
    /// together): NVLink within a host, InfiniBand between hosts. `hosts[pe]` is PE `pe`'s host.
    NvMix {
        /// The host of each PE.
        hosts: Vec<u32>,
    },
    /// `os`: OpenSHMEM 1.5 semantics (blocking fetches complete on return, updates globally
    /// visible on completion), every pair on NVLink.
    Os,
    /// `os-net`: OpenSHMEM semantics, every PE on its own node, every pair over the process
    /// backend's libfabric transport (docs/multi-node.md): writes delivered into host memory
    /// (visible on delivery), only puts and atomics that fetch nothing posted (gets, fetching
    /// atomics and puts-with-signal complete at issue), a fence that waits for the context's
    /// posted operations, a put-with-signal whose signal
    /// waits for every earlier put to its target, and every atomic of one word, signal
    /// updates included, performed indivisibly by the target's CPU. No PE can load or store
    /// another's memory (`shmem_ptr` is NULL across nodes). docs/ordering.md, "The network
    /// transport", argues each rule.
    OsNet,
}

/// A named change to a platform's rules, written `+NAME` after it. None is on by default.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Modifier {
    /// `pcie-read-flush`: a get or atomic arriving over InfiniBand first makes every pending
    /// write of its target visible (a PCIe read pushes posted writes ahead of it), and an
    /// atomic's update over InfiniBand is visible at once. A hardware argument, not a vendor
    /// text.
    PcieReadFlush,
    /// `nbi-unfenced`: fence does not order non-blocking puts, atomics and puts-with-signal
    /// (NVSHMEM's memory-model prose, "Non-blocking operations are not ordered by calls to
    /// nvshmem_fence"), against the default reading of the ordering table.
    NbiUnfenced,
    /// `ib-coherent`: a write arriving over NVLink at a word that still has pending InfiniBand
    /// writes queues behind them, so a write that causally follows another to the same word
    /// is never overwritten by it.
    IbCoherent,
}

impl Modifier {
    /// Every modifier, in the order they are written.
    pub const ALL: [Modifier; 3] = [
        Modifier::PcieReadFlush,
        Modifier::NbiUnfenced,
        Modifier::IbCoherent,
    ];

    /// The name written after `+`.
    pub fn name(self) -> &'static str {
        match self {
            Modifier::PcieReadFlush => "pcie-read-flush",
            Modifier::NbiUnfenced => "nbi-unfenced",
            Modifier::IbCoherent => "ib-coherent",
        }
    }

    /// The modifier `name` names.
    pub fn from_name(name: &str) -> Option<Modifier> {
        Modifier::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// The rules and machine a test is checked under: a platform and its modifiers.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Config {
    /// The platform.
    pub platform: Platform,
    /// The modifiers, sorted, each once.
    pub modifiers: Vec<Modifier>,
}

impl From<Platform> for Config {
    fn from(platform: Platform) -> Config {
        Config {
            platform,
            modifiers: Vec::new(),
        }
    }
}

impl Config {
    /// `nv-nvl` with no modifier.
    pub const NV_NVL: Config = Config {
        platform: Platform::NvNvl,
        modifiers: Vec::new(),
    };
    /// `nv-ib` with no modifier.
    pub const NV_IB: Config = Config {
        platform: Platform::NvIb,
        modifiers: Vec::new(),
    };
    /// `os` with no modifier.
    pub const OS: Config = Config {
        platform: Platform::Os,
        modifiers: Vec::new(),
    };
    /// `os-net` with no modifier.
    pub const OS_NET: Config = Config {
        platform: Platform::OsNet,
        modifiers: Vec::new(),
    };

    /// `nv-mix` with `hosts[pe]` the host of PE `pe`, no modifier.
    pub fn nv_mix(hosts: Vec<u32>) -> Config {
        Platform::NvMix { hosts }.into()
    }

    /// This configuration with `modifier` on as well.
    pub fn with(mut self, modifier: Modifier) -> Config {
        if !self.has(modifier) {
            self.modifiers.push(modifier);
            self.modifiers.sort();
        }
        self
    }

    /// Whether `modifier` is on.
    pub fn has(&self, modifier: Modifier) -> bool {
        self.modifiers.contains(&modifier)
    }

    /// The host of `pe` under this configuration.
    pub fn host_of(&self, pe: PeId) -> u32 {
        match &self.platform {
            Platform::NvNvl | Platform::Os => 0,
            Platform::NvIb | Platform::OsNet => pe,
            Platform::NvMix { hosts } => hosts[pe as usize],
        }
    }

    /// Whether the path between two distinct PEs crosses InfiniBand (under NVSHMEM rules,
    /// where writes through a NIC pend, R8).
    pub fn over_ib(&self, a: PeId, b: PeId) -> bool {
        self.nvshmem() && self.across_hosts(a, b)
    }

    /// Whether two distinct PEs are on different hosts, so that neither can load or store
    /// the other's memory.
    pub fn across_hosts(&self, a: PeId, b: PeId) -> bool {
        a != b && self.host_of(a) != self.host_of(b)
    }

    /// Whether NVSHMEM's relaxed rules apply (R7 fetch-in-flight, R8 local-only visibility);
    /// false under OpenSHMEM rules (`os`, `os-net`).
    pub fn nvshmem(&self) -> bool {
        !matches!(self.platform, Platform::Os | Platform::OsNet)
    }

    /// Whether the PEs reach each other through the libfabric transport (`os-net`): only
    /// puts and atomics that fetch nothing are posted, every other operation completes at
    /// issue, and a signal update is one atomic of the target's CPU.
    pub fn network_transport(&self) -> bool {
        matches!(self.platform, Platform::OsNet)
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Platform::NvNvl => f.write_str("nv-nvl"),
            Platform::NvIb => f.write_str("nv-ib"),
            Platform::Os => f.write_str("os"),
            Platform::OsNet => f.write_str("os-net"),
            Platform::NvMix { hosts } => {
                let n_hosts = hosts.iter().copied().max().map_or(0, |h| h + 1);
                let groups: Vec<String> = (0..n_hosts)
                    .map(|h| {
                        let pes: Vec<String> = (0..hosts.len())
                            .filter(|&pe| hosts[pe] == h)
                            .map(|pe| pe.to_string())
                            .collect();
                        pes.join(" ")
                    })
                    .collect();
                write!(f, "nv-mix({})", groups.join("|"))
            }
        }
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.platform)?;
        for m in &self.modifiers {
            write!(f, "+{}", m.name())?;
        }
        Ok(())
    }
}

/// An execution that blocks forever: the PEs that never finish, each with the line of the
/// instruction it is blocked at (a wait never satisfied, a barrier some PE never reaches).
/// PEs that ran their whole program are not listed.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Hang {
    /// (PE, 1-based line of its blocked instruction), by PE.
    pub blocked: Vec<(PeId, u32)>,
}

impl fmt::Display for Hang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .blocked
            .iter()
            .map(|(pe, line)| format!("P{pe} at line {line}"))
            .collect();
        write!(f, "hang: {}", parts.join(", "))
    }
}
