//! The random choices of one launch of the stressed litmus kernel, made on the host from a
//! seed so that every PE makes the same ones and a seed replays a run's placement.
//!
//! A launch runs many instances of a test at once. For each launch it chooses:
//!
//! - **where each instance's words live** ([`WordLayout`]): every word on its own 128-byte
//!   line, an instance's words together on one line, or all instances' words packed at random
//!   into a small region so that lines mix instances;
//! - **which thread runs each PE's part of each instance** ([`ThreadLayout`]): the test's
//!   threads go to a random subset of the PE's blocks, then to random threads of them (any
//!   block, warp and lane) or to a run of neighbouring threads (instances share warps);
//! - **what the other threads hammer** ([`TargetLayout`]): words of a scratch region, lines at
//!   a power-of-two stride (candidates for the same DRAM bank and L2 set), or the unused words
//!   of the very lines that hold test words;
//! - **how hard** ([`StressPattern`], iterations), how much the test threads hammer before
//!   their program (pre-stress), and the longest random spin before it.
//!
//! The layouts follow the stress of Alglave et al. (ASPLOS 2015) and of Sorensen and
//! Donaldson's and GPUHarbor's testing environments; the code is this project's own.

/// The words of test variables a launch may use: `1 << 20` words (8 MiB) of each PE's heap.
pub const VARS_WORDS: u32 = 1 << 20;
/// The scratch words after them that stress may target: 512 KiB.
pub const SCRATCH_WORDS: u32 = 1 << 16;
/// A thread that runs no instance (`roles[thread]`).
pub const NO_ROLE: u32 = u32::MAX;
/// Words of one 128-byte line.
const LINE_WORDS: u32 = 16;
/// The stride of [`TargetLayout::Strided`], in words (32 KiB).
const TARGET_STRIDE_WORDS: u32 = 4096;

/// What a stressed run may do; the rest is chosen at random per launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StressOptions {
    /// The most instances of the test in one launch.
    pub instances: u32,
    /// Threads of each block.
    pub threads_per_block: u32,
    /// Blocks of all PEs' kernels together: they must all be resident at once on the GPU they
    /// share (the launch's start gate waits for every one), so at most one per SM is safe.
    pub blocks_in_all: u32,
    /// Whether the threads that run no instance hammer memory, and test threads pre-stress.
    pub memory_stress: bool,
}

impl Default for StressOptions {
    fn default() -> Self {
        StressOptions {
            instances: 2048,
            threads_per_block: 256,
            // An H100 or H200 has 132 SMs.
            blocks_in_all: 128,
            memory_stress: true,
        }
    }
}

impl StressOptions {
    /// The blocks of each PE's kernel.
    pub fn blocks_per_pe(&self, n_pes: u32) -> u32 {
        self.blocks_in_all / n_pes.max(1)
    }

    /// The threads of each PE's kernel.
    pub fn threads_per_pe(&self, n_pes: u32) -> u32 {
        self.blocks_per_pe(n_pes) * self.threads_per_block
    }
}

/// Where an instance's words live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordLayout {
    /// Every word of every instance on its own line, the lines scattered.
    Spread,
    /// An instance's words together on one line, at random places in it.
    SameLine,
    /// Every word at a random place among twice as many words as there are: lines hold
    /// words of several instances.
    Dense,
}

/// How instances are given to a PE's threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadLayout {
    /// Random threads of the chosen blocks.
    Shuffled,
    /// A run of neighbouring threads of the chosen blocks, from a random start.
    Packed,
}

/// What stress threads hammer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetLayout {
    /// Random words of the scratch region, each on its own line.
    Scratch,
    /// Scratch lines a power-of-two stride apart.
    Strided,
    /// Unused words of lines that hold test words (only with [`WordLayout::Spread`]).
    BesideTestWords,
}

/// The accesses of one stress iteration, as the kernel numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StressPattern {
    /// Two stores.
    StoreStore = 0,
    /// A store, then a load.
    StoreLoad = 1,
    /// A load, then a store.
    LoadStore = 2,
    /// Two loads.
    LoadLoad = 3,
}

/// Why a launch cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// More instances than a PE has threads.
    #[error("{instances} instances do not fit {threads} threads per PE; ask for fewer instances")]
    TooManyInstances {
        /// Instances asked for.
        instances: u32,
        /// Threads of each PE's kernel.
        threads: u32,
    },
    /// The instances' words do not fit the region of test words.
    #[error(
        "{instances} instances of {words} words do not fit {VARS_WORDS} words a line each; \
         ask for fewer instances"
    )]
    TooManyWords {
        /// Instances asked for.
        instances: u32,
        /// Words of each.
        words: u32,
    },
}

/// A small deterministic generator (splitmix64): the host's choices must be the same on
/// every PE and replayable from the seed.
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (`n > 0`).
    pub(crate) fn below(&mut self, n: u32) -> u32 {
        (self.next_u64() % u64::from(n)) as u32
    }

    /// One of `choices`.
    fn pick<T: Copy>(&mut self, choices: &[T]) -> T {
        choices[self.below(choices.len() as u32) as usize]
    }

    /// `k` distinct numbers below `n`, in random order (`k <= n`).
    pub(crate) fn sample(&mut self, k: u32, n: u32) -> Vec<u32> {
        let mut all: Vec<u32> = (0..n).collect();
        for i in 0..k {
            let j = i + self.below(n - i);
            all.swap(i as usize, j as usize);
        }
        all.truncate(k as usize);
        all
    }
}

/// Everything the kernel of one launch reads: where the words are, who runs what, what is
/// hammered and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchPlan {
    /// Instances in this launch.
    pub instances: u32,
    /// Words of each instance: the test's variables, then its barrier counter if any.
    pub words: u32,
    /// The layout of the words.
    pub word_layout: WordLayout,
    /// The layout of the test threads.
    pub thread_layout: ThreadLayout,
    /// What stress targets.
    pub target_layout: TargetLayout,
    /// `slots[i * words + w]`: the word (index from the start of the test-word region) of
    /// instance `i`'s word `w`; the same on every PE.
    pub slots: Vec<u32>,
    /// `roles[pe][thread]`: the instance that thread of PE `pe`'s kernel runs, or
    /// [`NO_ROLE`].
    pub roles: Vec<Vec<u32>>,
    /// The words stress threads hammer (indices as in `slots`; scratch words follow the
    /// [`VARS_WORDS`] test words).
    pub targets: Vec<u32>,
    /// Iterations of each stress thread (0: no stress).
    pub stress_iterations: u32,
    /// The accesses of an iteration.
    pub pattern: StressPattern,
    /// Iterations each test thread hammers before its program.
    pub pre_stress_iterations: u32,
    /// The longest random spin before a test thread's program, in cycles (0: none).
    pub max_delay_cycles: u32,
    /// The seed of the kernel's own generator (per-thread delays).
    pub kernel_seed: u64,
}

impl LaunchPlan {
    /// The plan of launch number `launch` of a test of `n_pes` PEs whose instances have
    /// `words` words each, with `instances` instances, from the run's `seed`.
    ///
    /// # Errors
    /// [`PlanError`] if the instances do not fit the threads or the word region.
    pub fn new(
        n_pes: u32,
        words: u32,
        options: &StressOptions,
        instances: u32,
        seed: u64,
        launch: u64,
    ) -> Result<Self, PlanError> {
        let threads = options.threads_per_pe(n_pes);
        if instances > threads {
            return Err(PlanError::TooManyInstances { instances, threads });
        }
        if u64::from(instances) * u64::from(words) * u64::from(LINE_WORDS) > u64::from(VARS_WORDS) {
            return Err(PlanError::TooManyWords { instances, words });
        }
        let mut rng = Rng::new(seed ^ launch.wrapping_mul(0xd1b5_4a32_d192_ed03));
        let word_layout = rng.pick(&[WordLayout::Spread, WordLayout::SameLine, WordLayout::Dense]);
        let word_layout = if word_layout == WordLayout::SameLine && words > LINE_WORDS {
            WordLayout::Spread
        } else {
            word_layout
        };
        let slots = place_words(&mut rng, word_layout, instances, words);
        let thread_layout = rng.pick(&[
            ThreadLayout::Shuffled,
            ThreadLayout::Shuffled,
            ThreadLayout::Shuffled,
            ThreadLayout::Packed,
        ]);
        let roles = (0..n_pes)
            .map(|pe| {
                let mut own = Rng::new(rng.next_u64() ^ u64::from(pe));
                place_threads(&mut own, thread_layout, options, n_pes, instances)
            })
            .collect();
        let target_layout = match rng.pick(&[
            TargetLayout::Scratch,
            TargetLayout::Strided,
            TargetLayout::BesideTestWords,
        ]) {
            TargetLayout::BesideTestWords if word_layout != WordLayout::Spread => {
                TargetLayout::Scratch
            }
            layout => layout,
        };
        let n_targets = rng.pick(&[1, 2, 4, 16, 64]);
        let targets = place_targets(&mut rng, target_layout, n_targets, &slots);
        let (stress_iterations, pre_stress_iterations) = if options.memory_stress {
            (rng.pick(&[256, 1024, 4096]), rng.pick(&[0, 0, 128, 512]))
        } else {
            (0, 0)
        };
        Ok(LaunchPlan {
            instances,
            words,
            word_layout,
            thread_layout,
            target_layout,
            slots,
            roles,
            targets,
            stress_iterations,
            pattern: rng.pick(&[
                StressPattern::StoreStore,
                StressPattern::StoreLoad,
                StressPattern::LoadStore,
                StressPattern::LoadLoad,
            ]),
            pre_stress_iterations,
            max_delay_cycles: rng.pick(&[0, 256, 2048, 8192]),
            kernel_seed: rng.next_u64(),
        })
    }
}

/// `slots` for `instances` of `words` words each under `layout`.
fn place_words(rng: &mut Rng, layout: WordLayout, instances: u32, words: u32) -> Vec<u32> {
    let n = instances * words;
    // Lines are drawn from four times as many as needed, so that they land far apart.
    let region_lines = |needed: u32| (needed * 4).clamp(1, VARS_WORDS / LINE_WORDS);
    match layout {
        WordLayout::Spread => {
            let lines = rng.sample(n, region_lines(n));
            lines
                .into_iter()
                .map(|line| line * LINE_WORDS + rng.below(LINE_WORDS))
                .collect()
        }
        WordLayout::SameLine => {
            let lines = rng.sample(instances, region_lines(instances));
            lines
                .into_iter()
                .flat_map(|line| {
                    rng.sample(words, LINE_WORDS)
                        .into_iter()
                        .map(move |w| line * LINE_WORDS + w)
                })
                .collect()
        }
        WordLayout::Dense => rng.sample(n, (2 * n).max(1)),
    }
}

/// One PE's `roles` for `instances` under `layout`.
fn place_threads(
    rng: &mut Rng,
    layout: ThreadLayout,
    options: &StressOptions,
    n_pes: u32,
    instances: u32,
) -> Vec<u32> {
    let blocks = options.blocks_per_pe(n_pes);
    let per_block = options.threads_per_block;
    let needed_blocks = instances.div_ceil(per_block).max(1);
    let test_blocks = needed_blocks + rng.below(blocks - needed_blocks + 1);
    let mut chosen = rng.sample(test_blocks, blocks);
    chosen.sort_unstable();
    let candidates: Vec<u32> = chosen
        .iter()
        .flat_map(|&b| (0..per_block).map(move |t| b * per_block + t))
        .collect();
    let picked: Vec<u32> = match layout {
        ThreadLayout::Shuffled => rng
            .sample(instances, candidates.len() as u32)
            .into_iter()
            .map(|i| candidates[i as usize])
            .collect(),
        ThreadLayout::Packed => {
            let start = rng.below(candidates.len() as u32) as usize;
            (0..instances as usize)
                .map(|i| candidates[(start + i) % candidates.len()])
                .collect()
        }
    };
    let mut roles = vec![NO_ROLE; (blocks * per_block) as usize];
    for (instance, thread) in picked.into_iter().enumerate() {
        roles[thread as usize] = instance as u32;
    }
    roles
}

/// `n` stress targets under `layout`.
fn place_targets(rng: &mut Rng, layout: TargetLayout, n: u32, slots: &[u32]) -> Vec<u32> {
    match layout {
        TargetLayout::Scratch => rng
            .sample(n, SCRATCH_WORDS / LINE_WORDS)
            .into_iter()
            .map(|line| VARS_WORDS + line * LINE_WORDS + rng.below(LINE_WORDS))
            .collect(),
        TargetLayout::Strided => {
            let positions = SCRATCH_WORDS / TARGET_STRIDE_WORDS;
            let word = rng.below(LINE_WORDS);
            rng.sample(n.min(positions), positions)
                .into_iter()
                .map(|k| VARS_WORDS + k * TARGET_STRIDE_WORDS + word)
                .collect()
        }
        TargetLayout::BesideTestWords => rng
            .sample(n.min(slots.len() as u32), slots.len() as u32)
            .into_iter()
            .map(|i| {
                // Under the spread layout a test word is alone on its line: any other word
                // of the line is free.
                let word = slots[i as usize];
                let other = (word % LINE_WORDS + 1 + rng.below(LINE_WORDS - 1)) % LINE_WORDS;
                word - word % LINE_WORDS + other
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn plans(n_pes: u32, words: u32, launches: u64) -> Vec<LaunchPlan> {
        let options = StressOptions::default();
        (0..launches)
            .map(|l| LaunchPlan::new(n_pes, words, &options, options.instances, 7, l).unwrap())
            .collect()
    }

    /// Every instance's words are distinct words of the region, on every layout; stress
    /// targets are never test words.
    #[test]
    fn words_are_distinct_and_stress_never_touches_them() {
        let mut layouts = BTreeSet::new();
        for plan in plans(2, 3, 40) {
            layouts.insert(format!("{:?}/{:?}", plan.word_layout, plan.target_layout));
            let words: BTreeSet<u32> = plan.slots.iter().copied().collect();
            assert_eq!(words.len(), plan.slots.len(), "{:?}", plan.word_layout);
            assert!(words.iter().all(|&w| w < VARS_WORDS));
            assert!(!plan.targets.is_empty());
            for t in &plan.targets {
                assert!(!words.contains(t), "target {t} is a test word");
                assert!(*t < VARS_WORDS + SCRATCH_WORDS);
            }
            if plan.word_layout == WordLayout::SameLine {
                for instance in plan.slots.chunks(3) {
                    assert!(instance.iter().all(|w| w / 16 == instance[0] / 16));
                }
            }
            if plan.target_layout == TargetLayout::BesideTestWords {
                let lines: BTreeSet<u32> = plan.slots.iter().map(|w| w / 16).collect();
                assert!(plan.targets.iter().all(|t| lines.contains(&(t / 16))));
            }
        }
        // Forty launches draw every word layout and every target layout.
        for word in ["Spread", "SameLine", "Dense"] {
            assert!(layouts.iter().any(|l| l.starts_with(word)), "{layouts:?}");
        }
        for target in ["Scratch", "Strided", "BesideTestWords"] {
            assert!(layouts.iter().any(|l| l.ends_with(target)), "{layouts:?}");
        }
    }

    /// Each PE runs every instance exactly once, on threads of its own kernel, and the
    /// placement differs between PEs and between launches.
    #[test]
    fn every_instance_has_one_thread_on_every_pe() {
        let options = StressOptions::default();
        let plans = plans(4, 2, 8);
        for plan in &plans {
            assert_eq!(plan.roles.len(), 4);
            for roles in &plan.roles {
                assert_eq!(roles.len() as u32, options.threads_per_pe(4));
                let mut seen: Vec<u32> = roles.iter().copied().filter(|&r| r != NO_ROLE).collect();
                seen.sort_unstable();
                assert_eq!(seen, (0..plan.instances).collect::<Vec<_>>());
            }
            assert_ne!(plan.roles[0], plan.roles[1]);
        }
        assert_ne!(plans[0].roles[0], plans[1].roles[0]);
        // Threads land in different warps and lanes: the thread of instance 0 on PE 0 takes
        // many places over the launches.
        let places: BTreeSet<usize> = plans
            .iter()
            .map(|p| p.roles[0].iter().position(|&r| r == 0).unwrap())
            .collect();
        assert!(places.len() > 4, "{places:?}");
    }

    /// The same seed and launch give the same plan: every PE computes it alone.
    #[test]
    fn a_seed_replays_the_plan() {
        let options = StressOptions::default();
        let a = LaunchPlan::new(3, 4, &options, 1000, 99, 5).unwrap();
        let b = LaunchPlan::new(3, 4, &options, 1000, 99, 5).unwrap();
        let c = LaunchPlan::new(3, 4, &options, 1000, 99, 6).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    /// Without memory stress nothing is hammered, but placement and delays still vary.
    #[test]
    fn memory_stress_off_hammers_nothing() {
        let options = StressOptions {
            memory_stress: false,
            ..StressOptions::default()
        };
        for l in 0..10 {
            let plan = LaunchPlan::new(2, 2, &options, 100, 1, l).unwrap();
            assert_eq!((plan.stress_iterations, plan.pre_stress_iterations), (0, 0));
        }
    }

    /// Too many instances are refused, naming the fix.
    #[test]
    fn too_many_instances_are_refused() {
        let options = StressOptions::default();
        let e = LaunchPlan::new(4, 2, &options, 1 << 20, 1, 0).unwrap_err();
        assert!(e.to_string().contains("fewer instances"), "{e}");
    }
}
