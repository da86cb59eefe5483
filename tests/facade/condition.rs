//! Condition estimates (`rcond` of LU, Cholesky and QR) against the true reciprocal condition
//! number, computed from the explicit inverse: the estimate is never below the truth (the
//! estimator finds a lower bound of `||A^{-1}||_1`) and within a factor of 10 above it, on
//! well-conditioned, graded, Hilbert, Kahan and nearly singular matrices, real and complex.

use faer::traits::math_utils::{abs, abs1, from_f64};
use faer::{Mat, MatRef, c64};
use teamalg::Exec;
use teamalg::kernels::bidiag_svd::Real;
use teamalg::kernels::par::Executor;
use teamalg::linalg::{Cholesky, Lu, Qr, Svd, norm_l1};

use super::sample;
use sample::{Sample, mat, real_f64, spd, team};

/// `||X||_1` with `|re| + |im|` per entry (how `linalg::norm_l1` measures `A`), written out.
fn norm1_abs1<T: Sample>(x: MatRef<'_, T>) -> f64 {
    (0..x.ncols())
        .map(|j| {
            (0..x.nrows())
                .map(|i| real_f64::<T>(abs1(&x[(i, j)])))
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

/// `||X||_1` with the modulus per entry (how the estimator measures `A^{-1}`).
fn norm1_modulus<T: Sample>(x: MatRef<'_, T>) -> f64 {
    (0..x.ncols())
        .map(|j| {
            (0..x.nrows())
                .map(|i| real_f64::<T>(abs(&x[(i, j)])))
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
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
                real_f64::<T>(lu.rcond(norm_l1(&a)).unwrap()),
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
        real_f64::<T>(lu.rcond(norm_l1(&k)).unwrap()),
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
                chol.rcond(norm_l1(&a)).unwrap(),
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
        assert_close(&format!("QR, {name}"), qr.rcond().unwrap(), truth);
    }
    let min_diag = |a: &Mat<f64>| {
        let r = Qr::new(a, &Exec::serial()).unwrap().r().to_mat();
        (0..r.nrows())
            .map(|i| r[(i, i)].abs())
            .fold(f64::MAX, f64::min)
    };
    // R's smallest diagonal entry is 0.06 (of a largest 1), yet the estimate is below 1e-6.
    let k = kahan::<f64>(40, 1.2);
    let rcond = Qr::new(&k, &Exec::serial()).unwrap().rcond().unwrap();
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
        Ok(1.0)
    );
    assert_eq!(Qr::new(&eye, &Exec::serial()).unwrap().rcond(), Ok(1.0));
    // A zero pivot or a zero on R's diagonal: exactly 0, no solve attempted.
    let singular =
        Mat::<f64>::from_fn(3, 3, |i, j| (i + j) as f64 * if j == 2 { 0.0 } else { 1.0 });
    assert_eq!(
        Lu::new(&singular, &Exec::serial())
            .unwrap()
            .rcond(norm_l1(&singular)),
        Ok(0.0)
    );
    assert_eq!(
        Qr::new(&singular, &Exec::serial()).unwrap().rcond(),
        Ok(0.0)
    );
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
        Ok(1.0)
    );
    // A norm that is no number: every `rcond` that takes one refuses it alike.
    let nan_norm = Err(teamalg::linalg::LinalgError::NotANorm { op: "rcond" });
    assert_eq!(
        Lu::new(&eye, &Exec::serial()).unwrap().rcond(f64::NAN),
        nan_norm
    );
    assert_eq!(
        Cholesky::new(&eye, &Exec::serial())
            .unwrap()
            .rcond(f64::INFINITY),
        nan_norm
    );
    assert_eq!(
        teamalg::linalg::Ldlt::new(&eye, &Exec::serial())
            .unwrap()
            .rcond(f64::NAN),
        nan_norm
    );
    assert_eq!(
        teamalg::linalg::Lblt::new(&eye, &Exec::serial())
            .unwrap()
            .rcond(f64::NAN),
        nan_norm
    );
    assert_eq!(
        Lu::new(&eye, &Exec::serial()).unwrap().rcond(-1.0),
        nan_norm
    );
}

/// A reproducible `m x n` matrix of rank `r`: a product of `m x r` and `r x n` factors.
fn of_rank<T: Sample>(m: usize, n: usize, r: usize) -> Mat<T> {
    &mat::<T>(m, r, 0.21) * &mat::<T>(r, n, 0.57)
}

fn max_abs<T: Sample>(x: MatRef<'_, T>) -> f64 {
    (0..x.ncols())
        .flat_map(|j| (0..x.nrows()).map(move |i| (i, j)))
        .map(|(i, j)| real_f64::<T>(abs(&x[(i, j)])))
        .fold(0.0, f64::max)
}

/// The SVD's least squares on rank-deficient input: the normal equations hold
/// (`A^H (A X - B) = 0` to `c u n ||A||^2 ||X||` scale), `X` has no component in `A`'s null
/// space (it is the minimum-norm solution), and on full-rank input it is QR's solution.
fn svd_lstsq_is_minimum_norm<T: Sample + teamalg::linalg::Rotate>() {
    let c = 30.0;
    for (m, n, r) in [(40, 20, 5), (20, 40, 7), (30, 30, 29), (25, 10, 10)] {
        let a = of_rank::<T>(m, n, r);
        let b = mat::<T>(m, 3, 0.9);
        let svd = Svd::new(&a, &team(2)).unwrap();
        assert_eq!(svd.rank(None), r, "{m}x{n} of rank {r}");
        let x = svd.lstsq(&b, &Exec::serial()).unwrap();
        let scale = max_abs(a.as_ref()).powi(2) * max_abs(x.as_ref()) * (m * n) as f64;
        let normal = a.adjoint() * (&a * &x - &b);
        let bound = c * T::unit() * scale;
        assert!(
            max_abs(normal.as_ref()) <= bound,
            "{m}x{n}: normal equations"
        );
        // V's columns past the rank span the null space: X has no part there.
        let null = svd.v().subcols(r, n - r);
        let part = null.adjoint() * &x;
        // Orthogonal to rounding: V's columns are, and X is built from the first r of them.
        let xs = c * T::unit() * n as f64 * max_abs(x.as_ref());
        assert!(max_abs(part.as_ref()) <= xs, "{m}x{n}: null-space part");
        // A A^+ A = A, to rounding times the kept values' spread s_1 / s_r.
        let p = svd.pseudoinverse(&Exec::serial()).unwrap();
        let back = &a * &p * &a - &a;
        let s = svd.s();
        let spread = Real::to_f64(s[0]) / Real::to_f64(s[r - 1]);
        let bound = c * T::unit() * (m * n) as f64 * max_abs(a.as_ref()) * spread;
        assert!(max_abs(back.as_ref()) <= bound, "{m}x{n}: A A^+ A");
        if r == n && m >= n {
            let q = Qr::new(&a, &Exec::serial())
                .unwrap()
                .lstsq(&b, &Exec::serial())
                .unwrap();
            let d = max_abs((&q - &x).as_ref()) / max_abs(q.as_ref());
            assert!(d <= 1e6 * T::unit(), "{m}x{n}: against QR, {d:e}");
        }
    }
}

#[test]
fn svd_least_squares_is_the_minimum_norm_solution_f64() {
    svd_lstsq_is_minimum_norm::<f64>();
}

#[test]
fn svd_least_squares_is_the_minimum_norm_solution_c64() {
    svd_lstsq_is_minimum_norm::<c64>();
}

#[test]
fn svd_rank_cond_and_refusals() {
    let a = of_rank::<f64>(12, 8, 3);
    let svd = Svd::new_thin(&a, &Exec::serial()).unwrap();
    assert_eq!(svd.rank(None), 3);
    assert_eq!(
        svd.rank(Some(0.0)),
        8,
        "a zero cutoff counts the rounding-level values"
    );
    assert!(svd.cond() > 1e12);
    let eye = Svd::new_thin(&Mat::<f64>::identity(4, 4), &Exec::serial()).unwrap();
    assert_eq!((eye.rank(None), eye.cond()), (4, 1.0));
    let zero = Svd::new_thin(&Mat::<f64>::zeros(3, 2), &Exec::serial()).unwrap();
    assert_eq!((zero.rank(None), zero.cond()), (0, f64::INFINITY));
    assert_eq!(
        zero.lstsq(&Mat::<f64>::ones(3, 1), &Exec::serial())
            .unwrap(),
        Mat::<f64>::zeros(2, 1)
    );
    // B's rows and finiteness are checked.
    let err = svd
        .lstsq(&Mat::<f64>::ones(5, 1), &Exec::serial())
        .unwrap_err();
    assert!(matches!(
        err,
        teamalg::linalg::LinalgError::ShapeMismatch {
            op: "lstsq",
            operand: "B",
            ..
        }
    ));
    let mut nan = Mat::<f64>::ones(12, 1);
    nan[(4, 0)] = f64::NAN;
    let err = svd.lstsq(&nan, &Exec::serial()).unwrap_err();
    assert!(matches!(
        err,
        teamalg::linalg::LinalgError::NotFinite { row: 4, .. }
    ));
}

/// QR's solves refuse a numerically rank-deficient `A` with the estimated rank and the call
/// that handles it, where they returned a meaningless `Ok` (a rank-1 tall matrix gave
/// `[1e14, -1e14]`); a well-conditioned `A` still solves.
#[test]
fn qr_solves_refuse_numerically_rank_deficient_input() {
    use teamalg::linalg::LinalgError;
    let rank1 = Mat::<f64>::from_fn(3, 2, |i, j| (i + 1) as f64 * (j + 1) as f64);
    let b = Mat::<f64>::from_fn(3, 1, |i, _| i as f64);
    let qr = Qr::new(&rank1, &Exec::serial()).unwrap();
    let err = qr.lstsq(&b, &Exec::serial()).unwrap_err();
    assert_eq!(
        err,
        LinalgError::RankDeficient {
            op: "lstsq",
            rank: 1,
            of: 2
        }
    );
    assert!(err.to_string().contains("Svd::lstsq"), "{err}");
    // The refusal is kept: a second call answers the same without a new estimate.
    assert_eq!(qr.lstsq(&b, &Exec::serial()).unwrap_err(), err);
    // The call named handles it: the minimum-norm solution.
    let x = Svd::new_thin(&rank1, &Exec::serial())
        .unwrap()
        .lstsq(&b, &Exec::serial())
        .unwrap();
    assert!(max_abs(x.as_ref()) < 10.0);

    let nine = Mat::<f64>::from_fn(3, 3, |i, j| (3 * i + j + 1) as f64);
    let err = Qr::new(&nine, &Exec::serial())
        .unwrap()
        .solve(&b, &Exec::serial())
        .unwrap_err();
    assert!(
        matches!(
            err,
            LinalgError::RankDeficient {
                op: "solve",
                rank: 2,
                of: 3
            }
        ),
        "{err}"
    );

    // Kahan's matrix: no small diagonal entry, yet singular to rounding at this order.
    let k = kahan::<f64>(120, 1.2);
    let err = Qr::new(&k, &Exec::serial())
        .unwrap()
        .solve(&Mat::<f64>::ones(120, 1), &Exec::serial());
    assert!(
        matches!(err, Err(LinalgError::RankDeficient { .. })),
        "{err:?}"
    );

    let well = mat::<c64>(30, 20, 0.5);
    let qr = Qr::new(&well, &Exec::serial()).unwrap();
    assert!(qr.lstsq(&mat::<c64>(30, 2, 0.1), &Exec::serial()).is_ok());
}

/// `Options::min_rcond`: every solve of an LU (plain, transposed, adjoint, inverse) refuses an
/// ill-conditioned system with the estimate `rcond` gives, leaves `B` as it was, and lets a
/// well-conditioned one through; without the option the same system is solved.
#[test]
fn lu_solves_refuse_an_ill_conditioned_system_when_asked() {
    use teamalg::linalg::{LinalgError, Options};
    let guarded = Options::new().min_rcond(1e-10);
    for exec in [&Exec::serial() as &dyn Executor, &team(2)] {
        let h = hilbert::<c64>(9); // condition number about 1e12 (rcond about 1e-12)
        let lu = Lu::new_with(&h, exec, &guarded).unwrap();
        let expected = lu.rcond(norm_l1(&h)).unwrap();
        let b = mat::<c64>(9, 2, 0.3);
        let mut x = b.clone();
        for (op, err) in [
            ("solve", lu.solve_in_place(x.as_mut(), exec).unwrap_err()),
            (
                "solve_transpose",
                lu.solve_transpose_in_place(x.as_mut(), exec).unwrap_err(),
            ),
            (
                "solve_adjoint",
                lu.solve_adjoint_in_place(x.as_mut(), exec).unwrap_err(),
            ),
            ("inverse", lu.inverse(exec).unwrap_err()),
        ] {
            assert_eq!(
                err,
                LinalgError::IllConditioned {
                    op,
                    rcond: expected,
                    limit: 1e-10
                },
                "{op}"
            );
        }
        assert!(
            x.as_ref() == b.as_ref(),
            "a refused solve leaves B as it was"
        );
        assert!(expected < 1e-10);
        // Unguarded, the same system is solved.
        assert!(Lu::new(&h, exec).unwrap().solve(&b, exec).is_ok());
        // Well-conditioned: solved, the estimate made once.
        let w = general::<c64>(30).remove(0).1;
        let lu = Lu::new_with(&w, exec, &guarded).unwrap();
        assert!(lu.solve(&mat::<c64>(30, 2, 0.3), exec).is_ok());
    }
    let err = Lu::new_with(&hilbert::<f64>(12), &Exec::serial(), &guarded)
        .unwrap()
        .solve(&Mat::<f64>::ones(12, 1), &Exec::serial())
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("solve: A is ill-conditioned (estimated reciprocal condition number"),
        "{err}"
    );
}

/// The Cholesky's guard measures `||A||_1` of the full Hermitian matrix from its lower
/// triangle: its estimate is the one `rcond(norm_l1(A))` gives.
#[test]
fn cholesky_solves_refuse_an_ill_conditioned_system_when_asked() {
    use teamalg::linalg::{LinalgError, Options};
    let guarded = Options::new().min_rcond(1e-9);
    // Hilbert's matrix in reverse order (still positive definite): its largest column is the
    // last, whose lower triangle holds one entry, so a norm of the triangle alone is wrong.
    let h = Mat::<c64>::from_fn(9, 9, |i, j| c64::new(1.0 / (17 - i - j) as f64, 0.0));
    let chol = Cholesky::new_with(&h, &team(2), &guarded).unwrap();
    let expected = chol.rcond(norm_l1(&h)).unwrap();
    // The guard sums the triangle in another order than `norm_l1`: equal to rounding.
    let close = |err: LinalgError| match err {
        LinalgError::IllConditioned {
            op: "solve",
            rcond,
            limit,
        } => (rcond - expected).abs() <= 1e-12 * expected && limit == 1e-9,
        _ => false,
    };
    let err = chol
        .solve(&mat::<c64>(9, 1, 0.1), &Exec::serial())
        .unwrap_err();
    assert!(close(err), "{err:?} against {expected:e}");
    assert!(matches!(
        chol.inverse(&Exec::serial()),
        Err(LinalgError::IllConditioned { op: "inverse", .. })
    ));
    // The upper triangle is not read: garbage there changes nothing.
    let mut junk = h.clone();
    for j in 1..9 {
        for i in 0..j {
            junk[(i, j)] = c64::new(1e6, -3.0);
        }
    }
    let chol = Cholesky::new_with(&junk, &Exec::serial(), &guarded).unwrap();
    let err = chol
        .solve(&mat::<c64>(9, 1, 0.1), &Exec::serial())
        .unwrap_err();
    assert!(close(err), "{err:?} against {expected:e}");
    let spd = spd::<c64>(20, 0.4);
    let chol = Cholesky::new_with(&spd, &Exec::serial(), &guarded).unwrap();
    assert!(chol.solve(&mat::<c64>(20, 1, 0.1), &Exec::serial()).is_ok());
}

#[test]
#[should_panic(expected = "is not in [0, 1]")]
fn a_nan_floor_is_refused() {
    let _ = teamalg::linalg::Options::new().min_rcond(f64::NAN);
}
