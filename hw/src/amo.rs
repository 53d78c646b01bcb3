//! Atomic memory operations, comparisons and signal operators.

/// The width of an atomic access. Atomicity holds only among atomics of the same width on
/// the same location (docs/ordering.md).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AmoWidth {
    /// 4 bytes.
    W32,
    /// 8 bytes.
    W64,
}

impl AmoWidth {
    /// The width in bytes.
    pub fn bytes(self) -> u64 {
        match self {
            AmoWidth::W32 => 4,
            AmoWidth::W64 => 8,
        }
    }

    /// Truncates `v` to this width.
    pub fn truncate(self, v: u64) -> u64 {
        match self {
            AmoWidth::W32 => v & 0xffff_ffff,
            AmoWidth::W64 => v,
        }
    }
}

/// What an atomic does to its target word. Values are little-endian bit patterns of the
/// target type, truncated to the width; signed types use two's complement, so `Add` is the
/// same bit operation for signed and unsigned words.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AmoKind {
    /// Read the word.
    Fetch,
    /// Write `operand`.
    Set,
    /// Write `operand`, return the old value.
    Swap,
    /// Write `operand` if the word equals `compare`.
    CompareSwap {
        /// The value the word must hold for the swap to happen.
        compare: u64,
    },
    /// Add `operand` (wrapping).
    Add,
    /// Bitwise and with `operand`.
    And,
    /// Bitwise or with `operand`.
    Or,
    /// Bitwise xor with `operand`.
    Xor,
}

/// One atomic operation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct AmoOp {
    /// What to do.
    pub kind: AmoKind,
    /// The operand (ignored by `Fetch`).
    pub operand: u64,
    /// The width of the target word.
    pub width: AmoWidth,
}

impl AmoOp {
    /// Applies this operation to `old` and returns the new value of the word.
    pub fn apply(&self, old: u64) -> u64 {
        let w = self.width;
        let new = match self.kind {
            AmoKind::Fetch => old,
            AmoKind::Set | AmoKind::Swap => self.operand,
            AmoKind::CompareSwap { compare } => {
                if w.truncate(old) == w.truncate(compare) {
                    self.operand
                } else {
                    old
                }
            }
            AmoKind::Add => old.wrapping_add(self.operand),
            AmoKind::And => old & self.operand,
            AmoKind::Or => old | self.operand,
            AmoKind::Xor => old ^ self.operand,
        };
        w.truncate(new)
    }

    /// Whether this operation changes memory at all (`Fetch` does not).
    pub fn writes(&self) -> bool {
        !matches!(self.kind, AmoKind::Fetch)
    }

    /// Whether, issued without fetching, this operation is an update that a transport may
    /// post and complete later: it writes, and is not a compare-and-swap (whose old value
    /// decides what it wrote).
    pub fn is_update(&self) -> bool {
        self.writes() && !matches!(self.kind, AmoKind::CompareSwap { .. })
    }
}

/// The six point-to-point comparisons of `wait_until` and `test`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Cmp {
    /// Equal.
    Eq,
    /// Not equal.
    Ne,
    /// Greater than.
    Gt,
    /// Greater than or equal.
    Ge,
    /// Less than.
    Lt,
    /// Less than or equal.
    Le,
}

impl Cmp {
    /// Evaluates `lhs <cmp> rhs` on words of `width`, signed if `signed`.
    pub fn eval(self, width: AmoWidth, signed: bool, lhs: u64, rhs: u64) -> bool {
        let (l, r): (i128, i128) = match (width, signed) {
            (AmoWidth::W32, true) => (lhs as u32 as i32 as i128, rhs as u32 as i32 as i128),
            (AmoWidth::W32, false) => (lhs as u32 as i128, rhs as u32 as i128),
            (AmoWidth::W64, true) => (lhs as i64 as i128, rhs as i64 as i128),
            (AmoWidth::W64, false) => (lhs as i128, rhs as i128),
        };
        match self {
            Cmp::Eq => l == r,
            Cmp::Ne => l != r,
            Cmp::Gt => l > r,
            Cmp::Ge => l >= r,
            Cmp::Lt => l < r,
            Cmp::Le => l <= r,
        }
    }

    /// The comparison's symbol, for messages.
    pub fn symbol(self) -> &'static str {
        match self {
            Cmp::Eq => "==",
            Cmp::Ne => "!=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
            Cmp::Lt => "<",
            Cmp::Le => "<=",
        }
    }
}

/// How a put-with-signal updates its 64-bit signal word.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum SignalOp {
    /// Store the signal value.
    Set,
    /// Add the signal value.
    Add,
}

impl SignalOp {
    /// The atomic this signal operation performs on the signal word.
    pub fn as_amo(self, value: u64) -> AmoOp {
        let kind = match self {
            SignalOp::Set => AmoKind::Set,
            SignalOp::Add => AmoKind::Add,
        };
        AmoOp {
            kind,
            operand: value,
            width: AmoWidth::W64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amo_apply_truncates_to_width() {
        let add = AmoOp {
            kind: AmoKind::Add,
            operand: 1,
            width: AmoWidth::W32,
        };
        assert_eq!(add.apply(0xffff_ffff), 0);
        let add64 = AmoOp {
            width: AmoWidth::W64,
            ..add
        };
        assert_eq!(add64.apply(0xffff_ffff), 0x1_0000_0000);
    }

    #[test]
    fn compare_swap_only_swaps_on_match() {
        let cas = AmoOp {
            kind: AmoKind::CompareSwap { compare: 5 },
            operand: 9,
            width: AmoWidth::W64,
        };
        assert_eq!(cas.apply(5), 9);
        assert_eq!(cas.apply(4), 4);
    }

    #[test]
    fn cmp_signed_and_unsigned_differ() {
        let minus_one = u64::MAX;
        assert!(Cmp::Lt.eval(AmoWidth::W64, true, minus_one, 0));
        assert!(!Cmp::Lt.eval(AmoWidth::W64, false, minus_one, 0));
        assert!(Cmp::Lt.eval(AmoWidth::W32, true, 0xffff_ffff, 0));
        for (c, want) in [
            (Cmp::Eq, false),
            (Cmp::Ne, true),
            (Cmp::Gt, true),
            (Cmp::Ge, true),
            (Cmp::Le, false),
        ] {
            assert_eq!(c.eval(AmoWidth::W64, false, 3, 2), want, "{c:?}");
        }
    }
}
