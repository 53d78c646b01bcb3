//! Tests of views and element conversions (pure logic, no heap, no backend).

use super::*;

#[test]
fn slices_are_views_of_their_parent() {
    let sym: Sym<u32> = SymAddr(64).cast(10);
    let part = sym.slice(2..5).expect("inside");
    assert_eq!((part.addr(), part.len()), (SymAddr(72), 3));
    assert_eq!(sym.slice(..).expect("whole"), sym);
    assert_eq!(sym.slice(3..=3).expect("one").len(), 1);
    let empty = sym.slice(10..).expect("empty at end");
    assert!(empty.is_empty());
    assert_eq!(empty.addr(), SymAddr(104));
    assert_eq!(sym.at(9).expect("last").addr(), SymAddr(100));
    assert_eq!(part.at(2).expect("last of part").addr(), SymAddr(80));
}

#[test]
fn slices_outside_the_view_fail() {
    let sym: Sym<u64> = SymAddr(0).cast(4);
    for (start, end) in [(0, 5), (5, 5), (3, 2)] {
        let err = sym.slice(start..end).expect_err("outside");
        assert!(
            matches!(err, ShmemError::OutOfBounds { len: 4, .. }),
            "{start}..{end}: {err:?}"
        );
    }
    assert!(matches!(
        sym.at(4),
        Err(ShmemError::OutOfBounds {
            start: 4,
            end: 5,
            len: 4
        })
    ));
    assert!(matches!(
        sym.slice(..=usize::MAX),
        Err(ShmemError::OutOfBounds {
            end: usize::MAX,
            ..
        })
    ));
}

#[test]
fn accesses_carry_typed_alignment_and_length() {
    let access = SymAddr(12).cast::<u32>(3).access();
    assert_eq!((access.offset, access.len_bytes, access.align), (12, 12, 4));
    assert!(access.owner.is_none());
    assert_eq!(SymAddr(0).cast::<u64>(usize::MAX).len_bytes(), u64::MAX);
}

#[test]
fn atomic_bits_round_trip_with_sign() {
    assert_eq!((-1i32).to_bits(), 0xffff_ffff);
    assert_eq!(i32::from_bits(0xffff_ffff), -1);
    assert_eq!(i32::from_bits(0x1_0000_0005), 5);
    assert_eq!((-2i64).to_bits(), u64::MAX - 1);
    assert_eq!(i64::from_bits(u64::MAX), -1);
    assert_eq!(u32::from_bits(u64::MAX), u32::MAX);
    assert_eq!(usize::from_bits(7), 7);
    assert_eq!(<isize as AtomicElement>::WIDTH, AmoWidth::W64);
    const { assert!(<i32 as AtomicElement>::SIGNED && !<u64 as AtomicElement>::SIGNED) };
}
