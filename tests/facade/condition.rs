//! Condition estimates (`rcond` of LU, Cholesky and QR) against the true reciprocal condition
//! number, computed from the explicit inverse: the estimate is never below the truth (the
//! estimator finds a lower bound of `||A^{-1}||_1`) and within a factor of 10 above it, on
//! well-conditioned, graded, Hilbert, Kahan and nearly singular matrices, real and complex.

use faer::traits::math_utils::{abs, abs1, from_f64};
use faer::{c64, Mat, MatRef};
use teamalg::kernels::par::Executor;
use teamalg::linalg::{norm_l1, Cholesky, Lu, Qr};
use teamalg::Exec;

#[path = "../common/sample.rs"]
mod sample;
use sample::{mat, spd, team, Sample};

/// `||X||_1` with `|re| + |im|` per entry (how `linalg::norm_l1` measures `A`), written out.
fn norm1_abs1<T: Sample>(x: MatRef<'_, T>) -> f64 {
    (0..x.ncols())
        .map(|j| {
            (0..x.nrows())
                .map(|i| to_f64::<T>(abs1(&x[(i, j)])))
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

/// `||X||_1` with the modulus per entry (how the estimator measures `A^{-1}`).
fn norm1_modulus<T: Sample>(x: MatRef<'_, T>) -> f64 {
    (0..x.ncols())
        .map(|j| {
            (0..x.nrows())
                .map(|i| to_f64::<T>(abs(&x[(i, j)])))
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

fn to_f64<T: Sample>(r: T::Real) -> f64 {
    let t: T = faer::traits::math_utils::from_real(&r);
    T::err(t, from_f64(0.0))
}

/// The estimate is an upper bound of `truth`, within a factor of 10.
fn assert_close(what: &str, estimate: f64, truth: f64) {
    assert!(
        estimate >= truth * (1.0 - 1e-6) && estimate <= 10.0 * truth,
        "{what}: rcond estimate {estimate:e} against {truth:e}"
    );
}

/// The families: well-conditioned, graded columns, Hilbert, and a nearly singular matrix
/// (a rank-one update of the identity that almost cancels it).
fn general<T: Sample>(n: usize) -> Vec<(&'static str, Mat<T>)> {
    let mut well = mat::<T>(n, n, 0.3);
    for i in 0..n {
        well[(i, i)] += from_f64::<T>(n as f64);
    }
    let graded = Mat::<T>::from_fn(n, n, |i, j| {
        let x = well[(i, j)];
        faer::traits::math_utils::mul_real(&x, &from_f64::<T::Real>(10f64.powi(-(j as i32) / 2)))
    });
    let nearly = Mat::<T>::from_fn(n, n, |i, j| {
        let v = 1.0 / (1.0 + i as f64) / (1.0 + j as f64);
        let u = (1.0 + i as f64) * (1.0 + j as f64) / (n * n) as f64;
        from_f64::<T>(if i == j { 1.0 } else { 0.0 } + 1e-9 * v + u)
    });
    vec![
        ("well-conditioned", well),
        ("graded", graded),
        ("Hilbert", hilbert::<T>(n.min(9))),
        ("nearly singular", nearly),
    ]
}

fn hilbert<T: Sample>(n: usize) -> Mat<T> {
    Mat::from_fn(n, n, |i, j| from_f64::<T>(1.0 / (i + j + 1) as f64))
}

/// Kahan's upper triangular matrix (`c = cos t`, `s = sin t`): `R = diag(1, s, .., s^{n-1})
/// (I - c N)`, with `N` ones above the diagonal. Its diagonal is not small, yet it is nearly
/// singular: the matrix on which a QR's diagonal misleads.
fn kahan<T: Sample>(n: usize, t: f64) -> Mat<T> {
    let (s, c) = t.sin_cos();
    Mat::from_fn(n, n, |i, j| {
        let scale = s.powi(i as i32);
        from_f64::<T>(match i.cmp(&j) {
            std::cmp::Ordering::Equal => scale,
            std::cmp::Ordering::Less => -c * scale,
            std::cmp::Ordering::Greater => 0.0,
        })
    })
}

fn lu_matches<T: Sample>(exec: &dyn Executor) {
    for n in [1, 2, 7, 40] {
        for (name, a) in general::<T>(n) {
            let lu = Lu::new(&a, exec).unwrap();
            let inv = lu.inverse(&Exec::serial()).unwrap();
            let truth = 1.0 / (norm1_abs1(a.as_ref()) * norm1_modulus(inv.as_ref()));
            assert_close(
                &format!("LU, {name}, {n}"),
                to_f64::<T>(lu.rcond(norm_l1(&a)).unwrap()),
                truth,
            );
        }
    }
    let k = kahan::<T>(40, 1.2);
    let lu = Lu::new(&k, exec).unwrap();
    let inv = lu.inverse(&Exec::serial()).unwrap();
    let truth = 1.0 / (norm1_abs1(k.as_ref()) * norm1_modulus(inv.as_ref()));
    assert!(truth < 1e-6, "Kahan is ill-conditioned: {truth:e}");
    assert_close(
        "LU, Kahan",
        to_f64::<T>(lu.rcond(norm_l1(&k)).unwrap()),
        truth,
    );
}

#[test]
fn lu_rcond_matches_the_inverse_f64() {
    lu_matches::<f64>(&Exec::serial());
}

#[test]
fn lu_rcond_matches_the_inverse_c64_on_a_team() {
    lu_matches::<c64>(&team(2));
}

#[test]
fn cholesky_rcond_matches_the_inverse() {
    for n in [1, 5, 40] {
        for (name, a) in [
            ("B B^H + n I", spd::<c64>(n, 0.7)),
            ("Hilbert", hilbert::<c64>(n.min(9))),
        ] {
            let chol = Cholesky::new(&a, &Exec::serial()).unwrap();
            let inv = chol.inverse(&Exec::serial()).unwrap();
            let truth = 1.0 / (norm1_abs1(a.as_ref()) * norm1_modulus(inv.as_ref()));
            assert_close(
                &format!("Cholesky, {name}, {n}"),
                chol.rcond(norm_l1(&a)),
                truth,
            );
        }
    }
}

/// QR's estimate is of `R`'s leading block; on Kahan's matrix (already triangular, so
/// `R = A` up to signs) it sees the ill-conditioning that `R`'s diagonal hides.
#[test]
fn qr_rcond_matches_r_and_sees_kahan() {
    for (name, a) in [
        ("tall", mat::<f64>(60, 25, 0.4)),
        ("square", mat::<f64>(30, 30, 0.8)),
        ("Kahan", kahan::<f64>(40, 1.2)),
    ] {
        let qr = Qr::new(&a, &Exec::serial()).unwrap();
        let r = qr.r().to_mat();
        let k = r.nrows();
        let rk = r.submatrix(0, 0, k, k).to_owned();
        let inv = Lu::new(&rk, &Exec::serial())
            .unwrap()
            .inverse(&Exec::serial())
            .unwrap();
        let truth = 1.0 / (norm1_abs1(rk.as_ref()) * norm1_modulus(inv.as_ref()));
        assert_close(&format!("QR, {name}"), qr.rcond(), truth);
    }
    let min_diag = |a: &Mat<f64>| {
        let r = Qr::new(a, &Exec::serial()).unwrap().r().to_mat();
        (0..r.nrows())
            .map(|i| r[(i, i)].abs())
            .fold(f64::MAX, f64::min)
    };
    // R's smallest diagonal entry is 0.06 (of a largest 1), yet the estimate is below 1e-6.
    let k = kahan::<f64>(40, 1.2);
    let rcond = Qr::new(&k, &Exec::serial()).unwrap().rcond();
    assert!(
        min_diag(&k) > 0.05 && rcond < 1e-6,
        "{} {rcond:e}",
        min_diag(&k)
    );
}

#[test]
fn exact_answers_at_the_ends() {
    let eye = Mat::<f64>::identity(5, 5);
    assert_eq!(Lu::new(&eye, &Exec::serial()).unwrap().rcond(1.0), Ok(1.0));
    assert_eq!(
        Cholesky::new(&eye, &Exec::serial()).unwrap().rcond(1.0),
        1.0
    );
    assert_eq!(Qr::new(&eye, &Exec::serial()).unwrap().rcond(), 1.0);
    // A zero pivot or a zero on R's diagonal: exactly 0, no solve attempted.
    let singular =
        Mat::<f64>::from_fn(3, 3, |i, j| (i + j) as f64 * if j == 2 { 0.0 } else { 1.0 });
    assert_eq!(
        Lu::new(&singular, &Exec::serial()).unwrap().rcond(norm_l1(&singular)),
        Ok(0.0)
    );
    assert_eq!(Qr::new(&singular, &Exec::serial()).unwrap().rcond(), 0.0);
    let zero = Mat::<f64>::zeros(4, 4);
    assert_eq!(Lu::new(&zero, &Exec::serial()).unwrap().rcond(0.0), Ok(0.0));
    // Not square: the LU's estimate is refused with a typed error.
    let wide = Mat::<f64>::ones(2, 3);
    assert!(matches!(
        Lu::new(&wide, &Exec::serial())
            .unwrap()
            .rcond(norm_l1(&wide)),
        Err(teamalg::linalg::LinalgError::NotSquare { op: "rcond", .. })
    ));
    // Empty: perfectly conditioned, as LAPACK says.
    let empty = Mat::<f64>::zeros(0, 0);
    assert_eq!(
        Lu::new(&empty, &Exec::serial()).unwrap().rcond(0.0),
        Ok(1.0)
    );
    assert_eq!(
        Cholesky::new(&empty, &Exec::serial()).unwrap().rcond(0.0),
        1.0
    );
}
