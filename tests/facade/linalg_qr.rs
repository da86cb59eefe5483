//! The QR facade: owned, in place and with scratch alike; `Q` applied and formed; solves,
//! least squares against faer's, the minimum-norm solve; every error with the input kept.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::solvers::SolveLstsqCore;
use faer::traits::math_utils::zero;
use faer::{Mat, c64};
use teamalg::linalg::{self, Dim, LinalgError, Options, Qr};
use teamalg::{Exec, Pool, Team};

use super::sample;
use sample::{Sample, assert_backward, mat, norm};

fn team() -> Team {
    Pool::builder()
        .threads(2)
        .build()
        .unwrap()
        .into_team(2)
        .unwrap()
}

/// The largest entry of `x - y`.
fn diff<T: Sample>(x: &Mat<T>, y: &Mat<T>) -> f64 {
    assert_eq!((x.nrows(), x.ncols()), (y.nrows(), y.ncols()));
    let mut worst = 0.0f64;
    for j in 0..x.ncols() {
        for i in 0..x.nrows() {
            worst = worst.max(T::err(x[(i, j)], y[(i, j)]));
        }
    }
    worst
}

fn eye<T: Sample>(n: usize) -> Mat<T> {
    Mat::from_fn(n, n, |i, j| if i == j { T::one() } else { zero() })
}

/// Q thin and full, R, reconstruct and Q applied, for one shape and type, on `exec`: each
/// within the backward-error bound `C u n ||.||` of what it is measured against.
fn factors_hold<T: Sample>(m: usize, n: usize, exec: &dyn teamalg::Executor) {
    let a = mat::<T>(m, n, 0.61);
    let qr = Qr::new(&a, &exec).unwrap();
    let s = m.min(n);
    let k = m.max(n);
    let norm_a = norm(a.as_ref());
    let q = qr.q_thin(&exec).unwrap();
    assert_eq!((q.nrows(), q.ncols()), (m, s));
    let what = |w: &str| format!("{m}x{n}: {w}");
    assert_backward::<T>(
        &what("Q R - A"),
        (&q * qr.r().to_mat() - &a).as_ref(),
        k,
        norm_a,
    );
    assert_backward::<T>(
        &what("Q^H Q - I"),
        (q.adjoint() * &q - eye::<T>(s)).as_ref(),
        k,
        1.0,
    );
    let full = qr.q_full(&exec).unwrap();
    assert_backward::<T>(
        &what("full Q^H Q - I"),
        (full.adjoint() * &full - eye::<T>(m)).as_ref(),
        k,
        1.0,
    );
    assert_backward::<T>(
        &what("full Q's first columns - thin Q"),
        (full.as_ref().subcols(0, s).to_owned() - &q).as_ref(),
        k,
        1.0,
    );
    assert_backward::<T>(
        &what("reconstruct - A"),
        (qr.reconstruct() - &a).as_ref(),
        k,
        norm_a,
    );
    // Q applied equals Q formed, and Q^H undoes it.
    let b = mat::<T>(m, 5, 0.3);
    let norm_b = norm(b.as_ref());
    let qb = qr.apply_q(&b, &exec).unwrap();
    assert_backward::<T>(
        &what("Q B applied - formed"),
        (&qb - &full * &b).as_ref(),
        k,
        norm_b,
    );
    assert_backward::<T>(
        &what("Q^H Q B - B"),
        (qr.apply_q_adjoint(&qb, &exec).unwrap() - &b).as_ref(),
        k,
        norm_b,
    );
}

#[test]
fn q_and_r_hold_for_every_shape_type_and_executor() {
    let team = team();
    for (m, n) in [
        (0, 0),
        (1, 1),
        (1, 4),
        (4, 1),
        (37, 37),
        (70, 33),
        (33, 70),
        (200, 200),
    ] {
        for exec in [&team as &dyn teamalg::Executor, &Exec::serial()] {
            factors_hold::<f64>(m, n, exec);
            factors_hold::<c64>(m, n, exec);
            factors_hold::<f32>(m, n, exec);
            factors_hold::<faer::c32>(m, n, exec);
        }
    }
}

#[test]
fn owned_in_place_and_scratch_forms_agree() {
    let team = team();
    let a = mat::<f64>(150, 120, 0.2);
    let owned = Qr::new(&a, &team).unwrap();
    let mut f = a.clone();
    let in_place = linalg::qr(f.as_mut(), &team).unwrap();
    assert_backward::<f64>(
        "in-place factors - owned factors",
        (in_place.factors().to_owned() - owned.factors().to_owned()).as_ref(),
        150,
        norm(owned.factors()),
    );
    drop(in_place);
    // Width 1 scratch: the factorization runs serially and still agrees.
    let mut g = a.clone();
    let mut buf = MemBuffer::new(linalg::qr_scratch::<f64>(150, 120, 1));
    let opts = Options::new();
    let small = linalg::qr_with_scratch(g.as_mut(), &team, &opts, MemStack::new(&mut buf)).unwrap();
    assert_backward::<f64>(
        "serial scratch: reconstruct - A",
        (small.reconstruct() - &a).as_ref(),
        150,
        norm(a.as_ref()),
    );
    assert_eq!(
        small.householder_factor().ncols(),
        owned.householder_factor().ncols()
    );
}

#[test]
fn least_squares_matches_faer_and_solve_matches_lu() {
    let team = team();
    for (m, n) in [(300, 40), (120, 120), (65, 64)] {
        let a = mat::<c64>(m, n, 0.4);
        let b = mat::<c64>(m, 3, 0.8);
        let x = Qr::new(&a, &team).unwrap().lstsq(&b, &team).unwrap();
        let mut want = b.clone();
        faer::linalg::solvers::Qr::new(a.as_ref())
            .solve_lstsq_in_place_with_conj(faer::Conj::No, want.as_mut());
        let want = want.subrows(0, n).to_owned();
        // Backward stable: the normal equations' residual A^H (A X - B) within
        // C u n ||A|| (||A|| ||X|| + ||B||).
        let (na, nx, nb) = (norm(a.as_ref()), norm(x.as_ref()), norm(b.as_ref()));
        assert_backward::<c64>(
            &format!("{m}x{n}: A^H (A X - B)"),
            (a.adjoint() * (&a * &x - &b)).as_ref(),
            m,
            na * (na * nx + nb),
        );
        // And faer's solution (a forward comparison: these matrices are well conditioned, so
        // the two differ by the bound times a small condition number).
        assert!(diff(&x, &want) <= 1e-10, "{m}x{n}");
    }
    let a = mat::<f64>(90, 90, 0.1);
    let b = mat::<f64>(90, 2, 0.9);
    let x = Qr::new(&a, &team).unwrap().solve(&b, &team).unwrap();
    let y = linalg::Lu::new(&a, &team)
        .unwrap()
        .solve(&b, &team)
        .unwrap();
    assert!(diff(&x, &y) <= 1e-9);
}

#[test]
fn minimum_norm_solution_of_a_wide_system() {
    let team = team();
    // W (30 x 80) X = B: factor W^H (80 x 30).
    let w = mat::<c64>(30, 80, 0.7);
    let b = mat::<c64>(30, 2, 0.5);
    let qr = Qr::new(w.adjoint(), &team).unwrap();
    let x = qr.min_norm_adjoint(&b, &team).unwrap();
    let (nw, nx) = (norm(w.as_ref()), norm(x.as_ref()));
    assert_backward::<c64>("W X - B", (&w * &x - &b).as_ref(), 80, nw * nx);
    // Minimum norm: X lies in the range of W^H, so Q^H X is zero below row 30.
    let qhx = qr.apply_q_adjoint(&x, &team).unwrap();
    assert_backward::<c64>("Q^H X below row 30", qhx.as_ref().subrows(30, 50), 80, nx);
    // And a wide QR refuses least squares and the minimum-norm solve with NotTall.
    let wide = Qr::new(&w, &team).unwrap();
    let err = wide.lstsq(&b, &team).unwrap_err();
    assert_eq!(
        err,
        LinalgError::NotTall {
            op: "lstsq",
            rows: 30,
            cols: 80
        }
    );
    assert!(err.to_string().contains("min_norm_adjoint"));
    assert!(matches!(
        wide.min_norm_adjoint(&b, &team),
        Err(LinalgError::NotTall { .. })
    ));
}

#[test]
fn rank_deficient_input_factors_and_solves_refuse() {
    let team = team();
    let base = mat::<f64>(100, 60, 0.3);
    // Column 10 zero, column 20 a copy of column 5.
    let a = Mat::from_fn(100, 60, |i, j| match j {
        10 => 0.0,
        20 => base[(i, 5)],
        _ => base[(i, j)],
    });
    let qr = Qr::new(&a, &team).unwrap();
    assert_backward::<f64>(
        "rank-deficient: reconstruct - A",
        (qr.reconstruct() - &a).as_ref(),
        100,
        norm(a.as_ref()),
    );
    let q = qr.q_thin(&team).unwrap();
    assert_backward::<f64>(
        "rank-deficient: Q^H Q - I",
        (q.adjoint() * &q - eye::<f64>(60)).as_ref(),
        100,
        1.0,
    );
    // The zero column leaves an exact zero on R's diagonal; solves refuse with the rank the
    // two dependent columns leave (not the zero's position).
    assert_eq!(qr.zero_diagonal(), Some(10));
    let b = mat::<f64>(100, 1, 0.5);
    let mut kept = b.clone();
    let err = qr.lstsq_in_place(kept.as_mut(), &team).unwrap_err();
    assert_eq!(
        err,
        LinalgError::RankDeficient {
            op: "lstsq",
            rank: 58,
            of: 60
        }
    );
    assert_eq!(kept, b, "a refused solve leaves B as it was");
}

#[test]
fn errors_leave_the_input_as_it_was() {
    let team = team();
    let mut a = mat::<f64>(50, 40, 0.3);
    a[(7, 3)] = f64::NAN;
    let before = a.clone();
    let err = linalg::qr(a.as_mut(), &team).unwrap_err();
    assert_eq!(
        err,
        LinalgError::NotFinite {
            op: "qr",
            operand: "A",
            row: 7,
            col: 3
        }
    );
    assert!(a.as_ref().col_iter().zip(before.col_iter()).all(|(x, y)| {
        x.iter()
            .zip(y.iter())
            .all(|(p, q)| p.to_bits() == q.to_bits())
    }));
    let good = mat::<f64>(50, 40, 0.3);
    let qr = Qr::new(&good, &team).unwrap();
    // B with the wrong number of rows.
    let mut b = mat::<f64>(49, 2, 0.1);
    let kept = b.clone();
    let err = qr.lstsq_in_place(b.as_mut(), &team).unwrap_err();
    assert_eq!(
        err,
        LinalgError::ShapeMismatch {
            op: "lstsq",
            operand: "B",
            dim: Dim::Rows,
            expected: 50,
            found: 49
        }
    );
    assert_eq!(b, kept);
    assert!(matches!(
        qr.apply_q(&mat::<f64>(3, 1, 0.1), &team),
        Err(LinalgError::ShapeMismatch { op: "apply_q", .. })
    ));
    // solve needs a square A.
    assert_eq!(
        qr.solve(&mat::<f64>(50, 1, 0.1), &team).unwrap_err(),
        LinalgError::NotSquare {
            op: "solve",
            operand: "A",
            rows: 50,
            cols: 40
        }
    );
    // A NaN in B is refused, B kept.
    let mut b = mat::<f64>(50, 2, 0.1);
    b[(4, 1)] = f64::INFINITY;
    let kept = b.clone();
    assert!(matches!(
        qr.apply_q_adjoint_in_place(b.as_mut(), &team),
        Err(LinalgError::NotFinite {
            operand: "B",
            row: 4,
            col: 1,
            ..
        })
    ));
    assert_eq!(b, kept);
}

#[test]
fn one_factorization_is_shared_between_threads() {
    let team = team();
    let a = mat::<f64>(80, 50, 0.45);
    let qr = Qr::new(&a, &team).unwrap();
    let b = mat::<f64>(80, 2, 0.6);
    let want = qr.lstsq(&b, &Exec::serial()).unwrap();
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                let x = qr.lstsq(&b, &Exec::serial()).unwrap();
                assert!(diff(&x, &want) <= 1e-12);
            });
        }
    });
}

fn square_forms<T: Sample>() {
    sample::every_executor(|exec, _| {
        for n in [1, 5, 40] {
            let a = mat::<T>(n, n, 0.6);
            let f = Qr::new(&a, exec).unwrap();
            super::symmetric::solves_back::<T>("qr", a.as_ref(), exec, |b, k| match k {
                0 => f.solve(b, exec).unwrap(),
                1 => f.solve_transpose(b, exec).unwrap(),
                2 => f.solve_adjoint(b, exec).unwrap(),
                3 => f.rsolve(b, exec).unwrap(),
                _ => f.rsolve_adjoint(b, exec).unwrap(),
            });
            let inv = f.inverse(exec).unwrap();
            assert_backward::<T>(
                &format!("qr inverse, {n}"),
                (&a * &inv - eye::<T>(n)).as_ref(),
                n,
                norm(a.as_ref()) * norm(inv.as_ref()),
            );
        }
    });
}

#[test]
fn square_solves_of_every_form_and_the_inverse() {
    square_forms::<f32>();
    square_forms::<f64>();
    square_forms::<faer::c32>();
    square_forms::<c64>();
    // The square forms refuse a rectangular QR, naming the call.
    let e = Exec::serial();
    let tall = Qr::new(&mat::<f64>(5, 3, 0.2), &e).unwrap();
    let err = tall
        .solve_transpose(&mat::<f64>(5, 1, 0.1), &e)
        .unwrap_err();
    assert!(
        matches!(
            err,
            LinalgError::NotSquare {
                op: "solve_transpose",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(matches!(
        tall.inverse(&e),
        Err(LinalgError::NotSquare { op: "inverse", .. })
    ));
    assert!(matches!(
        tall.determinant(),
        Err(LinalgError::NotSquare { .. })
    ));
}

#[test]
fn determinants_take_q_s_sign() {
    let e = Exec::serial();
    let lu_det = |a: &Mat<f64>| linalg::Lu::new(a, &e).unwrap().determinant().unwrap();
    let cases: Vec<Mat<f64>> = vec![
        mat::<f64>(7, 7, 0.3),
        mat::<f64>(8, 8, 0.5),
        // Upper triangular: every reflector is the identity, det(Q) = 1.
        Mat::from_fn(6, 6, |i, j| {
            if i <= j {
                1.0 + (i + 2 * j) as f64
            } else {
                0.0
            }
        }),
        // A swap of two rows: one reflection, det = -1.
        Mat::from_fn(2, 2, |i, j| if i != j { 1.0 } else { 0.0 }),
        // Singular: det = 0.
        Mat::from_fn(4, 4, |i, j| (i + 1) as f64 * (j + 1) as f64),
    ];
    for a in &cases {
        let qr = Qr::new(a, &e).unwrap();
        let (want, got) = (lu_det(a), qr.determinant().unwrap());
        assert!(
            (got - want).abs() <= 1e-10 * want.abs().max(1.0),
            "{got} vs {want}"
        );
        let (sign, log) = qr.slogdet().unwrap();
        assert!((sign * log.exp() - want).abs() <= 1e-10 * want.abs().max(1.0));
    }
    let c = mat::<c64>(9, 9, 0.7);
    let want = linalg::Lu::new(&c, &e).unwrap().determinant().unwrap();
    let got = Qr::new(&c, &e).unwrap().determinant().unwrap();
    assert!((got - want).norm() <= 1e-10 * want.norm());
    // 1e3 I of order 200: the logarithm where the product overflows.
    let big = Mat::<f64>::from_fn(200, 200, |i, j| if i == j { 1e3 } else { 0.0 });
    let log = Qr::new(&big, &e).unwrap().log_abs_det().unwrap();
    assert!((log - 600.0 * 10f64.ln()).abs() < 1e-9);
}

#[test]
fn faer_s_least_squares_trait_gives_ours() {
    let e = Exec::serial();
    let a = mat::<c64>(30, 8, 0.2);
    let b = mat::<c64>(30, 2, 0.7);
    let qr = Qr::new(&a, &e).unwrap();
    let ours = qr.lstsq(&b, &e).unwrap();
    let mut theirs = b.clone();
    qr.solve_lstsq_in_place_with_conj(faer::Conj::No, theirs.as_mut());
    assert!(diff(&theirs.subrows(0, 8).to_owned(), &ours) <= 1e-12);
    // conj(A) X = B.
    let mut y = b.clone();
    qr.solve_lstsq_in_place_with_conj(faer::Conj::Yes, y.as_mut());
    let want = Qr::new(a.conjugate(), &e).unwrap().lstsq(&b, &e).unwrap();
    assert!(diff(&y.subrows(0, 8).to_owned(), &want) <= 1e-12);
}
