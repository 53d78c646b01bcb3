//! Tests of the agreement check, with the exchange's result built by hand.

use super::*;

/// A call of `op` for `len_bytes` on the device heap with no hints, aligned to 8.
fn alloc(op: AllocOp, len_bytes: u64, align: u64) -> MemCall {
    MemCall::Alloc {
        op,
        heap: MemKind::Device,
        hints: MallocHints::NONE,
        len_bytes,
        align,
    }
}

/// What the exchange returns when PE `i` made `calls[i]`.
fn exchanged(calls: &[MemCall]) -> hw::Exchanged {
    calls.iter().map(|c| c.encode().to_vec()).collect()
}

fn malloc(len_bytes: u64) -> MemCall {
    alloc(AllocOp::Malloc, len_bytes, 8)
}

#[test]
fn calls_round_trip_through_bytes() {
    for call in [
        malloc(64),
        alloc(AllocOp::Calloc, 1, 8),
        alloc(AllocOp::Align, 0, 4096),
        MemCall::Alloc {
            op: AllocOp::MallocWithHints,
            heap: MemKind::Host,
            hints: MallocHints::HOST_HEAP | MallocHints::SIGNAL_REMOTE,
            len_bytes: 24,
            align: 8,
        },
        MemCall::Free { offset: 0x40 },
        MemCall::Realloc {
            offset: 1 << 62,
            len_bytes: 96,
        },
        MemCall::RegisterBuffer { len_bytes: 2 << 20 },
        MemCall::UnregisterBuffer {
            offset: 64 << 20,
            len_bytes: 2 << 20,
        },
    ] {
        assert_eq!(MemCall::decode(&call.encode()), Some(call));
    }
    assert_eq!(MemCall::decode(&[0; 31]), None);
    assert_eq!(MemCall::decode(&[9; 32]), None);
}

#[test]
fn identical_calls_agree() {
    let all = exchanged(&[malloc(64); 4]);
    assert!(check_agreement(malloc(64), &all).is_ok());
}

#[test]
fn differing_sizes_name_every_pe() {
    let all = exchanged(&[malloc(64), malloc(64), malloc(64), malloc(128), malloc(64)]);
    let err = check_agreement(malloc(64), &all).expect_err("mismatch");
    let ShmemError::CollectiveMismatch { what, values } = &err else {
        panic!("wrong error {err:?}");
    };
    assert_eq!(*what, "malloc arguments");
    assert_eq!(
        values,
        "PEs 0-2, 4: malloc(64 bytes, align 8, DEVICE heap); \
         PE 3: malloc(128 bytes, align 8, DEVICE heap)"
    );
    assert!(
        err.to_string()
            .contains("malloc arguments differ between PEs")
    );
}

#[test]
fn differing_operations_are_named() {
    let all = exchanged(&[malloc(8), MemCall::Free { offset: 0x10 }]);
    let err = check_agreement(malloc(8), &all).expect_err("mismatch");
    let ShmemError::CollectiveMismatch { what, values } = err else {
        panic!("wrong error");
    };
    assert_eq!(what, "collective memory calls");
    assert_eq!(
        values,
        "PE 0: malloc(8 bytes, align 8, DEVICE heap); PE 1: free(0x10)"
    );
}

#[test]
fn pe_lists_are_compact() {
    assert_eq!(pe_list(&[3]), "PE 3");
    assert_eq!(pe_list(&[0, 1]), "PEs 0, 1");
    assert_eq!(pe_list(&[0, 1, 2, 5, 7, 8, 9]), "PEs 0-2, 5, 7-9");
}

#[test]
fn heaps_hints_and_realloc_sizes_are_compared() {
    let on_host = MemCall::Alloc {
        op: AllocOp::MallocWithHints,
        heap: MemKind::Host,
        hints: MallocHints::HOST_HEAP,
        len_bytes: 8,
        align: 8,
    };
    let on_device = MemCall::Alloc {
        op: AllocOp::MallocWithHints,
        heap: MemKind::Device,
        hints: MallocHints::DEVICE_HEAP,
        len_bytes: 8,
        align: 8,
    };
    let err = check_agreement(on_host, &exchanged(&[on_host, on_device])).expect_err("mismatch");
    assert_eq!(
        err.to_string(),
        "malloc_with_hints arguments differ between PEs: \
         PE 0: malloc_with_hints(8 bytes, align 8, HOST heap, hints HOST_HEAP); \
         PE 1: malloc_with_hints(8 bytes, align 8, DEVICE heap, hints DEVICE_HEAP); \
         every PE must make the same collective calls with the same arguments"
    );
    let realloc = |len_bytes| MemCall::Realloc {
        offset: 0x40,
        len_bytes,
    };
    let err =
        check_agreement(realloc(8), &exchanged(&[realloc(8), realloc(16)])).expect_err("mismatch");
    let want = "realloc arguments differ between PEs: \
                PE 0: realloc(0x40, 8 bytes); PE 1: realloc(0x40, 16 bytes)";
    assert!(err.to_string().contains(want), "{err}");
}
