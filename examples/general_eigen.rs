//! The eigenvalues of a non-symmetric matrix, with a faer program ported to teamalg beside it
//! (the table in `docs/kernels.md`, "Coming from faer"): the calls take the executor last
//! and return typed errors; the shapes are faer's.
//!
//! ```text
//! cargo run --release --example general_eigen
//! ```

use faer::{Mat, Side, c64};
use teamalg::Pool;
use teamalg::linalg::{self, Eigen, Options};

/// Runs the example (also from the tests: it checks its own results).
pub fn main() -> Result<(), teamalg::Error> {
    let team = Pool::builder().threads(2).build()?.into_team(2)?;
    // A damped oscillator chain: a real matrix with complex eigenvalues in conjugate pairs.
    let n = 60;
    let a = Mat::<f64>::from_fn(n, n, |i, j| match (i % 2, j as isize - i as isize) {
        (0, 1) => 1.0,
        (1, -1) => -1.0 - (i / 2) as f64 * 0.1,
        (1, 0) => -0.05,
        _ => 0.0,
    });

    // faer:     let evd = a.eigen()?;                   (global parallelism)
    // teamalg:  Eigen::new(&a, &team)?                  (the executor named)
    let evd = Eigen::new(&a, &team)?;
    let theirs = a.eigen().expect("faer's EVD");
    let (w, v) = (evd.eigenvalues(), evd.eigenvectors());
    assert_eq!(
        (v.nrows(), v.ncols()),
        (theirs.U().nrows(), theirs.U().ncols())
    );
    let ac = Mat::<c64>::from_fn(n, n, |i, j| c64::new(a[(i, j)], 0.0));
    let vd = Mat::<c64>::from_fn(n, n, |i, j| v[(i, j)] * w[j]);
    let residual = (&ac * v - vd).norm_max();
    println!("||A V - V D||_max = {residual:.1e}");
    assert!(residual < 1e-10);
    let damped = w.iter().all(|x| x.re < 0.0);
    println!("all {n} eigenvalues in the left half-plane: {damped}");
    assert!(damped);

    // faer:     let llt = a.llt(Side::Upper)?;          teamalg: the side is an option.
    let spd = &a * a.transpose() + Mat::<f64>::identity(n, n);
    let upper = Options::new().side(Side::Upper);
    let chol = linalg::Cholesky::new_with(&spd, &team, &upper)?;
    // faer:     llt.solve(&b)                           teamalg: chol.solve(&b, &team)?
    let b = Mat::<f64>::ones(n, 1);
    let x = chol.solve(&b, &team)?;
    assert!((&spd * &x - &b).norm_max() < 1e-10);
    // faer:     lu.P() is a PermRef                     teamalg: lu.p() too.
    let lu = linalg::Lu::new(&spd, &team)?;
    assert_eq!(lu.p().len(), n);
    Ok(())
}
