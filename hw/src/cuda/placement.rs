//! Which GPU each PE of a run goes to: PE `i` on `gpus[i % gpus.len()]`, where the list is the
//! machine's first GPUs (the default) or the one given to [`super::CudaBuilder::gpus`].
//!
//! The checks are pure functions of the list and the machine's inventory, so that they are
//! tested without a GPU and fail before any context is made.

use super::driver::GpuInventory;
use crate::error::LaunchError;

/// The default list for `n_pes` PEs on a machine of `machine_gpus` GPUs: GPUs 0 to n-1, n the
/// smaller of the two, so that PE `i` runs on GPU `i % n`.
pub(super) fn first_gpus(n_pes: u32, machine_gpus: u32) -> Vec<u32> {
    (0..n_pes.min(machine_gpus)).collect()
}

/// Checks a list of GPUs given by the caller against the machine: it names at least one GPU,
/// each one the machine has, and none twice (PEs share a GPU by wrapping around the list, not by
/// naming it again).
///
/// # Errors
/// [`LaunchError::Gpus`] naming the first problem and its fix.
pub(super) fn check_gpu_list(gpus: &[u32], inventory: &GpuInventory) -> Result<(), LaunchError> {
    let machine_gpus = inventory.gpus.len();
    if gpus.is_empty() {
        return Err(LaunchError::Gpus(
            "the list of GPUs is empty; name at least one GPU, or leave CudaBuilder::gpus out \
             to run PE i on GPU i"
                .into(),
        ));
    }
    if let Some(missing) = gpus.iter().find(|&&g| g as usize >= machine_gpus) {
        return Err(LaunchError::Gpus(format!(
            "this machine has no GPU {missing}: it has {machine_gpus}, ordinals 0 to {}; name \
             only those (`nvidia-smi -L` lists them, renumbered by CUDA_VISIBLE_DEVICES)",
            machine_gpus.saturating_sub(1)
        )));
    }
    for (k, g) in gpus.iter().enumerate() {
        if gpus[..k].contains(g) {
            return Err(LaunchError::Gpus(format!(
                "GPU {g} is named twice in {gpus:?}; name each GPU once (with \
                 CudaBuilder::share_gpus, PEs beyond the list's length wrap around it: PE i \
                 runs on gpus[i % len])"
            )));
        }
    }
    Ok(())
}

/// Checks that every pair of `gpus` can access each other's memory.
///
/// # Errors
/// [`LaunchError::Gpus`] naming the first pair without peer access and the fix.
pub(super) fn check_peer_access(inventory: &GpuInventory, gpus: &[u32]) -> Result<(), LaunchError> {
    for &from in gpus {
        for &to in gpus {
            if !inventory.can_access_peer(from, to) {
                return Err(LaunchError::Gpus(format!(
                    "GPU {from} cannot access GPU {to}'s memory (no peer access between them: \
                     check `nvidia-smi topo -m`); the CUDA backend needs NVLink or PCIe peer \
                     access between every pair of its GPUs, so run on GPUs that have it \
                     (CudaBuilder::gpus)"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::GpuInfo;

    /// A machine of `n` GPUs with peer access between the pairs `peer_access`.
    fn machine(n: u32, peer_access: Vec<(u32, u32)>) -> GpuInventory {
        let gpus = (0..n)
            .map(|ordinal| GpuInfo {
                ordinal,
                name: "test".into(),
                compute_capability: (9, 0),
                memory_bytes: 1 << 30,
            })
            .collect();
        GpuInventory { gpus, peer_access }
    }

    /// Every ordered pair of `n` GPUs: an NVSwitch box.
    fn all_pairs(n: u32) -> Vec<(u32, u32)> {
        (0..n)
            .flat_map(|a| (0..n).filter(move |&b| b != a).map(move |b| (a, b)))
            .collect()
    }

    #[test]
    fn the_default_is_the_first_gpus() {
        assert_eq!(first_gpus(3, 8), vec![0, 1, 2]);
        assert_eq!(first_gpus(4, 2), vec![0, 1]);
        assert_eq!(first_gpus(2, 1), vec![0]);
    }

    #[test]
    fn any_order_of_distinct_gpus_the_machine_has_is_accepted() {
        let eight = machine(8, all_pairs(8));
        for gpus in [vec![7, 2, 5], vec![0], (0..8).rev().collect()] {
            assert!(check_gpu_list(&gpus, &eight).is_ok(), "{gpus:?}");
            assert!(check_peer_access(&eight, &gpus).is_ok(), "{gpus:?}");
        }
    }

    #[test]
    fn an_empty_list_is_refused_with_the_fix() {
        let e = check_gpu_list(&[], &machine(2, all_pairs(2))).unwrap_err();
        assert!(matches!(e, LaunchError::Gpus(_)), "{e}");
        let e = e.to_string();
        assert!(
            e.contains("empty") && e.contains("leave CudaBuilder::gpus out"),
            "{e}"
        );
    }

    #[test]
    fn an_ordinal_the_machine_lacks_is_named_with_the_ones_it_has() {
        let e = check_gpu_list(&[0, 8], &machine(8, all_pairs(8)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no GPU 8"), "{e}");
        assert!(e.contains("ordinals 0 to 7"), "{e}");
    }

    #[test]
    fn a_gpu_named_twice_is_refused() {
        let e = check_gpu_list(&[1, 3, 1], &machine(4, all_pairs(4)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("GPU 1 is named twice"), "{e}");
        assert!(e.contains("gpus[i % len]"), "{e}");
    }

    #[test]
    fn a_listed_pair_without_peer_access_is_named() {
        // GPUs 0 and 1 reach each other; 2 reaches nobody and nobody reaches 2.
        let inventory = machine(3, vec![(0, 1), (1, 0)]);
        assert!(check_peer_access(&inventory, &[1, 0]).is_ok());
        let e = check_peer_access(&inventory, &[1, 2]).unwrap_err();
        assert!(matches!(e, LaunchError::Gpus(_)), "{e}");
        let e = e.to_string();
        assert!(e.contains("GPU 1 cannot access GPU 2"), "{e}");
        assert!(e.contains("CudaBuilder::gpus"), "{e}");
    }
}
