//! The comparison operators of the point-to-point synchronisation calls (`SHMEM_CMP_*`):
//! their values in `shmem.h` and their meaning for the runtime.
//!
//! Why start at 1: a comparison left at 0 (an uninitialised variable) is then an error that
//! names it, not a silent `==`. The values are those most implementations use.

use std::ffi::c_int;

use hw::Cmp;

use crate::fail::CallError;

/// Each `SHMEM_CMP_*` name (less its prefix) and value, as `shmem.h` defines them.
pub const NAMES: [(&str, c_int); 6] = [
    ("EQ", 1),
    ("NE", 2),
    ("GT", 3),
    ("GE", 4),
    ("LT", 5),
    ("LE", 6),
];

/// The runtime's comparison for the C value `cmp`.
///
/// # Errors
/// [`CallError::Argument`] for a value that is no `SHMEM_CMP_*` constant.
pub(crate) fn cmp_of(cmp: c_int) -> Result<Cmp, CallError> {
    Ok(match cmp {
        1 => Cmp::Eq,
        2 => Cmp::Ne,
        3 => Cmp::Gt,
        4 => Cmp::Ge,
        5 => Cmp::Lt,
        6 => Cmp::Le,
        other => {
            return Err(CallError::Argument(format!(
                "comparison {other} is not one of SHMEM_CMP_EQ, _NE, _GT, _GE, _LT, _LE; pass \
                 one of those constants of shmem.h"
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_maps_to_its_comparison() {
        let expected = [Cmp::Eq, Cmp::Ne, Cmp::Gt, Cmp::Ge, Cmp::Lt, Cmp::Le];
        for ((_, value), cmp) in NAMES.iter().zip(expected) {
            assert_eq!(cmp_of(*value).unwrap(), cmp);
        }
        let err = cmp_of(0).unwrap_err().to_string();
        assert!(err.contains("comparison 0 is not one of"), "{err}");
    }
}
