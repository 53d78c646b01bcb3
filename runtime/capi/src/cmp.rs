//! The comparison operators of the point-to-point synchronisation calls (`SHMEM_CMP_*`):
//! their values in `shmem.h` and their meaning for the runtime.
//!
//! Why start at 1: a comparison left at 0 (an uninitialised variable) is then an error that
//! names it, not a silent `==`. The values are those most implementations use.

use std::ffi::c_int;

use hw::Cmp;

use crate::fail::CallError;

/// `SHMEM_CMP_EQ`.
pub const EQ: c_int = 1;
/// `SHMEM_CMP_NE`.
pub const NE: c_int = 2;
/// `SHMEM_CMP_GT`.
pub const GT: c_int = 3;
/// `SHMEM_CMP_GE`.
pub const GE: c_int = 4;
/// `SHMEM_CMP_LT`.
pub const LT: c_int = 5;
/// `SHMEM_CMP_LE`.
pub const LE: c_int = 6;

/// Each `SHMEM_CMP_*` name (less its prefix) and value, as `shmem.h` defines them.
pub const NAMES: [(&str, c_int); 6] = [
    ("EQ", EQ),
    ("NE", NE),
    ("GT", GT),
    ("GE", GE),
    ("LT", LT),
    ("LE", LE),
];

/// The runtime's comparison for the C value `cmp`.
///
/// # Errors
/// [`CallError::Argument`] for a value that is no `SHMEM_CMP_*` constant.
pub(crate) fn cmp_of(cmp: c_int) -> Result<Cmp, CallError> {
    Ok(match cmp {
        EQ => Cmp::Eq,
        NE => Cmp::Ne,
        GT => Cmp::Gt,
        GE => Cmp::Ge,
        LT => Cmp::Lt,
        LE => Cmp::Le,
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
