//! The facade `teamalg::linalg`: `lu` and `cholesky` objects on every kind of executor, their
//! solves and determinants against faer, and every user error typed, with the input kept.

use faer::linalg::matmul::matmul as faer_matmul;
use faer::traits::math_utils::zero;
use faer::{Accum, Mat, Par, c64};
use teamalg::kernels::par::Executor;
use teamalg::linalg::{self, Dim, LinalgError};
use teamalg::{Exec, Pool};

use super::sample;
use sample::{Sample, assert_backward, mat, norm, team};

/// `A X - B`.
fn residual<T: Sample>(a: &Mat<T>, x: &Mat<T>, b: &Mat<T>) -> Mat<T> {
    let mut r = b.clone();
    let minus = faer::traits::math_utils::neg(&T::one());
    faer_matmul(
        r.as_mut(),
        Accum::Add,
        a.as_ref(),
        x.as_ref(),
        minus,
        Par::Seq,
    );
    r
}

/// `A X = B` solved backward stably: `||A X - B|| <= C u n ||A|| ||X||`.
fn assert_solves<T: Sample>(what: &str, a: &Mat<T>, x: &Mat<T>, b: &Mat<T>) {
    let n = a.nrows().max(a.ncols());
    let scale = norm(a.as_ref()) * norm(x.as_ref());
    assert_backward::<T>(what, residual(a, x, b).as_ref(), n, scale);
}

fn lu_solves<T: Sample>(exec: &impl Executor, n: usize) {
    let a = mat::<T>(n, n, 0.43);
    let b = mat::<T>(n, 5, 0.17);
    let norm_a = norm(a.as_ref());
    let mut f = a.clone();
    let lu = linalg::lu(f.as_mut(), exec).unwrap();
    assert!(!lu.is_singular());
    let x = lu.solve(b.as_ref(), exec).unwrap();
    assert_solves(&format!("{n}: A X = B"), &a, &x, &b);
    // P A = L U.
    let (l, u) = (lu.l().to_mat(), lu.u().to_mat());
    let pa = Mat::<T>::from_fn(n, n, |i, j| a[(lu.p().arrays().0[i], j)]);
    assert_backward::<T>(
        &format!("{n}: P A - L U"),
        (&l * &u - &pa).as_ref(),
        n,
        norm_a,
    );
    // The transposed and adjoint solves, the inverse and the reconstruction.
    let at = a.transpose().to_owned();
    let x = lu.solve_transpose(b.as_ref(), exec).unwrap();
    assert_solves(&format!("{n}: A^T X = B"), &at, &x, &b);
    let ah = Mat::<T>::from_fn(n, n, |i, j| faer::traits::math_utils::conj(&a[(j, i)]));
    let x = lu.solve_adjoint(b.as_ref(), exec).unwrap();
    assert_solves(&format!("{n}: A^H X = B"), &ah, &x, &b);
    if n > 0 {
        let inv = lu.inverse(exec).unwrap();
        let eye = Mat::<T>::from_fn(n, n, |i, j| if i == j { T::one() } else { zero() });
        assert_solves(&format!("{n}: A A^-1 = I"), &a, &inv, &eye);
    }
    assert_backward::<T>(
        &format!("{n}: reconstruct - A"),
        (lu.reconstruct() - &a).as_ref(),
        n,
        norm_a,
    );
    // The owned factorization of a copy: the same factors, and `a` untouched.
    // (Its width may differ from the first call's, and so may the rounding.)
    let owned = linalg::Lu::new(&a, exec).unwrap();
    assert_eq!(owned.p().arrays().0, lu.p().arrays().0);
    assert_backward::<T>(
        &format!("{n}: owned factors - in-place factors"),
        (owned.factors().to_owned() - lu.factors().to_owned()).as_ref(),
        n,
        norm(lu.factors()),
    );
}

#[test]
fn lu_solves_on_every_executor() {
    let team = team(2);
    let pool = Pool::builder().threads(2).build().unwrap();
    for n in [0, 1, 5, 64, 300] {
        lu_solves::<f64>(&Exec::serial(), n);
        lu_solves::<f64>(&team, n);
        lu_solves::<c64>(&team, n);
        lu_solves::<f64>(&Exec::new(&pool, 2).unwrap(), n);
        lu_solves::<c64>(&team.exec(2), n);
    }
}

#[test]
fn lu_determinant_matches_faer() {
    let team = team(2);
    for n in [1, 2, 7, 40] {
        let a = mat::<f64>(n, n, 0.77);
        let want = a.determinant();
        let mut f = a.clone();
        let got = linalg::lu(f.as_mut(), &team)
            .unwrap()
            .determinant()
            .unwrap();
        assert!(
            (got - want).abs() <= 1e-10 * want.abs().max(1.0),
            "{n}: {got} {want}"
        );
        let a = mat::<c64>(n, n, 0.77);
        let want = a.determinant();
        let mut f = a.clone();
        let got = linalg::lu(f.as_mut(), &team)
            .unwrap()
            .determinant()
            .unwrap();
        assert!(
            (got - want).norm() <= 1e-10 * want.norm().max(1.0),
            "{n}: {got} {want}"
        );
    }
}

#[test]
fn singular_lu_reports_and_refuses_to_solve() {
    let mut a = mat::<f64>(6, 6, 0.2);
    for i in 0..6 {
        a[(i, 3)] = 0.0;
    }
    let lu = linalg::lu(a.as_mut(), &Exec::serial()).unwrap();
    assert_eq!(lu.zero_pivot(), Some(3));
    assert_eq!(lu.determinant(), Ok(0.0));
    let mut b = Mat::<f64>::ones(6, 1);
    let before = b.clone();
    assert_eq!(
        lu.solve_in_place(b.as_mut(), &Exec::serial()),
        Err(LinalgError::Singular {
            op: "solve",
            index: 3
        })
    );
    assert_eq!(b, before, "a refused solve writes nothing");
    assert_eq!(
        lu.inverse(&Exec::serial()).err(),
        Some(LinalgError::Singular {
            op: "inverse",
            index: 3
        })
    );
    let before = b.clone();
    assert!(
        lu.solve_adjoint_in_place(b.as_mut(), &Exec::serial())
            .is_err()
    );
    assert_eq!(b, before, "a refused adjoint solve writes nothing");
}

#[test]
fn rectangular_lu_factors_but_has_no_determinant_or_solve() {
    let team = team(2);
    for (m, n) in [(9, 4), (4, 9)] {
        let a = mat::<f64>(m, n, 0.3);
        let mut f = a.clone();
        let lu = linalg::lu(f.as_mut(), &team).unwrap();
        assert_eq!((lu.l().nrows(), lu.l().ncols()), (m, m.min(n)));
        assert_eq!((lu.u().nrows(), lu.u().ncols()), (m.min(n), n));
        assert_eq!(
            lu.determinant(),
            Err(LinalgError::NotSquare {
                op: "determinant",
                operand: "A",
                rows: m,
                cols: n
            })
        );
        let b = Mat::<f64>::ones(m, 1);
        assert!(matches!(
            lu.solve(b.as_ref(), &team),
            Err(LinalgError::NotSquare { op: "solve", .. })
        ));
    }
    let mut a = mat::<f64>(5, 5, 0.3);
    let lu = linalg::lu(a.as_mut(), &team).unwrap();
    let b = Mat::<f64>::ones(4, 2);
    assert_eq!(
        lu.solve(b.as_ref(), &team).err(),
        Some(LinalgError::ShapeMismatch {
            op: "solve",
            operand: "B",
            dim: Dim::Rows,
            expected: 5,
            found: 4
        })
    );
}

/// `B B^H + n I`, Hermitian positive definite.
fn spd<T: Sample>(n: usize) -> Mat<T> {
    sample::spd(n, 0.61)
}

fn cholesky_solves<T: Sample>(exec: &impl Executor, n: usize) {
    let a = spd::<T>(n);
    let b = mat::<T>(n, 3, 0.9);
    let mut f = a.clone();
    let chol = linalg::cholesky(f.as_mut(), exec).unwrap();
    let x = chol.solve(b.as_ref(), exec).unwrap();
    assert_solves(&format!("{n}: A X = B"), &a, &x, &b);
    let l = chol.l();
    for i in 0..n {
        for j in i + 1..n {
            assert_eq!(T::err(l.get(i, j), zero()), 0.0);
        }
    }
    if n > 0 {
        let inv = chol.inverse(exec).unwrap();
        let eye = Mat::<T>::from_fn(n, n, |i, j| if i == j { T::one() } else { zero() });
        assert_solves(&format!("{n}: A A^-1 = I"), &a, &inv, &eye);
    }
    let norm_a = norm(a.as_ref());
    assert_backward::<T>(
        &format!("{n}: reconstruct - A"),
        (chol.reconstruct() - &a).as_ref(),
        n,
        norm_a,
    );
    let owned = linalg::Cholesky::new(&a, exec).unwrap();
    assert_backward::<T>(
        &format!("{n}: owned factor - in-place factor"),
        (owned.l().to_mat() - l.to_mat()).as_ref(),
        n,
        norm(l.to_mat().as_ref()),
    );
}

#[test]
fn cholesky_solves_on_every_executor() {
    let team = team(2);
    let pool = Pool::builder().threads(2).build().unwrap();
    for n in [0, 1, 5, 64, 300] {
        cholesky_solves::<f64>(&Exec::serial(), n);
        cholesky_solves::<f64>(&team, n);
        cholesky_solves::<c64>(&team, n);
        cholesky_solves::<c64>(&Exec::new(&pool, 2).unwrap(), n);
        cholesky_solves::<f64>(&team.exec(2), n);
    }
}

#[test]
fn cholesky_errors_are_typed_and_keep_the_input() {
    let team = team(2);
    let mut a = Mat::<f64>::zeros(3, 4);
    assert_eq!(
        linalg::cholesky(a.as_mut(), &team).err(),
        Some(LinalgError::NotSquare {
            op: "cholesky",
            operand: "A",
            rows: 3,
            cols: 4
        })
    );
    let mut a = spd::<f64>(100);
    a[(70, 20)] = f64::NAN;
    let before = a.clone();
    assert_eq!(
        linalg::cholesky(a.as_mut(), &team).err(),
        Some(LinalgError::NotFinite {
            op: "cholesky",
            operand: "A",
            row: 70,
            col: 20
        })
    );
    assert!(
        (0..100).all(|j| (0..100).all(|i| a[(i, j)].to_bits() == before[(i, j)].to_bits())),
        "the input is unchanged"
    );
    // Huge but finite entries whose column sum overflows are not "not finite".
    let mut a = Mat::from_fn(2, 2, |i, j| if i >= j { 1e308 } else { 0.0 });
    let r = linalg::cholesky(a.as_mut(), &team).err();
    assert!(!matches!(r, Some(LinalgError::NotFinite { .. })), "{r:?}");
    let mut a = spd::<f64>(200);
    a[(150, 150)] = -1e6;
    let before = a.clone();
    let not_pd = Some(LinalgError::NotPositiveDefinite {
        op: "cholesky",
        index: 150,
    });
    // The owned factorization leaves `a` as it was; the in-place one leaves a partial factor.
    assert_eq!(linalg::Cholesky::new(&a, &team).err(), not_pd);
    assert_eq!(a, before);
    assert_eq!(linalg::cholesky(a.as_mut(), &team).err(), not_pd);
    assert_ne!(a, before);
    let mut a = spd::<f64>(10);
    let chol = linalg::cholesky(a.as_mut(), &team).unwrap();
    let b = Mat::<f64>::ones(11, 1);
    assert!(matches!(
        chol.solve(b.as_ref(), &team),
        Err(LinalgError::ShapeMismatch { op: "solve", .. })
    ));
    // Every error prints a sentence naming the operation.
    for e in [
        LinalgError::NotPositiveDefinite {
            op: "cholesky",
            index: 3,
        },
        LinalgError::Singular {
            op: "solve",
            index: 2,
        },
    ] {
        assert!(e.to_string().contains("pivot"), "{e}");
        assert!(e.to_string().starts_with(e.op()), "{e}");
    }
}

/// The NaN policy: every call refuses a non-finite entry of what it reads, names the operand
/// and the entry, and writes nothing; `check_finite(false)` lets NaN through.
#[test]
fn every_call_refuses_non_finite_input_alike() {
    let ex = Exec::serial();
    let nan_at = |m: &Mat<f64>, i: usize, j: usize| {
        let mut m = m.clone();
        m[(i, j)] = f64::NAN;
        m
    };
    let not_finite = |op, operand, row, col| {
        Err(LinalgError::NotFinite {
            op,
            operand,
            row,
            col,
        })
    };
    let a = mat::<f64>(6, 6, 0.3);
    let b = mat::<f64>(6, 2, 0.7);
    let mut c = Mat::<f64>::ones(6, 2);
    let keep = c.clone();
    let mm = |c: &mut Mat<f64>, acc, a: &Mat<f64>, b: &Mat<f64>, alpha| {
        linalg::matmul(c, acc, a, b, alpha, &ex)
    };
    assert_eq!(
        mm(&mut c, Accum::Replace, &nan_at(&a, 4, 1), &b, 1.0),
        not_finite("matmul", "A", 4, 1)
    );
    assert_eq!(
        mm(&mut c, Accum::Replace, &a, &nan_at(&b, 5, 0), 1.0),
        not_finite("matmul", "B", 5, 0)
    );
    assert_eq!(
        mm(&mut c, Accum::Replace, &a, &b, f64::INFINITY),
        not_finite("matmul", "alpha", 0, 0)
    );
    let mut c_nan = nan_at(&c, 2, 1);
    assert_eq!(
        mm(&mut c_nan, Accum::Add, &a, &b, 1.0),
        not_finite("matmul", "C", 2, 1)
    );
    assert_eq!(c, keep, "refused calls wrote nothing");
    // C is not read when it is replaced.
    assert_eq!(mm(&mut c_nan, Accum::Replace, &a, &b, 1.0), Ok(()));

    use linalg::{Diag, SolveSide, Triangle};
    let solve = |t: &Mat<f64>, b: &mut Mat<f64>, tri, diag| {
        linalg::solve_triangular(t, b, SolveSide::Left, tri, diag, &ex)
    };
    let lower = Mat::<f64>::from_fn(6, 6, |i, j| {
        if i == j {
            2.0
        } else if i > j {
            0.1
        } else {
            0.0
        }
    });
    let mut x = b.clone();
    assert_eq!(
        solve(
            &nan_at(&lower, 3, 2),
            &mut x,
            Triangle::Lower,
            Diag::NonUnit
        ),
        not_finite("solve_triangular", "T", 3, 2)
    );
    // A NaN outside the triangle read (or on a unit diagonal) is not read.
    assert_eq!(
        solve(
            &nan_at(&lower, 2, 3),
            &mut x.clone(),
            Triangle::Lower,
            Diag::NonUnit
        ),
        Ok(())
    );
    assert_eq!(
        solve(
            &nan_at(&lower, 3, 3),
            &mut x.clone(),
            Triangle::Lower,
            Diag::Unit
        ),
        Ok(())
    );
    let mut xb = nan_at(&b, 1, 1);
    assert_eq!(
        solve(&lower, &mut xb, Triangle::Lower, Diag::NonUnit),
        not_finite("solve_triangular", "B", 1, 1)
    );
    assert_eq!(x, b);

    let mut f = nan_at(&a, 0, 5);
    let keep_f = f.clone();
    assert_eq!(
        linalg::lu(f.as_mut(), &ex).err(),
        not_finite("lu", "A", 0, 5).err()
    );
    assert_eq!(f.as_ref().col(0), keep_f.as_ref().col(0));
    assert_eq!(
        linalg::Lu::new(&nan_at(&a, 0, 5), &ex).err(),
        not_finite("lu", "A", 0, 5).err()
    );
    let lu = linalg::Lu::new(&a, &ex).unwrap();
    assert_eq!(
        lu.solve(&nan_at(&b, 3, 0), &ex).err(),
        not_finite("solve", "B", 3, 0).err()
    );
    assert_eq!(
        lu.solve_transpose(&nan_at(&b, 3, 0), &ex).err(),
        not_finite("solve_transpose", "B", 3, 0).err()
    );
    let spd = spd::<f64>(6);
    let chol = linalg::Cholesky::new(&spd, &ex).unwrap();
    assert_eq!(
        chol.solve(&nan_at(&b, 2, 1), &ex).err(),
        not_finite("solve", "B", 2, 1).err()
    );
    // Cholesky reads the lower triangle only.
    assert!(linalg::Cholesky::new(&nan_at(&spd, 0, 4), &ex).is_ok());

    // Unchecked: NaN goes through, as IEEE arithmetic carries it.
    let unchecked = linalg::Options::new().check_finite(false);
    let mut c = Mat::<f64>::zeros(6, 2);
    linalg::matmul_with(
        &mut c,
        Accum::Replace,
        &nan_at(&a, 4, 1),
        &b,
        1.0,
        &ex,
        &unchecked,
    )
    .unwrap();
    assert!(c[(4, 0)].is_nan() && !c[(3, 0)].is_nan());
    let lu = linalg::Lu::new_with(&nan_at(&a, 4, 1), &ex, &unchecked).unwrap();
    assert!((0..6).any(|i| lu.factors()[(i, 5)].is_nan()));
    let err = linalg::Cholesky::new_with(&nan_at(&spd, 0, 0), &ex, &unchecked).err();
    assert!(
        matches!(err, Some(LinalgError::NotPositiveDefinite { index: 0, .. })),
        "{err:?}"
    );
}

/// Conjugated views go in without a copy by the caller, and give what faer gives.
#[test]
fn conjugated_views_are_inputs() {
    let team = team(2);
    let a = mat::<c64>(40, 30, 0.3);
    let b = mat::<c64>(40, 20, 0.6);
    let mut c = Mat::<c64>::zeros(30, 20);
    linalg::matmul(
        &mut c,
        Accum::Replace,
        a.adjoint(),
        &b,
        c64::new(1.0, 0.0),
        &team,
    )
    .unwrap();
    let want = a.adjoint() * &b;
    assert!((&c - &want).norm_max() < 1e-10);
    let mut c2 = Mat::<c64>::zeros(30, 20);
    linalg::matmul(
        &mut c2,
        Accum::Replace,
        a.transpose(),
        b.conjugate(),
        c64::new(1.0, 0.0),
        &team,
    )
    .unwrap();
    assert!((&c2 - a.transpose() * b.conjugate()).norm_max() < 1e-10);

    // A conjugated triangle: conj(T) X = B.
    let t = Mat::<c64>::from_fn(30, 30, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Equal => c64::new(3.0, 1.0),
        std::cmp::Ordering::Greater => c64::new(0.1 * i as f64, -0.2),
        std::cmp::Ordering::Less => c64::new(0.0, 0.0),
    });
    let rhs = mat::<c64>(30, 4, 0.2);
    let mut x = rhs.clone();
    use linalg::{Diag, SolveSide, Triangle};
    linalg::solve_triangular(
        t.conjugate(),
        &mut x,
        SolveSide::Left,
        Triangle::Lower,
        Diag::NonUnit,
        &team,
    )
    .unwrap();
    assert!((t.conjugate() * &x - &rhs).norm_max() < 1e-10);

    // The owned factorizations of an adjoint: A^H = P^T L U.
    let sq = mat::<c64>(25, 25, 0.8);
    let lu = linalg::Lu::new(sq.adjoint(), &team).unwrap();
    let sqh = sq.adjoint().to_owned();
    assert_backward::<c64>(
        "reconstruct - A^H",
        (lu.reconstruct() - &sqh).as_ref(),
        25,
        norm(sqh.as_ref()),
    );
    let x = lu.solve(rhs.subrows(0, 25).conjugate(), &team).unwrap();
    assert_solves(
        "A^H X = conj(B)",
        &sqh,
        &x,
        &rhs.subrows(0, 25).conjugate().to_owned(),
    );
}

/// The scratch variants factor from the caller's stack, and give what the plain calls give.
#[test]
fn scratch_variants_match() {
    use faer::dyn_stack::{MemBuffer, MemStack};
    let team = team(2);
    let opts = linalg::Options::new();
    let a = mat::<f64>(120, 120, 0.4);
    let mut buf = MemBuffer::new(linalg::lu_scratch::<f64>(120, 120));
    let (mut f1, mut f2) = (a.clone(), a.clone());
    let lu1 = linalg::lu_with_scratch(f1.as_mut(), &team, &opts, MemStack::new(&mut buf)).unwrap();
    let lu2 = linalg::lu(f2.as_mut(), &team).unwrap();
    // (The two calls may run at other widths, so compare up to rounding.)
    assert_eq!(lu1.p().arrays().0, lu2.p().arrays().0);
    assert_backward::<f64>(
        "LU factors, scratch - plain",
        (lu1.factors() - lu2.factors()).as_ref(),
        120,
        norm(lu2.factors()),
    );
    let s = spd::<f64>(120);
    let mut buf = MemBuffer::new(linalg::cholesky_scratch::<f64>(120));
    let (mut g1, mut g2) = (s.clone(), s.clone());
    let c1 =
        linalg::cholesky_with_scratch(g1.as_mut(), &team, &opts, MemStack::new(&mut buf)).unwrap();
    let c2 = linalg::cholesky(g2.as_mut(), &team).unwrap();
    assert_backward::<f64>(
        "Cholesky factor, scratch - plain",
        (c1.l().to_mat() - c2.l().to_mat()).as_ref(),
        120,
        norm(c2.l().to_mat().as_ref()),
    );
}

/// One error story: pool, team and linear-algebra errors meet in `teamalg::Error` through `?`.
#[test]
fn errors_convert_into_the_crate_error() {
    fn solve_once(n: usize) -> Result<Mat<f64>, teamalg::Error> {
        let team = Pool::builder().threads(2).build()?.into_team(2)?;
        let a = Mat::<f64>::identity(n, n);
        let lu = linalg::Lu::new(&a, &team)?;
        Ok(lu.solve(Mat::<f64>::ones(3, 1), &team)?)
    }
    assert!(solve_once(3).is_ok());
    let err = solve_once(4).unwrap_err();
    assert!(
        matches!(
            err,
            teamalg::Error::Linalg(LinalgError::ShapeMismatch { found: 3, .. })
        ),
        "{err}"
    );
    assert_eq!(err.to_string(), "solve: B has 3 rows, 4 expected");
    assert!(std::error::Error::source(&err).is_some());
    let refused: teamalg::Error = teamalg::Refused::Busy.into();
    assert!(matches!(
        refused,
        teamalg::Error::Refused(teamalg::Refused::Busy)
    ));
}

/// A factorization is `Sync`: threads share one and solve with it at once, each on its own
/// executor (a team is led by one thread at a time, so each thread brings its own).
#[test]
fn one_factorization_solves_on_many_threads() {
    let a = mat::<f64>(80, 80, 0.5);
    let lu = linalg::Lu::new(&a, &Exec::serial()).unwrap();
    let chol = linalg::Cholesky::new(&spd::<f64>(80), &Exec::serial()).unwrap();
    std::thread::scope(|s| {
        for k in 0..3 {
            let (lu, chol, a) = (&lu, &chol, &a);
            s.spawn(move || {
                let team = team(2);
                let b = mat::<f64>(80, 2, 0.1 * k as f64);
                for _ in 0..20 {
                    let x = lu.solve(&b, &team).unwrap();
                    assert_solves("A X = B", a, &x, &b);
                    chol.solve(&b, &Exec::serial()).unwrap();
                }
            });
        }
    });
}

/// Every `_with_scratch` form given too little scratch says so with a typed error naming both
/// sizes, and writes nothing.
#[test]
fn undersized_scratch_is_a_typed_error() {
    use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
    use teamalg::linalg::Options;

    let n = 96;
    let a = mat::<f64>(n, n, 0.4);
    let spd = spd::<f64>(n);
    let o = Options::new();
    let mut small = MemBuffer::new(StackReq::new::<u8>(16));
    let held = MemStack::new(&mut small).len_bytes();
    let expect = |op: &'static str, needed: StackReq, err: LinalgError| {
        let needed = needed.unaligned_bytes_required();
        assert!(needed > held, "{op}: the test's stack must be too small");
        assert_eq!(err, LinalgError::ScratchTooSmall { op, needed, held });
        assert!(
            err.to_string()
                .contains(&format!("holds {held} bytes, {needed} needed"))
        );
    };
    let e = &Exec::serial();
    let mut w = a.clone();
    let err = linalg::lu_with_scratch(w.as_mut(), e, &o, MemStack::new(&mut small)).unwrap_err();
    expect("lu", linalg::lu_scratch::<f64>(n, n), err);
    let mut w2 = spd.clone();
    let err =
        linalg::cholesky_with_scratch(w2.as_mut(), e, &o, MemStack::new(&mut small)).unwrap_err();
    expect("cholesky", linalg::cholesky_scratch::<f64>(n), err);
    let err = linalg::qr_with_scratch(w.as_mut(), e, &o, MemStack::new(&mut small)).unwrap_err();
    expect("qr", linalg::qr_scratch::<f64>(n, n, 1), err);
    let err =
        linalg::col_piv_qr_with_scratch(w.as_mut(), e, &o, MemStack::new(&mut small)).unwrap_err();
    expect("col_piv_qr", linalg::col_piv_qr_scratch::<f64>(n, n), err);
    assert!(
        w.as_ref() == a.as_ref() && w2.as_ref() == spd.as_ref(),
        "nothing written"
    );
    let (mut s, mut u, mut v) = (
        vec![7.0; n],
        Mat::<f64>::zeros(n, n),
        Mat::<f64>::zeros(n, n),
    );
    let err = linalg::svd_into_with_scratch(
        a.as_ref(),
        &mut s,
        Some(u.as_mut()),
        Some(v.as_mut()),
        e,
        &o,
        MemStack::new(&mut small),
    )
    .unwrap_err();
    expect("svd", linalg::svd_scratch::<f64>(n, n, true), err);
    let err = linalg::self_adjoint_eigen_into_with_scratch(
        spd.as_ref(),
        &mut s,
        Some(u.as_mut()),
        e,
        &o,
        MemStack::new(&mut small),
    )
    .unwrap_err();
    expect(
        "self_adjoint_eigen",
        linalg::self_adjoint_eigen_scratch::<f64>(n, true),
        err,
    );
    assert!(
        s.iter().all(|&x| x == 7.0) && u.norm_max() == 0.0 && v.norm_max() == 0.0,
        "nothing written"
    );
}
