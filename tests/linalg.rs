//! The facade `teamalg::linalg`: `lu` and `cholesky` objects on every kind of executor, their
//! solves and determinants against faer, and every user error typed, with the input kept.

use faer::linalg::matmul::matmul as faer_matmul;
use faer::traits::math_utils::zero;
use faer::{c64, Accum, Mat, Par};
use teamalg::kernels::par::Executor;
use teamalg::linalg::{self, LinalgError};
use teamalg::{Exec, Pool};

#[path = "common/sample.rs"]
mod sample;
use sample::{mat, team, Sample};

/// The largest entry of `A X - B`.
fn residual<T: Sample>(a: &Mat<T>, x: &Mat<T>, b: &Mat<T>) -> f64 {
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
    let mut worst = 0.0f64;
    for j in 0..r.ncols() {
        for i in 0..r.nrows() {
            worst = worst.max(T::err(r[(i, j)], zero()));
        }
    }
    worst
}

fn lu_solves<T: Sample>(exec: &impl Executor, n: usize) {
    let a = mat::<T>(n, n, 0.43);
    let b = mat::<T>(n, 5, 0.17);
    let mut f = a.clone();
    let lu = linalg::lu(f.as_mut(), exec);
    assert!(!lu.is_singular());
    let x = lu.solve(b.as_ref(), exec).unwrap();
    let r = residual(&a, &x, &b);
    assert!(r <= 1e3 * T::tol(n), "{n}: residual {r}");
    // P A = L U.
    let (l, u) = (lu.l(), lu.u());
    let mut prod = Mat::<T>::zeros(n, n);
    faer_matmul(
        prod.as_mut(),
        Accum::Replace,
        l.as_ref(),
        u.as_ref(),
        T::one(),
        Par::Seq,
    );
    for (i, &pi) in lu.p().iter().enumerate() {
        for j in 0..n {
            let e = T::err(prod[(i, j)], a[(pi, j)]);
            assert!(e <= 10.0 * T::tol(n), "{n}: (PA - LU)({i},{j}) = {e}");
        }
    }
    // The transposed and adjoint solves, the inverse and the reconstruction.
    let at = a.transpose().to_owned();
    let x = lu.solve_transpose(b.as_ref(), exec).unwrap();
    let r = residual(&at, &x, &b);
    assert!(r <= 1e3 * T::tol(n), "{n}: transposed residual {r}");
    let ah = Mat::<T>::from_fn(n, n, |i, j| faer::traits::math_utils::conj(&a[(j, i)]));
    let x = lu.solve_adjoint(b.as_ref(), exec).unwrap();
    let r = residual(&ah, &x, &b);
    assert!(r <= 1e3 * T::tol(n), "{n}: adjoint residual {r}");
    if n > 0 {
        let inv = lu.inverse(exec).unwrap();
        let eye = Mat::<T>::from_fn(n, n, |i, j| if i == j { T::one() } else { zero() });
        let r = residual(&a, &inv, &eye);
        assert!(r <= 1e3 * T::tol(n), "{n}: A A^-1 - I = {r}");
    }
    let back = lu.reconstruct();
    for j in 0..n {
        for i in 0..n {
            let e = T::err(back[(i, j)], a[(i, j)]);
            assert!(e <= 10.0 * T::tol(n), "{n}: reconstruct({i},{j}) = {e}");
        }
    }
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
        let got = linalg::lu(f.as_mut(), &team).determinant().unwrap();
        assert!(
            (got - want).abs() <= 1e-10 * want.abs().max(1.0),
            "{n}: {got} {want}"
        );
        let a = mat::<c64>(n, n, 0.77);
        let want = a.determinant();
        let mut f = a.clone();
        let got = linalg::lu(f.as_mut(), &team).determinant().unwrap();
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
    let lu = linalg::lu(a.as_mut(), &Exec::serial());
    assert_eq!(lu.zero_pivot(), Some(3));
    assert_eq!(lu.determinant(), Ok(0.0));
    let mut b = Mat::<f64>::ones(6, 1);
    let before = b.clone();
    assert_eq!(
        lu.solve_in_place(b.as_mut(), &Exec::serial()),
        Err(LinalgError::Singular { index: 3 })
    );
    assert_eq!(b, before, "a refused solve writes nothing");
}

#[test]
fn rectangular_lu_factors_but_has_no_determinant_or_solve() {
    let team = team(2);
    for (m, n) in [(9, 4), (4, 9)] {
        let a = mat::<f64>(m, n, 0.3);
        let mut f = a.clone();
        let lu = linalg::lu(f.as_mut(), &team);
        assert_eq!((lu.l().nrows(), lu.l().ncols()), (m, m.min(n)));
        assert_eq!((lu.u().nrows(), lu.u().ncols()), (m.min(n), n));
        assert_eq!(
            lu.determinant(),
            Err(LinalgError::NotSquare {
                op: "determinant",
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
    let lu = linalg::lu(a.as_mut(), &team);
    let b = Mat::<f64>::ones(4, 2);
    assert!(matches!(
        lu.solve(b.as_ref(), &team),
        Err(LinalgError::ShapeMismatch { op: "solve", .. })
    ));
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
    let r = residual(&a, &x, &b);
    assert!(r <= 1e3 * T::tol(n), "{n}: residual {r}");
    let l = chol.l();
    for i in 0..n {
        for j in i + 1..n {
            assert_eq!(T::err(l[(i, j)], zero()), 0.0);
        }
    }
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
    assert_eq!(
        linalg::cholesky(a.as_mut(), &team).err(),
        Some(LinalgError::NotPositiveDefinite { index: 150 })
    );
    let mut a = spd::<f64>(10);
    let chol = linalg::cholesky(a.as_mut(), &team).unwrap();
    let b = Mat::<f64>::ones(11, 1);
    assert!(matches!(
        chol.solve(b.as_ref(), &team),
        Err(LinalgError::ShapeMismatch { op: "solve", .. })
    ));
    // Every error prints a sentence naming the operation.
    for e in [
        LinalgError::NotPositiveDefinite { index: 3 },
        LinalgError::Singular { index: 2 },
    ] {
        assert!(e.to_string().contains("pivot"), "{e}");
    }
}
