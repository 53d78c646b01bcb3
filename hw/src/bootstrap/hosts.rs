//! Node identity from host names, for the bootstraps whose launcher does not say where ranks
//! run (the MPI communicator's and the unique id's): every rank gives its host name in one
//! allgather, and ranks with the same name share a node.

use std::time::Instant;

use super::BootstrapError;
use super::job::NodeIdentity;

/// This machine's host name, as `gethostname` gives it; empty bytes if it cannot be read,
/// so that every rank of such a machine still agrees.
fn host_name() -> Vec<u8> {
    let mut name = [0u8; 256];
    // SAFETY: the buffer is writable for its length; gethostname writes at most that.
    let status = unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) };
    if status != 0 {
        return Vec::new();
    }
    let len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    name[..len].to_vec()
}

/// Where `rank` runs among ranks whose host names are `hosts`, in rank order: nodes are
/// numbered in the order their first rank appears.
fn node_of(hosts: &[Vec<u8>], rank: u32) -> NodeIdentity {
    let mine = &hosts[rank as usize];
    let mut firsts: Vec<&Vec<u8>> = Vec::new();
    for host in hosts {
        if !firsts.contains(&host) {
            firsts.push(host);
        }
    }
    let node_id = firsts.iter().position(|h| *h == mine).unwrap_or(0) as u32;
    let local_rank = hosts[..rank as usize].iter().filter(|h| *h == mine).count() as u32;
    let local_size = hosts.iter().filter(|h| *h == mine).count() as u32;
    NodeIdentity {
        node_id,
        local_rank,
        local_size,
    }
}

/// Learns this rank's node by an allgather of host names through `allgather`.
///
/// # Errors
/// The allgather's; [`BootstrapError::Protocol`] when it returns another number of messages
/// than `size`.
pub(crate) fn learn_node(
    rank: u32,
    size: u32,
    allgather: impl FnOnce(&[u8], Instant) -> Result<Vec<Vec<u8>>, BootstrapError>,
    deadline: Instant,
) -> Result<NodeIdentity, BootstrapError> {
    let hosts = allgather(&host_name(), deadline)?;
    if hosts.len() != size as usize || rank >= size {
        return Err(BootstrapError::Protocol(format!(
            "the host-name exchange returned {} names for {size} ranks",
            hosts.len()
        )));
    }
    Ok(node_of(&hosts, rank))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_with_the_same_host_name_share_a_node_numbered_by_first_appearance() {
        let hosts: Vec<Vec<u8>> = ["b", "a", "b", "a", "b"]
            .iter()
            .map(|h| h.as_bytes().to_vec())
            .collect();
        let node = |rank| node_of(&hosts, rank);
        assert_eq!(
            node(0),
            NodeIdentity {
                node_id: 0,
                local_rank: 0,
                local_size: 3
            }
        );
        assert_eq!(
            node(3),
            NodeIdentity {
                node_id: 1,
                local_rank: 1,
                local_size: 2
            }
        );
        assert_eq!(node(4).local_rank, 2);
    }
}
