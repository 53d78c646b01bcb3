//! The NVSHMEM guide's distributed matrix multiply as a kernel: C = A x B with the rows of A and C
//! split between PEs (`ROWS` each) and the rows of B dealt round-robin (row `k` on PE
//! `k % n`). Each thread computes one element of this PE's rows of C, reading every element
//! of B it needs with `g` from the PE that holds it; the gets of all threads are in flight
//! together. Every element is checked.

use hw::Backend;
use rshmem::{Dim3, Shmem, ShmemError};

use super::PeOutcome;

/// Rows of A and C per PE.
const ROWS: u32 = 2;
/// The shared dimension: rows of B.
const K: u32 = 32;
/// Columns of B and C.
const COLS: u32 = 32;

/// A's element at (`row`, `k`): small integers, so every product and sum is exact.
fn a(row: u32, k: u32) -> f64 {
    f64::from((row * 3 + k * 5) % 7) - 3.0
}

/// B's element at (`k`, `col`).
fn b(k: u32, col: u32) -> f64 {
    f64::from((k * 2 + col * 7) % 5) - 2.0
}

pub(super) fn run<B: Backend>(sh: &Shmem<B>) -> Result<PeOutcome, ShmemError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    // This PE's rows of B: k = me, me + n, ...; local row k / n.
    let b_rows = K.div_ceil(n);
    let b_local = sh.calloc::<f64>((b_rows * COLS) as usize)?;
    let block = Dim3::plane(COLS, ROWS);
    let wrong = sh.launch_kernel(Dim3::linear(1), block, async |t| {
        let (col, my_row) = (t.thread_idx().x, t.thread_idx().y);
        // Thread `r` fills local row `r` of B, then every PE's B is complete.
        let local_row = t.thread_rank();
        let k = local_row * n + me;
        if local_row < b_rows && k < K {
            let row: Vec<f64> = (0..COLS).map(|c| b(k, c)).collect();
            let at = (local_row * COLS) as usize;
            t.set_local(b_local.slice(at..at + COLS as usize)?, &row)?;
        }
        t.block().barrier_all().await?;
        let row = me * ROWS + my_row;
        let mut sum = 0.0;
        for k in 0..K {
            let b_kc = t
                .g(b_local.at(((k / n) * COLS + col) as usize)?, k % n)
                .await?;
            sum += a(row, k) * b_kc;
        }
        let want: f64 = (0..K).map(|k| a(row, k) * b(k, col)).sum();
        Ok(sum != want)
    })?;
    let wrong = wrong.into_iter().filter(|&w| w).count();
    // Collective: no PE frees its rows of B while another still reads them.
    sh.free(b_local)?;
    Ok(PeOutcome::checked(
        wrong == 0,
        format!("PE {me}: {wrong} of {} elements of C wrong", ROWS * COLS),
    ))
}
