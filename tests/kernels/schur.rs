//! The complex Schur form: `H = Z T Z^H` to rounding with `T` upper triangular and `Z`
//! unitary, the eigenvalues against faer's, below and above the multishift threshold, on
//! every executor.

use faer::linalg::matmul::matmul;
use faer::reborrow::ReborrowMut;
use faer::{Accum, Mat, Par, c32, c64};
use teamalg::gates::ParThreshold;
use teamalg::kernels::bidiag_svd::Real;
use teamalg::kernels::evd::schur::scalar::Cplx;
use teamalg::kernels::evd::schur::{SchurError, SchurParams, schur_in_place};
use teamalg::kernels::par::{Executor, Seq};

use super::sample::{Sample, every_executor, mat};

/// A reproducible upper Hessenberg matrix.
fn hessenberg<T: Sample + Cplx>(n: usize, seed: f64) -> Mat<T> {
    let a = mat::<T>(n, n, seed);
    Mat::from_fn(n, n, |i, j| if i <= j + 1 { a[(i, j)] } else { T::ZERO })
}

/// The Frobenius norm, scaled by the largest entry so that it neither overflows nor
/// underflows.
fn fro<T: Cplx>(a: faer::MatRef<'_, T>) -> f64 {
    let entries = || (0..a.ncols()).flat_map(move |j| (0..a.nrows()).map(move |i| (i, j)));
    let big = entries()
        .map(|(i, j)| a[(i, j)].abs().to_f64())
        .fold(0.0f64, f64::max);
    if big == 0.0 || !big.is_finite() {
        return big;
    }
    let mut s = 0.0;
    for (i, j) in entries() {
        let x = a[(i, j)].abs().to_f64() / big;
        s += x * x;
    }
    big * s.sqrt()
}

/// `||H - Z T Z^H|| / (n ||H||)` and `||Z^H Z - I|| / n` in units of the roundoff, after
/// checking that `T` is upper triangular.
fn errors<T: Sample + Cplx>(h: &Mat<T>, t: &Mat<T>, z: &Mat<T>) -> (f64, f64) {
    let n = h.nrows();
    for j in 0..n {
        for i in j + 1..n {
            assert!(t[(i, j)] == T::ZERO, "T[{i}, {j}] = {:?}", t[(i, j)]);
        }
    }
    let mut zt = Mat::<T>::zeros(n, n);
    matmul(
        zt.as_mut(),
        Accum::Replace,
        z.as_ref(),
        t.as_ref(),
        T::ONE,
        Par::Seq,
    );
    let mut r = h.clone();
    matmul(
        r.as_mut(),
        Accum::Add,
        zt.as_ref(),
        z.adjoint(),
        -T::ONE,
        Par::Seq,
    );
    let mut g = Mat::<T>::from_fn(n, n, |i, j| if i == j { -T::ONE } else { T::ZERO });
    matmul(
        g.as_mut(),
        Accum::Add,
        z.adjoint(),
        z.as_ref(),
        T::ONE,
        Par::Seq,
    );
    let (u, nn) = (T::unit(), n.max(1) as f64);
    (
        fro(r.as_ref())
            / (if fro(h.as_ref()) == 0.0 {
                1.0
            } else {
                fro(h.as_ref())
            } * nn
                * u),
        fro(g.as_ref()) / (nn * u),
    )
}

fn run<T: Sample + Cplx>(h: &Mat<T>, exec: &dyn Executor, force: bool) -> (Mat<T>, Mat<T>) {
    let n = h.nrows();
    let mut t = h.clone();
    let mut z = Mat::<T>::from_fn(n, n, |i, j| if i == j { T::ONE } else { T::ZERO });
    let params = SchurParams {
        threshold: force.then_some(ParThreshold::Fixed(0)),
        ..SchurParams::default()
    };
    schur_in_place(t.as_mut(), Some(z.as_mut()), exec, params).unwrap();
    (t, z)
}

/// faer's eigenvalues of `h`, each matched to the nearest of `ours`.
fn assert_eigenvalues<T: Sample + Cplx>(h: &Mat<T>, t: &Mat<T>, tol: f64) {
    let n = h.nrows();
    let theirs = h.eigenvalues().unwrap();
    let mut ours: Vec<T> = (0..n).map(|i| t[(i, i)]).collect();
    let scale = fro(h.as_ref()).max(1.0);
    for e in theirs {
        let e = T::new(
            <T::R as Real>::from_f64(e.re.to_f64()),
            <T::R as Real>::from_f64(e.im.to_f64()),
        );
        let (k, d) = ours
            .iter()
            .enumerate()
            .map(|(k, x)| (k, (*x - e).abs().to_f64()))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap();
        assert!(d <= tol * scale, "eigenvalue {e:?}: nearest at {d}");
        ours.swap_remove(k);
    }
}

const ORDERS: [usize; 9] = [0, 1, 2, 5, 40, 74, 75, 130, 260];

/// Backward error within `c u n ‖H‖` (c = 10; measured up to 1.3) and orthogonality within
/// `c u n` (c = 20; measured up to 11.3 at order 260), `T` triangular, the eigenvalues
/// faer's, every order, both precisions, serially.
#[test]
fn schur_form_is_a_unitary_similarity() {
    for n in ORDERS {
        let h = hessenberg::<c64>(n, 0.3);
        let (t, z) = run(&h, &Seq, false);
        let (back, orth) = errors(&h, &t, &z);
        assert!(
            back <= 10.0 && orth <= 20.0,
            "c64 n={n}: backward {back} orthogonality {orth}"
        );
        assert_eigenvalues(&h, &t, 1e-9);
        let h = hessenberg::<c32>(n, 0.7);
        let (t, z) = run(&h, &Seq, false);
        let (back, orth) = errors(&h, &t, &z);
        assert!(
            back <= 10.0 && orth <= 20.0,
            "c32 n={n}: backward {back} orthogonality {orth}"
        );
    }
}

/// The same on every executor, forced to its full width and gated.
#[test]
fn every_executor_gives_a_schur_form() {
    let h = hessenberg::<c64>(200, 0.9);
    every_executor(|exec, force| {
        let (t, z) = run(&h, exec, force);
        let (back, orth) = errors(&h, &t, &z);
        assert!(
            back <= 10.0 && orth <= 20.0,
            "backward {back} orthogonality {orth}"
        );
    });
}

/// A row-major `H` and `Z` give the same result as column-major ones; an infinity or a NaN
/// is refused at once, with `H` unchanged.
#[test]
fn strides_and_bad_input() {
    let n = 90;
    let h = hessenberg::<c64>(n, 0.4);
    let (t, z) = run(&h, &Seq, false);
    let mut tr = Mat::<c64>::zeros(n, n);
    let mut zr = Mat::<c64>::zeros(n, n);
    let (mut tt, mut zt) = (tr.as_mut().transpose_mut(), zr.as_mut().transpose_mut());
    tt.copy_from(h.as_ref());
    zt.fill(c64::ZERO);
    zt.rb_mut().diagonal_mut().fill(c64::ONE);
    schur_in_place(tt.rb_mut(), Some(zt.rb_mut()), &Seq, SchurParams::default()).unwrap();
    assert!(tt.as_ref() == t.as_ref() && zt.as_ref() == z.as_ref());
    for bad in [f64::NAN, f64::INFINITY] {
        let mut b = h.clone();
        b[(3, 2)] = c64::new(bad, 0.0);
        let before = b.clone();
        let r = schur_in_place(b.as_mut(), None, &Seq, SchurParams::default());
        assert_eq!(r, Err(SchurError::NotFinite));
        assert!(b.as_ref().col(0) == before.as_ref().col(0));
    }
}

/// The general EVD: `||A V - V diag(w)|| <= c u n ||A|| ||V||` (c = 10) with unit-norm columns,
/// the eigenvalues faer's, serially, forced onto every executor and gated, values alone too.
#[test]
fn general_evd_satisfies_a_v_equals_v_d() {
    use teamalg::kernels::evd::general::{GeneralEvdParams, complex_evd};
    for n in [0, 1, 3, 60, 150] {
        let a = mat::<c64>(n, n, 0.6);
        every_executor(|exec, force| {
            let threshold = force.then_some(ParThreshold::Fixed(0));
            let params = GeneralEvdParams {
                schur: SchurParams {
                    threshold,
                    ..SchurParams::default()
                },
                vectors: threshold,
                gemm: threshold,
            };
            let mut w = vec![c64::ZERO; n];
            let mut v = Mat::<c64>::zeros(n, n);
            complex_evd(a.as_ref(), &mut w, Some(v.as_mut()), exec, params).unwrap();
            for j in 0..n {
                let norm = fro(v.as_ref().subcols(j, 1));
                for i in 0..n {
                    v[(i, j)] /= norm;
                }
            }
            let mut r = Mat::<c64>::from_fn(n, n, |i, j| -(v[(i, j)] * w[j]));
            matmul(
                r.as_mut(),
                Accum::Add,
                a.as_ref(),
                v.as_ref(),
                c64::ONE,
                Par::Seq,
            );
            let bound = 10.0 * c64::unit() * n as f64 * fro(a.as_ref()) * (n as f64).sqrt();
            assert!(
                fro(r.as_ref()) <= bound,
                "n={n}: {} > {bound}",
                fro(r.as_ref())
            );
            let t = Mat::<c64>::from_fn(n, n, |i, j| if i == j { w[i] } else { c64::ZERO });
            assert_eigenvalues(&a, &t, 1e-9);
            let mut w2 = vec![c64::ZERO; n];
            complex_evd(a.as_ref(), &mut w2, None, exec, params).unwrap();
            assert_eigenvalues(
                &a,
                &Mat::from_fn(n, n, |i, j| if i == j { w2[i] } else { c64::ZERO }),
                1e-9,
            );
        });
    }
}

/// Structured matrices above the multishift threshold: zero, the identity, a Jordan block,
/// one split by a zero subdiagonal, a graded one (rows and columns scaled over ten decades),
/// and odd shift and window counts; each a unitary similarity within the bounds above.
#[test]
fn structured_matrices_and_parameters() {
    let n = 120;
    let random = hessenberg::<c64>(n, 0.2);
    let mut split = random.clone();
    split[(60, 59)] = c64::ZERO;
    let graded = Mat::<c64>::from_fn(n, n, |i, j| {
        random[(i, j)] * 10f64.powf(-((i + j) as f64) / (2.0 * n as f64) * 10.0)
    });
    let jordan = Mat::<c64>::from_fn(n, n, |i, j| match j as isize - i as isize {
        0 => c64::new(2.0, 1.0),
        1 => c64::ONE,
        _ => c64::ZERO,
    });
    let cases = [
        ("zero", Mat::<c64>::zeros(n, n)),
        ("identity", Mat::<c64>::identity(n, n)),
        ("jordan", jordan),
        ("split", split),
        ("graded", graded),
    ];
    for (name, h) in &cases {
        let (t, z) = run(h, &Seq, false);
        let (back, orth) = errors(h, &t, &z);
        assert!(
            back <= 10.0 && orth <= 20.0,
            "{name}: backward {back} orthogonality {orth}"
        );
    }
    for (shifts, window) in [(1, 2), (3, 7), (40, 90), (1000, 1000)] {
        let mut t = random.clone();
        let mut z = Mat::<c64>::identity(n, n);
        let params = SchurParams {
            shifts: Some(shifts),
            window: Some(window),
            ..SchurParams::default()
        };
        schur_in_place(t.as_mut(), Some(z.as_mut()), &Seq, params).unwrap();
        let (back, orth) = errors(&random, &t, &z);
        assert!(
            back <= 10.0 && orth <= 20.0,
            "{shifts} shifts, window {window}: {back} {orth}"
        );
        // Some eigenvalues of a random Hessenberg matrix are ill-conditioned: another shift
        // sequence moves them by up to 2e-7 (the backward error above is the bound).
        assert_eigenvalues(&random, &t, 1e-6);
    }
    let h = hessenberg::<c32>(n, 0.5);
    let (t, _) = run(&h, &Seq, false);
    assert_eigenvalues(&h, &t, 1e-3);
}

/// Matrices scaled near the ends of the exponent range: the same relative bounds.
#[test]
fn extreme_scales() {
    let n = 100;
    let base = hessenberg::<c64>(n, 0.8);
    for scale in [1e-300, 1e-200, 1e200, 1e300] {
        let h = Mat::<c64>::from_fn(n, n, |i, j| base[(i, j)] * scale);
        let (t, z) = run(&h, &Seq, false);
        let (back, orth) = errors(&h, &t, &z);
        assert!(
            back <= 10.0 && orth <= 20.0,
            "scale {scale}: backward {back} orthogonality {orth}"
        );
    }
}

/// The whole EVD at the ends of the exponent range: `A V = V D` relative to `||A||`, the
/// eigenvalues scaled back (against those of the unscaled matrix, scaled).
#[test]
fn general_evd_at_extreme_scales() {
    use teamalg::kernels::evd::general::{GeneralEvdParams, complex_evd};
    let n = 90;
    let base = mat::<c64>(n, n, 0.3);
    let mut w0 = vec![c64::ZERO; n];
    complex_evd(
        base.as_ref(),
        &mut w0,
        None,
        &Seq,
        GeneralEvdParams::default(),
    )
    .unwrap();
    for scale in [1e-300, 1e300] {
        let a = Mat::<c64>::from_fn(n, n, |i, j| base[(i, j)] * scale);
        let mut w = vec![c64::ZERO; n];
        let mut v = Mat::<c64>::zeros(n, n);
        complex_evd(
            a.as_ref(),
            &mut w,
            Some(v.as_mut()),
            &Seq,
            GeneralEvdParams::default(),
        )
        .unwrap();
        for j in 0..n {
            let norm = fro(v.as_ref().subcols(j, 1));
            for i in 0..n {
                v[(i, j)] /= norm;
            }
        }
        // Residual of the unscaled problem: (A / scale) V - V diag(w / scale).
        let mut r = Mat::<c64>::from_fn(n, n, |i, j| -(v[(i, j)] * (w[j] / scale)));
        matmul(
            r.as_mut(),
            Accum::Add,
            base.as_ref(),
            v.as_ref(),
            c64::ONE,
            Par::Seq,
        );
        let bound = 10.0 * c64::unit() * n as f64 * fro(base.as_ref()) * (n as f64).sqrt();
        assert!(
            fro(r.as_ref()) <= bound,
            "scale {scale}: {} > {bound}",
            fro(r.as_ref())
        );
        let t = Mat::<c64>::from_fn(n, n, |i, j| if i == j { w[i] / scale } else { c64::ZERO });
        let t0 = Mat::<c64>::from_fn(n, n, |i, j| if i == j { w0[i] } else { c64::ZERO });
        assert_eigenvalues(&t0, &t, 1e-9);
    }
}
