//! Factor once, solve many: an LU and a Cholesky on a held team, each reused for several
//! right-hand sides, with every error a user can meet handled.
//!
//! ```text
//! cargo run --release --example factor_solve
//! ```

use faer::Mat;
use teamalg::Pool;
use teamalg::linalg::{self, Cholesky, LinalgError, Lu};

/// Factors `a` once and hands the factorization back: the owned `Lu` keeps its own copy.
fn factor(a: &Mat<f64>, team: &teamalg::Team) -> Result<Lu<'static, f64>, LinalgError> {
    Lu::new(a, team)
}

fn main() -> Result<(), teamalg::Error> {
    let n = 400;
    let team = Pool::builder()
        .build()?
        .into_team(teamalg::available_cpus())?;
    let a = Mat::<f64>::from_fn(n, n, |i, j| {
        if i == j {
            n as f64
        } else {
            ((i * 3 + j * 5) % 7) as f64 / 7.0
        }
    });

    // LU: factor once (owned, returned from a function), then solve for many right-hand sides.
    let lu = factor(&a, &team)?;
    let mut worst: f64 = 0.0;
    for k in 0..8 {
        let b = Mat::<f64>::from_fn(n, 2, |i, j| (i + k + j) as f64);
        let x = lu.solve(&b, &team)?;
        let r = &a * &x - &b;
        worst = worst.max(r.norm_max() / b.norm_max());
    }
    println!("LU of {n}: 8 solves, worst relative residual {worst:.1e}");

    // Cholesky of the symmetric positive definite A^T A + I, in place (no copy).
    let mut s = a.transpose() * &a + Mat::<f64>::identity(n, n);
    let chol = linalg::cholesky(s.as_mut(), &team)?;
    let b = Mat::<f64>::ones(n, 3);
    let x = chol.solve(&b, &team)?;
    println!("Cholesky of {n}: solved, x[0] = {:.6}", x[(0, 0)]);

    // The errors: each is a value, nothing is written by a call that fails its checks.
    let short = Mat::<f64>::ones(n - 1, 1);
    match lu.solve(&short, &team) {
        Err(LinalgError::ShapeMismatch {
            operand,
            dim,
            expected,
            found,
            ..
        }) => println!("{operand} has {found} {dim}, the factorization needs {expected}"),
        other => panic!("expected a shape mismatch, got {other:?}"),
    }
    let mut singular = Mat::<f64>::zeros(3, 3);
    singular[(0, 0)] = 1.0;
    let lu0 = Lu::new(&singular, &team)?;
    match lu0.solve(Mat::<f64>::ones(3, 1), &team) {
        Err(e @ LinalgError::Singular { .. }) => println!("{e}"),
        other => panic!("expected a singular matrix, got {other:?}"),
    }
    let indefinite = Mat::<f64>::from_fn(2, 2, |i, j| [[1.0, 2.0], [2.0, 1.0]][i][j]);
    match Cholesky::new(&indefinite, &team) {
        Err(e @ LinalgError::NotPositiveDefinite { .. }) => println!("{e}"),
        other => panic!(
            "expected a matrix that is not positive definite, got {:?}",
            other.err()
        ),
    }
    let mut nan = Mat::<f64>::identity(2, 2);
    nan[(1, 0)] = f64::NAN;
    match Cholesky::new(&nan, &team) {
        Err(e @ LinalgError::NotFinite { .. }) => println!("{e}"),
        other => panic!("expected a NaN to be refused, got {:?}", other.err()),
    }
    // Every call applies the same NaN policy: an LU refuses it too.
    match Lu::new(&nan, &team) {
        Err(e @ LinalgError::NotFinite { .. }) => println!("{e}"),
        other => panic!("expected a NaN to be refused, got {:?}", other.err()),
    }
    Ok(())
}
