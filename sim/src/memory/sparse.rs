//! Sparse segments, the default: pages materialised on the first nonzero write.
//!
//! A segment of 1 GiB costs nothing until it is written, and then only the pages that hold a
//! nonzero byte, so thousands of PEs fit in a laptop's memory even when each touches words far
//! apart (the teams' areas at the heap's start, data after them). Such a segment has no
//! address a program could dereference; the addressable mode uses `region.rs` instead.

use super::PAGE_BYTES;

/// The pages of one segment.
#[derive(Debug, Default)]
pub(super) struct Pages {
    /// Page `i` holds bytes `i * PAGE_BYTES..`; a missing page reads as zeros.
    pages: Vec<Option<Box<[u8]>>>,
}

/// The pieces of `offset..offset + len` within single pages: (page, offset in it, bytes).
fn pieces(offset: usize, len: usize) -> impl Iterator<Item = (usize, usize, usize)> {
    let mut at = offset;
    let end = offset + len;
    std::iter::from_fn(move || {
        (at < end).then(|| {
            let (page, within) = (at / PAGE_BYTES, at % PAGE_BYTES);
            let bytes = (PAGE_BYTES - within).min(end - at);
            at += bytes;
            (page, within, bytes)
        })
    })
}

/// Whether every byte of `bytes` is zero. Why not `iter().all(..)`: that stops at the first
/// nonzero byte and so goes byte by byte, while OR-ing blocks of 64 runs in vector registers;
/// a `calloc` of thousands of PEs clears megabytes through here.
fn all_zero(bytes: &[u8]) -> bool {
    bytes
        .chunks(64)
        .all(|block| block.iter().fold(0, |acc, &b| acc | b) == 0)
}

impl Pages {
    /// Copies the bytes at `offset` into `out` (the caller checked the range).
    pub(super) fn read(&self, offset: usize, out: &mut [u8]) {
        let mut done = 0;
        for (page, within, bytes) in pieces(offset, out.len()) {
            let out = &mut out[done..done + bytes];
            match self.pages.get(page).and_then(Option::as_ref) {
                // Why a word apart: most reads are one word (a wait's test, an atomic), and a
                // copy of run-time length is a call to `memcpy`.
                Some(data) if bytes == 8 => {
                    let word: [u8; 8] = data[within..within + 8].try_into().expect("8 bytes");
                    out.copy_from_slice(&word);
                }
                Some(data) => out.copy_from_slice(&data[within..within + bytes]),
                None => out.fill(0),
            }
            done += bytes;
        }
    }

    /// Copies `data` to `offset` (the caller checked the range), and returns how many bytes
    /// of pages it materialised.
    pub(super) fn write(&mut self, offset: usize, data: &[u8]) -> u64 {
        let mut new_bytes = 0;
        let mut done = 0;
        for (page, within, bytes) in pieces(offset, data.len()) {
            let piece = &data[done..done + bytes];
            done += bytes;
            if self.pages.len() <= page {
                // Why not materialise zeros: a missing page reads as zero already, and memory
                // that was cleared but never used then costs nothing.
                if all_zero(piece) {
                    continue;
                }
                self.pages.resize_with(page + 1, || None);
            }
            let slot = &mut self.pages[page];
            if slot.is_none() {
                if all_zero(piece) {
                    continue;
                }
                new_bytes += PAGE_BYTES as u64;
            }
            slot.get_or_insert_with(|| vec![0; PAGE_BYTES].into_boxed_slice())
                [within..within + bytes]
                .copy_from_slice(piece);
        }
        new_bytes
    }
}
