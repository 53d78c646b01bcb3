//! Many executions of litmus tests on PEs that are processes of one job (the process backend
//! under `rshmem run`, `mpirun` or `srun`), each PE's program run through the hardware
//! contract (`pe.rs`), every operation crossing whatever path the backend takes to the peer
//! (libfabric under `RSHMEM_TRANSPORT=ofi` or across nodes).
//!
//! Design:
//!
//! - **Setup once.** An [`Arena`] is one segment per PE, made and imported once for the whole
//!   run; a test's executions lie in it side by side, each on words of its own (as litmus7 and
//!   the GPU stress runner place instances), so a batch of executions needs its words zeroed
//!   and set, not a new segment.
//! - **Cheap meetings.** Every rendezvous is a network atomic to each peer and a wait on a word
//!   of the PE's own memory, never the launcher's exchange, which costs milliseconds through
//!   Slurm's daemons. `barrier_all` and `sync_all` inside a test meet the same way
//!   ([`Meeting::Words`]).
//! - **A start gate per execution.** Executions of one batch run one after another; without a
//!   gate a PE that runs ahead would meet its peer's execution only after it ended, and only
//!   sequential outcomes could appear. Each PE puts a flag to every peer and waits for
//!   theirs before each execution, then spins a random while, so the PEs start each execution
//!   together and at varying skews.
//! - **Every wait has a deadline**, so a hang is an error that names the PE, the execution and
//!   the line of the test where it waited.

use std::collections::BTreeMap;

use hw::{
    AmoKind, AmoOp, AmoWidth, Backend, Copier, Device, Instant, LocalRange, MemKind, Pe, Queue,
    QueueError, RemoteRange, WaitSpec,
};
use model::litmus::{Config, Litmus, Observable, Outcome};

use crate::pe::{Frame, Meeting, PeRunError, read_memory, run_program};

/// How many tests one arena serves: two control words each.
pub const MAX_TESTS: usize = 4096;

/// Bytes before the executions' words: the control words of every test.
const CONTROL_BYTES: u64 = 8 * 2 * MAX_TESTS as u64;

/// How the PEs start the executions of a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartGate {
    /// Before each execution every PE waits for every other (a posted put of a flag each way).
    Each,
    /// Only the batch starts together; executions then run as fast as each PE goes.
    Batch,
}

/// How a test runs on an [`Arena`].
#[derive(Clone, Copy, Debug)]
pub struct NetOptions {
    /// Executions of each test.
    pub executions: u64,
    /// Executions per batch: their words are set, then they run, then every PE meets, reads
    /// its memory and sends its results to PE 0.
    pub batch: u32,
    /// How executions start.
    pub gate: StartGate,
    /// Each PE spins a random time below this before each execution, in nanoseconds.
    pub jitter_ns: u64,
    /// How long any one wait may take, in nanoseconds.
    pub wait_ns: u64,
    /// The seed of the random spins.
    pub seed: u64,
}

/// Why a test's run on an [`Arena`] failed on this PE.
#[derive(Debug, thiserror::Error)]
pub enum NetRunError {
    /// A PE's program failed in one execution (a wait past its deadline: a hang).
    #[error("P{pe}: execution {execution}: {source}")]
    Program {
        /// This PE.
        pe: u32,
        /// The execution, counted from 0 within the test.
        execution: u64,
        /// What failed, naming the line.
        source: PeRunError,
    },
    /// A step of the runner's own failed (a meeting, the results' transfer).
    #[error("P{pe}: {what}: {source}")]
    Step {
        /// This PE.
        pe: u32,
        /// The step.
        what: String,
        /// The backend's error.
        source: QueueError,
    },
    /// A register an outcome records was never written.
    #[error("P{pe}: execution {execution}: r{reg} of the outcome was never written")]
    Unset {
        /// This PE.
        pe: u32,
        /// The execution.
        execution: u64,
        /// The register.
        reg: u8,
    },
    /// The arena is too small, has served all the tests it can, or the run has not the
    /// test's PEs.
    #[error("{0}")]
    Capacity(String),
    /// The backend could not make or import the arena's segment.
    #[error("setup: {0}")]
    Device(#[from] hw::DeviceError),
    /// The arena's setup exchange failed.
    #[error("setup exchange: {0}")]
    Exchange(QueueError),
}

/// What an arena must hold: the largest execution's words and results of any test it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArenaSize {
    /// Executions a batch holds.
    pub batch: u32,
    /// Words of one execution, gate words included ([`execution_words`]).
    pub execution_words: u64,
    /// Observed values of one execution, every PE's together.
    pub observables: u64,
}

impl ArenaSize {
    /// The size that fits every test of `tests` with `batch` executions a batch.
    pub fn for_tests<'a>(tests: impl IntoIterator<Item = &'a Litmus>, batch: u32) -> ArenaSize {
        let mut size = ArenaSize {
            batch,
            execution_words: 1,
            observables: 1,
        };
        for test in tests {
            size.execution_words = size.execution_words.max(execution_words(test));
            size.observables = size.observables.max(test.observables().len() as u64);
        }
        size
    }

    fn results_base(&self) -> u64 {
        CONTROL_BYTES + 8 * u64::from(self.batch) * self.execution_words
    }

    /// The segment's bytes.
    pub fn bytes(&self) -> u64 {
        self.results_base() + 8 * u64::from(self.batch) * self.observables
    }
}

/// Words one execution of `test` takes: its frame ([`Frame::words`]), then a gate word per
/// PE, rounded up to a 64-byte line so that executions share no line.
pub fn execution_words(test: &Litmus) -> u64 {
    let words = (Frame::words(test, Meeting::Words) + test.n_pes as usize) as u64;
    words.div_ceil(8) * 8
}

/// One segment per PE, made and imported once, on which tests run batch after batch.
pub struct Arena<'d, B: Backend> {
    dev: &'d B::Device,
    size: ArenaSize,
    /// The queue of meetings' atomics and of results.
    control: B::Queue,
    /// The queue of the start gates' flags.
    gates: B::Queue,
    /// How many tests have started.
    tests: usize,
}

/// The 64-bit little-endian value of `bytes`.
fn word_of(bytes: &[u8]) -> u64 {
    let mut le = [0u8; 8];
    le.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(le)
}

/// A small fast generator for the random spins (xorshift64*), seeded per PE and test.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        if n == 0 {
            0
        } else {
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
        }
    }
}

/// Spins for `ns` nanoseconds of real time (a sleep would be far coarser).
fn spin_for(ns: u64) {
    let start = std::time::Instant::now();
    while (start.elapsed().as_nanos() as u64) < ns {
        std::hint::spin_loop();
    }
}

impl<B: Backend> std::fmt::Debug for Arena<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arena")
            .field("size", &self.size)
            .field("tests", &self.tests)
            .finish_non_exhaustive()
    }
}

impl<'d, B: Backend> Arena<'d, B> {
    /// Makes this PE's segment of `size` and imports every PE's. Every PE of the run calls it.
    ///
    /// # Errors
    /// [`NetRunError::Device`] or [`NetRunError::Exchange`] if the segment cannot be made,
    /// traded or imported.
    pub fn open(dev: &'d B::Device, size: ArenaSize, wait_ns: u64) -> Result<Self, NetRunError> {
        let key = dev.create_segment(MemKind::Device, size.bytes())?;
        let deadline = Instant(dev.now().0.saturating_add(wait_ns));
        let keys = dev
            .exchange(&key.0, deadline)
            .map_err(NetRunError::Exchange)?;
        for (peer, bytes) in keys.iter().cloned().enumerate() {
            dev.import_segment(Pe(peer as u32), MemKind::Device, &hw::SegmentKey(bytes))?;
        }
        Ok(Arena {
            dev,
            size,
            control: dev.create_queue()?,
            gates: dev.create_queue()?,
            tests: 0,
        })
    }

    fn me(&self) -> u32 {
        self.dev.pe().0
    }

    fn step_err(&self, what: impl Into<String>) -> impl FnOnce(QueueError) -> NetRunError {
        let (pe, what) = (self.me(), what.into());
        move |source| NetRunError::Step { pe, what, source }
    }

    fn deadline(&self, wait_ns: u64) -> Instant {
        Instant(self.dev.now().0.saturating_add(wait_ns))
    }

    /// Every PE meets at control word `word`, for the `episode`th time there: each adds 1 to
    /// the word on every other PE and waits until its own counts every other PE's arrivals.
    fn meet(&self, word: u64, episode: u64, wait_ns: u64, what: &str) -> Result<(), NetRunError> {
        let n_pes = self.dev.n_pes();
        let add = AmoOp {
            kind: AmoKind::Add,
            operand: 1,
            width: AmoWidth::W64,
        };
        for peer in (0..n_pes).filter(|&p| p != self.me()) {
            let dst = RemoteRange {
                pe: Pe(peer),
                kind: MemKind::Device,
                offset: 8 * word,
                len: 8,
            };
            self.control
                .amo(dst, add, false)
                .map_err(self.step_err(what))?;
        }
        self.control
            .quiet(self.deadline(wait_ns))
            .map_err(self.step_err(what))?;
        let spec = WaitSpec {
            word: LocalRange {
                kind: MemKind::Device,
                offset: 8 * word,
                len: 8,
            },
            width: AmoWidth::W64,
            signed: false,
            cmp: hw::Cmp::Ge,
            value: episode * u64::from(n_pes - 1),
            purpose: "litmus-net meeting",
        };
        self.dev
            .wait_until(spec, self.deadline(wait_ns))
            .map(drop)
            .map_err(self.step_err(what))
    }

    /// Runs `opts.executions` executions of `test` under `config`'s rules and returns, on PE
    /// 0, how often each outcome appeared (`None` on the other PEs). Every PE of the run calls
    /// it with the same test and options, tests in the same order.
    ///
    /// # Errors
    /// [`NetRunError`]: a hang or failure in an execution, naming this PE, the execution and
    /// the line; a meeting that failed (another PE failed first). Each PE reports its own
    /// errors; the next test starts at a meeting of its own, so a failed test does not take
    /// the run with it.
    pub fn run_test(
        &mut self,
        test: &Litmus,
        config: &Config,
        opts: &NetOptions,
    ) -> Result<Option<BTreeMap<Outcome, u64>>, NetRunError> {
        let t = self.tests;
        if t >= MAX_TESTS {
            return Err(NetRunError::Capacity(format!(
                "an arena serves {MAX_TESTS} tests"
            )));
        }
        self.tests += 1;
        if test.n_pes != self.dev.n_pes() {
            return Err(NetRunError::Capacity(format!(
                "{} has {} PEs and the run {}",
                test.name,
                test.n_pes,
                self.dev.n_pes()
            )));
        }
        let stride = execution_words(test);
        let observables = test.observables();
        if opts.batch == 0
            || opts.batch > self.size.batch
            || stride > self.size.execution_words
            || observables.len() as u64 > self.size.observables
        {
            return Err(NetRunError::Capacity(format!(
                "{}: the arena ({:?}) holds no batch of {} executions of {stride} words",
                test.name, self.size, opts.batch
            )));
        }
        // A test's meetings count on words no other test uses, so that a test some PE left
        // early does not skew the next one's counts.
        let start_word = 2 * t as u64;
        let batch_word = start_word + 1;
        let mut episode = 0;
        // Generous: the peer may still be giving up on the previous test.
        self.meet(start_word, 1, 4 * opts.wait_ns, "the test's start")?;

        let me = self.me();
        let mine: Vec<&Observable> = observables.iter().filter(|o| owner(o) == me).collect();
        let owned: Vec<u64> = (0..self.dev.n_pes())
            .map(|pe| observables.iter().filter(|o| owner(o) == pe).count() as u64)
            .collect();
        let mut rng = Rng::new(opts.seed ^ (u64::from(me) << 32) ^ t as u64);
        let mut counts = BTreeMap::new();
        let mut done = 0u64;
        while done < opts.executions {
            let n = u64::from(opts.batch).min(opts.executions - done);
            self.set_words(test, stride, n);
            episode += 1;
            self.meet(batch_word, episode, opts.wait_ns, "the batch's start")?;
            let mut values = Vec::with_capacity((n as usize) * mine.len());
            let mut regs_of = Vec::with_capacity(n as usize);
            for k in 0..n {
                let frame = Frame {
                    base: CONTROL_BYTES + 8 * k * stride,
                    meeting: Meeting::Words,
                    wait_ns: opts.wait_ns,
                };
                if opts.gate == StartGate::Each {
                    self.gate(test, &frame, stride, opts.wait_ns)?;
                }
                spin_for(rng.below(opts.jitter_ns));
                let regs = run_program::<B>(test, config, self.dev, &frame).map_err(|source| {
                    NetRunError::Program {
                        pe: me,
                        execution: done + k,
                        source,
                    }
                })?;
                regs_of.push(regs);
            }
            self.gates
                .quiet(self.deadline(opts.wait_ns))
                .map_err(self.step_err("the gates' quiet"))?;
            episode += 1;
            self.meet(batch_word, episode, opts.wait_ns, "the batch's end")?;
            for (k, regs) in regs_of.iter().enumerate() {
                let frame = Frame {
                    base: CONTROL_BYTES + 8 * k as u64 * stride,
                    meeting: Meeting::Words,
                    wait_ns: opts.wait_ns,
                };
                let execution = done + k as u64;
                let memory =
                    read_memory(test, self.dev, &frame).map_err(|source| NetRunError::Program {
                        pe: me,
                        execution,
                        source,
                    })?;
                for o in &mine {
                    values.push(match **o {
                        Observable::Reg { reg, .. } => {
                            regs[usize::from(reg.0)].ok_or(NetRunError::Unset {
                                pe: me,
                                execution,
                                reg: reg.0,
                            })?
                        }
                        Observable::Mem(loc) => memory[usize::from(loc.var.0)],
                    });
                }
            }
            self.send_results(&owned, &values, n, opts.wait_ns)?;
            episode += 1;
            self.meet(batch_word, episode, opts.wait_ns, "the results' arrival")?;
            if me == 0 {
                self.tally(&observables, &owned, &values, n, &mut counts);
            }
            done += n;
        }
        Ok((me == 0).then_some(counts))
    }

    /// Zeroes the words of `n` executions and writes the test's initial values of this PE.
    fn set_words(&self, test: &Litmus, stride: u64, n: u64) {
        let zeros = vec![0u8; (8 * stride * n) as usize];
        self.dev.write_local(
            LocalRange {
                kind: MemKind::Device,
                offset: CONTROL_BYTES,
                len: zeros.len() as u64,
            },
            &zeros,
        );
        for k in 0..n {
            for (loc, value) in test.init.iter().filter(|(l, _)| l.pe == self.me()) {
                let offset = CONTROL_BYTES + 8 * (k * stride + u64::from(loc.var.0));
                self.dev.write_local(
                    LocalRange {
                        kind: MemKind::Device,
                        offset,
                        len: 8,
                    },
                    &value.to_le_bytes(),
                );
            }
        }
    }

    /// The start gate of the execution at `frame`: a flag to every peer's gate word for this
    /// PE, then a wait for every peer's flag in this PE's.
    fn gate(
        &self,
        test: &Litmus,
        frame: &Frame,
        stride: u64,
        wait_ns: u64,
    ) -> Result<(), NetRunError> {
        // The gate words are the last `n_pes` of the execution's words.
        let gate_word = |pe: u32| frame.base + 8 * (stride - u64::from(test.n_pes) + u64::from(pe));
        let me = self.me();
        for peer in (0..test.n_pes).filter(|&p| p != me) {
            let dst = RemoteRange {
                pe: Pe(peer),
                kind: MemKind::Device,
                offset: gate_word(me),
                len: 8,
            };
            self.gates
                .put(dst, &1u64.to_le_bytes(), Copier::Device)
                .map_err(self.step_err("the start gate"))?;
        }
        for peer in (0..test.n_pes).filter(|&p| p != me) {
            let spec = WaitSpec {
                word: LocalRange {
                    kind: MemKind::Device,
                    offset: gate_word(peer),
                    len: 8,
                },
                width: AmoWidth::W64,
                signed: false,
                cmp: hw::Cmp::Ge,
                value: 1,
                purpose: "litmus-net start gate",
            };
            self.dev
                .wait_until(spec, self.deadline(wait_ns))
                .map_err(self.step_err(format!("the start gate (P{peer} never came)")))?;
        }
        Ok(())
    }

    /// Where PE `pe`'s results of a batch of `n` executions lie on PE 0: every PE's results
    /// one after another, each `n` executions of the observables it owns (`owned[pe]`).
    fn results_of(&self, owned: &[u64], pe: u32, n: u64) -> u64 {
        let before: u64 = owned.iter().take(pe as usize).sum();
        self.size.results_base() + 8 * n * before
    }

    /// A PE other than 0 puts its observed values of the batch to PE 0 and completes them.
    fn send_results(
        &self,
        owned: &[u64],
        values: &[u64],
        n: u64,
        wait_ns: u64,
    ) -> Result<(), NetRunError> {
        let me = self.me();
        if me == 0 || values.is_empty() {
            return Ok(());
        }
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let dst = RemoteRange {
            pe: Pe(0),
            kind: MemKind::Device,
            offset: self.results_of(owned, me, n),
            len: bytes.len() as u64,
        };
        self.control
            .put(dst, &bytes, Copier::Device)
            .map_err(self.step_err("the results' put"))?;
        self.control
            .quiet(self.deadline(wait_ns))
            .map_err(self.step_err("the results' quiet"))
    }

    /// On PE 0: the outcome of each execution of the batch, from its own values and the
    /// results the other PEs put, counted into `counts`.
    fn tally(
        &self,
        observables: &[Observable],
        owned: &[u64],
        own_values: &[u64],
        n: u64,
        counts: &mut BTreeMap<Outcome, u64>,
    ) {
        let mut by_pe: Vec<Vec<u64>> = vec![own_values.to_vec()];
        for pe in 1..owned.len() as u32 {
            let len = 8 * n * owned[pe as usize];
            let mut bytes = vec![0u8; len as usize];
            if len > 0 {
                self.dev.read_local(
                    LocalRange {
                        kind: MemKind::Device,
                        offset: self.results_of(owned, pe, n),
                        len,
                    },
                    &mut bytes,
                );
            }
            by_pe.push(bytes.chunks_exact(8).map(word_of).collect());
        }
        for k in 0..n as usize {
            // Each PE's values of an execution follow its observables' order.
            let mut next = vec![0usize; owned.len()];
            let outcome = observables
                .iter()
                .map(|o| {
                    let pe = owner(o) as usize;
                    let v = by_pe[pe][k * owned[pe] as usize + next[pe]];
                    next[pe] += 1;
                    v
                })
                .collect();
            *counts.entry(Outcome(outcome)).or_default() += 1;
        }
    }
}

/// The PE whose run gives observable `o`.
fn owner(o: &Observable) -> u32 {
    match *o {
        Observable::Reg { pe, .. } => pe,
        Observable::Mem(loc) => loc.pe,
    }
}

#[cfg(test)]
mod tests {
    use hw::Launcher;
    use hw::Topology;
    use hw::host::{Host, HostBackend};
    use model::litmus::Config;

    use super::*;
    use crate::{catalogue_dir, load_paths};

    /// The arena's machinery on host threads (no network, a fast check of its bookkeeping):
    /// batches that do not divide the count, two tests on one arena (the second with a
    /// barrier, which meets through words), every execution counted once on PE 0, and only
    /// outcomes the model allows.
    #[test]
    fn every_execution_is_counted_once_and_allowed() {
        let tests: Vec<Litmus> = ["f1-sb-put-put.litmus", "d1-mp-put-barrier.litmus"]
            .iter()
            .map(|t| {
                load_paths(&[catalogue_dir().join(t)])
                    .expect("the test loads")
                    .remove(0)
                    .test
            })
            .collect();
        let opts = NetOptions {
            executions: 250,
            batch: 64,
            gate: StartGate::Each,
            jitter_ns: 1000,
            wait_ns: 10_000_000_000,
            seed: 7,
        };
        let size = ArenaSize::for_tests(&tests, opts.batch);
        let host = Host::builder(Topology::single_host(2).unwrap())
            .pes(2)
            .build()
            .unwrap();
        let (results, _) = host
            .launch(|dev| {
                let mut arena = Arena::<HostBackend>::open(&dev, size, opts.wait_ns)?;
                tests
                    .iter()
                    .map(|t| arena.run_test(t, &Config::OS, &opts))
                    .collect::<Result<Vec<_>, NetRunError>>()
            })
            .unwrap();
        let mut results = results.into_iter();
        let pe0 = results.next().unwrap().unwrap().unwrap();
        let pe1 = results.next().unwrap().unwrap().unwrap();
        assert!(pe1.iter().all(Option::is_none));
        for (test, counts) in tests.iter().zip(pe0) {
            let counts = counts.expect("PE 0 tallies");
            assert_eq!(counts.values().sum::<u64>(), 250, "{}", test.name);
            let allowed = model::om::allowed_outcomes(test, &Config::OS)
                .unwrap()
                .outcomes;
            for outcome in counts.keys() {
                assert!(allowed.contains(outcome), "{}: {outcome:?}", test.name);
            }
        }
    }
}
