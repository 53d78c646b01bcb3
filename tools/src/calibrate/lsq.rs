//! The linear algebra of the fit: one regularised Gauss-Newton step, solved by the normal
//! equations. The systems have one row per parameter (five), so plain Gaussian elimination is
//! all it takes.

/// The step `dx` that minimises `|J dx + r|² + ridge |x + dx|²`, where `J` holds one row per
/// residual (`jacobian[i][j]`: how residual `i` moves per unit of parameter `j`), `r` the
/// residuals and `x` how far the parameters are from where the ridge pulls them. `None` when
/// the system is singular, which a positive ridge prevents.
pub(super) fn step(
    jacobian: &[Vec<f64>],
    residuals: &[f64],
    x: &[f64],
    ridge: f64,
) -> Option<Vec<f64>> {
    let n = x.len();
    // Normal equations: (JᵀJ + ridge I) dx = -(Jᵀr + ridge x).
    let mut a = vec![vec![0.0; n]; n];
    let mut b = vec![0.0; n];
    for (row, &r) in jacobian.iter().zip(residuals) {
        for j in 0..n {
            b[j] -= row[j] * r;
            for k in 0..n {
                a[j][k] += row[j] * row[k];
            }
        }
    }
    for j in 0..n {
        a[j][j] += ridge;
        b[j] -= ridge * x[j];
    }
    solve(a, b)
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting; `None` if `a` is singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < f64::MIN_POSITIVE {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let pivot_row = a[col].clone();
        for row in col + 1..n {
            let factor = a[row][col] / pivot_row[col];
            for (x, p) in a[row][col..].iter_mut().zip(&pivot_row[col..]) {
                *x -= factor * p;
            }
            b[row] -= factor * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let known: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - known) / a[row][row];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_small_system() {
        let a = vec![vec![0.0, 2.0], vec![3.0, 1.0]];
        let x = solve(a, vec![4.0, 5.0]).unwrap();
        assert!(
            (x[0] - 1.0).abs() < 1e-12 && (x[1] - 2.0).abs() < 1e-12,
            "{x:?}"
        );
        assert_eq!(
            solve(vec![vec![1.0, 2.0], vec![2.0, 4.0]], vec![1.0, 2.0]),
            None
        );
    }

    #[test]
    fn a_step_lands_on_a_linear_models_least_squares_solution() {
        // Residuals r = J x - y for y = (1, 2, 3.1) and J = [[1, 0], [0, 1], [1, 1]], from x = 0.
        let jacobian = vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![1.0, 1.0]];
        let residuals = [-1.0, -2.0, -3.1];
        let dx = step(&jacobian, &residuals, &[0.0, 0.0], 0.0).unwrap();
        // The least-squares solution of x0 = 1, x1 = 2, x0 + x1 = 3.1.
        assert!(
            (dx[0] - 1.0333).abs() < 1e-3 && (dx[1] - 2.0333).abs() < 1e-3,
            "{dx:?}"
        );
        // A parameter no residual depends on stays where the ridge holds it.
        let jacobian = vec![vec![1.0, 0.0]];
        let dx = step(&jacobian, &[-1.0], &[0.0, 0.5], 1e-6).unwrap();
        assert!(
            (dx[0] - 1.0).abs() < 1e-5 && (dx[1] + 0.5).abs() < 1e-9,
            "{dx:?}"
        );
    }
}
