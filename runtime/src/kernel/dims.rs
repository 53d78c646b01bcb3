//! Sizes and indices of a kernel launch.

use std::fmt;

/// Threads of a warp: the group that `_warp` calls meet in, as on NVIDIA GPUs.
pub const WARP_SIZE: u32 = 32;

/// The most threads a block may have: CUDA's limit.
pub const MAX_BLOCK_THREADS: u64 = 1024;

/// The most threads one launch may have: every thread's state is held at once.
pub const MAX_LAUNCH_THREADS: u64 = 1 << 20;

/// A size or index in up to three dimensions, as CUDA's `dim3`: `x` varies fastest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// The first (fastest) dimension.
    pub x: u32,
    /// The second dimension.
    pub y: u32,
    /// The third (slowest) dimension.
    pub z: u32,
}

impl Dim3 {
    /// A size or index of `x` by `y` by `z`.
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }

    /// `n` along `x` only: `dim3(n)` in CUDA.
    pub const fn linear(n: u32) -> Dim3 {
        Dim3::new(n, 1, 1)
    }

    /// `x` by `y`: `dim3(x, y)` in CUDA.
    pub const fn plane(x: u32, y: u32) -> Dim3 {
        Dim3::new(x, y, 1)
    }

    /// How many elements a size of these dimensions has.
    pub fn count(self) -> u64 {
        u64::from(self.x) * u64::from(self.y) * u64::from(self.z)
    }

    /// The index of element `rank` (`x` fastest) of a size of these dimensions.
    pub(crate) fn index_of(self, rank: u32) -> Dim3 {
        Dim3 {
            x: rank % self.x,
            y: rank / self.x % self.y,
            z: rank / self.x / self.y,
        }
    }

    /// Checks a grid or block size: no dimension may be zero, and a block has at most
    /// [`MAX_BLOCK_THREADS`] threads.
    pub(crate) fn invalid(self, is_block: bool) -> Option<&'static str> {
        if self.x == 0 || self.y == 0 || self.z == 0 {
            Some("every dimension must be at least 1")
        } else if is_block && self.count() > MAX_BLOCK_THREADS {
            Some("a block has at most 1024 threads; launch more blocks instead")
        } else {
            None
        }
    }
}

impl fmt::Display for Dim3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {}, {})", self.x, self.y, self.z)
    }
}

#[cfg(test)]
mod tests {
    use super::Dim3;

    #[test]
    fn index_of_counts_x_fastest() {
        let size = Dim3::new(4, 3, 2);
        let all: Vec<Dim3> = (0..24).map(|r| size.index_of(r)).collect();
        assert_eq!(all[0], Dim3::new(0, 0, 0));
        assert_eq!(all[1], Dim3::new(1, 0, 0));
        assert_eq!(all[4], Dim3::new(0, 1, 0));
        assert_eq!(all[12], Dim3::new(0, 0, 1));
        assert_eq!(all[23], Dim3::new(3, 2, 1));
    }

    #[test]
    fn sizes_are_checked() {
        assert!(Dim3::linear(1024).invalid(true).is_none());
        assert!(Dim3::plane(32, 33).invalid(true).is_some());
        assert!(Dim3::plane(32, 33).invalid(false).is_none());
        assert!(Dim3::new(1, 0, 1).invalid(false).is_some());
    }
}
