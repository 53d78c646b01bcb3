//! Tests of the agreement check, with the exchange's result built by hand.

use super::*;

/// What the exchange returns when PE `i` made `calls[i]`.
fn exchanged(calls: &[MemCall]) -> Vec<Vec<u8>> {
    calls.iter().map(|c| c.encode().to_vec()).collect()
}

fn malloc(len_bytes: u64) -> MemCall {
    MemCall::Alloc {
        op: AllocOp::Malloc,
        len_bytes,
        align: 8,
    }
}

#[test]
fn calls_round_trip_through_bytes() {
    for call in [
        malloc(64),
        MemCall::Alloc {
            op: AllocOp::Calloc,
            len_bytes: 1,
            align: 8,
        },
        MemCall::Alloc {
            op: AllocOp::Align,
            len_bytes: 0,
            align: 4096,
        },
        MemCall::Free { offset: 0x40 },
    ] {
        assert_eq!(MemCall::decode(&call.encode()), Some(call));
    }
    assert_eq!(MemCall::decode(&[0; 23]), None);
    assert_eq!(MemCall::decode(&[9; 24]), None);
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
        "PEs 0-2, 4: malloc(64 bytes, align 8); PE 3: malloc(128 bytes, align 8)"
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
    assert_eq!(values, "PE 0: malloc(8 bytes, align 8); PE 1: free(0x10)");
}

#[test]
fn pe_lists_are_compact() {
    assert_eq!(pe_list(&[3]), "PE 3");
    assert_eq!(pe_list(&[0, 1]), "PEs 0, 1");
    assert_eq!(pe_list(&[0, 1, 2, 5, 7, 8, 9]), "PEs 0-2, 5, 7-9");
}
