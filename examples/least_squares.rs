//! Least squares on rank-deficient data, with the condition estimates that tell when a plain
//! solve is meaningless: QR refuses, the pivoted QR and the SVD give the minimum-norm answer,
//! and an LU asked to refuse an ill-conditioned system does.
//!
//! ```text
//! cargo run --release --example least_squares
//! ```

use faer::Mat;
use teamalg::Pool;
use teamalg::linalg::{self, ColPivQr, LinalgError, Lu, Options, Qr, Svd};

/// Runs the example (also from the tests: it checks its own results).
pub fn main() -> Result<(), teamalg::Error> {
    let team = Pool::builder().threads(2).build()?.into_team(2)?;

    // A model with three features, the third the sum of the first two: rank 2.
    let (m, n) = (200, 3);
    let a = Mat::<f64>::from_fn(m, n, |i, j| {
        let t = i as f64 / m as f64;
        match j {
            0 => 1.0,
            1 => t,
            _ => 1.0 + t,
        }
    });
    let b = Mat::<f64>::from_fn(m, 1, |i, _| 2.0 + 3.0 * i as f64 / m as f64);

    // QR's estimate of R's condition sees the dependence; its least squares refuses, naming
    // the rank it found and the call that handles it.
    let qr = Qr::new(&a, &team)?;
    println!("QR: rcond(R) = {:.1e}", qr.rcond()?);
    match qr.lstsq(&b, &team) {
        Err(LinalgError::RankDeficient { rank, of, .. }) => {
            println!("QR least squares refused: estimated rank {rank} of {of}")
        }
        other => panic!("a rank-deficient model must be refused, got {other:?}"),
    }

    // The SVD's least squares: the solution of least norm among all that fit best.
    let svd = Svd::new_thin(&a, &team)?;
    let x = svd.lstsq(&b, &team)?;
    let residual = (&a * &x - &b).norm_l2();
    println!(
        "SVD: rank {} of {n}, cond {:.1e}; x = ({:.4}, {:.4}, {:.4}), residual {residual:.1e}",
        svd.rank(None),
        svd.cond(),
        x[(0, 0)],
        x[(1, 0)],
        x[(2, 0)],
    );
    assert_eq!(svd.rank(None), 2);
    assert!(residual < 1e-10);

    // The pseudo-inverse gives the same solution.
    let p = svd.pseudoinverse(&team)?;
    assert!((&p * &b - &x).norm_max() < 1e-10);

    // The pivoted QR finds the same rank and the same minimum-norm solution at about the cost
    // of a QR (a complete orthogonal decomposition, as LAPACK's gelsy).
    let cp = ColPivQr::new(&a, &team)?;
    let y = cp.lstsq(&b, &team)?;
    println!(
        "pivoted QR: rank {}, |x - x_svd| = {:.1e}",
        cp.rank(None),
        (&y - &x).norm_max()
    );
    assert_eq!(cp.rank(None), 2);
    assert!((&y - &x).norm_max() < 1e-10);

    // A square system: the LU's condition estimate warns before a solve loses digits.
    let hilbert = Mat::<f64>::from_fn(10, 10, |i, j| 1.0 / (i + j + 1) as f64);
    let lu = Lu::new(&hilbert, &team)?;
    let rcond = lu.rcond(linalg::norm_l1(&hilbert))?;
    let digits = (-rcond.log10()).ceil();
    println!("Hilbert 10: rcond {rcond:.1e}: a solve may lose about {digits} digits");
    assert!(rcond < 1e-12);

    // Asked to, the LU's solves refuse such a system, with the estimate.
    let guarded = Options::new().min_rcond(1e-10);
    let lu = Lu::new_with(&hilbert, &team, &guarded)?;
    match lu.solve(&Mat::<f64>::ones(10, 1), &team) {
        Err(e @ LinalgError::IllConditioned { .. }) => println!("guarded LU: {e}"),
        other => panic!("an ill-conditioned system must be refused, got {other:?}"),
    }
    Ok(())
}
