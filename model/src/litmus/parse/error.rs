//! The error of [`parse`](super::parse): where in the file, and what was wrong.

use std::fmt;

use crate::litmus::PeId;

/// A litmus file that does not follow `docs/litmus-format.md`.
///
/// Displays as `FILE:LINE:COLUMN: MESSAGE`, the form editors and `grep -n` understand.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseError {
    /// The file name given to `parse`.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// What is wrong.
    pub kind: ParseErrorKind,
}

/// What is wrong with a litmus file.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum ParseErrorKind {
    /// Something else was expected here: `expected WHAT, found 'TOKEN'`.
    Expected {
        /// What the grammar allows here.
        expected: String,
        /// The token found (quoted), or `end of line`.
        found: String,
    },
    /// A character that starts no token.
    UnexpectedChar(char),
    /// A `"` without its closing `"`.
    UnterminatedString,
    /// An instruction mnemonic the format does not have.
    UnknownInstruction(String),
    /// A register beyond `r15`.
    RegisterOutOfRange(String),
    /// A number that does not fit in 64 bits.
    NumberTooLarge(String),
    /// A keyword or register name used where a variable name is expected.
    ReservedName(String),
    /// `pes N` with N outside 1 to 8.
    PesOutOfRange(u64),
    /// A PE number not below `pes`.
    PeOutOfRange {
        /// The PE named.
        pe: u64,
        /// The test's PE count.
        n_pes: u32,
    },
    /// A header line given twice (`litmus`, `source`, `pes`).
    DuplicateHeader(&'static str),
    /// A required part that never came (`source`, `pes`, a program's `pes`, the condition).
    Missing(&'static str),
    /// A second `P<k>:` for the same PE.
    DuplicateProgram {
        /// The PE.
        pe: PeId,
        /// Line of the first program.
        first_line: u32,
    },
    /// An instruction before any `P<k>:` line.
    InstructionOutsideProgram,
    /// A second condition line.
    DuplicateCondition,
    /// The condition reads a register its PE never writes.
    RegisterNeverWritten {
        /// The PE.
        pe: PeId,
        /// The register number.
        reg: u8,
    },
    /// The signal of a put-with-signal named on another PE than the data.
    SignalOnOtherPe {
        /// The data's PE.
        data_pe: PeId,
        /// The PE written after the signal variable.
        signal_pe: u64,
    },
    /// More than 255 contexts on one PE.
    TooManyContexts,
    /// An `nv-mix` that leaves a PE out.
    MixPeMissing(PeId),
    /// An `nv-mix` that names a PE twice.
    MixPeTwice(u64),
    /// Two `expect` lines for the same configuration.
    DuplicateExpect(String),
    /// A team that lists a PE twice.
    TeamPeTwice(PeId),
    /// A PE runs a team operation of a team it is not in.
    NotTeamMember {
        /// The PE.
        pe: PeId,
        /// `team_sync` or `team_barrier`.
        what: String,
    },
    /// `p` of a whole array.
    ArrayInP(String),
    /// `array NAME` after `NAME` was used, or declared twice.
    ArrayAfterUse(String),
    /// An array length outside 1 to 64.
    ArrayLength(u64),
    /// An array named where one word is meant.
    ArrayNeedsIndex(String, u16),
    /// `buf[i]` beyond the array.
    ArrayIndex {
        /// The array.
        name: String,
        /// The index written.
        index: u64,
        /// The array's length.
        len: u16,
    },
    /// `x[i]` for a variable that is not an array.
    NotAnArray(String),
    /// A register an nbi fetch fills, read before the quiet that completes the fetch.
    NbiRegisterRead {
        /// The register.
        reg: u8,
        /// The line of the nbi fetch.
        fetch_line: u32,
        /// What completes it (`quiet`, `quiet ctx A`).
        completer: String,
    },
    /// A modifier written twice in one configuration.
    DuplicateModifier(String),
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Expected { expected, found } => write!(f, "expected {expected}, found {found}"),
            Self::UnexpectedChar(c) => write!(f, "unexpected character '{c}'"),
            Self::UnterminatedString => f.write_str("string has no closing '\"'"),
            Self::UnknownInstruction(w) => write!(f, "unknown instruction '{w}'"),
            Self::RegisterOutOfRange(r) => {
                write!(f, "register '{r}' does not exist (registers are r0 to r15)")
            }
            Self::NumberTooLarge(n) => write!(f, "number '{n}' does not fit in 64 bits"),
            Self::ReservedName(w) => write!(f, "'{w}' is reserved and cannot name a variable"),
            Self::PesOutOfRange(n) => write!(f, "pes must be 1 to 8, found {n}"),
            Self::PeOutOfRange { pe, n_pes } => {
                write!(
                    f,
                    "PE {pe} is out of range (pes {n_pes}: PEs 0 to {})",
                    n_pes - 1
                )
            }
            Self::DuplicateHeader(what) => write!(f, "duplicate '{what}' line"),
            Self::Missing(what) => write!(f, "missing {what}"),
            Self::DuplicateProgram { pe, first_line } => {
                write!(
                    f,
                    "duplicate program for P{pe} (first at line {first_line})"
                )
            }
            Self::InstructionOutsideProgram => {
                f.write_str("instruction outside a program (expected 'P<k>:' before it)")
            }
            Self::DuplicateCondition => f.write_str("a test has one condition; found a second"),
            Self::RegisterNeverWritten { pe, reg } => {
                write!(
                    f,
                    "P{pe}:r{reg} is never written by an instruction of P{pe}"
                )
            }
            Self::SignalOnOtherPe { data_pe, signal_pe } => write!(
                f,
                "the signal goes to the data's PE ({data_pe}), found PE {signal_pe} \
                 (write the signal variable without '@')"
            ),
            Self::TooManyContexts => f.write_str("more than 255 contexts on one PE"),
            Self::MixPeMissing(pe) => write!(f, "nv-mix does not place PE {pe} on a host"),
            Self::MixPeTwice(pe) => write!(f, "nv-mix places PE {pe} more than once"),
            Self::DuplicateExpect(config) => write!(f, "duplicate expect for {config}"),
            Self::TeamPeTwice(pe) => write!(f, "the team lists PE {pe} twice"),
            Self::NotTeamMember { pe, what } => write!(
                f,
                "P{pe} runs {what} of a team it is not in (list P{pe} in the team, or remove \
                 the line: PEs outside a team do not run its operations)"
            ),
            Self::ArrayInP(name) => write!(
                f,
                "'p' puts one word, but '{name}' is an array (use 'put {name}@P' for all of it, \
                 or 'p {name}[i]@P' for one word)"
            ),
            Self::ArrayAfterUse(name) => write!(
                f,
                "'array {name}' must come before any use of '{name}', once"
            ),
            Self::ArrayLength(n) => write!(f, "an array has 1 to 64 words, found {n}"),
            Self::ArrayNeedsIndex(name, len) => write!(
                f,
                "'{name}' is an array of {len} words: name one word as '{name}[i]'"
            ),
            Self::ArrayIndex { name, index, len } => write!(
                f,
                "'{name}[{index}]' is beyond the array (words 0 to {})",
                len - 1
            ),
            Self::NotAnArray(name) => write!(
                f,
                "'{name}' is not an array (declare it with 'array {name} N' first)"
            ),
            Self::NbiRegisterRead {
                reg,
                fetch_line,
                completer,
            } => write!(
                f,
                "r{reg} is read before '{completer}' completes the nbi fetch of line \
                 {fetch_line} that fills it (its value is undefined until then)"
            ),
            Self::DuplicateModifier(m) => write!(f, "modifier '+{m}' written twice"),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.kind
        )
    }
}

impl std::error::Error for ParseError {}
