//! The self-adjoint eigendecomposition: vibration modes of a chain of masses and springs,
//! on a held team, and the eigenvalues alone.
//!
//! ```text
//! cargo run --release --example self_adjoint_eigen
//! ```

use faer::Mat;
use teamalg::Pool;
use teamalg::linalg::{self, SelfAdjointEigen};

/// Runs the example (also from the tests: it checks its own results).
pub fn main() -> Result<(), teamalg::Error> {
    let team = Pool::builder().threads(2).build()?.into_team(2)?;

    // The stiffness matrix of n unit masses joined by unit springs, both ends fixed: its
    // eigenvalues are 4 sin^2(k pi / (2 (n + 1))), k = 1..n.
    let n = 300;
    let k = Mat::<f64>::from_fn(n, n, |i, j| match i.abs_diff(j) {
        0 => 2.0,
        1 => -1.0,
        _ => 0.0,
    });

    let evd = SelfAdjointEigen::new(&k, &team)?;
    let exact = |j: usize| {
        let x = (j + 1) as f64 * std::f64::consts::PI / (2.0 * (n + 1) as f64);
        4.0 * x.sin().powi(2)
    };
    let worst = (0..n)
        .map(|j| (evd.w()[j] - exact(j)).abs())
        .fold(0.0, f64::max);
    println!(
        "lowest modes {:.6} {:.6} {:.6}; largest error against the formula {worst:.1e}",
        evd.w()[0],
        evd.w()[1],
        evd.w()[2]
    );
    assert!(worst < 1e-12);

    // K U = U diag(w), U orthonormal.
    let u = evd.u();
    let residual = (&k * u
        - u * Mat::<f64>::from_fn(n, n, |i, j| if i == j { evd.w()[i] } else { 0.0 }))
    .norm_max();
    assert!(residual < 1e-12, "{residual:e}");

    // The values alone cost less: no vectors are formed.
    let w = linalg::self_adjoint_eigenvalues(&k, &team)?;
    assert!((w[n - 1] - evd.w()[n - 1]).abs() < 1e-12);
    println!("highest mode {:.6} (values only)", w[n - 1]);
    Ok(())
}
