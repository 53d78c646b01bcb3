//! Who moves a put's bytes, and how long each kind of mover takes: the copy curves of a
//! calibrated machine.
//!
//! On a GPU the rate of a put is often set by whoever copies it, not by the link: one thread
//! stores a word at a time, a warp or a block of threads copies at its own rate (which falls
//! once the source no longer sits in the SM's cache), the SMs of a whole GPU top out below
//! what the copy engine reaches over the same NVLink, and every host-initiated copy pays the
//! driver and the copy engine's start. A [`CopyCurve`] records one mover's time per put
//! against its size; the simulator paces each put by its mover's curve as well as by the
//! links (`docs/calibration.md`).

use std::fmt;

use hw::Copier;

/// How many points a [`CopyCurve`] may hold: one per size the bench measures a mover at.
pub const MAX_CURVE_POINTS: usize = 8;

/// A mover's time per put against the put's size: straight lines between the points in
/// order; beyond the last point the last line's slope, and below the first point the first
/// line's (down to a put of no bytes, which costs the mover's start-up: never below 0 ns).
/// One point is a rate from (0 B, 0 ns). Empty means the mover costs nothing and only the
/// links pace its puts.
///
/// Why points and not a formula: the measured curves have shapes no two-parameter formula
/// gives. One warp copies 64 KiB at 40 GB/s and 256 KiB at 12 GB/s, because a source that
/// no longer fits the SM's cache leaves the warp waiting on memory; the simulator has no
/// caches, so it takes the shape as measured and interpolates between the sizes measured.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CopyCurve {
    /// `(bytes, ns)`, bytes rising and ns not falling; only the first `len` count.
    points: [(u64, u64); MAX_CURVE_POINTS],
    len: u8,
}

/// A curve that is not a time per size.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CurveError {
    /// More points than a curve holds.
    #[error("a copy curve has at most {MAX_CURVE_POINTS} points; this one has {0}")]
    TooManyPoints(usize),
    /// A point of zero bytes: the curve starts at (0, 0) by itself.
    #[error("point {index} is of 0 bytes; the curve starts at (0 bytes, 0 ns) by itself")]
    ZeroBytes {
        /// 0-based.
        index: usize,
    },
    /// Sizes not rising, or a larger put taking less time.
    #[error(
        "point {index} ({bytes} bytes, {ns} ns) does not follow the one before it; sizes must \
         rise and times must not fall"
    )]
    NotRising {
        /// 0-based.
        index: usize,
        /// Its size.
        bytes: u64,
        /// Its time.
        ns: u64,
    },
}

impl CopyCurve {
    /// The curve with no points: the mover costs nothing.
    pub const FREE: CopyCurve = CopyCurve {
        points: [(0, 0); MAX_CURVE_POINTS],
        len: 0,
    };

    /// The curve through `points`, `(bytes, ns)` each.
    ///
    /// # Errors
    /// [`CurveError`] naming the first point out of order, of no bytes, or past
    /// [`MAX_CURVE_POINTS`].
    pub const fn new(points: &[(u64, u64)]) -> Result<CopyCurve, CurveError> {
        if points.len() > MAX_CURVE_POINTS {
            return Err(CurveError::TooManyPoints(points.len()));
        }
        let mut curve = CopyCurve::FREE;
        let mut i = 0;
        let (mut last_bytes, mut last_ns) = (0, 0);
        while i < points.len() {
            let (bytes, ns) = points[i];
            if bytes == 0 {
                return Err(CurveError::ZeroBytes { index: i });
            }
            if bytes <= last_bytes || ns < last_ns {
                return Err(CurveError::NotRising {
                    index: i,
                    bytes,
                    ns,
                });
            }
            curve.points[i] = (bytes, ns);
            (last_bytes, last_ns) = (bytes, ns);
            i += 1;
        }
        curve.len = points.len() as u8;
        Ok(curve)
    }

    /// The points, `(bytes, ns)` each.
    pub fn points(&self) -> &[(u64, u64)] {
        &self.points[..usize::from(self.len)]
    }

    /// Whether the mover costs nothing.
    pub fn is_free(&self) -> bool {
        self.len == 0
    }

    /// How long the mover takes to copy `bytes`, in whole nanoseconds (rounded up).
    pub fn ns(&self, bytes: u64) -> u64 {
        let points = self.points();
        let (&(x0, y0), &(x1, y1)) = match points {
            [] => return 0,
            // One point is a rate: the line through (0, 0).
            [only] => (&(0, 0), only),
            [first, second, ..] => (first, second),
        };
        if bytes < x0 {
            // Below the first point the first line goes on down to a put of no bytes (the
            // mover's start-up), never below 0 ns.
            let drop = u128::from(x0 - bytes) * u128::from(y1 - y0) / u128::from(x1 - x0);
            return u64::try_from(u128::from(y0).saturating_sub(drop)).unwrap_or(0);
        }
        // The segment that holds `bytes`, or the last one beyond the last point; either way
        // `bytes` lies at or past the segment's start.
        let upper = points
            .iter()
            .position(|&(b, _)| bytes <= b)
            .unwrap_or(points.len() - 1);
        let ((xa, ya), (xb, yb)) = match upper {
            0 => ((x0, y0), (x1, y1)),
            _ => (points[upper - 1], points[upper]),
        };
        let rise = u128::from(bytes - xa) * u128::from(yb - ya);
        let ns = u128::from(ya) + rise.div_ceil(u128::from(xb - xa));
        u64::try_from(ns).unwrap_or(u64::MAX)
    }

    /// The rate the curve tends to for large puts, in bytes per second: the last line's
    /// slope; `None` for a free mover or a last line with no slope.
    pub fn asymptotic_bytes_per_s(&self) -> Option<u64> {
        let points = self.points();
        let &(x1, y1) = points.last()?;
        let (x0, y0) = match points.len() {
            1 => (0, 0),
            n => points[n - 2],
        };
        let dy = y1 - y0;
        (dy > 0).then(|| ((u128::from(x1 - x0) * 1_000_000_000) / u128::from(dy)) as u64)
    }
}

impl fmt::Debug for CopyCurve {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.points()).finish()
    }
}

impl Default for CopyCurve {
    fn default() -> Self {
        CopyCurve::FREE
    }
}

/// The copy curve of each mover of a GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CopyTimes {
    /// [`Copier::Device`]: the PE's own puts.
    pub device: CopyCurve,
    /// [`Copier::Block`]: one thread block (measured with 1024 threads).
    pub block: CopyCurve,
    /// [`Copier::Warp`]: one warp.
    pub warp: CopyCurve,
    /// [`Copier::Thread`]: one thread.
    pub thread: CopyCurve,
    /// The copy engine: a put from the PE's own memory on a stream
    /// ([`hw::Queue::put_from_local`]), which a host call starts. Its time includes the
    /// driver's call and the engine's start.
    pub engine: CopyCurve,
}

impl CopyTimes {
    /// Every mover costs nothing.
    pub const FREE: CopyTimes = CopyTimes {
        device: CopyCurve::FREE,
        block: CopyCurve::FREE,
        warp: CopyCurve::FREE,
        thread: CopyCurve::FREE,
        engine: CopyCurve::FREE,
    };

    /// Each mover's curve with its name, the key of a topology file's `[timing.copy]`.
    pub fn named(&self) -> [(&'static str, &CopyCurve); 5] {
        [
            ("device", &self.device),
            ("block", &self.block),
            ("warp", &self.warp),
            ("thread", &self.thread),
            ("engine", &self.engine),
        ]
    }

    /// The curve of `copier`.
    pub fn of(&self, copier: Copier) -> &CopyCurve {
        match copier {
            Copier::Device => &self.device,
            Copier::Block(_) => &self.block,
            Copier::Warp(_) => &self.warp,
            Copier::Thread(_) => &self.thread,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_curve_interpolates_and_extends_its_first_and_last_lines() {
        let curve = CopyCurve::new(&[(1000, 200), (3000, 300), (5000, 1300)]).unwrap();
        // The first line goes down to a start-up of 150 ns at 0 bytes.
        assert_eq!(curve.ns(0), 150);
        assert_eq!(curve.ns(500), 175);
        assert_eq!(curve.ns(1000), 200);
        assert_eq!(curve.ns(2000), 250);
        assert_eq!(curve.ns(4000), 800);
        assert_eq!(curve.ns(7000), 2300);
        assert_eq!(curve.asymptotic_bytes_per_s(), Some(2_000_000_000));
        // A first line steeper than its point's rate stops at 0 ns.
        let steep = CopyCurve::new(&[(1000, 100), (2000, 1100)]).unwrap();
        assert_eq!(steep.ns(500), 0);
        assert_eq!(steep.ns(950), 50);
    }

    #[test]
    fn one_point_is_a_rate_and_no_point_is_free() {
        let curve = CopyCurve::new(&[(1000, 2000)]).unwrap();
        assert_eq!(curve.ns(3000), 6000);
        assert_eq!(curve.ns(1), 2);
        assert_eq!(CopyCurve::FREE.ns(1 << 30), 0);
        assert!(CopyCurve::FREE.is_free());
        assert_eq!(CopyCurve::FREE.asymptotic_bytes_per_s(), None);
    }

    #[test]
    fn malformed_curves_are_refused_naming_the_point() {
        assert_eq!(
            CopyCurve::new(&[(100, 5), (100, 6)]),
            Err(CurveError::NotRising {
                index: 1,
                bytes: 100,
                ns: 6
            })
        );
        assert_eq!(
            CopyCurve::new(&[(100, 5), (200, 4)]),
            Err(CurveError::NotRising {
                index: 1,
                bytes: 200,
                ns: 4
            })
        );
        assert_eq!(
            CopyCurve::new(&[(0, 5)]),
            Err(CurveError::ZeroBytes { index: 0 })
        );
        assert_eq!(
            CopyCurve::new(&[(1, 1); 9]),
            Err(CurveError::TooManyPoints(9))
        );
    }
}
