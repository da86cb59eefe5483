//! A saddle-point (KKT) system, `[[H, C^T], [C, 0]] [x; y] = [g; d]`: symmetric and
//! indefinite, so no Cholesky. Bunch-Kaufman factors it at half an LU's work and keeps the
//! symmetry; its inertia (n positive, m negative eigenvalues) says the system is well posed;
//! `LDL^H` without pivoting fails on the zero block, as it must.
//!
//! ```text
//! cargo run --release --example symmetric_indefinite
//! ```

use faer::Mat;
use teamalg::Pool;
use teamalg::linalg::{self, Lblt, Ldlt, LinalgError, Lu};

/// Runs the example (also from the tests: it checks its own results).
pub fn main() -> Result<(), teamalg::Error> {
    let team = Pool::builder().threads(2).build()?.into_team(2)?;
    // H: a positive definite 1-D Laplacian of order n; C: m constraints averaging neighbours.
    let (n, m) = (300, 40);
    let k = Mat::<f64>::from_fn(n + m, n + m, |i, j| match (i < n, j < n) {
        (true, true) if i == j => 2.0,
        (true, true) if i.abs_diff(j) == 1 => -1.0,
        (false, true) if j / (n / m) == i - n => 1.0,
        (true, false) if i / (n / m) == j - n => 1.0,
        _ => 0.0,
    });
    let rhs = Mat::<f64>::from_fn(n + m, 1, |i, _| if i < n { 1.0 } else { 0.5 });

    let f = Lblt::new(&k, &team)?;
    let inertia = f.inertia();
    println!("inertia: {inertia:?}");
    assert_eq!(
        (inertia.positive, inertia.negative, inertia.zero),
        (n, m, 0)
    );
    let z = f.solve(&rhs, &team)?;
    let residual = (&k * &z - &rhs).norm_max();
    println!("Bunch-Kaufman: ||K z - r||_max = {residual:.1e}");
    assert!(residual < 1e-10);
    println!("ln|det K| = {:.3}", f.log_abs_det()?);

    // The same solve through LU, to compare.
    let z_lu = Lu::new(&k, &team)?.solve(&rhs, &team)?;
    assert!((&z - &z_lu).norm_max() < 1e-9);

    // LDL^H without pivoting meets a zero pivot in the constraint block (after the
    // elimination it is -C H^-1 C^T, nonzero) only when the ordering puts a zero first: here
    // the constraints first.
    let perm: Vec<usize> = (n..n + m).chain(0..n).collect();
    let k2 = Mat::<f64>::from_fn(n + m, n + m, |i, j| k[(perm[i], perm[j])]);
    match Ldlt::new(&k2, &team) {
        Err(LinalgError::Singular { index, .. }) => println!("LDL^H: zero pivot at {index}"),
        other => panic!("expected a zero pivot, got {other:?}"),
    }
    // In the original order it exists (H first is positive definite), with the same inertia.
    let ldlt = Ldlt::new(&k, &team)?;
    assert_eq!(ldlt.inertia(), inertia);
    let w = linalg::self_adjoint_eigenvalues(&k, &team)?;
    assert_eq!(w.iter().filter(|&&x| x < 0.0).count(), m);
    Ok(())
}
