//! Checking that every PE made the same collective memory call.
//!
//! Each PE sends its call, encoded, through the bootstrap exchange; every PE then compares all
//! of them, so all PEs reach the same verdict and fail together with the same message.

#[cfg(test)]
mod tests;

use crate::error::ShmemError;

/// Which collective allocation a PE called.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum AllocOp {
    // Why explicit: the values are the encoding's tags, which `MemCall::decode` reads back.
    Malloc = 0,
    Calloc = 1,
    Align = 2,
}

impl AllocOp {
    fn name(self) -> &'static str {
        match self {
            AllocOp::Malloc => "malloc",
            AllocOp::Calloc => "calloc",
            AllocOp::Align => "align",
        }
    }
}

/// A collective memory call and its arguments, as every PE must make it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum MemCall {
    /// An allocation of `len_bytes` aligned to `align` bytes.
    Alloc {
        op: AllocOp,
        len_bytes: u64,
        align: u64,
    },
    /// The free of the allocation at `offset`.
    Free { offset: u64 },
}

/// The size of an encoded call: a tag and two words.
const ENCODED_BYTES: usize = 24;

impl MemCall {
    /// The call as bytes: tag, then two little-endian words.
    pub(crate) fn encode(self) -> [u8; ENCODED_BYTES] {
        let (tag, a, b) = match self {
            MemCall::Alloc {
                op,
                len_bytes,
                align,
            } => (op as u64, len_bytes, align),
            MemCall::Free { offset } => (3, offset, 0),
        };
        let mut bytes = [0; ENCODED_BYTES];
        for (chunk, word) in bytes.chunks_exact_mut(8).zip([tag, a, b]) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        bytes
    }

    /// The call `bytes` encode, if they encode one.
    fn decode(bytes: &[u8]) -> Option<MemCall> {
        let bytes: &[u8; ENCODED_BYTES] = bytes.try_into().ok()?;
        let word = |i: usize| {
            let mut w = [0; 8];
            w.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
            u64::from_le_bytes(w)
        };
        let (a, b) = (word(1), word(2));
        let alloc = |op| MemCall::Alloc {
            op,
            len_bytes: a,
            align: b,
        };
        match word(0) {
            0 => Some(alloc(AllocOp::Malloc)),
            1 => Some(alloc(AllocOp::Calloc)),
            2 => Some(alloc(AllocOp::Align)),
            3 => Some(MemCall::Free { offset: a }),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            MemCall::Alloc { op, .. } => op.name(),
            MemCall::Free { .. } => "free",
        }
    }

    /// What differs when every PE made this kind of call, for the mismatch error.
    fn what(self) -> &'static str {
        match self {
            MemCall::Alloc {
                op: AllocOp::Malloc,
                ..
            } => "malloc arguments",
            MemCall::Alloc {
                op: AllocOp::Calloc,
                ..
            } => "calloc arguments",
            MemCall::Alloc {
                op: AllocOp::Align, ..
            } => "align arguments",
            MemCall::Free { .. } => "free addresses",
        }
    }

    fn describe(self) -> String {
        match self {
            MemCall::Alloc {
                len_bytes, align, ..
            } => format!("{}({len_bytes} bytes, align {align})", self.name()),
            MemCall::Free { offset } => format!("free({offset:#x})"),
        }
    }
}

/// Checks that every PE's call in `all` (PE order) equals `mine`.
///
/// # Errors
/// [`ShmemError::CollectiveMismatch`] listing which PEs made which call.
pub(crate) fn check_agreement(mine: MemCall, all: &[Vec<u8>]) -> Result<(), ShmemError> {
    let encoded = mine.encode();
    if all.iter().all(|theirs| theirs.as_slice() == encoded) {
        return Ok(());
    }
    let calls: Vec<Option<MemCall>> = all.iter().map(|bytes| MemCall::decode(bytes)).collect();
    let same_kind = calls
        .iter()
        .all(|call| call.is_some_and(|c| c.name() == mine.name()));
    let what = if same_kind {
        mine.what()
    } else {
        "collective memory calls"
    };
    let values = by_pe(
        calls
            .into_iter()
            .map(|call| call.map_or_else(|| "an unreadable call".to_owned(), MemCall::describe)),
    );
    Err(ShmemError::CollectiveMismatch { what, values })
}

/// Says which PEs gave which value (`values[pe]`), grouped, in order of each value's first
/// PE so the message reads in PE order: "PEs 0-2: a; PE 3: b".
pub(crate) fn by_pe(values: impl IntoIterator<Item = String>) -> String {
    let mut groups: Vec<(String, Vec<u32>)> = Vec::new();
    for (pe, text) in (0..).zip(values) {
        match groups.iter_mut().find(|(t, _)| *t == text) {
            Some((_, pes)) => pes.push(pe),
            None => groups.push((text, vec![pe])),
        }
    }
    groups
        .iter()
        .map(|(text, pes)| format!("{}: {text}", pe_list(pes)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Writes increasing PE numbers compactly: "PE 3", "PEs 0-2, 5".
pub(crate) fn pe_list(pes: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &pe in pes {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == pe => *last = pe,
            _ => runs.push((pe, pe)),
        }
    }
    let parts: Vec<String> = runs
        .iter()
        .map(|&(first, last)| match last - first {
            0 => first.to_string(),
            1 => format!("{first}, {last}"),
            _ => format!("{first}-{last}"),
        })
        .collect();
    let noun = if pes.len() == 1 { "PE" } else { "PEs" };
    format!("{noun} {}", parts.join(", "))
}
