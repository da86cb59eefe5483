//! `LDL^H` and Bunch-Kaufman: the factorizations back within the backward-error bound on
//! every scalar type and executor, their solves (left, transposed, adjoint, right), the
//! inertia against the self-adjoint EVD's signs, one result on every width of `LDL^H`'s
//! parallel path, determinants and their logarithms.

use faer::{Mat, MatRef, c32, c64};
use teamalg::Exec;
use teamalg::gates::{Family, ParThreshold};
use teamalg::kernels::par::Executor;
use teamalg::linalg::{self, Lblt, Ldlt, LinalgError, Options, Rotate, Side};

use super::sample;
use sample::{Sample, assert_backward, every_executor, hermitian, mat, norm, spd, team};

/// `[[S1, B], [B^H, -S2]]` with `S1`, `S2` positive definite: quasi-definite, so it has an
/// `LDL^H` without pivoting, with `n1` positive and `n2` negative pivots.
fn quasi_definite<T: Sample>(n1: usize, n2: usize, seed: f64) -> Mat<T> {
    let (s1, s2, b) = (
        spd::<T>(n1, seed),
        spd::<T>(n2, seed + 0.1),
        mat::<T>(n1, n2, seed + 0.2),
    );
    let n = n1 + n2;
    Mat::from_fn(n, n, |i, j| match (i < n1, j < n1) {
        (true, true) => s1[(i, j)],
        (true, false) => b[(i, j - n1)],
        (false, true) => faer::traits::math_utils::conj(&b[(j, i - n1)]),
        (false, false) => -s2[(i - n1, j - n1)],
    })
}

fn forced(family: Family, on: bool) -> Options {
    if on {
        Options::new().threshold(family, ParThreshold::Fixed(0))
    } else {
        Options::new()
    }
}

pub(crate) fn solves_back<T: Sample>(
    what: &str,
    a: MatRef<'_, T>,
    exec: &dyn Executor,
    solve: impl Fn(&Mat<T>, usize) -> Mat<T>,
) {
    let n = a.nrows();
    let nrm = norm(a);
    let b = mat::<T>(n, 3, 0.9);
    let x = solve(&b, 0);
    assert_backward::<T>(
        &format!("{what}: A X = B"),
        (a * &x - &b).as_ref(),
        n,
        nrm * norm(x.as_ref()).max(1.0),
    );
    let x = solve(&b, 1);
    assert_backward::<T>(
        &format!("{what}: A^T X = B"),
        (a.transpose() * &x - &b).as_ref(),
        n,
        nrm * norm(x.as_ref()).max(1.0),
    );
    let x = solve(&b, 2);
    assert_backward::<T>(
        &format!("{what}: A^H X = B"),
        (a.adjoint() * &x - &b).as_ref(),
        n,
        nrm * norm(x.as_ref()).max(1.0),
    );
    let bt = mat::<T>(3, n, 0.8);
    let x = solve(&bt, 3);
    assert_backward::<T>(
        &format!("{what}: X A = B"),
        (&x * a - &bt).as_ref(),
        n,
        nrm * norm(x.as_ref()).max(1.0),
    );
    let x = solve(&bt, 4);
    assert_backward::<T>(
        &format!("{what}: X A^H = B"),
        (&x * a.adjoint() - &bt).as_ref(),
        n,
        nrm * norm(x.as_ref()).max(1.0),
    );
    let _ = exec;
}

fn ldlt_case<T: Sample>() {
    every_executor(|exec, on| {
        for (n1, n2) in [(1, 0), (3, 2), (40, 30)] {
            let a = quasi_definite::<T>(n1, n2, 0.3);
            let n = n1 + n2;
            let f = Ldlt::new_with(&a, exec, &forced(Family::Ldlt, on)).unwrap();
            assert_backward::<T>(
                &format!("L D L^H, {n}"),
                (f.reconstruct() - &a).as_ref(),
                n,
                norm(a.as_ref()),
            );
            let i = f.inertia();
            assert_eq!(
                (i.positive, i.negative, i.zero),
                (n1, n2, 0),
                "inertia, {n}"
            );
            solves_back::<T>("ldlt", a.as_ref(), exec, |b, k| match k {
                0 => f.solve(b, exec).unwrap(),
                1 => f.solve_transpose(b, exec).unwrap(),
                2 => f.solve_adjoint(b, exec).unwrap(),
                3 => f.rsolve(b, exec).unwrap(),
                _ => f.rsolve_adjoint(b, exec).unwrap(),
            });
        }
    });
}

#[test]
fn ldlt_factors_and_solves_on_every_type_and_executor() {
    ldlt_case::<f64>();
    ldlt_case::<c64>();
    ldlt_case::<f32>();
    ldlt_case::<c32>();
}

#[test]
fn ldlt_agrees_on_every_width() {
    let a = quasi_definite::<f64>(80, 70, 0.4);
    let o = forced(Family::Ldlt, true);
    let two = Ldlt::new_with(&a, &team(2), &o).unwrap();
    let three = Ldlt::new_with(&a, &team(3), &o).unwrap();
    // A chunk's diagonal block takes a triangular product and the rest a GEMM, so an entry's
    // rounding depends on where the chunks fall: the widths agree to rounding, not in bits.
    let diff = (two.reconstruct() - three.reconstruct()).norm_max();
    assert!(diff <= 1e-12 * a.norm_max(), "{diff:e}");
}

#[test]
fn ldlt_refuses_a_zero_pivot() {
    let a = Mat::<f64>::from_fn(2, 2, |i, j| if i == j { 0.0 } else { 1.0 });
    let err = Ldlt::new(&a, &Exec::serial()).unwrap_err();
    assert_eq!(
        err,
        LinalgError::Singular {
            op: "ldlt",
            index: 0
        }
    );
    // Bunch-Kaufman factors it (a block of order 2).
    let f = Lblt::new(&a, &Exec::serial()).unwrap();
    assert_eq!(f.inertia().negative, 1);
    assert_eq!(f.determinant(), Ok(-1.0));
}

fn lblt_case<T: Sample + Rotate>() {
    every_executor(|exec, on| {
        for n in [1, 2, 9, 60, 100] {
            let a = hermitian::<T>(n, 0.5);
            let f = Lblt::new_with(&a, exec, &forced(Family::Lblt, on)).unwrap();
            let nrm = norm(a.as_ref());
            assert_backward::<T>(
                &format!("P^T L B L^H P, {n}"),
                (f.reconstruct() - &a).as_ref(),
                n,
                nrm,
            );
            // The inertia against the EVD's signs.
            let w = linalg::self_adjoint_eigenvalues(&a, exec).unwrap();
            let pos = w
                .iter()
                .filter(|&&x| format!("{x:?}").parse::<f64>().unwrap() > 0.0)
                .count();
            let i = f.inertia();
            assert_eq!(
                (i.positive, i.negative, i.zero),
                (pos, n - pos, 0),
                "inertia, {n}"
            );
            solves_back::<T>("lblt", a.as_ref(), exec, |b, k| match k {
                0 => f.solve(b, exec).unwrap(),
                1 => f.solve_transpose(b, exec).unwrap(),
                2 => f.solve_adjoint(b, exec).unwrap(),
                3 => f.rsolve(b, exec).unwrap(),
                _ => f.rsolve_adjoint(b, exec).unwrap(),
            });
        }
    });
}

#[test]
fn bunch_kaufman_factors_solves_and_counts_the_inertia() {
    lblt_case::<f64>();
    lblt_case::<c64>();
    lblt_case::<f32>();
    lblt_case::<c32>();
}

#[test]
fn determinants_and_their_logarithms_agree() {
    let a = hermitian::<f64>(12, 0.7);
    let f = Lblt::new(&a, &Exec::serial()).unwrap();
    let det = f.determinant().unwrap();
    let (sign, log) = f.slogdet().unwrap();
    assert!((sign * log.exp() - det).abs() <= 1e-10 * det.abs());
    let lu = linalg::Lu::new(&a, &Exec::serial()).unwrap();
    assert!((lu.determinant().unwrap() - det).abs() <= 1e-10 * det.abs());
    // 1e3 I of order 200: the determinant overflows, its logarithm does not.
    let big = Mat::<f64>::from_fn(200, 200, |i, j| if i == j { 1e3 } else { 0.0 });
    let log = Ldlt::new(&big, &Exec::serial())
        .unwrap()
        .log_abs_det()
        .unwrap();
    assert!((log - 600.0 * 10f64.ln()).abs() < 1e-9);
    let chol = linalg::Cholesky::new(&big, &Exec::serial()).unwrap();
    assert!((chol.log_abs_det().unwrap() - log).abs() < 1e-9);
    assert_eq!(chol.determinant(), Ok(f64::INFINITY));
}

#[test]
fn the_upper_triangle_and_the_hermitian_check() {
    let a = spd::<c64>(30, 0.2);
    // Only the upper triangle kept: the lower one poisoned.
    let upper = Mat::<c64>::from_fn(30, 30, |i, j| {
        if i <= j {
            a[(i, j)]
        } else {
            c64::new(f64::NAN, 0.0)
        }
    });
    let o = Options::new().side(Side::Upper).check_finite(true);
    let want = linalg::Cholesky::new(&a, &Exec::serial())
        .unwrap()
        .l()
        .to_mat();
    let got = linalg::Cholesky::new_with(&upper, &Exec::serial(), &o)
        .unwrap()
        .l()
        .to_mat();
    assert!((got - &want).norm_max() < 1e-12);
    let ldlt = Ldlt::new_with(&upper, &Exec::serial(), &o).unwrap();
    assert!((ldlt.reconstruct() - &a).norm_max() < 1e-10);
    let w = linalg::self_adjoint_eigenvalues_with(&upper, &Exec::serial(), &o).unwrap();
    let w0 = linalg::self_adjoint_eigenvalues(&a, &Exec::serial()).unwrap();
    assert!(w.iter().zip(&w0).all(|(x, y)| (x - y).abs() < 1e-10));
    // A non-Hermitian input is refused when asked, and read as its lower triangle when not.
    let mut b = a.clone();
    b[(3, 7)] += c64::new(1.0, 0.0);
    let checked = Options::new().check_hermitian(true);
    for err in [
        linalg::Cholesky::new_with(&b, &Exec::serial(), &checked).err(),
        Ldlt::new_with(&b, &Exec::serial(), &checked).err(),
        Lblt::new_with(&b, &Exec::serial(), &checked).err(),
        linalg::self_adjoint_eigenvalues_with(&b, &Exec::serial(), &checked).err(),
    ] {
        assert!(
            matches!(err, Some(LinalgError::NotHermitian { row: 7, col: 3, .. })),
            "{err:?}"
        );
    }
    assert!(linalg::Cholesky::new(&b, &Exec::serial()).is_ok());
    // A diagonal with an imaginary part is not Hermitian either.
    let mut d = a.clone();
    d[(5, 5)].im = 1.0;
    let err = Ldlt::new_with(&d, &Exec::serial(), &checked).unwrap_err();
    assert!(matches!(
        err,
        LinalgError::NotHermitian { row: 5, col: 5, .. }
    ));
}

#[test]
fn one_factorization_is_shared_between_threads() {
    let a = hermitian::<c64>(50, 0.3);
    let (bk, ld) = (
        Lblt::new(&a, &team(2)).unwrap(),
        Ldlt::new(&quasi_definite::<c64>(30, 20, 0.3), &team(2)).unwrap(),
    );
    let b = mat::<c64>(50, 2, 0.6);
    let (want_bk, want_ld) = (
        bk.solve(&b, &Exec::serial()).unwrap(),
        ld.solve(&b, &Exec::serial()).unwrap(),
    );
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                // Each thread solves on its own team, with the same shared factorizations.
                let t = team(2);
                for _ in 0..5 {
                    assert!((bk.solve(&b, &t).unwrap() - &want_bk).norm_max() <= 1e-12);
                    assert!((ld.solve(&b, &t).unwrap() - &want_ld).norm_max() <= 1e-12);
                }
            });
        }
    });
}
