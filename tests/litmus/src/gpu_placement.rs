//! Which GPUs a test's PEs run on when a catalogue runs on a machine of several GPUs
//! (`litmus-gpu`, docs/litmus-on-gpu.md).
//!
//! The CUDA backend puts PE `i` on GPU `i % n` by default, so on an eight-GPU machine a
//! three-PE test would only ever use GPUs 0 to 2, and the same link would always carry the
//! same pair of PEs. A seeded placement instead gives each run of a test its own random set of
//! distinct GPUs in a random order, so that over a catalogue every GPU, every link and both
//! directions of it carry tests, and a seed replays the choice.

use crate::gpu_stress_plan::Rng;

/// How a test's PEs go to the machine's GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuPlacement {
    /// A seeded random choice of distinct GPUs per run of a test ([`placed_gpus`]).
    Random,
    /// The backend's default: PE `i` on GPU `i % n`, the same GPUs for every test.
    Fixed,
}

/// Mixed into the seed so that the placement's draws are not the stress plan's.
const PLACEMENT_TAG: u64 = 0x6770_755f_706c_6163;

/// The GPUs of run `run` of a test of `n_pes` PEs seeded with `seed`, on a machine of
/// `machine_gpus` GPUs, as the list of `hw::cuda::CudaBuilder::gpus`: PE `i` runs on
/// `list[i % list.len()]`.
///
/// The list holds `min(n_pes, machine_gpus)` distinct GPUs. With [`GpuPlacement::Random`] they
/// are drawn at random from all the machine's GPUs, in random order: with more GPUs than PEs,
/// each PE gets a GPU of its own chosen among all; with as many or fewer, the order still
/// varies which PE runs on which GPU. With one GPU every PE shares GPU 0 either way.
pub fn placed_gpus(
    placement: GpuPlacement,
    n_pes: u32,
    machine_gpus: u32,
    seed: u64,
    run: u32,
) -> Vec<u32> {
    let n = n_pes.min(machine_gpus);
    match placement {
        GpuPlacement::Fixed => (0..n).collect(),
        GpuPlacement::Random => {
            let mut rng = Rng::new(
                seed.wrapping_mul(0xd1b5_4a32_d192_ed03)
                    ^ u64::from(run).wrapping_mul(0x9e37_79b9_7f4a_7c15)
                    ^ PLACEMENT_TAG,
            );
            rng.sample(n, machine_gpus)
        }
    }
}

/// The seed of run `run` of a test seeded with `seed`: run 0 keeps the test's seed, so that one
/// run a test replays the stress of a run made before placements existed, and the others
/// differ from it and from the next tests' seeds (`seed + 1`, ...) in their high bits.
pub fn run_seed(seed: u64, run: u32) -> u64 {
    seed ^ (u64::from(run) << 32)
}

/// `executions` divided among `runs` runs as evenly as can be, the first runs taking one more;
/// runs that would have none are left out, so there are at most `executions` of them.
pub fn split_executions(executions: u64, runs: u32) -> Vec<u64> {
    let runs = u64::from(runs.max(1)).min(executions.max(1));
    (0..runs)
        .map(|k| executions / runs + u64::from(k < executions % runs))
        .filter(|&n| n > 0)
        .collect()
}

/// The placements of a test's runs as the table and the progress show them: each run's list,
/// the GPU of each PE in turn (`5,0` is PE 0 on GPU 5 and PE 1 on GPU 0; PE `i` on the
/// `i % len`-th), runs apart by ` / `; `-` for none.
pub fn show_placements(runs: &[Vec<u32>]) -> String {
    if runs.is_empty() {
        return "-".into();
    }
    let shown: Vec<String> = runs
        .iter()
        .map(|gpus| {
            let gpus: Vec<String> = gpus.iter().map(u32::to_string).collect();
            gpus.join(",")
        })
        .collect();
    shown.join(" / ")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn a_seed_replays_the_placement() {
        for seed in 0..50 {
            assert_eq!(
                placed_gpus(GpuPlacement::Random, 3, 8, seed, 1),
                placed_gpus(GpuPlacement::Random, 3, 8, seed, 1)
            );
        }
    }

    #[test]
    fn a_test_gets_distinct_gpus_the_machine_has() {
        for seed in 0..200 {
            for (n_pes, machine) in [(2, 8), (3, 8), (4, 8), (4, 2), (3, 3)] {
                let gpus = placed_gpus(GpuPlacement::Random, n_pes, machine, seed, 0);
                assert_eq!(gpus.len() as u32, n_pes.min(machine), "{gpus:?}");
                assert!(gpus.iter().all(|&g| g < machine), "{gpus:?}");
                let distinct: BTreeSet<u32> = gpus.iter().copied().collect();
                assert_eq!(distinct.len(), gpus.len(), "{gpus:?}");
            }
        }
    }

    /// Over a catalogue's worth of two-PE tests on eight GPUs, seeds `1..=145` as `litmus-gpu`
    /// gives them, every GPU and most ordered pairs carry a test; the fixed placement uses one
    /// pair only.
    #[test]
    fn a_catalogue_spreads_over_every_gpu_and_link() {
        let placements: Vec<Vec<u32>> = (1..=145)
            .map(|seed| placed_gpus(GpuPlacement::Random, 2, 8, seed, 0))
            .collect();
        let used: BTreeSet<u32> = placements.iter().flatten().copied().collect();
        assert_eq!(used, (0..8).collect());
        let pairs: BTreeSet<(u32, u32)> = placements.iter().map(|p| (p[0], p[1])).collect();
        assert!(pairs.len() > 40, "{} of 56 ordered pairs", pairs.len());
        let fixed: BTreeSet<Vec<u32>> = (1..=145)
            .map(|seed| placed_gpus(GpuPlacement::Fixed, 2, 8, seed, 0))
            .collect();
        assert_eq!(fixed, BTreeSet::from([vec![0, 1]]));
    }

    #[test]
    fn runs_of_one_test_differ() {
        let runs: BTreeSet<Vec<u32>> = (0..8)
            .map(|run| placed_gpus(GpuPlacement::Random, 3, 8, 7, run))
            .collect();
        assert!(runs.len() > 1, "{runs:?}");
        assert_eq!(run_seed(7, 0), 7);
        assert_ne!(run_seed(7, 1), 8);
    }

    #[test]
    fn with_one_gpu_every_pe_shares_gpu_0() {
        for placement in [GpuPlacement::Random, GpuPlacement::Fixed] {
            for seed in 0..20 {
                assert_eq!(placed_gpus(placement, 4, 1, seed, 0), vec![0]);
            }
        }
    }

    #[test]
    fn executions_divide_evenly_among_runs() {
        assert_eq!(split_executions(100_000, 1), vec![100_000]);
        assert_eq!(split_executions(10, 3), vec![4, 3, 3]);
        assert_eq!(split_executions(2, 4), vec![1, 1]);
        assert_eq!(split_executions(5, 0), vec![5]);
        assert_eq!(split_executions(100_000, 4).iter().sum::<u64>(), 100_000);
    }

    #[test]
    fn a_placement_shows_each_pe_s_gpu() {
        assert_eq!(show_placements(&[vec![5, 0, 3]]), "5,0,3");
        assert_eq!(show_placements(&[vec![0], vec![0]]), "0 / 0");
        assert_eq!(show_placements(&[]), "-");
    }
}
