//! How a wait that never ends is reported, in the program's terms: the names of a PE's words
//! ([`WordNames`], filled by the runtime as it allocates) and the one format of a kernel's
//! wait ([`KernelWait`]), which the simulator prints and the GPU's reports are to print too,
//! so that a hang reads the same wherever it happened (docs/cuda-sim-runtime.md).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use crate::amo::Cmp;
use crate::types::MemKind;

/// One named range of a PE's memory.
#[derive(Clone, Debug)]
struct Named {
    len_bytes: u64,
    name: Name,
}

/// How a named range describes its words.
#[derive(Clone)]
enum Name {
    /// One name for the range; a word inside is "NAME + offset".
    Text(String),
    /// A name per word, worked out when a report asks (from the word's offset in the range),
    /// for ranges of many words each named apart: the teams' counters. `None` leaves the
    /// word to its segment and offset.
    Rule(WordRule),
}

/// How [`WordNames::name_each`] names a word: from its offset in the named range to its name,
/// or `None` to describe it by segment and offset.
pub type WordRule = Arc<dyn Fn(u64) -> Option<String> + Send + Sync>;

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Name::Text(text) => f.debug_tuple("Text").field(text).finish(),
            Name::Rule(_) => f.write_str("Rule"),
        }
    }
}

/// What a PE's words are, for reports: ranges of its segments, each with the name the
/// program knows it by ("nvshmem_malloc'ed object #2 (4096 bytes)", "TEAM_WORLD's
/// barrier counter of round 0 (PE 0 adds to it)"). Shared between the runtime, which names
/// ranges as it creates them, and the backend, which words its reports with them; a mutex
/// because a backend may read it from another thread.
#[derive(Debug, Default)]
pub struct WordNames {
    table: Mutex<BTreeMap<(MemKind, u64), Named>>,
}

impl WordNames {
    /// An empty table: every word is described by its segment and offset.
    pub fn new() -> WordNames {
        WordNames::default()
    }

    fn table(&self) -> std::sync::MutexGuard<'_, BTreeMap<(MemKind, u64), Named>> {
        // Why use a poisoned table: inserts and removes are whole, so nothing is half-written.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Names the `len_bytes` at `offset` of the PE's `kind` segment (replacing a name there).
    pub fn name(&self, kind: MemKind, offset: u64, len_bytes: u64, name: String) {
        let name = Name::Text(name);
        self.table()
            .insert((kind, offset), Named { len_bytes, name });
    }

    /// Names each word of the `len_bytes` at `offset` by `rule`, which a report calls with
    /// the word's offset in the range; cheaper than naming each word when few are ever
    /// reported.
    pub fn name_each(&self, kind: MemKind, offset: u64, len_bytes: u64, rule: WordRule) {
        let name = Name::Rule(rule);
        self.table()
            .insert((kind, offset), Named { len_bytes, name });
    }

    /// Forgets the name of the range that starts at `offset` (its memory was freed).
    pub fn forget(&self, kind: MemKind, offset: u64) {
        self.table().remove(&(kind, offset));
    }

    /// The word at `offset` of the `kind` segment as the program knows it: "NAME" or
    /// "NAME + 8" inside a named range, else its segment and offset.
    pub fn describe(&self, kind: MemKind, offset: u64) -> String {
        let table = self.table();
        let named = table
            .range(..=(kind, offset))
            .next_back()
            .filter(|((k, start), named)| *k == kind && offset - start < named.len_bytes.max(1));
        match named {
            Some(((_, start), named)) => match &named.name {
                Name::Text(text) if *start == offset => Some(text.clone()),
                Name::Text(text) => Some(format!("{text} + {}", offset - start)),
                Name::Rule(rule) => rule(offset - start),
            },
            None => None,
        }
        .unwrap_or_else(|| format!("the {kind:?} word at offset {offset:#x}"))
    }
}

/// The word at `offset` of `kind` as `names` describe it, or by segment and offset.
pub fn describe_word(names: Option<&WordNames>, kind: MemKind, offset: u64) -> String {
    match names {
        Some(names) => names.describe(kind, offset),
        None => WordNames::new().describe(kind, offset),
    }
}

/// The comparison as NVSHMEM's constant names it (`NVSHMEM_CMP_GE`).
pub fn nvshmem_cmp_name(cmp: Cmp) -> &'static str {
    match cmp {
        Cmp::Eq => "NVSHMEM_CMP_EQ",
        Cmp::Ne => "NVSHMEM_CMP_NE",
        Cmp::Gt => "NVSHMEM_CMP_GT",
        Cmp::Ge => "NVSHMEM_CMP_GE",
        Cmp::Lt => "NVSHMEM_CMP_LT",
        Cmp::Le => "NVSHMEM_CMP_LE",
    }
}

/// One kernel thread's wait that did not end, as both the GPU and the simulator report it:
///
/// `PE 0: kernel K: block (1,0,0) thread (0,0,0): nvshmem_signal_wait_until waits for
/// nvshmem_calloc'ed object #3 (16 bytes) + 8 to be NVSHMEM_CMP_GE 3; it holds 0`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelWait {
    /// The PE whose kernel waits.
    pub pe: u32,
    /// The kernel, or the device function that called the wait when only that is known.
    pub kernel: String,
    /// `blockIdx`.
    pub block: [u32; 3],
    /// `threadIdx`.
    pub thread: [u32; 3],
    /// The NVSHMEM call that waits (`nvshmem_signal_wait_until`, `nvshmem_barrier_all`, ...).
    pub call: String,
    /// The word waited on, in the program's terms ([`WordNames::describe`]).
    pub word: String,
    /// The comparison.
    pub cmp: Cmp,
    /// The value compared against.
    pub value: u64,
    /// The value the word held when the wait was given up.
    pub seen: u64,
}

impl fmt::Display for KernelWait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [bx, by, bz] = self.block;
        let [tx, ty, tz] = self.thread;
        write!(
            f,
            "PE {}: kernel {}: block ({bx},{by},{bz}) thread ({tx},{ty},{tz}): {} waits for {} \
             to be {} {}; it holds {}",
            self.pe,
            self.kernel,
            self.call,
            self.word,
            nvshmem_cmp_name(self.cmp),
            self.value,
            self.seen
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_named_by_the_range_they_fall_in() {
        let names = WordNames::new();
        names.name(
            MemKind::Device,
            0x1000,
            16,
            "nvshmem_malloc'ed object #1 (16 bytes)".into(),
        );
        names.name(
            MemKind::Device,
            0x2000,
            8,
            "the world team's barrier counter".into(),
        );
        assert_eq!(
            names.describe(MemKind::Device, 0x1008),
            "nvshmem_malloc'ed object #1 (16 bytes) + 8"
        );
        assert_eq!(
            names.describe(MemKind::Device, 0x2000),
            "the world team's barrier counter"
        );
        // Past the end of a range, in another kind, or before any: by segment and offset.
        assert_eq!(
            names.describe(MemKind::Device, 0x1010),
            "the Device word at offset 0x1010"
        );
        assert_eq!(
            names.describe(MemKind::Host, 0x1000),
            "the Host word at offset 0x1000"
        );
        assert_eq!(
            names.describe(MemKind::Device, 0),
            "the Device word at offset 0x0"
        );
        names.forget(MemKind::Device, 0x1000);
        assert_eq!(
            names.describe(MemKind::Device, 0x1008),
            "the Device word at offset 0x1008"
        );
    }

    #[test]
    fn host_waits_name_their_word_and_the_pe_they_wait_for() {
        let names = WordNames::new();
        names.name(
            MemKind::Host,
            0,
            8,
            "TEAM_WORLD's barrier counter of round 0 (PE 0 adds to it)".into(),
        );
        let spec = crate::WaitSpec {
            word: crate::LocalRange {
                kind: MemKind::Host,
                offset: 0,
                len: 8,
            },
            width: crate::AmoWidth::W64,
            signed: false,
            cmp: Cmp::Ge,
            value: 5,
            purpose: "team_sync",
        };
        assert_eq!(
            spec.waiting_for(4, Some(&names)),
            "team_sync: TEAM_WORLD's barrier counter of round 0 (PE 0 adds to it) to become >= 5 \
             (it holds 4)"
        );
        // A backend given no names says where the word is.
        assert_eq!(
            crate::waiting_for_any(&[spec], &[4], None),
            "team_sync: the Host word at offset 0x0 to become >= 5 (it holds 4)"
        );
    }

    #[test]
    fn a_kernel_wait_reads_in_nvshmem_s_words() {
        let wait = KernelWait {
            pe: 0,
            kernel: "wait_for_work(unsigned long*, int*)".into(),
            block: [1, 0, 0],
            thread: [0, 0, 0],
            call: "nvshmem_signal_wait_until".into(),
            word: "nvshmem_calloc'ed object #3 (16 bytes) + 8".into(),
            cmp: Cmp::Ge,
            value: 3,
            seen: 0,
        };
        assert_eq!(
            wait.to_string(),
            "PE 0: kernel wait_for_work(unsigned long*, int*): block (1,0,0) thread (0,0,0): \
             nvshmem_signal_wait_until waits for nvshmem_calloc'ed object #3 (16 bytes) + 8 to \
             be NVSHMEM_CMP_GE 3; it holds 0"
        );
    }
}
