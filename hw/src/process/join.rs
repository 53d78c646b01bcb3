//! Joining a run: every PE's control block shared with the PEs of its node, the path to each
//! peer chosen, and the network path opened where the run needs it (`Process::join`).

use std::os::fd::AsFd;
use std::sync::{Mutex, OnceLock};

use crate::bootstrap::Bootstrap;
use crate::caps::Caps;
use crate::common::fd_sharing::{SharedMemory, take_shared};
use crate::common::memfd::{Mapping, shared_memory};
use crate::error::LaunchError;
use crate::topology::Topology;
use crate::types::Pe;

use super::device::{PeState, ProcessDevice, allgather};
use super::wake::{CONTROL_BYTES, Control, SpinPolicy};
use super::{AroundSleep, PeerPath};
use crate::common::paths::{self, Transport};
use crate::ofi::allgather::{self, NetworkAllgather};
use crate::ofi::network::Network;

/// What joining a run starts from (`Process::join`).
pub(crate) struct Joining {
    pub(crate) pe: Pe,
    pub(crate) n_pes: u32,
    pub(crate) caps: Caps,
    /// Every PE's node id, in PE order.
    pub(crate) nodes: Vec<u32>,
    pub(crate) topology: Topology,
    pub(crate) client: Option<Box<dyn Bootstrap>>,
    pub(crate) static_data: bool,
    pub(crate) around_sleep: AroundSleep,
    pub(crate) deadline: std::time::Instant,
}

/// Shares the control block of every PE of this node, opens the network path where the run
/// needs it, and returns the device (`Process::join`).
pub(crate) fn join(joining: Joining) -> Result<ProcessDevice, LaunchError> {
    let pe = joining.pe;
    let fail = |what: String| LaunchError::Init(format!("{pe}: {what}"));
    let my_node = joining.nodes[pe.idx()];
    // Read before the first exchange, so that a bad value fails every PE with its own
    // message rather than leaving the others to find a peer gone.
    let transport = paths::transport().map_err(&fail)?;
    let paths = paths::paths(transport, &joining.nodes, pe).map_err(&fail)?;
    let forced = transport == Transport::Ofi;
    let (fd, own) = shared_memory(c"rshmem-control", CONTROL_BYTES).map_err(|e| {
        fail(format!(
            "cannot make the control block (memfd_create/mmap): {e}"
        ))
    })?;
    let mut mine = SharedMemory::of(&fd, CONTROL_BYTES).to_bytes();
    mine.push(u8::from(forced));
    let client = joining.client.map(Mutex::new);
    let all = allgather(
        client.as_ref(),
        &joining.around_sleep,
        &mine,
        joining.deadline,
    )
    .map_err(|e| fail(format!("sharing the control blocks: {e}")))?;
    let mut keys = Vec::with_capacity(all.len());
    for (peer, bytes) in all.iter().enumerate() {
        match bytes.split_last() {
            Some((&flag, key)) if flag <= 1 => keys.push((SharedMemory::from_bytes(key), flag)),
            _ => {
                return Err(fail(format!(
                    "PE {peer} sent a malformed control-block key"
                )));
            }
        }
    }
    let forcing: Vec<Pe> = (0u32..)
        .zip(&keys)
        .filter(|(_, (_, flag))| *flag == 1)
        .map(|(peer, _)| Pe(peer))
        .collect();
    if !forcing.is_empty() && forcing.len() != keys.len() {
        return Err(fail(format!(
            "{} set {}=ofi and the others do not: set it alike for every PE",
            paths::list(&forcing),
            paths::TRANSPORT_VAR
        )));
    }
    let mut own = Some(own);
    let mut controls = Vec::with_capacity(keys.len());
    let mut pids = Vec::with_capacity(keys.len());
    for (peer, (key, _)) in keys.iter().enumerate() {
        let theirs =
            key.ok_or_else(|| fail(format!("PE {peer} sent a malformed control-block key")))?;
        pids.push(theirs.pid);
        if joining.nodes[peer] != my_node {
            controls.push(None);
            continue;
        }
        let mapping = match own.take().filter(|_| peer == pe.idx()) {
            Some(own) => own,
            None => {
                let (fd, size) = take_shared(&theirs)
                    .map_err(|e| fail(format!("PE {peer}'s control block: {e}")))?;
                Mapping::map(fd.as_fd(), size)
                    .map_err(|e| fail(format!("mapping PE {peer}'s control block: {e}")))?
            }
        };
        controls.push(Some(Control::new(mapping)));
    }
    let through_launcher = |mine: &[u8]| {
        allgather(
            client.as_ref(),
            &joining.around_sleep,
            mine,
            joining.deadline,
        )
        .map(|all| all.iter().map(|bytes| bytes.to_vec()).collect())
    };
    let network = match paths.contains(&PeerPath::Network) {
        false => None,
        true => Some(
            Network::open(pe, &joining.nodes, through_launcher)
                .map_err(|e| fail(format!("the network path (libfabric): {e}")))?,
        ),
    };
    let over_network = match &network {
        Some(network) if joining.nodes.len() <= allgather::MAX_PES => Some(
            NetworkAllgather::open(pe, joining.nodes.len(), network, &through_launcher)
                .map_err(|e| fail(format!("the exchange over the network path: {e}")))?,
        ),
        _ => None,
    };
    let state = PeState {
        pe,
        n_pes: joining.n_pes,
        caps: joining.caps,
        topology: joining.topology,
        start: std::time::Instant::now(),
        client,
        around_sleep: joining.around_sleep,
        controls,
        paths,
        spin: SpinPolicy::for_pes(joining.n_pes),
        pids,
        allgather: over_network,
        network,
        segments: (0..joining.n_pes).map(|_| Default::default()).collect(),
        exports: Mutex::new(vec![fd]),
        static_data: joining.static_data,
        static_key: Mutex::new(None),
        names: OnceLock::new(),
    };
    Ok(ProcessDevice {
        state: std::sync::Arc::new(state),
    })
}
