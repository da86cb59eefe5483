//! The vectors the facade hands out and the refusals around them: `svd_into`'s full `U` and `V`
//! orthonormal whatever the caller's buffer held, `Eigen`'s eigenvectors of unit 2-norm, and a
//! triangular solve with an exact zero on a read diagonal refused as `Singular` (with `B`
//! unchanged). Residuals are held to `C u n ||A||` ([`sample::C`], LAPACK's 30).

use faer::complex::Complex;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::traits::math_utils::{from_f64, imag, real};
use faer::{Mat, MatRef, c32, c64};
use teamalg::Exec;
use teamalg::linalg::{self, Diag, Eigen, LinalgError, Options, SolveSide, Triangle};

use super::sample;
use sample::{C, Sample, backward_bound, mat};

// ---------------------------------------------------------------------------------------------
// svd_into's full factors

/// `||Q^H Q - I||_F`, in `f64`.
fn orth_err<T: Sample>(q: MatRef<'_, T>) -> f64 {
    let g = q.adjoint() * q;
    let mut s = 0.0f64;
    for j in 0..g.ncols() {
        for i in 0..g.nrows() {
            let want = if i == j { T::one() } else { from_f64::<T>(0.0) };
            let d = T::err(g[(i, j)], want);
            s += d * d;
        }
    }
    s.sqrt()
}

/// `svd_into` of `a` with the factors asked for (`true`: full, `false`: thin, `None`: absent),
/// each buffer filled with `fill` first, through `svd_into` and `svd_into_with_scratch`;
/// checks the factors orthonormal and `A = U_k diag(s) V_k^H`, both to `C u n`.
fn full_factors<T: Sample>(a: &Mat<T>, full_u: Option<bool>, full_v: Option<bool>, fill: T) {
    let (m, n) = (a.nrows(), a.ncols());
    let k = m.min(n);
    let big = m.max(n).max(1);
    for scratch in [false, true] {
        let cols = |full: bool, rows: usize| if full { rows } else { k };
        let mut u = full_u.map(|f| Mat::<T>::from_fn(m, cols(f, m), |_, _| fill));
        let mut v = full_v.map(|f| Mat::<T>::from_fn(n, cols(f, n), |_, _| fill));
        let mut s = vec![from_f64::<T::Real>(-1.0); k];
        let o = Options::new();
        let (uo, vo) = (
            u.as_mut().map(|x| x.as_mut()),
            v.as_mut().map(|x| x.as_mut()),
        );
        if scratch {
            let req = linalg::svd_scratch::<T>(m, n, uo.is_some() || vo.is_some());
            let mut buf = MemBuffer::new(req);
            let stack = MemStack::new(&mut buf);
            linalg::svd_into_with_scratch(a, &mut s, uo, vo, &Exec::serial(), &o, stack)
        } else {
            linalg::svd_into(a, &mut s, uo, vo, &Exec::serial(), &o)
        }
        .unwrap();
        let what = format!(
            "{m}x{n} {}, U {full_u:?}, V {full_v:?}",
            std::any::type_name::<T>()
        );
        for (name, q) in [("U", &u), ("V", &v)] {
            if let Some(q) = q {
                let e = orth_err(q.as_ref());
                let bound = C * T::unit() * big as f64 * (q.ncols().max(1) as f64).sqrt();
                assert!(
                    e <= bound,
                    "{what}: ||{name}^H {name} - I|| = {e:e} > {bound:e}\n{q:?}"
                );
            }
        }
        if let (Some(u), Some(v)) = (&u, &v) {
            let us = Mat::<T>::from_fn(m, k, |i, j| {
                faer::traits::math_utils::mul_real(&u[(i, j)], &s[j])
            });
            let r = us * v.as_ref().subcols(0, k).adjoint() - a;
            let (got, bound) = (
                sample::norm(r.as_ref()),
                backward_bound::<T>(big, sample::norm(a.as_ref())),
            );
            assert!(
                got <= bound,
                "{what}: ||U S V^H - A|| = {got:e} > {bound:e}"
            );
        }
    }
}

fn svd_full_factors_for<T: Sample>() {
    let seven = from_f64::<T>(7.0);
    let nan = from_f64::<T>(f64::NAN);
    // The sweep's cases: a 1x2 zero matrix with a full V, a row with a full V, a column with a
    // full U; each buffer full of sevens (or NaN) beforehand.
    full_factors(&Mat::<T>::zeros(1, 2), Some(true), Some(true), seven);
    full_factors(&Mat::<T>::zeros(1, 2), None, Some(true), seven);
    let row = Mat::<T>::from_fn(1, 3, |_, j| from_f64::<T>(j as f64 + 1.0));
    full_factors(&row, Some(true), Some(true), seven);
    full_factors(&row, None, Some(true), nan);
    full_factors(&row.transpose().to_owned(), Some(true), None, seven);
    full_factors(&row.transpose().to_owned(), Some(true), Some(true), nan);
    // Not only min(m, n) = 1: every shape faer reduces by a QR first (longer than 11/6 times
    // wide) with a full factor, and the square-ish ones, thin and full.
    for (m, n) in [
        (4, 2),
        (2, 5),
        (10, 3),
        (3, 10),
        (7, 6),
        (6, 7),
        (5, 5),
        (40, 4),
    ] {
        let a = mat::<T>(m, n, 0.375);
        full_factors(&a, Some(true), Some(true), seven);
        full_factors(&a, Some(true), Some(false), nan);
        full_factors(&a, Some(false), Some(true), seven);
    }
    // Empty: the full factor of the nonempty side is the identity.
    full_factors(&Mat::<T>::zeros(0, 3), Some(true), Some(true), seven);
    full_factors(&Mat::<T>::zeros(3, 0), Some(true), Some(true), nan);
}

#[test]
fn svd_into_full_factors_orthonormal_whatever_the_buffer_held() {
    svd_full_factors_for::<f64>();
    svd_full_factors_for::<f32>();
    svd_full_factors_for::<c64>();
    svd_full_factors_for::<c32>();
}

#[test]
fn svd_into_refusal_of_a_nan_with_a_full_factor_writes_nothing() {
    // The kernel starts a full factor as the identity: the finiteness refusal must still come
    // before that write.
    let mut a = Mat::<f64>::zeros(1, 3);
    a[(0, 2)] = f64::NAN;
    let mut v = Mat::<f64>::from_fn(3, 3, |_, _| 7.0);
    let mut s = [7.0];
    let err = linalg::svd_into(
        &a,
        &mut s,
        None,
        Some(v.as_mut()),
        &Exec::serial(),
        &Options::new(),
    );
    assert!(
        matches!(
            err,
            Err(LinalgError::NotFinite {
                op: "svd",
                operand: "A",
                row: 0,
                col: 2
            })
        ),
        "{err:?}"
    );
    assert_eq!((s, v), ([7.0], Mat::<f64>::from_fn(3, 3, |_, _| 7.0)));
}

// ---------------------------------------------------------------------------------------------
// Eigen's eigenvectors

/// Checks every column of `V` of unit 2-norm and `||A V - V diag(w)|| <= C u n ||A|| ||V||`.
fn unit_vectors<T: Sample>(what: &str, a: &Mat<T>) {
    let n = a.nrows();
    let evd = Eigen::new(a, &Exec::serial()).unwrap();
    let (w, v) = (evd.eigenvalues(), evd.eigenvectors());
    // `real_f64` is a magnitude: the sign is put back.
    let f = |x: T::Real| {
        let m = sample::real_f64::<T>(x);
        if x < from_f64::<T::Real>(0.0) { -m } else { m }
    };
    let to64 = |x: &Complex<T::Real>| c64::new(f(x.re), f(x.im));
    let v64 = Mat::<c64>::from_fn(n, n, |i, j| to64(&v[(i, j)]));
    let a64 = Mat::<c64>::from_fn(n, n, |i, j| {
        c64::new(f(real(&a[(i, j)])), f(imag(&a[(i, j)])))
    });
    let tol = C * T::unit() * n as f64;
    for j in 0..n {
        let norm = v64.col(j).norm_l2();
        assert!(
            (norm - 1.0).abs() <= tol,
            "{what}: ||v_{j}|| = {norm} (V = {v64:?})"
        );
    }
    let vd = Mat::<c64>::from_fn(n, n, |i, j| v64[(i, j)] * to64(&w[j]));
    let r = (&a64 * &v64 - vd).norm_l2();
    let bound = tol * a64.norm_l2() * v64.norm_l2();
    assert!(r <= bound, "{what}: ||A V - V D|| = {r:e} > {bound:e}");
}

#[test]
fn eigenvectors_have_unit_norm() {
    // The sweep's cases: a nilpotent Jordan block (defective; the vector came back of norm
    // 4.5e15), a rotation (a conjugate pair: norm sqrt(2)), a complex triangular matrix.
    unit_vectors("[[0,0],[-1,0]]", &faer::mat![[0.0, 0.0], [-1.0, 0.0f64]]);
    unit_vectors("[[0,1],[-1,0]]", &faer::mat![[0.0, 1.0], [-1.0, 0.0f64]]);
    unit_vectors(
        "[[0,1],[-1,0]] f32",
        &faer::mat![[0.0, 1.0], [-1.0, 0.0f32]],
    );
    let z = c64::new(0.0, 0.0);
    unit_vectors(
        "c64 [[0,-1],[0,i]]",
        &faer::mat![[z, c64::new(-1.0, 0.0)], [z, c64::new(0.0, 1.0)]],
    );
    unit_vectors(
        "jordan 3",
        &faer::mat![[2.0, 1.0, 0.0], [0.0, 2.0, 1.0], [0.0, 0.0, 2.0f64]],
    );
    unit_vectors("zero", &Mat::<f64>::zeros(3, 3));
    // Tiny and huge entries: the vectors are scale-free. (faer's own EVD fails near the ends
    // of the range, normalized or not: at 1e-300 its residual is lost to underflow, at 1e300
    // a vector overflows to NaN.)
    unit_vectors(
        "tiny",
        &Mat::<f64>::from_fn(3, 3, |i, j| 1e-150 * sample::val(i, j, 0.5)),
    );
    unit_vectors(
        "huge",
        &Mat::<f64>::from_fn(3, 3, |i, j| 1e150 * sample::val(i, j, 0.5)),
    );
    unit_vectors("random f64", &mat::<f64>(9, 9, 0.125));
    unit_vectors("random f32", &mat::<f32>(9, 9, 0.125));
    unit_vectors("random c64", &mat::<c64>(9, 9, 0.125));
    unit_vectors("random c32", &mat::<c32>(9, 9, 0.125));
    // A defective matrix keeps its refusal of the inverse through V.
    let jordan = faer::mat![[1.0, 1.0], [0.0, 1.0f64]];
    let e = Exec::serial();
    let err = Eigen::new(&jordan, &e).unwrap().inverse(&e).unwrap_err();
    assert!(
        matches!(err, LinalgError::IllConditioned { op: "inverse", .. }),
        "{err:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Triangular solves with a zero on the diagonal

fn singular(op: &'static str, index: usize) -> Result<(), LinalgError> {
    Err(LinalgError::Singular { op, index })
}

#[test]
fn triangular_solve_refuses_a_zero_diagonal() {
    let e = Exec::serial();
    let (left, right) = (SolveSide::Left, SolveSide::Right);
    let (lower, upper) = (Triangle::Lower, Triangle::Upper);
    // The sweep's case: T = [[0]], B = [[0]] gave NaN.
    let t = Mat::<f64>::zeros(1, 1);
    let mut b = Mat::<f64>::zeros(1, 1);
    assert_eq!(
        linalg::solve_triangular(&t, &mut b, left, lower, Diag::NonUnit, &e),
        singular("solve_triangular", 0)
    );
    assert_eq!(b, Mat::<f64>::zeros(1, 1));
    // The first zero is named, on either side and triangle; B is as it was.
    let t = Mat::<f64>::from_fn(
        4,
        4,
        |i, j| if i == j { [3.0, 0.0, 2.0, 0.0][i] } else { 1.0 },
    );
    let b0 = mat::<f64>(4, 3, 0.5);
    for (side, tri) in [(left, lower), (left, upper), (right, lower), (right, upper)] {
        let mut b = if side == left {
            b0.clone()
        } else {
            b0.transpose().to_owned()
        };
        let keep = b.clone();
        let r = linalg::solve_triangular(&t, &mut b, side, tri, Diag::NonUnit, &e);
        assert_eq!(r, singular("solve_triangular", 1), "{side:?} {tri:?}");
        assert_eq!(b, keep);
        // A unit diagonal is not read: the zeros do not matter.
        let r = linalg::solve_triangular(&t, &mut b, side, tri, Diag::Unit, &e);
        assert_eq!(r, Ok(()));
    }
    // A conjugated view, complex; and without the finiteness check: a zero is no NaN, it is
    // refused either way.
    let tc = Mat::<c64>::from_fn(3, 3, |i, j| {
        if i == j && i == 2 {
            c64::new(0.0, 0.0)
        } else {
            c64::new(1.0, (i + j) as f64)
        }
    });
    let mut bc = mat::<c64>(3, 2, 0.25);
    let keep = bc.clone();
    assert_eq!(
        linalg::solve_triangular(tc.conjugate(), &mut bc, left, upper, Diag::NonUnit, &e),
        singular("solve_triangular", 2)
    );
    let unchecked = Options::new().check_finite(false);
    assert_eq!(
        linalg::solve_triangular_with(&tc, &mut bc, left, lower, Diag::NonUnit, &e, &unchecked),
        singular("solve_triangular", 2)
    );
    assert_eq!(bc, keep);
    // A NaN on the diagonal is not a zero: unchecked, it propagates (the NaN policy).
    let mut tn = Mat::<f64>::identity(2, 2);
    tn[(1, 1)] = f64::NAN;
    let mut bn = Mat::<f64>::ones(2, 1);
    let r = linalg::solve_triangular_with(&tn, &mut bn, left, lower, Diag::NonUnit, &e, &unchecked);
    assert_eq!(r, Ok(()));
    assert!(bn[(1, 0)].is_nan());
    // An empty T has no diagonal to refuse.
    let mut be = Mat::<f64>::zeros(0, 2);
    assert_eq!(
        linalg::solve_triangular(
            Mat::<f64>::zeros(0, 0),
            &mut be,
            left,
            lower,
            Diag::NonUnit,
            &e
        ),
        Ok(())
    );
}

#[test]
fn lu_factor_view_refuses_its_zero_pivot() {
    let e = Exec::serial();
    // Rank 1: the second pivot is exactly zero (2 - 0.5 * 4).
    let a = faer::mat![[1.0, 2.0], [2.0, 4.0f64]];
    let lu = linalg::Lu::new(&a, &e).unwrap();
    assert!(lu.is_singular());
    let mut b = Mat::<f64>::ones(2, 1);
    assert_eq!(
        lu.u().solve_in_place(b.as_mut(), SolveSide::Left, &e),
        singular("solve_in_place", 1)
    );
    assert_eq!(b, Mat::<f64>::ones(2, 1));
    let mut b = Mat::<f64>::ones(1, 2);
    assert_eq!(
        lu.u().solve_in_place(b.as_mut(), SolveSide::Right, &e),
        singular("solve_in_place", 1)
    );
    assert_eq!(b, Mat::<f64>::ones(1, 2));
    // L's unit diagonal is never zero.
    let mut b = Mat::<f64>::ones(2, 1);
    assert_eq!(
        lu.l().solve_in_place(b.as_mut(), SolveSide::Left, &e),
        Ok(())
    );
    // A regular U solves as before, to the backward-error bound.
    let a = mat::<f64>(5, 5, 0.75);
    let lu = linalg::Lu::new(&a, &e).unwrap();
    let u = lu.u().to_mat();
    let b0 = mat::<f64>(5, 2, 0.5);
    let mut x = b0.clone();
    lu.u()
        .solve_in_place(x.as_mut(), SolveSide::Left, &e)
        .unwrap();
    let r = &u * &x - &b0;
    let scale = sample::norm(u.as_ref()) * sample::norm(x.as_ref()) + sample::norm(b0.as_ref());
    sample::assert_backward::<f64>("U X - B", r.as_ref(), 5, scale);
}
