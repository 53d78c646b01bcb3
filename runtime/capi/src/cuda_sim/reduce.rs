//! The reductions of kernels on the simulator (`nvshmem_TYPE_OP_reduce` and their `_warp`
//! and `_block` forms): the device ABI's type and operator codes turned into the element type
//! and the combining function of the kernel model's [`Scoped::reduce`].
//!
//! `half` and `bfloat16` elements are reduced as their 16-bit patterns: each combination
//! converts both to `f32`, computes there and rounds back to nearest even, as one GPU half
//! instruction does (the sum or product of two halves is exact in `f32`).

use std::ffi::{c_int, c_void};

use rshmem::{Element, Scoped, Sym, Team};

use crate::cuda_sim::{fiber, half};
use crate::fail::CallError;
use crate::state::{Backend, Pe};

/// The operators, as `device_abi.h` numbers them.
const NAMES: [&str; 7] = ["sum", "prod", "min", "max", "and", "or", "xor"];

/// Reduces `nelems` elements of `type_code` with operator `op` over the PEs of `team`.
#[allow(clippy::too_many_arguments)] // The device ABI's operands, the scope and the team.
pub(crate) fn reduce(
    pe: &Pe,
    scope: Scoped<'static, Backend>,
    team: &Team,
    type_code: c_int,
    op: c_int,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
) -> Result<c_int, CallError> {
    let name = usize::try_from(op)
        .ok()
        .and_then(|i| NAMES.get(i))
        .ok_or_else(|| CallError::Argument(format!("reduction operator {op} is unknown")))?;
    macro_rules! integer {
        ($t:ty) => {
            run::<$t>(
                pe,
                scope,
                team,
                dest,
                source,
                nelems,
                name,
                match op {
                    0 => |a: $t, b: $t| a.wrapping_add(b),
                    1 => |a: $t, b: $t| a.wrapping_mul(b),
                    2 => |a: $t, b: $t| a.min(b),
                    3 => |a: $t, b: $t| a.max(b),
                    4 => |a: $t, b: $t| a & b,
                    5 => |a: $t, b: $t| a | b,
                    _ => |a: $t, b: $t| a ^ b,
                },
            )
        };
    }
    macro_rules! float {
        ($t:ty) => {
            run::<$t>(
                pe,
                scope,
                team,
                dest,
                source,
                nelems,
                name,
                match op {
                    0 => |a: $t, b: $t| a + b,
                    1 => |a: $t, b: $t| a * b,
                    2 => |a: $t, b: $t| a.min(b),
                    3 => |a: $t, b: $t| a.max(b),
                    _ => {
                        return Err(CallError::Argument(format!(
                            "the {name} reduction is for integers; floating-point elements have \
                         sum, prod, min and max"
                        )));
                    }
                },
            )
        };
    }
    match (type_code >> 8, type_code & 0xff) {
        (0, 1) => integer!(i8),
        (0, 2) => integer!(i16),
        (0, 4) => integer!(i32),
        (0, 8) => integer!(i64),
        (1, 1) => integer!(u8),
        (1, 2) => integer!(u16),
        (1, 4) => integer!(u32),
        (1, 8) => integer!(u64),
        (kind @ (2 | 3), 2) => {
            let format = if kind == 2 {
                half::Format::Half
            } else {
                half::Format::Bfloat16
            };
            sixteen_bit(pe, scope, team, op, name, dest, source, nelems, format)
        }
        (2, 4) => float!(f32),
        (2, 8) => float!(f64),
        (kind, size) => Err(CallError::Argument(format!(
            "reductions of elements of {size} bytes (kind {kind}) are unknown"
        ))),
    }
}

/// A reduction of `half` or `bfloat16` elements (`format`), as their bits.
#[allow(clippy::too_many_arguments)] // The device ABI's operands, the scope and the team.
fn sixteen_bit(
    pe: &Pe,
    scope: Scoped<'static, Backend>,
    team: &Team,
    op: c_int,
    name: &'static str,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    format: half::Format,
) -> Result<c_int, CallError> {
    // The combining function is a plain `fn`, so each operator and format is its own closure.
    macro_rules! combine {
        ($format:expr) => {
            match op {
                0 => |a, b| $format.apply(a, b, |x, y| x + y),
                1 => |a, b| $format.apply(a, b, |x, y| x * y),
                2 => |a, b| $format.apply(a, b, f32::min),
                3 => |a, b| $format.apply(a, b, f32::max),
                _ => {
                    return Err(CallError::Argument(format!(
                        "the {name} reduction is for integers; half and bfloat16 elements have \
                         sum, prod, min and max"
                    )));
                }
            }
        };
    }
    let combine: fn(u16, u16) -> u16 = match format {
        half::Format::Half => combine!(half::Format::Half),
        half::Format::Bfloat16 => combine!(half::Format::Bfloat16),
    };
    run::<u16>(pe, scope, team, dest, source, nelems, name, combine)
}

#[allow(clippy::too_many_arguments)] // The device ABI's operands, the scope and the team.
fn run<T: Element>(
    pe: &Pe,
    scope: Scoped<'static, Backend>,
    team: &Team,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    name: &'static str,
    combine: fn(T, T) -> T,
) -> Result<c_int, CallError> {
    let dest: Sym<T> = pe.sym(dest.cast::<T>().cast_const(), nelems)?;
    let source: Sym<T> = pe.sym(source.cast::<T>(), nelems)?;
    fiber::block_on(scope.team_reduce(team, dest, source, name, combine))?;
    Ok(0)
}
