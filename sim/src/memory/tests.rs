//! Unit tests of simulated memory: sparse segments, addressable regions, pending writes.

use super::*;

fn drained(m: &mut Memory, write_id: u64) -> Vec<Range> {
    let mut shown = Vec::new();
    m.drain(0, write_id, &mut shown);
    shown
}

#[test]
fn unwritten_memory_reads_zero_and_costs_nothing() {
    let mut m = Memory::new(2, Layout::default());
    m.create(1, MemKind::Device, 1 << 30).unwrap();
    let mut out = [7u8; 16];
    m.read(1, MemKind::Device, 4096, &mut out);
    assert_eq!(out, [0; 16]);
    assert_eq!(m.resident_bytes_peak, 0);
    m.write(1, MemKind::Device, 8, &(42u64).to_le_bytes());
    assert_eq!(m.read_word(1, MemKind::Device, 8, 8), 42);
    assert_eq!(m.resident_bytes_peak, PAGE_BYTES as u64);
}

#[test]
fn words_far_apart_cost_a_page_each_and_writes_may_span_pages() {
    let mut m = Memory::new(1, Layout::default());
    m.create(0, MemKind::Device, 1 << 30).unwrap();
    m.write(0, MemKind::Device, 8, &(1u64).to_le_bytes());
    m.write(0, MemKind::Device, 512 << 20, &(2u64).to_le_bytes());
    assert_eq!(m.resident_bytes_peak, 2 * PAGE_BYTES as u64);
    let across: Vec<u8> = (1..=16).collect();
    m.write(0, MemKind::Device, 3 * PAGE_BYTES as u64 - 8, &across);
    let mut out = [0u8; 16];
    m.read(0, MemKind::Device, 3 * PAGE_BYTES as u64 - 8, &mut out);
    assert_eq!(out.as_slice(), across.as_slice());
    assert_eq!(m.read_word(0, MemKind::Device, 512 << 20, 8), 2);
    assert_eq!(m.resident_bytes_peak, 4 * PAGE_BYTES as u64);
}

#[test]
fn zeros_past_the_written_end_cost_nothing_but_zeros_inside_are_written() {
    let mut m = Memory::new(1, Layout::default());
    m.create(0, MemKind::Device, 1 << 20).unwrap();
    m.write(0, MemKind::Device, 0, &[0; 100_000]);
    assert_eq!(
        m.resident_bytes_peak, 0,
        "clearing fresh memory materialises nothing"
    );
    m.write(0, MemKind::Device, 8, &(7u64).to_le_bytes());
    let mut buf = vec![0; 20_000];
    buf[0] = 1;
    m.write(0, MemKind::Device, 4, &buf);
    assert_eq!(m.resident_bytes_peak, PAGE_BYTES as u64);
    assert_eq!(
        m.read_word(0, MemKind::Device, 8, 8),
        0,
        "the 7 was overwritten"
    );
    assert_eq!(m.read_word(0, MemKind::Device, 0, 8), 1 << 32);
}

#[test]
fn pending_writes_are_invisible_until_drained_or_flushed() {
    let mut m = Memory::new(1, Layout::default());
    m.create(0, MemKind::Device, 1024).unwrap();
    let a = m.push_pending(0, MemKind::Device, 0, Payload::new(&[1; 8]), 10);
    let _b = m.push_pending(0, MemKind::Device, 8, Payload::new(&[2; 8]), 10);
    assert_eq!(m.read_word(0, MemKind::Device, 0, 8), 0);
    assert_eq!(drained(&mut m, a), vec![(MemKind::Device, 0, 8)]);
    assert_eq!(
        m.read_word(0, MemKind::Device, 0, 8),
        u64::from_le_bytes([1; 8])
    );
    assert_eq!(m.read_word(0, MemKind::Device, 8, 8), 0);
    assert!(drained(&mut m, a).is_empty());
    m.flush(0, &mut Vec::new());
    assert_eq!(
        m.read_word(0, MemKind::Device, 8, 8),
        u64::from_le_bytes([2; 8])
    );
    assert!(m.pending[0].spans.is_empty() && m.pending[0].data.is_empty());
}

#[test]
fn draining_a_newer_write_first_applies_older_overlapping_ones() {
    let mut m = Memory::new(1, Layout::default());
    m.create(0, MemKind::Device, 1024).unwrap();
    m.push_pending(0, MemKind::Device, 0, Payload::new(&[1; 8]), 10);
    let unrelated = m.push_pending(0, MemKind::Device, 64, Payload::new(&[3; 8]), 10);
    let newer = m.push_pending(0, MemKind::Device, 0, Payload::new(&[2; 8]), 10);
    let shown = drained(&mut m, newer);
    assert_eq!(
        shown,
        vec![(MemKind::Device, 0, 8), (MemKind::Device, 0, 8)]
    );
    assert_eq!(
        m.read_word(0, MemKind::Device, 0, 8),
        u64::from_le_bytes([2; 8])
    );
    assert_eq!(m.read_word(0, MemKind::Device, 64, 8), 0);
    assert_eq!(drained(&mut m, unrelated).len(), 1);
    assert!(
        m.pending[0].spans.is_empty(),
        "applied writes leave the list"
    );
}

/// Long lists are looked up by address rather than scanned: against a plain model (a list
/// applied in order), random writes of different lengths that overlap each other read, drain
/// and flush the same bytes, and each drain shows the same ranges.
#[test]
fn looking_up_pending_writes_by_address_finds_what_a_scan_finds() {
    matches_a_scan(false);
}

/// The same with words only, each within one line: the index then finds them by line alone,
/// and a read of a word the newest write covers takes that write's bytes (`showing`).
#[test]
fn looking_up_words_by_line_finds_what_a_scan_finds() {
    matches_a_scan(true);
}

/// In a long list, a word's newest value is the newest write over it, even when that one
/// spans two lines and the newest write on the word's own line covers the word too.
#[test]
fn a_newer_write_across_lines_shows_over_the_newest_on_the_line() {
    let mut m = Memory::new(1, Layout::default());
    m.create(0, MemKind::Device, 1 << 16).unwrap();
    // Enough writes elsewhere that the list is indexed.
    for i in 0..100u64 {
        m.push_pending(0, MemKind::Device, 4096 + 8 * i, Payload::new(&[9; 8]), 10);
    }
    m.push_pending(0, MemKind::Device, 64, Payload::new(&[1; 8]), 10);
    m.push_pending(0, MemKind::Device, 60, Payload::new(&[2; 12]), 10);
    let mut word = [0u8; 8];
    m.read_newest(0, MemKind::Device, 64, &mut word);
    assert_eq!(word, [2, 2, 2, 2, 2, 2, 2, 2]);
}

fn matches_a_scan(words_only: bool) {
    const BYTES: usize = 256;
    let mut m = Memory::new(1, Layout::default());
    m.create(0, MemKind::Device, BYTES as u64).unwrap();
    let mut visible = [0u8; BYTES];
    // The model's pending writes: (id, offset, bytes), oldest first.
    let mut pending: Vec<(u64, usize, Vec<u8>)> = Vec::new();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = |below: u64| crate::entropy::splitmix64(&mut state) % below;
    for step in 0..4000 {
        match next(10) {
            0..=5 => {
                let (len, offset) = if words_only {
                    let len = [1, 4, 8][next(3) as usize];
                    (len, next((BYTES / len) as u64) as usize * len)
                } else {
                    let len = [1, 4, 8, 8, 24, 64][next(6) as usize];
                    (len, next((BYTES - len) as u64 + 1) as usize)
                };
                let bytes = vec![step as u8 | 1; len];
                let id = m.push_pending(0, MemKind::Device, offset as u64, Payload::new(&bytes), 0);
                pending.push((id, offset, bytes));
            }
            6 | 7 if !pending.is_empty() => {
                let (id, offset, ref bytes) = pending[next(pending.len() as u64) as usize];
                let len = bytes.len();
                // The model: every older overlapping write, then this one.
                let mut want = Vec::new();
                pending.retain(|(other, at, data)| {
                    let applies = *other == id
                        || (*other < id && *at < offset + len && offset < at + data.len());
                    if applies {
                        visible[*at..at + data.len()].copy_from_slice(data);
                        want.push((MemKind::Device, *at as u64, data.len() as u64));
                    }
                    !applies
                });
                assert_eq!(drained(&mut m, id), want, "step {step}");
            }
            8 => {
                let (len, offset) = if words_only && next(2) == 0 {
                    (8, next((BYTES / 8) as u64) as usize * 8)
                } else {
                    let len = 1 + next(32) as usize;
                    (len, next((BYTES - len) as u64 + 1) as usize)
                };
                let mut newest = visible;
                for (_, at, data) in &pending {
                    newest[*at..at + data.len()].copy_from_slice(data);
                }
                let mut got = vec![0; len];
                m.read_newest(0, MemKind::Device, offset as u64, &mut got);
                assert_eq!(got, newest[offset..offset + len], "step {step}");
                let any = pending
                    .iter()
                    .any(|(_, at, data)| *at < offset + len && offset < at + data.len());
                assert_eq!(
                    m.pending_at(0, MemKind::Device, offset as u64, len as u64),
                    any
                );
            }
            _ if pending.len() > 150 || next(32) == 0 => {
                for (_, at, data) in pending.drain(..) {
                    visible[at..at + data.len()].copy_from_slice(&data);
                }
                m.flush(0, &mut Vec::new());
            }
            _ => {}
        }
        assert_eq!(m.has_pending(0), !pending.is_empty());
        let mut now = [0u8; BYTES];
        m.read(0, MemKind::Device, 0, &mut now);
        assert_eq!(now, visible, "step {step}");
    }
}

#[test]
fn out_of_range_access_is_a_contract_violation() {
    let mut m = Memory::new(1, Layout::default());
    m.create(0, MemKind::Device, 16).unwrap();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        m.write(0, MemKind::Device, 12, &[0; 8]);
    }));
    assert!(caught.is_err(), "an out-of-range write must panic");
}

fn addressable() -> Layout {
    Layout {
        addressable: true,
        static_regions: Vec::new(),
    }
}

/// Reads the word at `addr` as the program would, through the pointer.
fn load(addr: u64) -> u64 {
    // SAFETY: the tests pass addresses of live regions, 8-byte aligned.
    unsafe { std::ptr::read_volatile(addr as *const u64) }
}

#[test]
fn an_addressable_segment_is_one_region_the_program_can_read() {
    let mut m = Memory::new(1, addressable());
    m.create(0, MemKind::Device, 1 << 30).unwrap();
    let base = m
        .addr(0, MemKind::Device, 0)
        .expect("a region has an address");
    assert_eq!(m.addr(0, MemKind::Device, 4096), Some(base + 4096));
    m.write(0, MemKind::Device, 1 << 29, &(42u64).to_le_bytes());
    assert_eq!(
        load(base + (1 << 29)),
        42,
        "the simulator's write is in the region"
    );
    // SAFETY: inside the region, aligned; the program's store, which the simulator reads.
    unsafe { std::ptr::write_volatile((base + 64) as *mut u64, 7) };
    assert_eq!(m.read_word(0, MemKind::Device, 64, 8), 7);
    m.write(0, MemKind::Device, 4096 - 4, &[0; 8]);
    assert_eq!(
        m.resident_bytes_peak,
        3 * PAGE_BYTES as u64,
        "pages the simulator wrote, zeros included; the program's store is not counted"
    );
}

#[test]
fn a_pending_write_is_not_in_the_region_until_it_drains() {
    let mut m = Memory::new(1, addressable());
    m.create(0, MemKind::Device, 1024).unwrap();
    let addr = m.addr(0, MemKind::Device, 8).unwrap();
    let id = m.push_pending(0, MemKind::Device, 8, Payload::new(&5u64.to_le_bytes()), 10);
    assert_eq!(load(addr), 0);
    m.drain(0, id, &mut Vec::new());
    assert_eq!(load(addr), 5);
}

#[test]
fn static_data_in_place_is_the_callers_memory() {
    let mut data = vec![0u64; 4];
    let region = StaticRegion {
        base: data.as_mut_ptr() as usize,
        len_bytes: 32,
    };
    let layout = Layout {
        addressable: false,
        static_regions: vec![region],
    };
    let mut m = Memory::new(1, layout);
    assert!(matches!(
        m.create(0, MemKind::Static, 32),
        Err(CreateError::StaticInPlace)
    ));
    assert_eq!(m.share_static(0), Some(32));
    assert_eq!(
        m.share_static(0),
        Some(32),
        "sharing twice gives the same segment"
    );
    assert_eq!(m.addr(0, MemKind::Static, 8), Some(region.base as u64 + 8));
    m.write(0, MemKind::Static, 8, &(9u64).to_le_bytes());
    assert_eq!(
        m.resident_bytes_peak, 0,
        "the caller's memory costs the run nothing"
    );
    drop(m);
    assert_eq!(data, [0, 9, 0, 0]);
    assert_eq!(Memory::new(1, Layout::default()).share_static(0), None);
}

#[test]
fn static_regions_must_be_one_per_pe_of_one_length_and_apart() {
    let at = |base, len_bytes| StaticRegion { base, len_bytes };
    assert!(check_static_regions(&[at(0x1000, 64), at(0x2000, 64)], 2).is_ok());
    let few = check_static_regions(&[at(0x1000, 64)], 2).unwrap_err();
    assert!(few.contains("1 regions for 2 PEs"), "{few}");
    let lengths =
        check_static_regions(&[at(0x1000, 64), at(0x2000, 64), at(0x3000, 32)], 3).unwrap_err();
    assert!(lengths.contains("PE 2 has 32"), "{lengths}");
    let overlap = check_static_regions(&[at(0x1000, 64), at(0x1020, 64)], 2).unwrap_err();
    assert!(overlap.contains("PE 0 and PE 1 overlap"), "{overlap}");
    let null = check_static_regions(&[at(0, 64)], 1).unwrap_err();
    assert!(null.contains("PE 0's region"), "{null}");
}
