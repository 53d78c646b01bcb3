//! Unit tests of the allocator, and a model-equivalence test: a seeded random sequence of
//! allocations and frees is applied both to [`Heap`] and to a byte map that finds the lowest
//! aligned free run by brute force; the two must agree on every offset and every failure.

use hw::MemKind;

use super::*;

/// A user access of `len_bytes` at `offset` through a handle of `owner`.
fn access(offset: u64, len_bytes: u64, align: u64, owner: Option<AllocId>) -> Access {
    Access {
        offset,
        len_bytes,
        align,
        owner,
    }
}

#[test]
fn allocations_are_first_fit_aligned_and_granular() {
    let mut heap = Heap::new(MemKind::Device, 4096);
    let a = heap.alloc(3, 1, false).expect("fits");
    let b = heap.alloc(16, 64, false).expect("fits");
    let c = heap.alloc(0, 8, false).expect("fits");
    assert_eq!((a.offset, a.reserved_bytes), (0, 8));
    assert_eq!((b.offset, b.reserved_bytes), (64, 16));
    // Why 8: the padding between a and b is free and first fit takes it.
    assert_eq!((c.offset, c.reserved_bytes), (8, 8));
    assert_eq!(heap.free_bytes(), 4096 - 32);
}

#[test]
fn alignment_must_be_a_power_of_two() {
    let mut heap = Heap::new(MemKind::Device, 4096);
    assert!(matches!(
        heap.alloc(8, 24, false),
        Err(ShmemError::InvalidAlignment { align: 24 })
    ));
    assert!(matches!(
        heap.alloc(8, 0, false),
        Err(ShmemError::InvalidAlignment { align: 0 })
    ));
}

#[test]
fn exhaustion_reports_sizes_and_the_variable_to_raise() {
    let mut heap = Heap::new(MemKind::Device, 1 << 20);
    heap.alloc(1000, 8, false).expect("fits");
    let err = heap.alloc(1 << 20, 8, false).expect_err("too large");
    let ShmemError::HeapExhausted {
        kind: MemKind::Device,
        requested_bytes,
        free_bytes,
        heap_bytes,
    } = err
    else {
        panic!("wrong error {err:?}");
    };
    assert_eq!(
        (requested_bytes, free_bytes, heap_bytes),
        (1 << 20, (1 << 20) - 1000, 1 << 20)
    );
    let message = err.to_string();
    assert!(message.contains("device heap exhausted"), "{message}");
    assert!(
        message.contains("SHMEM_DEVICE_SYMMETRIC_SIZE=2m"),
        "{message}"
    );
    assert!(matches!(
        heap.alloc(u64::MAX, 8, false),
        Err(ShmemError::HeapExhausted { .. })
    ));
}

#[test]
fn accesses_are_checked_against_their_allocation() {
    let mut heap = Heap::new(MemKind::Device, 4096);
    let a = heap.alloc(64, 8, false).expect("fits");
    let owner = Some(a.id);
    assert_eq!(
        heap.check(access(8, 56, 8, owner))
            .map(|s| s.len_bytes)
            .ok(),
        Some(56)
    );
    // An empty view at the very end belongs to its allocation.
    assert!(heap.check(access(64, 0, 8, owner)).is_ok());
    assert!(matches!(
        heap.check(access(8, 57, 8, owner)),
        Err(ShmemError::OutsideAllocation {
            offset: 8,
            len_bytes: 57,
            alloc_offset: 0,
            alloc_len_bytes: 64
        })
    ));
    assert!(matches!(
        heap.check(access(4, 4, 8, None)),
        Err(ShmemError::Misaligned {
            offset: 4,
            align: 8
        })
    ));
    assert!(heap.check(access(3, 5, 1, None)).is_ok());
    assert!(matches!(
        heap.check(access(1024, 8, 8, None)),
        Err(ShmemError::NotInHeap { offset: 1024 })
    ));
    assert!(matches!(
        heap.check(access(u64::MAX - 7, 8, 8, None)),
        Err(ShmemError::NotInHeap { .. })
    ));
    assert!(matches!(
        heap.check(access(0, u64::MAX, 1, None)),
        Err(ShmemError::OutsideAllocation { .. })
    ));
}

#[test]
fn freed_handles_are_recognised_even_after_reuse() {
    let mut heap = Heap::new(MemKind::Device, 4096);
    let a = heap.alloc(64, 8, false).expect("fits");
    heap.free(0, Some(a.id)).expect("live");
    assert!(matches!(
        heap.check(access(0, 8, 8, Some(a.id))),
        Err(ShmemError::FreedAllocation { offset: 0 })
    ));
    let b = heap.alloc(64, 8, false).expect("fits");
    assert_eq!(b.offset, a.offset);
    assert!(matches!(
        heap.check(access(0, 8, 8, Some(a.id))),
        Err(ShmemError::FreedAllocation { .. })
    ));
    assert!(matches!(
        heap.free(0, Some(a.id)),
        Err(ShmemError::FreedAllocation { .. })
    ));
    assert!(heap.check(access(0, 8, 8, Some(b.id))).is_ok());
}

#[test]
fn a_raw_address_never_resolves_to_a_freed_or_moved_allocation() {
    let mut heap = Heap::new(MemKind::Device, 4096);
    let a = heap.alloc(64, 8, false).expect("fits");
    // The first raw check remembers `a`; the second is served from that memory.
    assert!(heap.check(access(8, 8, 8, None)).is_ok());
    assert!(heap.check(access(16, 8, 8, None)).is_ok());
    heap.free(0, Some(a.id)).expect("live");
    assert!(matches!(
        heap.check(access(8, 8, 8, None)),
        Err(ShmemError::NotInHeap { offset: 8 })
    ));
    let b = heap.alloc(16, 8, false).expect("fits");
    heap.alloc(16, 8, false)
        .expect("fits: a neighbour, so that b cannot grow in place");
    assert!(heap.check(access(8, 8, 8, None)).is_ok());
    let (grown, moved_from) = heap.realloc(b.offset, Some(b.id), 1024, 8).expect("fits");
    assert_ne!(grown.offset, b.offset, "the realloc moved");
    // The caller frees the old place once it copied from it (`memory/alloc.rs`).
    let old = moved_from.expect("moved");
    heap.free(old.offset, Some(old.id)).expect("live");
    assert!(matches!(
        heap.check(access(8, 8, 8, None)),
        Err(ShmemError::NotInHeap { offset: 8 })
    ));
    assert!(heap.check(access(grown.offset, 8, 8, None)).is_ok());
}

#[test]
fn free_needs_the_start_of_a_user_allocation() {
    let mut heap = Heap::new(MemKind::Device, 4096);
    let internal = heap.alloc(16, 8, true).expect("fits");
    let a = heap.alloc(64, 8, false).expect("fits");
    assert!(matches!(
        heap.free(a.offset + 8, None),
        Err(ShmemError::NotAllocationStart {
            offset: 24,
            alloc_offset: 16
        })
    ));
    // Users cannot reach the runtime's own allocations through raw addresses.
    assert!(matches!(
        heap.free(internal.offset, None),
        Err(ShmemError::NotInHeap { offset: 0 })
    ));
    assert!(matches!(
        heap.check(access(0, 8, 8, None)),
        Err(ShmemError::NotInHeap { offset: 0 })
    ));
    assert_eq!(
        heap.free(a.offset, None).map(|f| f.len_bytes).ok(),
        Some(64)
    );
}

#[test]
fn an_empty_heap_allocates_nothing() {
    let mut heap = Heap::new(MemKind::Device, 0);
    assert!(matches!(
        heap.alloc(0, 8, false),
        Err(ShmemError::HeapExhausted { heap_bytes: 0, .. })
    ));
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny deterministic generator, enough to drive a
/// property test reproducibly from a printed seed.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The model: one flag per byte, and the rules stated independently of the implementation.
struct Model {
    used: Vec<bool>,
    live: Vec<(u64, u64, AllocId)>,
}

impl Model {
    /// The offset first fit must choose, or `None` if nothing fits.
    fn place(&self, len_bytes: u64, align: u64) -> Option<(u64, u64)> {
        let align = align.max(8);
        let reserved = len_bytes.max(1).div_ceil(8) * 8;
        let size = self.used.len() as u64;
        (0..size)
            .step_by(align as usize)
            .find(|&start| {
                start + reserved <= size
                    && self.used[start as usize..(start + reserved) as usize]
                        .iter()
                        .all(|u| !u)
            })
            .map(|start| (start, reserved))
    }

    fn mark(&mut self, start: u64, len: u64, used: bool) {
        for flag in &mut self.used[start as usize..(start + len) as usize] {
            assert_ne!(
                *flag,
                used,
                "model double {}",
                if used { "use" } else { "free" }
            );
            *flag = used;
        }
    }
}

/// Checks the heap's own invariants: free blocks are maximal and disjoint from allocations,
/// and together they tile the heap.
fn check_invariants(heap: &Heap) {
    let mut pieces: Vec<(u64, u64, bool)> = heap.free.iter().map(|(&o, &l)| (o, l, true)).collect();
    pieces.extend(
        heap.live
            .values()
            .map(|a| (a.offset, a.reserved_bytes, false)),
    );
    pieces.sort();
    let base = space::base_of(heap.kind);
    let mut cursor = base;
    let mut previous_free = false;
    for (offset, len, is_free) in pieces {
        assert_eq!(offset, cursor, "gap or overlap at {offset:#x}");
        assert!(len > 0);
        assert!(
            !(previous_free && is_free),
            "adjacent free blocks at {offset:#x}"
        );
        previous_free = is_free;
        cursor = offset + len;
    }
    assert_eq!(cursor, base + heap.size_bytes);
}

#[test]
fn heap_matches_the_byte_map_model() {
    for seed in 0..20u64 {
        // Printed so a failure can be replayed by running only this seed.
        println!("heap model seed {seed}");
        let mut rng = SplitMix64(seed);
        let size = 1 << 13;
        let mut heap = Heap::new(MemKind::Device, size);
        let mut model = Model {
            used: vec![false; size as usize],
            live: Vec::new(),
        };
        for _ in 0..400 {
            if model.live.is_empty() || rng.below(3) != 0 {
                let len = match rng.below(4) {
                    0 => 0,
                    1 => rng.below(16),
                    _ => rng.below(1024),
                };
                let align = 1 << rng.below(10);
                let got = heap.alloc(len, align, false);
                match (model.place(len, align), got) {
                    (Some((start, reserved)), Ok(a)) => {
                        assert_eq!(
                            (a.offset, a.reserved_bytes, a.len_bytes),
                            (start, reserved, len)
                        );
                        model.mark(start, reserved, true);
                        model.live.push((start, reserved, a.id));
                    }
                    (None, Err(ShmemError::HeapExhausted { free_bytes, .. })) => {
                        let model_free = model.used.iter().filter(|u| !**u).count() as u64;
                        assert_eq!(free_bytes, model_free);
                    }
                    (want, got) => panic!("seed {seed}: model {want:?}, heap {got:?}"),
                }
            } else {
                let victim = rng.below(model.live.len() as u64) as usize;
                let (start, reserved, id) = model.live.swap_remove(victim);
                heap.free(start, Some(id)).expect("live allocation");
                model.mark(start, reserved, false);
            }
            check_invariants(&heap);
        }
        for (start, _, id) in model.live.drain(..) {
            heap.free(start, Some(id)).expect("live allocation");
        }
        assert_eq!(
            heap.free,
            BTreeMap::from([(0, size)]),
            "seed {seed}: not coalesced"
        );
    }
}

#[test]
fn a_host_heap_hands_out_addresses_of_its_window() {
    let mut heap = Heap::new(MemKind::Host, 4096);
    let base = space::base_of(MemKind::Host);
    let a = heap.alloc(8, 8, false).expect("fits");
    let b = heap.alloc(8, 64, false).expect("fits");
    assert_eq!((a.offset, b.offset), (base, base + 64));
    assert!(heap.check(access(base + 64, 8, 8, Some(b.id))).is_ok());
    assert!(matches!(
        heap.check(access(0, 8, 8, None)),
        Err(ShmemError::NotInHeap { offset: 0 })
    ));
    check_invariants(&heap);
    let err = heap.alloc(1 << 20, 8, false).expect_err("too large");
    assert!(err.to_string().contains("SHMEM_SYMMETRIC_SIZE="), "{err}");
}

#[test]
fn realloc_resizes_in_place_where_it_can_and_renews_the_identity() {
    let mut heap = Heap::new(MemKind::Device, 4096);
    let a = heap.alloc(64, 8, false).expect("fits");
    // Shrinking stays in place and frees the tail.
    let (small, moved) = heap.realloc(a.offset, Some(a.id), 16, 8).expect("shrinks");
    assert_eq!((small.offset, small.reserved_bytes, moved), (0, 16, None));
    assert!(matches!(
        heap.check(access(0, 8, 8, Some(a.id))),
        Err(ShmemError::FreedAllocation { offset: 0 })
    ));
    check_invariants(&heap);
    // Growing into the free block right after it stays in place too.
    let (grown, moved) = heap.realloc(0, Some(small.id), 128, 8).expect("grows");
    assert_eq!((grown.offset, grown.len_bytes, moved), (0, 128, None));
    check_invariants(&heap);
    // With a neighbour in the way it moves, and the old block stays taken until freed.
    let neighbour = heap.alloc(8, 8, false).expect("fits");
    assert_eq!(neighbour.offset, 128);
    let (far, old) = heap.realloc(0, Some(grown.id), 256, 8).expect("moves");
    assert_eq!(far.offset, 136);
    assert_eq!(old.map(|o| (o.offset, o.id)), Some((0, grown.id)));
    check_invariants(&heap);
    heap.free(0, Some(grown.id)).expect("the old block");
    check_invariants(&heap);
    assert_eq!(heap.free_bytes(), 4096 - 8 - 256);
}

#[test]
fn realloc_that_cannot_fit_leaves_the_allocation_alone() {
    let mut heap = Heap::new(MemKind::Device, 256);
    let a = heap.alloc(64, 8, false).expect("fits");
    heap.alloc(8, 8, false).expect("fits");
    let err = heap.realloc(0, Some(a.id), 1024, 8).expect_err("too large");
    assert!(matches!(err, ShmemError::HeapExhausted { .. }), "{err}");
    assert!(heap.check(access(0, 64, 8, Some(a.id))).is_ok());
    assert!(matches!(
        heap.realloc(8, Some(a.id), 8, 8),
        Err(ShmemError::NotAllocationStart {
            offset: 8,
            alloc_offset: 0
        })
    ));
    check_invariants(&heap);
}

#[test]
fn alloc_at_takes_exactly_the_range_asked_for_or_refuses() {
    let mut heap = Heap::new(MemKind::Device, 4096);
    let first = heap.alloc(64, 8, false).expect("fits");
    let placed = heap.alloc_at(1024, 512).expect("free there");
    assert_eq!((placed.offset, placed.reserved_bytes), (1024, 512));
    check_invariants(&heap);
    // First fit still uses the free space on both sides of the placed range.
    assert_eq!(heap.alloc(64, 8, false).expect("fits").offset, 64);
    assert_eq!(heap.alloc(1024, 8, false).expect("fits").offset, 1536);
    // Taken, overlapping, or past the end: refused, and the heap is unchanged.
    let free_before = heap.free_bytes();
    for (start, len) in [
        (first.offset, 8),
        (1000, 64),
        (4000, 512),
        (u64::MAX - 4, 8),
    ] {
        assert!(
            matches!(
                heap.alloc_at(start, len),
                Err(ShmemError::HeapExhausted { .. })
            ),
            "{start}+{len}"
        );
    }
    assert_eq!(heap.free_bytes(), free_before);
    check_invariants(&heap);
}

#[test]
fn a_retired_allocation_is_never_handed_out_again_nor_reached_by_users() {
    let mut heap = Heap::new(MemKind::Device, 4096);
    let a = heap.alloc(1024, 8, false).expect("fits");
    let retired = heap.retire(a.offset, Some(a.id)).expect("live");
    assert_eq!(retired.len_bytes, 1024);
    assert!(matches!(
        heap.check(access(a.offset, 8, 8, None)),
        Err(ShmemError::NotInHeap { .. })
    ));
    assert!(heap.free(a.offset, None).is_err());
    assert_eq!(heap.high_water_bytes(), 1024);
    assert_eq!(heap.alloc(8, 8, false).expect("fits").offset, 1024);
    check_invariants(&heap);
}
