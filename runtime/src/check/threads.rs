//! Races between the threads of one kernel launch on one PE: two threads that access the
//! same bytes (symmetric, `__shared__` or global memory), at least one writing, not both
//! atomic or volatile, with nothing ordering the first before the second.
//!
//! The kernel model tells the detector which thread runs, which threads meet and what each
//! accesses ([`hw::KernelEvent`]). Happens-before between threads has three sources:
//!
//! - a meeting of a block (`__syncthreads`, a block-scoped call) orders everything its
//!   threads did before it before everything they do after it; of a warp, the same for the
//!   warp. These are counted per block and warp, not as clock components per thread, so a
//!   barrier of 1024 threads costs 1024 steps, not 1024²;
//! - an atomic or volatile access releases its thread's knowledge into the accessed word,
//!   and an atomic that fetches, or a volatile load, acquires what the word holds (atomics
//!   as acquire-release, the conservative reading: it may hide a race that only relaxed
//!   atomics allow, never report a false one);
//! - a satisfied wait on a word orders the last plain write of each thread to it.
//!
//! A thread's knowledge is a map from sources to thresholds: `Thread(j)` at `e` (the accesses
//! of thread `j` with an epoch up to `e`), `Block(b)` or `Warp(w)` at `m` (the accesses made
//! before the group's `m`-th meeting). Threads share one map until an atomic makes theirs
//! differ, so a kernel without atomics keeps a single one.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use hw::{KernelEvent, KernelMemory, LocalRange, MemKind, ThreadAccess};

use super::report::{AccessKind, Race, RaceAccess, RaceCause, ThreadAt};
use super::shadow::Shadow;

/// Whose accesses a threshold of a thread's knowledge orders.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
enum Source {
    Thread(u32),
    Block(u32),
    Warp(u32),
}

/// What a thread knows to be ordered before its current point, beyond its own block's and
/// warp's meetings.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
struct Knowledge(BTreeMap<Source, u64>);

impl Knowledge {
    fn get(&self, source: Source) -> u64 {
        self.0.get(&source).copied().unwrap_or(0)
    }

    fn raise(&mut self, source: Source, value: u64) {
        let slot = self.0.entry(source).or_insert(0);
        *slot = (*slot).max(value);
    }

    fn join(&mut self, other: &Knowledge) {
        for (&source, &value) in &other.0 {
            self.raise(source, value);
        }
    }
}

/// One access of a thread.
#[derive(Debug)]
struct Record {
    thread: u32,
    /// The thread's epoch: it grows at each of its releases.
    epoch: u64,
    /// How many times the thread's block and warp had met when it made the access.
    block_meetings: u64,
    warp_meetings: u64,
    kind: AccessKind,
    /// The whole access, for reports.
    at: u64,
    len_bytes: u64,
}

/// The last write and the last read of each thread to one span, each sorted by thread.
#[derive(Clone, Default, Debug)]
struct ThreadHistory {
    writes: Vec<Arc<Record>>,
    reads: Vec<Arc<Record>>,
}

impl PartialEq for ThreadHistory {
    fn eq(&self, other: &ThreadHistory) -> bool {
        let same = |a: &[Arc<Record>], b: &[Arc<Record>]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Arc::ptr_eq(x, y))
        };
        same(&self.writes, &other.writes) && same(&self.reads, &other.reads)
    }
}

impl ThreadHistory {
    /// The recorded accesses `kind` may conflict with: the writes, and for a write the reads
    /// too (a read never conflicts with a read).
    fn candidates(&self, kind: AccessKind) -> impl Iterator<Item = &Arc<Record>> {
        let reads: &[Arc<Record>] = if kind.writes() { &self.reads } else { &[] };
        self.writes.iter().chain(reads)
    }

    /// Makes `access` its thread's last write or read here. Each list is sorted by thread, so
    /// a word that thousands of threads read costs a search, not a scan, per read.
    fn record(&mut self, access: &Arc<Record>) {
        let slots = if access.kind.writes() {
            &mut self.writes
        } else {
            &mut self.reads
        };
        match slots.binary_search_by_key(&access.thread, |a| a.thread) {
            Ok(at) => slots[at] = Arc::clone(access),
            Err(at) => slots.insert(at, Arc::clone(access)),
        }
    }
}

/// Where a thread access is: the memory, and for `__shared__` memory the block whose it is
/// (every block's shared bytes are at the same offsets).
type ThreadPlace = (KernelMemory, u32);

/// One launch on one PE.
#[derive(Debug)]
struct Launch {
    name: String,
    grid: [u32; 3],
    block: [u32; 3],
    block_threads: u32,
    warps_per_block: u32,
    running: Option<u32>,
    epochs: Vec<u64>,
    knowledge: Vec<Arc<Knowledge>>,
    block_meetings: Vec<u64>,
    warp_meetings: Vec<u64>,
    shadow: Shadow<ThreadHistory, ThreadPlace>,
    /// What the atomics and volatile stores to a word released, by the word's first byte.
    words: HashMap<(ThreadPlace, u64), Knowledge>,
    /// The threads a PE's program started (`host.rs`), not a kernel's: each is a block of one,
    /// so that no meeting orders them.
    host: bool,
}

/// The index of `rank` as x, y, z within `dims`.
fn index_of(rank: u32, dims: [u32; 3]) -> [u32; 3] {
    [
        rank % dims[0],
        rank / dims[0] % dims[1],
        rank / (dims[0] * dims[1]),
    ]
}

impl Launch {
    fn new(name: &str, grid: [u32; 3], block: [u32; 3]) -> Launch {
        let block_threads = block.iter().product::<u32>().max(1);
        let n_blocks = grid.iter().product::<u32>().max(1);
        let warps_per_block = block_threads.div_ceil(crate::kernel::WARP_SIZE);
        let n_threads = (n_blocks * block_threads) as usize;
        let nothing = Arc::new(Knowledge::default());
        Launch {
            name: name.to_owned(),
            grid,
            block,
            block_threads,
            warps_per_block,
            running: None,
            epochs: vec![1; n_threads],
            knowledge: vec![nothing; n_threads],
            block_meetings: vec![0; n_blocks as usize],
            warp_meetings: vec![0; (n_blocks * warps_per_block) as usize],
            shadow: Shadow::default(),
            words: HashMap::new(),
            host: false,
        }
    }

    fn block_of(&self, thread: u32) -> u32 {
        thread / self.block_threads
    }

    fn warp_of(&self, thread: u32) -> u32 {
        self.block_of(thread) * self.warps_per_block
            + thread % self.block_threads / crate::kernel::WARP_SIZE
    }

    fn at(&self, thread: u32) -> ThreadAt {
        if self.host {
            return ThreadAt::Host { thread };
        }
        ThreadAt::Kernel {
            block: index_of(self.block_of(thread), self.grid),
            thread: index_of(thread % self.block_threads, self.block),
        }
    }

    /// Whether `earlier` is ordered before the current point of `thread`.
    fn ordered(&self, earlier: &Record, thread: u32) -> bool {
        if earlier.thread == thread {
            return true;
        }
        let (block, warp) = (self.block_of(earlier.thread), self.warp_of(earlier.thread));
        if block == self.block_of(thread)
            && self.block_meetings[block as usize] > earlier.block_meetings
        {
            return true;
        }
        if warp == self.warp_of(thread) && self.warp_meetings[warp as usize] > earlier.warp_meetings
        {
            return true;
        }
        let known = &self.knowledge[thread as usize];
        known.get(Source::Thread(earlier.thread)) >= earlier.epoch
            || known.get(Source::Block(block)) > earlier.block_meetings
            || known.get(Source::Warp(warp)) > earlier.warp_meetings
    }

    /// The threads `first..end` met: a block if they are all of one, else a warp.
    fn meet(&mut self, first: u32, end: u32) {
        let block = self.block_of(first);
        if first.is_multiple_of(self.block_threads) && end - first == self.block_threads {
            self.block_meetings[block as usize] += 1;
        } else {
            let warp = self.warp_of(first) as usize;
            self.warp_meetings[warp] += 1;
        }
        let members = first as usize..(end as usize).min(self.knowledge.len());
        let shared = &self.knowledge[members.start];
        if self.knowledge[members.clone()]
            .iter()
            .all(|k| Arc::ptr_eq(k, shared))
        {
            return;
        }
        let mut joined = Knowledge::default();
        for known in &self.knowledge[members.clone()] {
            joined.join(known);
        }
        let joined = Arc::new(joined);
        for known in &mut self.knowledge[members] {
            *known = Arc::clone(&joined);
        }
    }

    /// What `thread` releases now: what it knows, its own accesses so far, and its block's
    /// and warp's meetings.
    fn released(&self, thread: u32) -> Knowledge {
        let mut released = (*self.knowledge[thread as usize]).clone();
        released.raise(Source::Thread(thread), self.epochs[thread as usize]);
        let (block, warp) = (self.block_of(thread), self.warp_of(thread));
        released.raise(Source::Block(block), self.block_meetings[block as usize]);
        released.raise(Source::Warp(warp), self.warp_meetings[warp as usize]);
        released
    }

    fn acquire(&mut self, thread: u32, learned: &Knowledge) {
        Arc::make_mut(&mut self.knowledge[thread as usize]).join(learned);
    }

    /// The running thread's access; returns the races it makes, as (earlier, conflict byte).
    fn access(
        &mut self,
        thread: u32,
        place: ThreadPlace,
        at: u64,
        len_bytes: u64,
        access: ThreadAccess,
    ) -> Vec<(Arc<Record>, Arc<Record>, u64)> {
        let (kind, acquires, releases) = match access {
            ThreadAccess::Read => (AccessKind::LocalRead, false, false),
            ThreadAccess::Write => (AccessKind::LocalWrite, false, false),
            ThreadAccess::VolatileRead => (AccessKind::VolatileRead, true, false),
            ThreadAccess::VolatileWrite => (AccessKind::VolatileWrite, false, true),
            ThreadAccess::Atomic { fetch } => (AccessKind::ThreadAtomic, fetch, true),
        };
        self.access_as(thread, place, (at, len_bytes), kind, (acquires, releases))
    }

    /// An access of `span` (the first byte and the length) as `kind`; `sync` says whether it
    /// acquires what the word holds and whether it releases into it.
    fn access_as(
        &mut self,
        thread: u32,
        place: ThreadPlace,
        (at, len_bytes): (u64, u64),
        kind: AccessKind,
        (acquires, releases): (bool, bool),
    ) -> Vec<(Arc<Record>, Arc<Record>, u64)> {
        if acquires && let Some(learned) = self.words.get(&(place, at)).cloned() {
            self.acquire(thread, &learned);
        }
        let block = self.block_of(thread);
        let record = Arc::new(Record {
            thread,
            epoch: self.epochs[thread as usize],
            block_meetings: self.block_meetings[block as usize],
            warp_meetings: self.warp_meetings[self.warp_of(thread) as usize],
            kind,
            at,
            len_bytes,
        });
        let mut found = Vec::new();
        let mut shadow = std::mem::take(&mut self.shadow);
        shadow.update(place, at, len_bytes, |start, history| {
            for earlier in history.candidates(kind) {
                let conflicts = (earlier.kind.writes() || kind.writes())
                    && !(earlier.kind.is_atomic() && kind.is_atomic());
                if conflicts && !self.ordered(earlier, thread) {
                    found.push((Arc::clone(earlier), Arc::clone(&record), start));
                }
            }
            history.record(&record);
        });
        self.shadow = shadow;
        if releases {
            let released = self.release(thread);
            self.words.entry((place, at)).or_default().join(&released);
        }
        found
    }

    /// What `thread` releases now; its later accesses are of a new epoch, which the release
    /// does not cover.
    fn release(&mut self, thread: u32) -> Knowledge {
        let released = self.released(thread);
        self.epochs[thread as usize] += 1;
        released
    }

    /// `thread`'s wait on `word` was satisfied: the last plain write of each thread to it is
    /// ordered before, with what the atomics to it released.
    fn poll_satisfied(&mut self, thread: u32, word: LocalRange) {
        let place = (KernelMemory::Symmetric(word.kind), 0);
        let mut learned = self
            .words
            .get(&(place, word.offset))
            .cloned()
            .unwrap_or_default();
        self.shadow
            .visit(place, word.offset, word.len, |history: &ThreadHistory| {
                for write in &history.writes {
                    learned.raise(Source::Thread(write.thread), write.epoch);
                }
            });
        self.acquire(thread, &learned);
    }
}

/// The races found between threads, each reported once.
#[derive(Debug, Default)]
struct Found {
    races: Vec<Race>,
    /// The races reported, without thread ids: one report per PE and pair of accesses in
    /// the code, not per pair of threads.
    sites: HashSet<(u32, String, ThreadPlace, AccessKind, AccessKind, u64, u64)>,
}

impl Found {
    /// Reports the race of `first` and `second` of `launch` on `pe`, unless its site was.
    fn report(
        &mut self,
        pe: u32,
        launch: &Launch,
        place: ThreadPlace,
        pair: (&Record, &Record),
        conflict: u64,
    ) {
        let (first, second) = pair;
        let site = (
            pe,
            launch.name.clone(),
            place,
            first.kind,
            second.kind,
            first.at,
            second.at,
        );
        if !self.sites.insert(site) {
            return;
        }
        let memory = match place.0 {
            KernelMemory::Symmetric(kind) => kind,
            // Why Device: shared and global memory are the GPU's (for host threads, the
            // process's); the cause says which.
            KernelMemory::Shared | KernelMemory::Global => MemKind::Device,
        };
        let side = |record: &Record| RaceAccess {
            pe,
            kind: record.kind,
            target: pe,
            memory,
            offset: record.at,
            len_bytes: record.len_bytes,
            thread: Some(launch.at(record.thread)),
        };
        let cause = if launch.host {
            RaceCause::HostThreads { memory: place.0 }
        } else {
            RaceCause::KernelThreads {
                kernel: launch.name.clone(),
                memory: place.0,
            }
        };
        let race = Race {
            first: side(first),
            second: side(second),
            conflict_offset: conflict,
            first_epoch: first.epoch,
            second_epoch: second.epoch,
            cause,
        };
        tracing::debug!(target: crate::TRACING_TARGET, %race, "race between threads");
        self.races.push(race);
    }
}

/// The launches running on every PE, the threads each PE's program started, and the races
/// found between the threads of either.
#[derive(Debug)]
pub(crate) struct Kernels {
    launches: Vec<Option<Launch>>,
    /// The threads each PE's program started, once it starts one (`host.rs`).
    hosts: Vec<Option<host::HostThreads>>,
    found: Found,
}

impl Kernels {
    pub(crate) fn new(n_pes: u32) -> Kernels {
        Kernels {
            launches: (0..n_pes).map(|_| None).collect(),
            hosts: (0..n_pes).map(|_| None).collect(),
            found: Found::default(),
        }
    }

    pub(crate) fn take_races(&mut self) -> Vec<Race> {
        std::mem::take(&mut self.found.races)
    }

    /// What a kernel of `pe` did.
    pub(crate) fn event(&mut self, pe: u32, event: KernelEvent<'_>) {
        let slot = &mut self.launches[pe as usize];
        match event {
            KernelEvent::Launch { name, grid, block } => {
                *slot = Some(Launch::new(name, grid, block));
            }
            KernelEvent::End => *slot = None,
            KernelEvent::Run { thread } => {
                if let Some(launch) = slot {
                    launch.running = Some(thread);
                }
            }
            KernelEvent::Meet { first, end } => {
                if let Some(launch) = slot {
                    launch.meet(first, end);
                }
            }
            KernelEvent::Access {
                memory,
                at,
                len_bytes,
                access,
            } => {
                let Some(launch) = slot else { return };
                let Some(thread) = launch.running else { return };
                let block = match memory {
                    KernelMemory::Shared => launch.block_of(thread),
                    KernelMemory::Symmetric(_) | KernelMemory::Global => 0,
                };
                let place = (memory, block);
                for (first, second, conflict) in launch.access(thread, place, at, len_bytes, access)
                {
                    self.found
                        .report(pe, launch, place, (&first, &second), conflict);
                }
            }
        }
    }

    /// A wait of `pe` on `word` was satisfied, by the running thread if a kernel runs. (A
    /// thread of the PE's program acquires at the end of its SHMEM call instead: `host.rs`.)
    pub(crate) fn poll_satisfied(&mut self, pe: u32, word: LocalRange) {
        if let Some(launch) = &mut self.launches[pe as usize]
            && let Some(thread) = launch.running
        {
            launch.poll_satisfied(thread, word);
        }
    }
}

mod host;
#[cfg(test)]
mod tests;
