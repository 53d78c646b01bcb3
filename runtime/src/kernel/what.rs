//! What a thread of a group calls, as the group compares it: the operation and its arguments
//! as values, written out only when a message needs them. Every lane of a warp makes each
//! warp-scoped call, so formatting each lane's call to compare it was a fifth of a MoE
//! kernel's time on the simulator (BENCHMARKS.md, "A DeepEP-like MoE layer").

use std::fmt;

use hw::{Cmp, SignalOp};

use crate::memory::sym::{Element, Sym};

/// A symmetric object as a call names it: its element type, offset and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SymArg {
    element: &'static str,
    offset_bytes: u64,
    len: usize,
}

impl<T: Element> From<Sym<T>> for SymArg {
    fn from(sym: Sym<T>) -> SymArg {
        SymArg {
            element: std::any::type_name::<T>(),
            offset_bytes: sym.offset_bytes(),
            len: sym.len(),
        }
    }
}

impl fmt::Display for SymArg {
    /// As `Sym`'s `Debug`, which users see elsewhere.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Sym<{}>[{:#x}; {}]",
            self.element, self.offset_bytes, self.len
        )
    }
}

/// A scoped call's operation and arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum What {
    /// A call without arguments: `fence`, `quiet`, `sync_threads`.
    Named(&'static str),
    /// `put` or `put_nbi` (`op`) of `dst` to `pe`.
    Put {
        op: &'static str,
        dst: SymArg,
        pe: u32,
    },
    /// A get of `src` from `pe`, into `dst` when it names one.
    Get {
        dst: Option<SymArg>,
        src: SymArg,
        pe: u32,
    },
    /// `put_signal` or `put_signal_nbi` (`op`).
    PutSignal {
        op: &'static str,
        dst: SymArg,
        sig: SymArg,
        signal: SignalOp,
        value: u64,
        pe: u32,
    },
    /// `wait_until` or `signal_wait_until` (`op`) of `word`, compared with `cmp` to `value`.
    Wait {
        op: &'static str,
        word: SymArg,
        cmp: Cmp,
        value: u64,
    },
    /// A call made once per thread at most (a collective, a context's creation), described
    /// as it is made.
    Described(String),
}

impl fmt::Display for What {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            What::Named(name) => f.write_str(name),
            What::Put { op, dst, pe } => write!(f, "{op}({dst}, pe {pe})"),
            What::Get {
                dst: Some(dst),
                src,
                pe,
            } => write!(f, "get({dst} from {src}, pe {pe})"),
            What::Get { dst: None, src, pe } => write!(f, "get({src}, pe {pe})"),
            What::PutSignal {
                op,
                dst,
                sig,
                signal,
                value,
                pe,
            } => write!(f, "{op}({dst}, {sig} {signal:?} {value}, pe {pe})"),
            What::Wait {
                op,
                word,
                cmp,
                value,
            } => write!(f, "{op}({word} {} {value})", cmp.symbol()),
            What::Described(text) => f.write_str(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_read_as_they_are_written() {
        let dst = SymArg {
            element: "u64",
            offset_bytes: 0x40,
            len: 8,
        };
        let sig = SymArg {
            offset_bytes: 0x80,
            len: 1,
            ..dst
        };
        let put = What::Put {
            op: "put_nbi",
            dst,
            pe: 3,
        };
        assert_eq!(put.to_string(), "put_nbi(Sym<u64>[0x40; 8], pe 3)");
        let signal = What::PutSignal {
            op: "put_signal",
            dst,
            sig,
            signal: SignalOp::Add,
            value: 1,
            pe: 0,
        };
        assert_eq!(
            signal.to_string(),
            "put_signal(Sym<u64>[0x40; 8], Sym<u64>[0x80; 1] Add 1, pe 0)"
        );
        let wait = What::Wait {
            op: "signal_wait_until",
            word: sig,
            cmp: Cmp::Ge,
            value: 2,
        };
        assert_eq!(
            wait.to_string(),
            "signal_wait_until(Sym<u64>[0x80; 1] >= 2)"
        );
        let get = What::Get {
            dst: Some(dst),
            src: sig,
            pe: 1,
        };
        assert_eq!(
            get.to_string(),
            "get(Sym<u64>[0x40; 8] from Sym<u64>[0x80; 1], pe 1)"
        );
        let elsewhere = What::Put {
            op: "put_nbi",
            dst,
            pe: 4,
        };
        assert_ne!(put, elsewhere, "another PE differs");
    }
}
