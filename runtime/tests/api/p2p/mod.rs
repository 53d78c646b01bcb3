//! The rest of the point-to-point API on the simulator (docs/p2p.md): strided and sized RMA,
//! non-blocking fetching atomics, waits and tests on many words, pe_quiet, locks, signal
//! operations, global_exit and the setup queries. Where delivery order matters a test runs on
//! an NVSwitch node (`hgx8`) and on two InfiniBand hosts (`ib-2`, where PEs 8 and up sit
//! behind a NIC from PE 0) over a few seeds, printed so a failure can be replayed.

use rshmem::Shmem;
use sim::SimBackend;

use crate::common::run_on;

mod atomics;
mod exit_and_info;
mod locks;
mod rma;
mod waits;

/// The two machines of ordering-sensitive tests, with the PE count each runs.
const MACHINES: [(&str, u32); 2] = [("hgx8", 8), ("ib-2", 16)];

/// `pe_main` on every machine of [`MACHINES`] with seeds 0..3.
fn on_every_machine<R: Send>(pe_main: impl Fn(&Shmem<SimBackend>) -> R + Sync + Copy) {
    for (topology, n_pes) in MACHINES {
        for seed in 0..3 {
            run_on(topology, n_pes, seed, pe_main);
        }
    }
}
