//! Which node each rank of a PMI job runs on: from the launcher's `PMI_process_mapping`, or
//! from every rank's host name where the launcher offers no mapping.

use crate::bootstrap::job::NodeIdentity;

/// Every rank's node, from a mapping such as `(vector,(0,2,2))`: blocks of
/// `(first node, node count, ranks per node)`, repeated until every one of `size` ranks has
/// a node (so `(vector,(0,2,1))` places ranks round-robin on two nodes). `None` for a mapping
/// that is empty or does not parse, so that the caller asks the hosts instead.
pub(super) fn of_mapping(mapping: &str, size: u32) -> Option<Vec<u32>> {
    let inner = mapping.trim().strip_prefix("(vector,")?.strip_suffix(')')?;
    let mut blocks = Vec::new();
    for block in inner.split("),") {
        let numbers: Vec<u32> = block
            .trim_matches(|c| c == '(' || c == ')')
            .split(',')
            .map(|n| n.trim().parse().ok())
            .collect::<Option<_>>()?;
        let [first, count, per_node] = numbers[..] else {
            return None;
        };
        blocks.push((first, count, per_node));
    }
    if blocks.iter().all(|&(_, count, per)| count == 0 || per == 0) {
        return None;
    }
    let mut nodes = Vec::with_capacity(size as usize);
    while nodes.len() < size as usize {
        for &(first, count, per_node) in &blocks {
            for node in first..first.saturating_add(count) {
                for _ in 0..per_node {
                    if nodes.len() < size as usize {
                        nodes.push(node);
                    }
                }
            }
        }
    }
    Some(nodes)
}

/// Every rank's node from every rank's host name: nodes numbered in order of their first rank.
pub(super) fn of_hosts(hosts: &[Vec<u8>]) -> Vec<u32> {
    let mut seen: Vec<&[u8]> = Vec::new();
    hosts
        .iter()
        .map(
            |host| match seen.iter().position(|s| *s == host.as_slice()) {
                Some(i) => i as u32,
                None => {
                    seen.push(host);
                    (seen.len() - 1) as u32
                }
            },
        )
        .collect()
}

/// `rank`'s identity among `nodes` (every rank's node).
pub(super) fn identity(nodes: &[u32], rank: u32) -> NodeIdentity {
    let node_id = nodes[rank as usize];
    let same = |r: &&u32| **r == node_id;
    NodeIdentity {
        node_id,
        local_rank: nodes[..rank as usize].iter().filter(same).count() as u32,
        local_size: nodes.iter().filter(same).count() as u32,
    }
}

/// This machine's host name, for ranks to compare.
pub(super) fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into the buffer it is given.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return String::from("localhost");
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::{identity, of_hosts, of_mapping};

    #[test]
    fn mappings_place_ranks_in_blocks_and_round_robin() {
        assert_eq!(of_mapping("(vector,(0,2,2))", 4), Some(vec![0, 0, 1, 1]));
        assert_eq!(of_mapping("(vector,(0,2,1))", 4), Some(vec![0, 1, 0, 1]));
        assert_eq!(
            of_mapping("(vector,(0,1,3),(1,1,1))", 4),
            Some(vec![0, 0, 0, 1])
        );
        assert_eq!(of_mapping("(vector,(0,1,4))", 4), Some(vec![0; 4]));
        assert_eq!(of_mapping("", 4), None);
        assert_eq!(of_mapping("(vector,(0,0,0))", 4), None);
        assert_eq!(of_mapping("(vector,(a,1,1))", 4), None);
    }

    #[test]
    fn hosts_number_nodes_by_first_rank() {
        let hosts = [b"b".to_vec(), b"a".to_vec(), b"b".to_vec()];
        let nodes = of_hosts(&hosts);
        assert_eq!(nodes, [0, 1, 0]);
        let id = identity(&nodes, 2);
        assert_eq!((id.node_id, id.local_rank, id.local_size), (0, 1, 2));
    }
}
