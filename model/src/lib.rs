//! The SHMEM ordering rules as an executable specification.
//!
//! This crate is the oracle the simulator is checked against, so it shares no code with
//! `sim` and depends on nothing: an oracle that reused the implementation would inherit its
//! bugs. It starts with the fence/quiet table of OpenSHMEM 1.5 (table `mem-order`) and NVSHMEM
//! (ordering.html), as transcribed in `docs/ordering.md`; the litmus-test model grows here.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod litmus;
pub mod om;

/// The operations the ordering table speaks of.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Op {
    /// A blocking put (put, p, putmem).
    Put,
    /// A non-blocking put.
    PutNbi,
    /// A blocking get (get, g).
    Get,
    /// A non-blocking get.
    GetNbi,
    /// A blocking atomic, fetching or not.
    Amo,
    /// A non-blocking atomic: the update only.
    AmoNbi,
    /// The value a non-blocking fetching atomic returns.
    AmoNbiFetchedValue,
    /// A put with signal, blocking or not.
    PutSignal,
}

/// All operations, for exhaustive checks.
pub const ALL_OPS: [Op; 8] = [
    Op::Put,
    Op::PutNbi,
    Op::Get,
    Op::GetNbi,
    Op::Amo,
    Op::AmoNbi,
    Op::AmoNbiFetchedValue,
    Op::PutSignal,
];

/// Whether `fence` orders the delivery of `op` to a target PE against operations to the same
/// PE issued after the fence (rule R1).
pub fn fence_orders(op: Op) -> bool {
    match op {
        Op::Put | Op::PutNbi | Op::Amo | Op::AmoNbi | Op::PutSignal => true,
        // R1: "It does not guarantee order of delivery of nonblocking Get or values fetched
        // by nonblocking AMO routines"; blocking gets are complete on return in OpenSHMEM and
        // unordered with each other in NVSHMEM (R7), not ordered by fence against puts.
        Op::Get | Op::GetNbi | Op::AmoNbiFetchedValue => false,
    }
}

/// Whether `quiet` completes `op` (rule R2). A blocking get has nothing left to complete.
pub fn quiet_completes(op: Op) -> bool {
    !matches!(op, Op::Get)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table of docs/ordering.md, row by row: (op, ordered by fence, completed by quiet).
    #[test]
    fn the_fence_quiet_table() {
        let table = [
            (Op::Put, true, true),
            (Op::Get, false, false),
            (Op::Amo, true, true),
            (Op::PutSignal, true, true),
            (Op::PutNbi, true, true),
            (Op::GetNbi, false, true),
            (Op::AmoNbi, true, true),
            (Op::AmoNbiFetchedValue, false, true),
        ];
        assert_eq!(table.len(), ALL_OPS.len());
        for (op, fence, quiet) in table {
            assert_eq!(fence_orders(op), fence, "{op:?} fence");
            assert_eq!(quiet_completes(op), quiet, "{op:?} quiet");
        }
    }
}
