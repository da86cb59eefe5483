//! The general eigendecomposition: `A V = V diag(w)` within the backward-error bound for real
//! and complex input, the eigenvalues faer's, conjugate pairs of a real matrix.

use faer::complex::Complex;
use faer::{Mat, c32, c64};
use teamalg::Exec;
use teamalg::linalg::{self, Eigen, LinalgError};

use super::sample;
use sample::{Sample, mat, norm};

fn residual<T: Sample>(n: usize) {
    residual_on::<T>(n, &Exec::serial(), &linalg::Options::new());
}

fn residual_on<T: Sample>(n: usize, exec: &teamalg::Exec, options: &linalg::Options) {
    let a = mat::<T>(n, n, 0.25);
    let evd = Eigen::new_with(&a, exec, options).unwrap();
    let w = evd.eigenvalues();
    let v = evd.eigenvectors();
    let ac = Mat::<Complex<T::Real>>::from_fn(n, n, |i, j| {
        let x = a[(i, j)];
        Complex::new(
            faer::traits::math_utils::real(&x),
            faer::traits::math_utils::imag(&x),
        )
    });
    let vd = Mat::<Complex<T::Real>>::from_fn(n, n, |i, j| v[(i, j)] * w[j]);
    let r = &ac * v - vd;
    // The residual in f64, against C u n ||A||.
    let to64 = |x: &Complex<T::Real>| {
        let t: T = faer::traits::math_utils::from_real(&x.re);
        let u: T = faer::traits::math_utils::from_real(&x.im);
        (
            T::err(t, faer::traits::math_utils::zero()),
            T::err(u, faer::traits::math_utils::zero()),
        )
    };
    let mut s = 0.0f64;
    for j in 0..n {
        for i in 0..n {
            let (re, im) = to64(&r[(i, j)]);
            s += re * re + im * im;
        }
    }
    let bound = sample::backward_bound::<T>(n, norm(a.as_ref()) * (n as f64).sqrt());
    assert!(
        s.sqrt() <= bound,
        "A V = V D, {n}: {:e} > {bound:e}",
        s.sqrt()
    );
    let values = linalg::eigenvalues_with(&a, exec, options).unwrap();
    assert_eq!(values.len(), n);
    // The same eigenvalues as faer's serial path, matched nearest first.
    let mut theirs = linalg::eigenvalues(&a, &Exec::serial()).unwrap();
    for x in &values {
        let (k, d) = theirs
            .iter()
            .enumerate()
            .map(|(k, y)| {
                let (re, im) = to64(&(*x - *y));
                (k, (re * re + im * im).sqrt())
            })
            .min_by(|p, q| p.1.total_cmp(&q.1))
            .unwrap();
        assert!(d <= 1e3 * bound, "eigenvalue {n}: {d:e}");
        theirs.swap_remove(k);
    }
}

/// Complex input above `TEAM_FROM` goes through teamalg's Schur form on a team (forced by
/// the GEMM threshold, and gated), with the same bound and faer's eigenvalues.
#[test]
fn complex_input_on_a_team() {
    use teamalg::gates::{Family, ParThreshold};
    let team = sample::team(2);
    let forced = linalg::Options::new().threshold(Family::Gemm, ParThreshold::Fixed(0));
    for options in [forced, linalg::Options::new()] {
        residual_on::<c64>(260, &team.exec(2), &options);
        residual_on::<c32>(260, &team.exec(2), &options);
    }
    // Forced, the path taken is teamalg's: its eigenvalues are not faer's to the last bit.
    let a = mat::<c64>(260, 260, 0.25);
    let ours = linalg::eigenvalues_with(&a, &team.exec(2), &forced).unwrap();
    let faers = linalg::eigenvalues(&a, &Exec::serial()).unwrap();
    assert!(ours.iter().any(|x| !faers.contains(x)));
}

#[test]
fn a_v_equals_v_d_on_every_type() {
    for n in [1, 2, 7, 60] {
        residual::<f64>(n);
        residual::<c64>(n);
        residual::<f32>(n);
        residual::<c32>(n);
    }
}

#[test]
fn a_real_matrix_has_conjugate_pairs() {
    let a = mat::<f64>(30, 30, 0.5);
    let evd = Eigen::new(&a, &Exec::serial()).unwrap();
    let w = evd.eigenvalues();
    let mut j = 0;
    while j < w.len() {
        if w[j].im != 0.0 {
            assert_eq!(w[j + 1], w[j].conj());
            let (x, y) = (evd.eigenvectors().col(j), evd.eigenvectors().col(j + 1));
            assert!((0..30).all(|i| x[i] == y[i].conj()));
            j += 2;
        } else {
            j += 1;
        }
    }
    // faer's own eigenvalues, the same order.
    let theirs = a.eigenvalues().unwrap();
    assert!(w.iter().zip(&theirs).all(|(x, y)| (x - y).norm() < 1e-10));
}

#[test]
fn bad_input_is_refused() {
    let mut a = mat::<f64>(4, 4, 0.1);
    a[(2, 1)] = f64::NAN;
    assert!(matches!(
        Eigen::new(&a, &Exec::serial()),
        Err(LinalgError::NotFinite { row: 2, col: 1, .. })
    ));
    let wide = mat::<f64>(3, 4, 0.1);
    assert!(matches!(
        linalg::eigenvalues(&wide, &Exec::serial()),
        Err(LinalgError::NotSquare { .. })
    ));
}

#[test]
fn inverse_and_determinant_from_the_eigenvalues() {
    let e = Exec::serial();
    let team = sample::team(2);
    let a = mat::<f64>(12, 12, 0.4);
    let evd = Eigen::new(&a, &e).unwrap();
    let lu = linalg::Lu::new(&a, &e).unwrap();
    let inv = evd.inverse(&team).unwrap();
    let want = lu.inverse(&e).unwrap();
    let err = (0..12)
        .flat_map(|i| (0..12).map(move |j| (i, j)))
        .map(|(i, j)| (inv[(i, j)] - c64::new(want[(i, j)], 0.0)).norm())
        .fold(0.0, f64::max);
    assert!(err <= 1e-10 * want.norm_max(), "inverse: {err:e}");
    let det = evd.determinant().unwrap();
    let lu_det = lu.determinant().unwrap();
    assert!((det - c64::new(lu_det, 0.0)).norm() <= 1e-10 * lu_det.abs());
    let (phase, log) = evd.slogdet().unwrap();
    assert!((phase * log.exp() - det).norm() <= 1e-10 * det.norm());
    // Complex input.
    let c = mat::<c64>(9, 9, 0.3);
    let inv = Eigen::new(&c, &e).unwrap().inverse(&e).unwrap();
    let back = &c * &inv - Mat::<c64>::identity(9, 9);
    assert!(back.norm_max() <= 1e-10, "complex inverse");
    // A zero eigenvalue: singular, named by its position.
    let z = faer::mat![[0.0, 0.0], [0.0, 2.0f64]];
    let err = Eigen::new(&z, &e).unwrap().inverse(&e).unwrap_err();
    assert!(
        matches!(err, LinalgError::Singular { op: "inverse", .. }),
        "{err:?}"
    );
    // Defective: one eigenvector for a double eigenvalue.
    let j = faer::mat![[3.0, 1.0], [0.0, 3.0f64]];
    let err = Eigen::new(&j, &e).unwrap().inverse(&e).unwrap_err();
    assert!(
        matches!(err, LinalgError::IllConditioned { op: "inverse", .. }),
        "{err:?}"
    );
}

#[test]
fn self_adjoint_inverse_pseudoinverse_and_determinant() {
    let e = Exec::serial();
    let h = sample::hermitian::<c64>(10, 0.6);
    let evd = linalg::SelfAdjointEigen::new(&h, &e).unwrap();
    let lu = linalg::Lu::new(&h, &e).unwrap();
    let p = evd.pseudoinverse(&e).unwrap();
    assert!((&h * &p - Mat::<c64>::identity(10, 10)).norm_max() <= 1e-10);
    let (det, want) = (evd.determinant().unwrap(), lu.determinant().unwrap());
    assert!((det - want).norm() <= 1e-10 * want.norm());
    assert!((evd.log_abs_det().unwrap() - want.norm().ln()).abs() <= 1e-10);
    // Singular and indefinite: the pseudo-inverse's Penrose conditions.
    // u u^T - v v^T: rank 2, one positive and one negative eigenvalue, four zeros.
    let (u, v) = (mat::<f64>(6, 1, 0.2), mat::<f64>(6, 1, 0.7));
    let a = &u * u.transpose() - &v * v.transpose();
    let evd = linalg::SelfAdjointEigen::new(&a, &e).unwrap();
    let p = evd.pseudoinverse(&e).unwrap();
    let svd = linalg::Svd::new(&a, &e).unwrap().pseudoinverse(&e).unwrap();
    assert!((&a * &p * &a - &a).norm_max() <= 1e-10 * a.norm_max());
    assert!((&p * &a * &p - &p).norm_max() <= 1e-10 * p.norm_max());
    assert!((&p - svd).norm_max() <= 1e-10 * p.norm_max());
    // The SVD's log|det| matches.
    let s = linalg::Svd::new(&h, &e).unwrap();
    assert!((s.log_abs_det().unwrap() - want.norm().ln()).abs() <= 1e-10);
}
