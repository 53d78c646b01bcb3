//! Checking that every PE made the same collective memory call.
//!
//! Each PE sends its call, encoded, through the bootstrap exchange; every PE then compares all
//! of them, so all PEs reach the same verdict and fail together with the same message.

#[cfg(test)]
mod tests;

use hw::{Exchanged, MemKind};

use crate::error::ShmemError;
use crate::memory::hints::MallocHints;

/// Which collective allocation a PE called.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum AllocOp {
    // Why explicit: the values are the encoding's tags, which `MemCall::decode` reads back.
    Malloc = 0,
    Calloc = 1,
    Align = 2,
    MallocWithHints = 3,
}

impl AllocOp {
    pub(crate) fn name(self) -> &'static str {
        match self {
            AllocOp::Malloc => "malloc",
            AllocOp::Calloc => "calloc",
            AllocOp::Align => "align",
            AllocOp::MallocWithHints => "malloc_with_hints",
        }
    }
}

/// A collective memory call and its arguments, as every PE must make it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum MemCall {
    /// An allocation of `len_bytes` aligned to `align` bytes from the heap of `heap`, with
    /// `hints` (none but for malloc_with_hints).
    Alloc {
        op: AllocOp,
        heap: MemKind,
        hints: MallocHints,
        len_bytes: u64,
        align: u64,
    },
    /// The free of the allocation at `offset`.
    Free { offset: u64 },
    /// The resize of the allocation at `offset` to `len_bytes`.
    Realloc { offset: u64, len_bytes: u64 },
    /// The registration of a buffer of `len_bytes` (`memory/buffers.rs`).
    RegisterBuffer { len_bytes: u64 },
    /// The unregistration of the buffer registered at `offset`, `len_bytes` long.
    UnregisterBuffer { offset: u64, len_bytes: u64 },
}

/// The size of an encoded call: a tag and three words.
const ENCODED_BYTES: usize = 32;
/// The tags after [`AllocOp`]'s.
const FREE_TAG: u64 = 4;
const REALLOC_TAG: u64 = 5;
const REGISTER_TAG: u64 = 6;
const UNREGISTER_TAG: u64 = 7;

impl MemCall {
    /// The call as bytes: tag, then three little-endian words. An allocation's third word is
    /// its hints' bits over one bit for the heap (1: host).
    pub(crate) fn encode(self) -> [u8; ENCODED_BYTES] {
        let (tag, a, b, c) = match self {
            MemCall::Alloc {
                op,
                heap,
                hints,
                len_bytes,
                align,
            } => (
                op as u64,
                len_bytes,
                align,
                u64::from(hints.bits()) << 1 | u64::from(heap == MemKind::Host),
            ),
            MemCall::Free { offset } => (FREE_TAG, offset, 0, 0),
            MemCall::Realloc { offset, len_bytes } => (REALLOC_TAG, offset, len_bytes, 0),
            MemCall::RegisterBuffer { len_bytes } => (REGISTER_TAG, len_bytes, 0, 0),
            MemCall::UnregisterBuffer { offset, len_bytes } => {
                (UNREGISTER_TAG, offset, len_bytes, 0)
            }
        };
        let mut bytes = [0; ENCODED_BYTES];
        for (chunk, word) in bytes.chunks_exact_mut(8).zip([tag, a, b, c]) {
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
        let (a, b, c) = (word(1), word(2), word(3));
        let alloc = |op| {
            Some(MemCall::Alloc {
                op,
                heap: if c & 1 == 1 {
                    MemKind::Host
                } else {
                    MemKind::Device
                },
                hints: MallocHints::from_bits(c >> 1)?,
                len_bytes: a,
                align: b,
            })
        };
        match word(0) {
            0 => alloc(AllocOp::Malloc),
            1 => alloc(AllocOp::Calloc),
            2 => alloc(AllocOp::Align),
            3 => alloc(AllocOp::MallocWithHints),
            FREE_TAG => Some(MemCall::Free { offset: a }),
            REALLOC_TAG => Some(MemCall::Realloc {
                offset: a,
                len_bytes: b,
            }),
            REGISTER_TAG => Some(MemCall::RegisterBuffer { len_bytes: a }),
            UNREGISTER_TAG => Some(MemCall::UnregisterBuffer {
                offset: a,
                len_bytes: b,
            }),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            MemCall::Alloc { op, .. } => op.name(),
            MemCall::Free { .. } => "free",
            MemCall::Realloc { .. } => "realloc",
            MemCall::RegisterBuffer { .. } => "register_buffer",
            MemCall::UnregisterBuffer { .. } => "unregister_buffer",
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
            MemCall::Alloc {
                op: AllocOp::MallocWithHints,
                ..
            } => "malloc_with_hints arguments",
            MemCall::Free { .. } => "free addresses",
            MemCall::Realloc { .. } => "realloc arguments",
            MemCall::RegisterBuffer { .. } => "registered buffer sizes",
            MemCall::UnregisterBuffer { .. } => "unregister_buffer arguments",
        }
    }

    fn describe(self) -> String {
        match self {
            MemCall::Alloc {
                heap,
                hints,
                len_bytes,
                align,
                ..
            } => {
                let heap = crate::config::heap_kind_name(heap);
                let hints = if hints == MallocHints::NONE {
                    String::new()
                } else {
                    format!(", hints {hints:?}")
                };
                format!(
                    "{}({len_bytes} bytes, align {align}, {heap} heap{hints})",
                    self.name()
                )
            }
            MemCall::Free { offset } => format!("free({offset:#x})"),
            MemCall::Realloc { offset, len_bytes } => {
                format!("realloc({offset:#x}, {len_bytes} bytes)")
            }
            MemCall::RegisterBuffer { len_bytes } => format!("register_buffer({len_bytes} bytes)"),
            MemCall::UnregisterBuffer { offset, len_bytes } => {
                format!("unregister_buffer({offset:#x}, {len_bytes} bytes)")
            }
        }
    }
}

/// Checks that every PE's call in `all` (PE order) equals `mine`. Whether all are equal is
/// worked out once for every PE that holds `all` ([`Exchanged::all_equal`]); this PE then
/// compares one.
///
/// # Errors
/// [`ShmemError::CollectiveMismatch`] listing which PEs made which call.
pub(crate) fn check_agreement(mine: MemCall, all: &Exchanged) -> Result<(), ShmemError> {
    let encoded = mine.encode();
    if all.all_equal() && all.first().is_some_and(|first| first.as_slice() == encoded) {
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

/// What each PE passed (`texts` in PE order), equal ones grouped in order of their first PE
/// so the message reads in PE order: "PEs 0-2, 4: a; PE 3: b".
pub(crate) fn by_pe(texts: impl IntoIterator<Item = String>) -> String {
    let mut groups: Vec<(String, Vec<u32>)> = Vec::new();
    for (pe, text) in (0..).zip(texts) {
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
