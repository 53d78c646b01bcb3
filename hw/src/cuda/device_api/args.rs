//! The arguments of a kernel launch: a few plain kinds, and offsets into the PE's device heap
//! that become pointers, so that a caller never handles a device address.

use super::error::DeviceApiError;

/// One argument of [`super::DeviceKernel::launch`], for a kernel parameter of the matching C
/// type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KernelArg {
    /// `unsigned int`.
    U32(u32),
    /// `int`.
    I32(i32),
    /// `unsigned long long` (or `size_t`).
    U64(u64),
    /// `long long`.
    I64(i64),
    /// `float`.
    F32(f32),
    /// `double`.
    F64(f64),
    /// A pointer (`T *`) to this many bytes into the PE's device heap (its `Device`
    /// segment): a symmetric address, usable with every call of the header.
    Heap(u64),
}

/// An argument as the driver takes it: the bytes of a 4- or 8-byte parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RawArg {
    B32(u32),
    B64(u64),
}

/// The raw values of `args`, heap offsets turned into addresses of the heap at `heap_base`
/// of `heap_bytes`.
///
/// # Errors
/// [`DeviceApiError::ArgOutsideHeap`] for an offset past the heap's end (an offset equal to
/// its length, one past the end, is allowed, as in C).
pub(crate) fn resolve(
    args: &[KernelArg],
    heap_base: u64,
    heap_bytes: u64,
) -> Result<Vec<RawArg>, DeviceApiError> {
    (0..)
        .zip(args)
        .map(|(index, &arg)| {
            Ok(match arg {
                KernelArg::U32(v) => RawArg::B32(v),
                KernelArg::I32(v) => RawArg::B32(v as u32),
                KernelArg::F32(v) => RawArg::B32(v.to_bits()),
                KernelArg::U64(v) => RawArg::B64(v),
                KernelArg::I64(v) => RawArg::B64(v as u64),
                KernelArg::F64(v) => RawArg::B64(v.to_bits()),
                KernelArg::Heap(offset) if offset <= heap_bytes => RawArg::B64(heap_base + offset),
                KernelArg::Heap(offset) => {
                    return Err(DeviceApiError::ArgOutsideHeap {
                        index,
                        offset,
                        heap_bytes,
                    });
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_their_bits_and_offsets_become_addresses() {
        let args = [
            KernelArg::U32(7),
            KernelArg::I32(-1),
            KernelArg::F32(1.5),
            KernelArg::U64(u64::MAX),
            KernelArg::I64(-2),
            KernelArg::F64(-0.25),
            KernelArg::Heap(0),
            KernelArg::Heap(64),
            KernelArg::Heap(4096),
        ];
        let raw = resolve(&args, 0x7f00_0000_0000, 4096).unwrap();
        assert_eq!(
            raw,
            [
                RawArg::B32(7),
                RawArg::B32(0xffff_ffff),
                RawArg::B32(0x3fc0_0000),
                RawArg::B64(u64::MAX),
                RawArg::B64(0xffff_ffff_ffff_fffe),
                RawArg::B64(0xbfd0_0000_0000_0000),
                RawArg::B64(0x7f00_0000_0000),
                RawArg::B64(0x7f00_0000_0040),
                RawArg::B64(0x7f00_0000_1000),
            ]
        );
    }

    #[test]
    fn an_offset_past_the_heap_names_the_argument() {
        let e = resolve(&[KernelArg::U32(1), KernelArg::Heap(4097)], 0x1000, 4096).unwrap_err();
        assert!(
            matches!(
                e,
                DeviceApiError::ArgOutsideHeap {
                    index: 1,
                    offset: 4097,
                    heap_bytes: 4096
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("argument 1"), "{e}");
    }
}
