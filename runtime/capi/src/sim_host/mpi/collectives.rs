//! Collectives: a meeting of a communicator's ranks. Each rank brings its part and its
//! arguments; the last to arrive checks that they agree (the same call, root, sizes,
//! datatype and operation), computes every rank's result, in rank order so that a reduction
//! is the same every run, and each rank takes its own once the meeting's time has come.

use std::ffi::c_int;

use super::types::{Datatype, Op, reduce_into};
use super::{Comm, CommInfo, MpiError, UNDEFINED, World, transfer_ns};

/// Which collective, with what only it needs.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Kind {
    Barrier,
    Bcast,
    Gather,
    Allgather,
    /// The bytes the rank expects from each rank.
    Allgatherv(Vec<usize>),
    Reduce(Datatype, Op),
    Allreduce(Datatype, Op),
    /// `MPI_Scan`, or with `true` `MPI_Exscan`.
    Scan(Datatype, Op, bool),
    /// `MPI_Reduce_scatter_block`: the sum, a block per rank.
    ReduceScatterBlock(Datatype, Op),
    Alltoall,
    /// A color (or `MPI_UNDEFINED`) and a key.
    Split(c_int, c_int),
    Dup,
}

impl Kind {
    /// The datatype and operation of a reduction.
    pub(super) fn reduction(&self) -> Option<(Datatype, Op)> {
        match *self {
            Kind::Reduce(d, o)
            | Kind::Allreduce(d, o)
            | Kind::Scan(d, o, _)
            | Kind::ReduceScatterBlock(d, o) => Some((d, o)),
            _ => None,
        }
    }
}

/// One rank's part of a collective.
#[derive(Debug)]
pub(super) struct Part {
    pub(super) call: &'static str,
    pub(super) kind: Kind,
    /// The root's rank, for the rooted collectives.
    pub(super) root: c_int,
    /// What the rank sends.
    pub(super) bytes: Vec<u8>,
    /// The bytes the rank expects per rank (a block of a gather, the whole of a broadcast).
    pub(super) block: usize,
}

/// One collective under way on one communicator.
#[derive(Debug)]
pub(super) struct Meeting {
    parts: Vec<Option<Part>>,
    arrived: usize,
    last_arrival_ns: u64,
    /// Every rank's result, once the last arrived, and when they are ready.
    results: Option<(Vec<Option<Vec<u8>>>, u64)>,
    taken: usize,
}

impl World {
    /// Brings `part` of the running PE `pe` to the next collective on `comm`, at simulated
    /// time `now_ns`; returns the meeting's key.
    pub(super) fn arrive(
        &mut self,
        pe: u32,
        comm: Comm,
        part: Part,
        now_ns: u64,
    ) -> Result<(u64, u64), MpiError> {
        let count = self.live(pe)?.collectives.entry(comm.id).or_insert(0);
        let key = (comm.id, *count);
        *count += 1;
        let meeting = self.meetings.entry(key).or_insert_with(|| Meeting {
            parts: (0..comm.size).map(|_| None).collect(),
            arrived: 0,
            last_arrival_ns: 0,
            results: None,
            taken: 0,
        });
        meeting.parts[comm.rank] = Some(part);
        meeting.arrived += 1;
        meeting.last_arrival_ns = meeting.last_arrival_ns.max(now_ns);
        if meeting.arrived == comm.size {
            let parts: Vec<Part> = meeting
                .parts
                .iter_mut()
                .map(|p| p.take().expect("arrived"))
                .collect();
            let last = meeting.last_arrival_ns;
            let results = self.compute(comm, &parts, key.1)?;
            let widest = results.iter().flatten().map(Vec::len).max().unwrap_or(0);
            let rounds = u64::from(usize::BITS - (comm.size - 1).leading_zeros());
            let done_ns = last + rounds * transfer_ns(widest);
            if let Some(meeting) = self.meetings.get_mut(&key) {
                meeting.results = Some((results, done_ns));
            }
        }
        Ok(key)
    }

    /// The running rank's result of the meeting `key`, once every rank arrived: its bytes
    /// (none for a rank a split leaves out) and when they are ready.
    pub(super) fn take_result(
        &mut self,
        key: (u64, u64),
        rank: usize,
    ) -> Option<(Option<Vec<u8>>, u64)> {
        let meeting = self.meetings.get_mut(&key)?;
        let (results, done_ns) = meeting.results.as_mut()?;
        let result = (results[rank].take(), *done_ns);
        meeting.taken += 1;
        if meeting.taken == meeting.parts.len() {
            self.meetings.remove(&key);
        }
        Some(result)
    }

    /// The ranks that have not reached the meeting `key` yet, if it is under way.
    pub(super) fn missing(&self, key: (u64, u64)) -> Option<Vec<usize>> {
        let meeting = self.meetings.get(&key)?;
        if meeting.results.is_some() {
            return None;
        }
        Some(
            meeting
                .parts
                .iter()
                .enumerate()
                .filter_map(|(rank, part)| part.is_none().then_some(rank))
                .collect(),
        )
    }

    /// Every rank's result of a collective whose parts are `parts`, the `nth` on `comm`.
    fn compute(
        &mut self,
        comm: Comm,
        parts: &[Part],
        nth: u64,
    ) -> Result<Vec<Option<Vec<u8>>>, MpiError> {
        let first = &parts[0];
        let disagree = |what: &str, show: &dyn Fn(&Part) -> String| {
            let each: Vec<String> = parts
                .iter()
                .enumerate()
                .map(|(rank, p)| format!("rank {rank}: {}", show(p)))
                .collect();
            MpiError::Mismatch(format!(
                "the ranks of the communicator disagree on the {what} of collective {} on it \
                 ({}); every rank must make the same collective calls with matching arguments",
                nth + 1,
                each.join(", ")
            ))
        };
        if parts
            .iter()
            .any(|p| std::mem::discriminant(&p.kind) != std::mem::discriminant(&first.kind))
        {
            return Err(disagree("call", &|p| p.call.to_owned()));
        }
        let rooted = matches!(first.kind, Kind::Bcast | Kind::Gather | Kind::Reduce(..));
        if rooted && parts.iter().any(|p| p.root != first.root) {
            return Err(disagree("root", &|p| p.root.to_string()));
        }
        let root = if rooted {
            super::rank_in(first.root, comm)?
        } else {
            0
        };
        let n = parts.len();
        let all = |bytes: Vec<u8>| Ok((0..n).map(|_| Some(bytes.clone())).collect());
        let only_root = |bytes: Vec<u8>| {
            Ok((0..n)
                .map(|r| Some(if r == root { bytes.clone() } else { Vec::new() }))
                .collect())
        };
        let sizes_agree = |size: &dyn Fn(&Part) -> usize, want: &dyn Fn(&Part) -> usize| {
            if parts.iter().all(|p| size(p) == want(p)) {
                Ok(())
            } else {
                Err(disagree("sizes in bytes (sent, expected)", &|p| {
                    format!("{}, {}", size(p), want(p))
                }))
            }
        };
        match &first.kind {
            Kind::Barrier => all(Vec::new()),
            Kind::Bcast => {
                sizes_agree(&|p| p.block, &|_| parts[root].bytes.len())?;
                all(parts[root].bytes.clone())
            }
            Kind::Gather | Kind::Allgather => {
                let expected = |p: &Part| if rooted { parts[root].block } else { p.block };
                sizes_agree(&|p| p.bytes.len(), &expected)?;
                let joined = parts.iter().flat_map(|p| p.bytes.iter().copied()).collect();
                if rooted {
                    only_root(joined)
                } else {
                    all(joined)
                }
            }
            Kind::Allgatherv(_) => {
                for (rank, receiver) in parts.iter().enumerate() {
                    let Kind::Allgatherv(expects) = &receiver.kind else {
                        unreachable!("the kinds agree")
                    };
                    let sent: Vec<usize> = parts.iter().map(|p| p.bytes.len()).collect();
                    if *expects != sent {
                        return Err(MpiError::Mismatch(format!(
                            "rank {rank} expects {expects:?} bytes from the ranks, which send \
                             {sent:?}"
                        )));
                    }
                }
                all(parts.iter().flat_map(|p| p.bytes.iter().copied()).collect())
            }
            Kind::Reduce(..)
            | Kind::Allreduce(..)
            | Kind::Scan(..)
            | Kind::ReduceScatterBlock(..) => {
                if parts.iter().any(|p| p.kind != first.kind) {
                    return Err(disagree("datatype and operation", &|p| {
                        format!("{:?}", p.kind)
                    }));
                }
                let (datatype, op) = first.kind.reduction().expect("a reduction");
                sizes_agree(&|p| p.bytes.len(), &|_| first.bytes.len())?;
                // Each rank's running sum, in rank order: a scan's results.
                let mut sum = first.bytes.clone();
                let mut prefixes = vec![sum.clone()];
                for part in &parts[1..] {
                    reduce_into(&mut sum, &part.bytes, datatype, op)?;
                    prefixes.push(sum.clone());
                }
                match first.kind {
                    Kind::Scan(_, _, false) => Ok(prefixes.into_iter().map(Some).collect()),
                    // Rank 0's receive buffer is left as it was.
                    Kind::Scan(_, _, true) => Ok(std::iter::once(None)
                        .chain(prefixes.into_iter().take(n - 1).map(Some))
                        .collect()),
                    Kind::ReduceScatterBlock(..) => {
                        sizes_agree(&|p| p.bytes.len(), &|p| p.block * n)?;
                        if first.block == 0 {
                            return all(Vec::new());
                        }
                        Ok(sum.chunks(first.block).map(|b| Some(b.to_vec())).collect())
                    }
                    _ if rooted => only_root(sum),
                    _ => all(sum),
                }
            }
            Kind::Alltoall => {
                sizes_agree(&|p| p.bytes.len(), &|p| p.block * n)?;
                Ok((0..n)
                    .map(|r| {
                        Some(
                            parts
                                .iter()
                                .flat_map(|p| {
                                    p.bytes[r * p.block..(r + 1) * p.block].iter().copied()
                                })
                                .collect(),
                        )
                    })
                    .collect())
            }
            Kind::Split(..) => Ok(self.split(comm, parts)),
            Kind::Dup => {
                let id = self.new_comm(self.comms[comm.id as usize].members.clone());
                all(id.to_le_bytes().to_vec())
            }
        }
    }

    /// The communicators of a split: each color's ranks ordered by key, then by their old
    /// rank; a rank of color `MPI_UNDEFINED` gets none.
    fn split(&mut self, comm: Comm, parts: &[Part]) -> Vec<Option<Vec<u8>>> {
        let members = self.comms[comm.id as usize].members.clone();
        let mut results = vec![None; parts.len()];
        let mut colors: Vec<c_int> = parts
            .iter()
            .filter_map(|p| match p.kind {
                Kind::Split(color, _) if color != UNDEFINED => Some(color),
                _ => None,
            })
            .collect();
        colors.sort_unstable();
        colors.dedup();
        for color in colors {
            let mut ranks: Vec<(c_int, usize)> = parts
                .iter()
                .enumerate()
                .filter_map(|(rank, p)| match p.kind {
                    Kind::Split(c, key) if c == color => Some((key, rank)),
                    _ => None,
                })
                .collect();
            ranks.sort_unstable();
            let id = self.new_comm(ranks.iter().map(|&(_, r)| members[r]).collect());
            for (_, rank) in ranks {
                results[rank] = Some(id.to_le_bytes().to_vec());
            }
        }
        results
    }

    /// A new communicator of `members` (PEs, in rank order).
    fn new_comm(&mut self, members: Vec<u32>) -> u64 {
        self.comms.push(CommInfo { members });
        self.comms.len() as u64 - 1
    }
}
