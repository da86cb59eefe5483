//! The general eigendecomposition: `A V = V diag(w)` within the backward-error bound for real
//! and complex input, the eigenvalues faer's, conjugate pairs of a real matrix.

use faer::complex::Complex;
use faer::{c32, c64, Mat};
use teamalg::linalg::{self, Eigen, LinalgError};
use teamalg::Exec;

use super::sample;
use sample::{mat, norm, Sample};

fn residual<T: Sample>(n: usize) {
    let a = mat::<T>(n, n, 0.25);
    let evd = Eigen::new(&a, &Exec::serial()).unwrap();
    let w = evd.eigenvalues();
    let v = evd.eigenvectors();
    let ac = Mat::<Complex<T::Real>>::from_fn(n, n, |i, j| {
        let x = a[(i, j)];
        Complex::new(
            faer::traits::math_utils::real(&x),
            faer::traits::math_utils::imag(&x),
        )
    });
    let vd = Mat::<Complex<T::Real>>::from_fn(n, n, |i, j| v[(i, j)].clone() * w[j].clone());
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
    let values = linalg::eigenvalues(&a, &Exec::serial()).unwrap();
    assert_eq!(values.len(), n);
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
