//! MPI's predefined datatypes and reduction operations, as the simulator serves them: each
//! known by the name of Open MPI's handle object (`MPI_INT` is `&ompi_mpi_int`), and the
//! reductions over their elements.

use super::MpiError;

/// What one element of a datatype is, for reductions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Element {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
    /// Bytes that are not numbers (`MPI_BYTE`, `MPI_PACKED`): moved, never reduced.
    Opaque,
}

/// A predefined datatype: its C name, for messages, and its element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Datatype {
    pub(super) name: &'static str,
    pub(super) element: Element,
}

impl Datatype {
    /// The bytes of one element.
    pub(super) fn size_bytes(self) -> usize {
        match self.element {
            Element::I8 | Element::U8 | Element::Opaque => 1,
            Element::I16 | Element::U16 => 2,
            Element::I32 | Element::U32 | Element::F32 => 4,
            Element::I64 | Element::U64 | Element::F64 => 8,
        }
    }

    /// The datatype whose Open MPI handle object is `object` (`ompi_mpi_int`).
    pub(super) fn of_object(object: &str) -> Option<Datatype> {
        let (name, element) = match object.strip_prefix("ompi_mpi_")? {
            "byte" => ("MPI_BYTE", Element::Opaque),
            "packed" => ("MPI_PACKED", Element::Opaque),
            "char" => ("MPI_CHAR", Element::I8),
            "signed_char" => ("MPI_SIGNED_CHAR", Element::I8),
            "unsigned_char" => ("MPI_UNSIGNED_CHAR", Element::U8),
            "c_bool" => ("MPI_C_BOOL", Element::U8),
            "short" => ("MPI_SHORT", Element::I16),
            "unsigned_short" => ("MPI_UNSIGNED_SHORT", Element::U16),
            "int" => ("MPI_INT", Element::I32),
            "unsigned" => ("MPI_UNSIGNED", Element::U32),
            "wchar" => ("MPI_WCHAR", Element::I32),
            "long" => ("MPI_LONG", Element::I64),
            "unsigned_long" => ("MPI_UNSIGNED_LONG", Element::U64),
            "long_long_int" => ("MPI_LONG_LONG", Element::I64),
            "unsigned_long_long" => ("MPI_UNSIGNED_LONG_LONG", Element::U64),
            "aint" => ("MPI_AINT", Element::I64),
            "offset" => ("MPI_OFFSET", Element::I64),
            "count" => ("MPI_COUNT", Element::I64),
            "float" => ("MPI_FLOAT", Element::F32),
            "double" => ("MPI_DOUBLE", Element::F64),
            "int8_t" => ("MPI_INT8_T", Element::I8),
            "uint8_t" => ("MPI_UINT8_T", Element::U8),
            "int16_t" => ("MPI_INT16_T", Element::I16),
            "uint16_t" => ("MPI_UINT16_T", Element::U16),
            "int32_t" => ("MPI_INT32_T", Element::I32),
            "uint32_t" => ("MPI_UINT32_T", Element::U32),
            "int64_t" => ("MPI_INT64_T", Element::I64),
            "uint64_t" => ("MPI_UINT64_T", Element::U64),
            _ => return None,
        };
        Some(Datatype { name, element })
    }
}

/// A predefined reduction operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    Sum,
    Prod,
    Max,
    Min,
    Land,
    Lor,
    Lxor,
    Band,
    Bor,
    Bxor,
}

impl Op {
    /// The operation whose Open MPI handle object is `object` (`ompi_mpi_op_sum`).
    pub(super) fn of_object(object: &str) -> Option<Op> {
        Some(match object.strip_prefix("ompi_mpi_op_")? {
            "sum" => Op::Sum,
            "prod" => Op::Prod,
            "max" => Op::Max,
            "min" => Op::Min,
            "land" => Op::Land,
            "lor" => Op::Lor,
            "lxor" => Op::Lxor,
            "band" => Op::Band,
            "bor" => Op::Bor,
            "bxor" => Op::Bxor,
            _ => return None,
        })
    }

    /// The C name, for messages.
    pub(super) fn name(self) -> &'static str {
        match self {
            Op::Sum => "MPI_SUM",
            Op::Prod => "MPI_PROD",
            Op::Max => "MPI_MAX",
            Op::Min => "MPI_MIN",
            Op::Land => "MPI_LAND",
            Op::Lor => "MPI_LOR",
            Op::Lxor => "MPI_LXOR",
            Op::Band => "MPI_BAND",
            Op::Bor => "MPI_BOR",
            Op::Bxor => "MPI_BXOR",
        }
    }
}

/// Folds `from` into `into`, element by element, as `op` on `datatype` says.
///
/// # Errors
/// [`MpiError::Reduction`] for an operation the datatype does not have (a bitwise one on
/// floating point, any on bytes).
pub(super) fn reduce_into(
    into: &mut [u8],
    from: &[u8],
    datatype: Datatype,
    op: Op,
) -> Result<(), MpiError> {
    macro_rules! ints {
        ($t:ty) => {
            fold::<$t>(into, from, |a, b| match op {
                Op::Sum => a.wrapping_add(b),
                Op::Prod => a.wrapping_mul(b),
                Op::Max => a.max(b),
                Op::Min => a.min(b),
                Op::Land => <$t>::from((a != 0) && (b != 0)),
                Op::Lor => <$t>::from((a != 0) || (b != 0)),
                Op::Lxor => <$t>::from((a != 0) != (b != 0)),
                Op::Band => a & b,
                Op::Bor => a | b,
                Op::Bxor => a ^ b,
            })
        };
    }
    macro_rules! floats {
        ($t:ty) => {{
            let bitwise = matches!(op, Op::Band | Op::Bor | Op::Bxor);
            if bitwise {
                return Err(MpiError::Reduction {
                    op: op.name(),
                    datatype: datatype.name,
                });
            }
            fold::<$t>(into, from, |a, b| match op {
                Op::Sum => a + b,
                Op::Prod => a * b,
                Op::Max => a.max(b),
                Op::Min => a.min(b),
                Op::Land => <$t>::from(u8::from((a != 0.0) && (b != 0.0))),
                Op::Lor => <$t>::from(u8::from((a != 0.0) || (b != 0.0))),
                _ => <$t>::from(u8::from((a != 0.0) != (b != 0.0))),
            })
        }};
    }
    match datatype.element {
        Element::I8 => ints!(i8),
        Element::U8 => ints!(u8),
        Element::I16 => ints!(i16),
        Element::U16 => ints!(u16),
        Element::I32 => ints!(i32),
        Element::U32 => ints!(u32),
        Element::I64 => ints!(i64),
        Element::U64 => ints!(u64),
        Element::F32 => floats!(f32),
        Element::F64 => floats!(f64),
        Element::Opaque => {
            return Err(MpiError::Reduction {
                op: op.name(),
                datatype: datatype.name,
            });
        }
    }
    Ok(())
}

/// `into[i] = f(into[i], from[i])` over elements of type `T`, read and written unaligned.
fn fold<T: bytemuck::Pod>(into: &mut [u8], from: &[u8], f: impl Fn(T, T) -> T) {
    let size = std::mem::size_of::<T>();
    for (a, b) in into.chunks_exact_mut(size).zip(from.chunks_exact(size)) {
        let value = f(
            bytemuck::pod_read_unaligned(a),
            bytemuck::pod_read_unaligned(b),
        );
        a.copy_from_slice(bytemuck::bytes_of(&value));
    }
}
