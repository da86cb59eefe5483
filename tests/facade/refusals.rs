//! Refusals that must describe the operands as the caller passed them: the right solves name
//! `B`'s own rows and columns (not its transpose's), the Hermitian check refuses a NaN or an
//! infinity in the triangle not read, the self-adjoint EVD names the caller's entry when it
//! reads the upper triangle, `norm_l1` carries a NaN through, and `ColPivQr::lstsq` names no
//! inner operation.

use faer::{Mat, c64};
use teamalg::Exec;
use teamalg::linalg::{
    self, Cholesky, ColPivQr, Dim, FullPivLu, Lblt, Ldlt, LinalgError, Lu, Options, Qr,
    SelfAdjointEigen, Side,
};

/// The right solves (`rsolve`, `rsolve_adjoint`, owned and in place) of one factorization
/// `$f` of order `n`: a NaN at `B[(1, 0)]` (`B`: `7 x n`) is named at `(1, 0)`, and a `B` with
/// `n + 1` columns is refused for its columns.
macro_rules! right_solves_name_b_as_passed {
    ($f:expr, $n:expr) => {{
        let (f, n, e) = (&$f, $n, Exec::serial());
        let mut b = Mat::<f64>::ones(7, n);
        b[(1, 0)] = f64::NAN;
        let nan = |op| LinalgError::NotFinite {
            op,
            operand: "B",
            row: 1,
            col: 0,
        };
        assert_eq!(f.rsolve(&b, &e).unwrap_err(), nan("rsolve"));
        assert_eq!(f.rsolve_adjoint(&b, &e).unwrap_err(), nan("rsolve_adjoint"));
        let mut x = b.clone();
        assert_eq!(f.rsolve_in_place(&mut x, &e).unwrap_err(), nan("rsolve"));
        assert_eq!(
            f.rsolve_adjoint_in_place(&mut x, &e).unwrap_err(),
            nan("rsolve_adjoint")
        );
        let wide = Mat::<f64>::ones(3, n + 1);
        let cols = |op| LinalgError::ShapeMismatch {
            op,
            operand: "B",
            dim: Dim::Cols,
            expected: n,
            found: n + 1,
        };
        assert_eq!(f.rsolve(&wide, &e).unwrap_err(), cols("rsolve"));
        assert_eq!(
            f.rsolve_adjoint(&wide, &e).unwrap_err(),
            cols("rsolve_adjoint")
        );
    }};
}

#[test]
fn right_solves_name_b_as_passed() {
    let e = Exec::serial();
    let one = Mat::<f64>::from_fn(1, 1, |_, _| 2.0);
    let spd = Mat::<f64>::from_fn(3, 3, |i, j| if i == j { 4.0 } else { 1.0 });
    right_solves_name_b_as_passed!(Lu::new(&one, &e).unwrap(), 1);
    right_solves_name_b_as_passed!(Lu::new(&spd, &e).unwrap(), 3);
    right_solves_name_b_as_passed!(FullPivLu::new(&spd, &e).unwrap(), 3);
    right_solves_name_b_as_passed!(Qr::new(&spd, &e).unwrap(), 3);
    right_solves_name_b_as_passed!(Cholesky::new(&spd, &e).unwrap(), 3);
    right_solves_name_b_as_passed!(Ldlt::new(&spd, &e).unwrap(), 3);
    right_solves_name_b_as_passed!(Lblt::new(&spd, &e).unwrap(), 3);
}

#[test]
fn an_empty_right_solve_names_b_columns() {
    let e = Exec::serial();
    let lu = Lu::new(Mat::<f64>::zeros(0, 0), &e).unwrap();
    // `B` is `0 x 1`: its one column is the mismatch, its rows are right.
    let b = Mat::<f64>::zeros(0, 1);
    let err = lu.rsolve_adjoint(&b, &e).unwrap_err();
    assert_eq!(
        err,
        LinalgError::ShapeMismatch {
            op: "rsolve_adjoint",
            operand: "B",
            dim: Dim::Cols,
            expected: 0,
            found: 1
        }
    );
    assert_eq!(
        err.to_string(),
        "rsolve_adjoint: B has 1 columns, 0 expected"
    );
    // A `B` with no column but rows is a right-hand side for the empty `A`: solved as is.
    assert_eq!(
        lu.rsolve(Mat::<f64>::zeros(4, 0), &e).unwrap().shape(),
        (4, 0)
    );
}

/// Every Hermitian call with `check_hermitian(true)` and `side`: refuses `a` with
/// `NotHermitian { row, col }`.
fn every_hermitian_call_refuses(a: &Mat<f64>, side: Side, row: usize, col: usize) {
    let e = Exec::serial();
    let o = Options::new().check_hermitian(true).side(side);
    let not = |op| Err(LinalgError::NotHermitian { op, row, col });
    assert_eq!(Cholesky::new_with(a, &e, &o).map(|_| ()), not("cholesky"));
    let mut copy = a.clone();
    assert_eq!(
        linalg::cholesky_with(&mut copy, &e, &o).map(|_| ()),
        not("cholesky")
    );
    assert_eq!(Ldlt::new_with(a, &e, &o).map(|_| ()), not("ldlt"));
    assert_eq!(Lblt::new_with(a, &e, &o).map(|_| ()), not("lblt"));
    assert_eq!(
        SelfAdjointEigen::new_with(a, &e, &o).map(|_| ()),
        not("self_adjoint_eigen")
    );
    assert_eq!(
        linalg::self_adjoint_eigenvalues_with(a, &e, &o).map(|_| ()),
        not("self_adjoint_eigen")
    );
    let n = a.nrows();
    let (mut w, mut u) = (vec![0.0; n], Mat::<f64>::zeros(n, n));
    assert_eq!(
        linalg::self_adjoint_eigen_into(a, &mut w, Some(u.as_mut()), &e, &o),
        not("self_adjoint_eigen")
    );
}

#[test]
fn the_hermitian_check_refuses_a_non_finite_entry_in_the_triangle_not_read() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        // Lower read: the NaN above the diagonal differs from its mirror, 0.
        let mut a = Mat::<f64>::from_fn(2, 2, |i, j| if i == j { 2.0 } else { 0.0 });
        a[(0, 1)] = bad;
        every_hermitian_call_refuses(&a, Side::Lower, 1, 0);
        // Upper read: the same below the diagonal.
        let mut a = Mat::<f64>::from_fn(2, 2, |i, j| if i == j { 2.0 } else { 0.0 });
        a[(1, 0)] = bad;
        every_hermitian_call_refuses(&a, Side::Upper, 1, 0);
    }
}

#[test]
fn an_infinity_does_not_hide_another_difference() {
    // (1, 0) and (0, 1) differ by 4; the infinity at (0, 2), unread, must not make the
    // tolerance infinite: the first pair found is (1, 0).
    let mut a = Mat::<f64>::from_fn(3, 3, |i, j| if i == j { 9.0 } else { 0.0 });
    a[(1, 0)] = 1.0;
    a[(0, 1)] = 5.0;
    a[(0, 2)] = f64::INFINITY;
    every_hermitian_call_refuses(&a, Side::Lower, 1, 0);
}

#[test]
fn the_self_adjoint_evd_names_the_callers_entry_of_the_upper_triangle() {
    let e = Exec::serial();
    let o = Options::new().side(Side::Upper);
    let mut a = Mat::<f64>::from_fn(3, 3, |i, j| if i == j { 3.0 } else { 0.0 });
    a[(0, 1)] = f64::NAN;
    let nan = Err(LinalgError::NotFinite {
        op: "self_adjoint_eigen",
        operand: "A",
        row: 0,
        col: 1,
    });
    assert_eq!(SelfAdjointEigen::new_with(&a, &e, &o).map(|_| ()), nan);
    let (mut w, mut u) = (vec![0.0; 3], Mat::<f64>::zeros(3, 3));
    assert_eq!(
        linalg::self_adjoint_eigen_into(&a, &mut w, Some(u.as_mut()), &e, &o),
        nan
    );
    assert_eq!(
        linalg::self_adjoint_eigenvalues_with(&a, &e, &o).map(|_| ()),
        nan
    );
    // A conjugated view (copied first) is named at the same place.
    let z = Mat::<c64>::from_fn(3, 3, |i, j| a[(i, j)].into());
    let err = SelfAdjointEigen::new_with(z.conjugate(), &e, &o).map(|_| ());
    assert_eq!(err, nan);
}

#[test]
fn norm_l1_carries_a_nan_through() {
    let m = |rows: &[&[f64]]| Mat::<f64>::from_fn(rows.len(), rows[0].len(), |i, j| rows[i][j]);
    assert!(linalg::norm_l1(&m(&[&[f64::NAN]])).is_nan());
    assert!(linalg::norm_l1(&m(&[&[f64::NAN, -0.70], &[0.0, 0.0]])).is_nan());
    // A NaN column before a larger one, and after one.
    assert!(linalg::norm_l1(&m(&[&[f64::NAN, 5.0]])).is_nan());
    assert!(linalg::norm_l1(&m(&[&[5.0, f64::NAN]])).is_nan());
    // A NaN beside an infinity is NaN too (`dlange`), an infinity alone infinite.
    assert!(linalg::norm_l1(&m(&[&[f64::INFINITY, f64::NAN]])).is_nan());
    assert_eq!(linalg::norm_l1(&m(&[&[f64::INFINITY, 1.0]])), f64::INFINITY);
    let z = Mat::<c64>::from_fn(2, 2, |i, j| {
        if (i, j) == (1, 0) {
            c64::new(0.0, f64::NAN)
        } else {
            c64::new(-1.0, 1.0)
        }
    });
    assert!(linalg::norm_l1(&z).is_nan());
}

#[test]
fn col_piv_lstsq_names_itself_for_an_inner_refusal() {
    let e = Exec::serial();
    let o = Options::new().check_finite(false);
    // Unchecked, the NaN reaches the second QR (of `[R11 R12]^H`), whose solve refuses it
    // (an exact zero on its diagonal): the refusal is `lstsq`'s, the call the caller made.
    let rows = [[-1.0, -1.0, 1e-300, 2.0], [1e-300, f64::NAN, -1.0, 2.0]];
    let a = Mat::<f64>::from_fn(2, 4, |i, j| rows[i][j]);
    let qr = ColPivQr::new_with(&a, &e, &o).unwrap();
    let b = Mat::<f64>::ones(2, 1);
    let err = qr.lstsq(&b, &e).unwrap_err();
    assert_eq!(err.op(), "lstsq", "{err:?}");
    assert!(err.to_string().starts_with("lstsq: "), "{err}");
}
