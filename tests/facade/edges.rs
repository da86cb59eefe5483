//! Edge cases of the facade: least squares on an exactly rank-deficient matrix, `slogdet`'s sign,
//! which operand a product's shape error names, and `LDL^H` without pivoting that grows.

use faer::traits::math_utils::neg;
use faer::{Accum, Mat, MatMut, c64};
use teamalg::Exec;
use teamalg::linalg::batch::{self, Status};
use teamalg::linalg::{self, ColPivQr, Dim, FullPivLu, Lblt, Ldlt, LinalgError, Lu, Qr};

use super::sample;
use sample::{Sample, assert_backward, backward_bound, hermitian, mat, norm, spd};

/// A reproducible `m x n` matrix whose column 7 is a copy of its column 3.
fn duplicate(m: usize, n: usize) -> Mat<f64> {
    let base = mat::<f64>(m, n, 0.7);
    Mat::from_fn(m, n, |i, j| base[(i, if j == 7 { 3 } else { j })])
}

#[test]
fn qr_least_squares_on_an_exactly_rank_deficient_matrix_is_rank_deficient() {
    let e = Exec::serial();
    // A user's case: 1000 x 50, column 7 equal to column 3.
    let a = duplicate(1000, 50);
    let b = mat::<f64>(1000, 2, 0.2);
    let qr = Qr::new(&a, &e).unwrap();
    let err = qr.lstsq(&b, &e).unwrap_err();
    assert_eq!(
        err,
        LinalgError::RankDeficient {
            op: "lstsq",
            rank: 49,
            of: 50
        }
    );
    let msg = err.to_string();
    assert!(msg.contains("ColPivQr") && msg.contains("Svd"), "{msg}");
    // In place: the same error, `B` untouched.
    let mut kept = b.clone();
    assert_eq!(qr.lstsq_in_place(kept.as_mut(), &e).unwrap_err(), err);
    assert_eq!(kept, b);
    // The minimum-norm solve through the same factorization refuses alike.
    assert!(matches!(
        qr.min_norm_adjoint(&mat::<f64>(50, 1, 0.3), &e),
        Err(LinalgError::RankDeficient {
            op: "min_norm_adjoint",
            rank: 49,
            of: 50
        })
    ));
    // The call the error names solves it: the residual is orthogonal to A's columns.
    let x = ColPivQr::new(&a, &e).unwrap().lstsq(&b, &e).unwrap();
    let normal = a.adjoint() * (&a * &x - &b);
    assert_backward::<f64>(
        "col-piv lstsq: A^H (A X - B)",
        normal.as_ref(),
        1000,
        norm(a.as_ref()) * (norm(a.as_ref()) * norm(x.as_ref()) + norm(b.as_ref())),
    );

    // A column that is a combination of others, and a zero column: still RankDeficient.
    let base = mat::<f64>(300, 40, 0.7);
    let a = Mat::from_fn(300, 40, |i, j| match j {
        20 => base[(i, 1)] + 2.0 * base[(i, 5)],
        _ => base[(i, j)],
    });
    let err = Qr::new(&a, &e).unwrap().lstsq(&mat::<f64>(300, 1, 0.4), &e);
    assert!(
        matches!(err, Err(LinalgError::RankDeficient { op: "lstsq", of: 40, rank }) if rank < 40),
        "{err:?}"
    );
    let mut z = mat::<f64>(200, 30, 0.1);
    z.as_mut().col_mut(4).fill(0.0);
    assert!(matches!(
        Qr::new(&z, &e).unwrap().lstsq(&mat::<f64>(200, 1, 0.4), &e),
        Err(LinalgError::RankDeficient {
            op: "lstsq",
            rank: 29,
            of: 30
        })
    ));
    // Square and singular: the solve refuses the same way.
    let s = duplicate(60, 60);
    assert!(matches!(
        Qr::new(&s, &e).unwrap().solve(&mat::<f64>(60, 1, 0.5), &e),
        Err(LinalgError::RankDeficient {
            op: "solve",
            rank: 59,
            of: 60
        })
    ));
}

#[test]
fn batched_least_squares_on_a_rank_deficient_problem_is_rank_deficient() {
    let team = sample::team(2);
    let mut a = [mat::<f64>(80, 20, 0.1), duplicate(80, 20)];
    let b0 = vec![mat::<f64>(80, 1, 0.2), mat::<f64>(80, 1, 0.3)];
    let mut b = b0.clone();
    let mut status: Vec<Status> = vec![Ok(()); 2];
    let mut av: Vec<MatMut<'_, f64>> = a.iter_mut().map(|x| x.as_mut()).collect();
    let mut bv: Vec<MatMut<'_, f64>> = b.iter_mut().map(|x| x.as_mut()).collect();
    batch::lstsq(&mut av, &mut bv, &mut status, &team).unwrap();
    assert_eq!(status[0], Ok(()));
    assert_eq!(
        status[1],
        Err(LinalgError::RankDeficient {
            op: "batch::lstsq",
            rank: 19,
            of: 20
        })
    );
    assert_eq!(b[1], b0[1], "a refused problem leaves B as it was");
}

/// Every real factorization's `slogdet` sign against the sign of its `determinant` (finite at
/// this order), exactly `1.0` or `-1.0`.
fn exact_signs<T: Sample>(n: usize) {
    let e = Exec::serial();
    let (one, minus) = (T::one(), neg(&T::one()));
    let exact = |what: &str, s: T| {
        assert!(
            s == one || s == minus,
            "{what}: sign {s:?} is not exactly 1 or -1"
        );
    };
    let a = mat::<T>(n, n, 0.3);
    exact("lu", Lu::new(&a, &e).unwrap().slogdet().unwrap().0);
    exact(
        "full_piv_lu",
        FullPivLu::new(&a, &e).unwrap().slogdet().unwrap().0,
    );
    exact("qr", Qr::new(&a, &e).unwrap().slogdet().unwrap().0);
    let h = hermitian::<T>(n, 0.4);
    exact("lblt", Lblt::new(&h, &e).unwrap().slogdet().unwrap().0);
    exact(
        "cholesky",
        linalg::Cholesky::new(&spd::<T>(n, 0.5), &e)
            .unwrap()
            .slogdet()
            .unwrap()
            .0,
    );
    exact(
        "ldlt",
        Ldlt::new(&spd::<T>(n, 0.6), &e)
            .unwrap()
            .slogdet()
            .unwrap()
            .0,
    );
}

#[test]
fn slogdet_sign_is_exact_for_real_types() {
    exact_signs::<f64>(500);
    exact_signs::<f32>(200);
    // The sign agrees with the determinant's where that is finite, and with the negated matrix.
    let e = Exec::serial();
    let a = mat::<f64>(40, 40, 0.8);
    let lu = Lu::new(&a, &e).unwrap();
    let (s, l) = lu.slogdet().unwrap();
    let d = lu.determinant().unwrap();
    assert_eq!(s, d.signum());
    assert!((l - d.abs().ln()).abs() <= 1e-12 * l.abs().max(1.0));
    // Negating a matrix of odd order flips the sign.
    let odd = mat::<f64>(41, 41, 0.8);
    let (s1, _) = Lu::new(&odd, &e).unwrap().slogdet().unwrap();
    let (s2, _) = Lu::new(&(-&odd), &e).unwrap().slogdet().unwrap();
    assert_eq!(s1, -s2);
}

#[test]
fn slogdet_phase_is_unit_for_complex_types() {
    let e = Exec::serial();
    let a = mat::<c64>(300, 300, 0.3);
    let (s, _) = Lu::new(&a, &e).unwrap().slogdet().unwrap();
    assert!(
        (s.norm() - 1.0).abs() <= 4.0 * f64::EPSILON,
        "|sign| = {}",
        s.norm()
    );
    let d = Lu::new(&mat::<c64>(30, 30, 0.3), &e).unwrap();
    let (s, _) = d.slogdet().unwrap();
    let det = d.determinant().unwrap();
    assert!((s - det / det.norm()).norm() <= 1e-13, "{s:?} vs {det:?}");
    // Hermitian factorizations have real pivots: the sign is exactly 1 or -1.
    let h = hermitian::<c64>(200, 0.4);
    let (s, _) = Lblt::new(&h, &e).unwrap().slogdet().unwrap();
    assert!(s == c64::new(1.0, 0.0) || s == c64::new(-1.0, 0.0), "{s:?}");
    let (s, _) = Ldlt::new(&spd::<c64>(200, 0.5), &e)
        .unwrap()
        .slogdet()
        .unwrap();
    assert_eq!(s, c64::new(1.0, 0.0));
}

#[test]
fn matmul_names_the_output_when_it_has_the_wrong_shape() {
    let e = Exec::serial();
    let (a, b) = (Mat::<f64>::ones(6, 4), Mat::<f64>::ones(4, 3));
    let mut c = Mat::<f64>::zeros(5, 3);
    let err = linalg::matmul(&mut c, Accum::Replace, &a, &b, 1.0, &e).unwrap_err();
    assert_eq!(
        err,
        LinalgError::ShapeMismatch {
            op: "matmul",
            operand: "C",
            dim: Dim::Rows,
            expected: 6,
            found: 5
        }
    );
    assert_eq!(err.to_string(), "matmul: C has 5 rows, 6 expected");
    let mut c = Mat::<f64>::zeros(6, 2);
    assert_eq!(
        linalg::matmul(&mut c, Accum::Add, &a, &b, 1.0, &e).unwrap_err(),
        LinalgError::ShapeMismatch {
            op: "matmul",
            operand: "C",
            dim: Dim::Cols,
            expected: 3,
            found: 2
        }
    );
    // Inputs that do not fit each other: B is named, whatever C is.
    let short = Mat::<f64>::ones(5, 3);
    assert!(matches!(
        linalg::matmul(&mut c, Accum::Replace, &a, &short, 1.0, &e),
        Err(LinalgError::ShapeMismatch {
            operand: "B",
            dim: Dim::Rows,
            expected: 4,
            found: 5,
            ..
        })
    ));
    assert!(
        c.col_iter().all(|col| col.iter().all(|&x| x == 0.0)),
        "nothing written"
    );
}

/// A symmetric indefinite, well-conditioned matrix whose first pivot is `delta`: `LDL^H`
/// without pivoting divides by it, Bunch-Kaufman does not.
fn tiny_first_pivot(n: usize, delta: f64) -> Mat<f64> {
    let mut a = hermitian::<f64>(n, 0.9);
    a[(0, 0)] = delta;
    a
}

#[test]
fn ldlt_refuses_pivot_growth_and_names_lblt() {
    let e = Exec::serial();
    let n = 60;
    let a = tiny_first_pivot(n, 1e-12);
    let err = Ldlt::new(&a, &e).unwrap_err();
    let limit = (f64::EPSILON).sqrt().recip();
    match err {
        LinalgError::PivotGrowth {
            op: "ldlt",
            growth,
            limit: l,
        } => {
            assert_eq!(l, limit);
            assert!(growth > 1e9, "growth {growth:e}");
        }
        other => panic!("expected PivotGrowth, got {other:?}"),
    }
    assert!(err.to_string().contains("Lblt"), "{err}");
    // Bunch-Kaufman solves it within the backward-error bound.
    let b = mat::<f64>(n, 2, 0.1);
    let x = Lblt::new(&a, &e).unwrap().solve(&b, &e).unwrap();
    assert_backward::<f64>(
        "lblt: A X - B",
        (&a * &x - &b).as_ref(),
        n,
        norm(a.as_ref()) * norm(x.as_ref()),
    );
}

#[test]
fn ldlt_reports_growth_below_the_bound() {
    let e = Exec::serial();
    let n = 60;
    // A first pivot of 1e-5: the factors grow by about 1e5, below the bound; the solve's
    // residual is within the bound scaled by the growth, and growth() says so.
    let a = tiny_first_pivot(n, 1e-5);
    let f = Ldlt::new(&a, &e).unwrap();
    let g = f.growth();
    assert!(g > 1e3 && g < 1e8, "growth {g:e}");
    let b = mat::<f64>(n, 2, 0.1);
    let x = f.solve(&b, &e).unwrap();
    let r = norm((&a * &x - &b).as_ref());
    assert!(
        r <= g * backward_bound::<f64>(n, norm(a.as_ref()) * norm(x.as_ref())),
        "residual {r:e}, growth {g:e}"
    );
    // Definite matrices grow at most n times: never refused.
    for (k, s) in [
        spd::<f64>(n, 0.2),
        Mat::from_fn(n, n, |i, j| -spd::<f64>(n, 0.3)[(i, j)]),
    ]
    .iter()
    .enumerate()
    {
        let g = Ldlt::new(s, &e).unwrap().growth();
        assert!((1.0 - 1e-12..=n as f64).contains(&g), "{k}: growth {g:e}");
    }
}
