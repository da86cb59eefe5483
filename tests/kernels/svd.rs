//! The SVD of general matrices: `A V = U diag(s)` to rounding, `U` and `V` unitary, values
//! against faer's, thin and full, tall and wide, every scalar type and executor, the same
//! values on every executor, rank-deficient, graded and tiny matrices, and its errors.

use faer::{Mat, c32, c64};
use teamalg::gates::ParThreshold;
use teamalg::kernels::bidiag_svd::{BidiagSvdError, BidiagSvdParams, Real, Rotate};
use teamalg::kernels::par::{Executor, Seq};
use teamalg::kernels::svd::{SvdParams, SvdPath, svd};

use super::parts;
use super::sample;
use parts::{eps, mul, orthogonality, parts};
use sample::{Sample, every_executor, mat};

struct Result<T> {
    s: Vec<f64>,
    u: Mat<T>,
    v: Mat<T>,
}

fn params(force: bool) -> SvdParams {
    let threshold = force.then_some(ParThreshold::Fixed(0));
    SvdParams {
        path: SvdPath::Own,
        solver: BidiagSvdParams {
            batch: 2,
            threshold,
        },
        threshold,
        bidiag: threshold,
        dc: threshold,
        gemm: threshold,
    }
}

fn run<T: Sample + Rotate>(a: &Mat<T>, full: bool, exec: &dyn Executor, force: bool) -> Result<T> {
    let (m, n) = (a.nrows(), a.ncols());
    let k = m.min(n);
    let mut s = vec![<<T as Rotate>::RealPart as Real>::ZERO; k];
    let mut u = Mat::<T>::zeros(m, if full { m } else { k });
    let mut v = Mat::<T>::zeros(n, if full { n } else { k });
    svd(
        a.as_ref(),
        &mut s,
        Some(u.as_mut()),
        Some(v.as_mut()),
        exec,
        params(force),
    )
    .unwrap();
    Result {
        s: s.iter().map(|x| x.to_f64()).collect(),
        u,
        v,
    }
}

/// `||A V_k - U_k S|| / ||A||` and the largest entry of `U^H U - I` and `V^H V - I`.
fn errors<T: Rotate>(a: &Mat<T>, r: &Result<T>) -> (f64, f64) {
    let (m, n) = (a.nrows(), a.ncols());
    let k = r.s.len();
    let (mut res, mut norm) = (0.0f64, 0.0f64);
    for i in 0..m {
        for j in 0..n {
            let (re, im) = parts(a[(i, j)]);
            norm += re * re + im * im;
        }
        for j in 0..k {
            let (mut re, mut im) = (0.0, 0.0);
            for l in 0..n {
                let p = mul(parts(a[(i, l)]), parts(r.v[(l, j)]));
                re += p.0;
                im += p.1;
            }
            let (ur, ui) = parts(r.u[(i, j)]);
            re -= ur * r.s[j];
            im -= ui * r.s[j];
            res += re * re + im * im;
        }
    }
    let orth = orthogonality(&r.u).max(orthogonality(&r.v));
    (res.sqrt() / norm.sqrt().max(f64::MIN_POSITIVE), orth)
}

fn check<T: Sample + Rotate>(a: &Mat<T>, r: &Result<T>, what: &str) {
    let (m, n) = (a.nrows(), a.ncols());
    let (res, orth) = errors(a, r);
    // faer's own level: a small multiple of the unit roundoff times the size.
    let bound = 30.0 * eps::<T>() * (m.max(n).max(1) as f64);
    assert!(res <= bound, "{what} {m}x{n}: residual {res:e} > {bound:e}");
    assert!(
        orth <= bound,
        "{what} {m}x{n}: orthogonality {orth:e} > {bound:e}"
    );
    assert!(r.s.windows(2).all(|w| w[0] >= w[1]) && r.s.iter().all(|x| *x >= 0.0));
}

fn shapes() -> Vec<(usize, usize)> {
    vec![
        (0, 0),
        (0, 3),
        (3, 0),
        (1, 1),
        (2, 2),
        (3, 3),
        (5, 3),
        (3, 5),
        (31, 32),
        (32, 32),
        (33, 33),
        (64, 20),
        (20, 64),
        (70, 70),
        // A QR step first (longer than 11/6 times wide), R solved by the divide and conquer.
        (150, 40),
        (40, 150),
    ]
}

fn every_shape<T: Sample + Rotate>() {
    for (m, n) in shapes() {
        let a = mat::<T>(m, n, 1.0);
        for full in [false, true] {
            check(
                &a,
                &run(&a, full, &Seq, false),
                if full { "full" } else { "thin" },
            );
        }
    }
}

#[test]
fn f64_every_shape() {
    every_shape::<f64>();
}

#[test]
fn f32_every_shape() {
    every_shape::<f32>();
}

#[test]
fn c64_every_shape() {
    every_shape::<c64>();
}

#[test]
fn c32_every_shape() {
    every_shape::<c32>();
}

#[test]
fn values_match_faers() {
    for (m, n) in [(40, 40), (60, 25), (25, 60)] {
        let a = mat::<f64>(m, n, 2.0);
        let ours = run(&a, false, &Seq, false).s;
        let theirs = a.singular_values().unwrap();
        for (x, y) in ours.iter().zip(&theirs) {
            assert!(
                (x - y).abs() <= weyl(m.max(n), theirs[0]),
                "{x} against {y}"
            );
        }
        // Values only (the bidiagonal QR) give the same values as with vectors (the divide
        // and conquer above its leaf size) to rounding.
        let mut s = vec![0.0; m.min(n)];
        svd(a.as_ref(), &mut s, None, None, &Seq, params(false)).unwrap();
        for (x, y) in s.iter().zip(&ours) {
            assert!((x - y).abs() <= weyl(m.max(n), ours[0]), "{x} against {y}");
        }
        // The default path is faer's serial SVD: its values, bit for bit.
        svd(a.as_ref(), &mut s, None, None, &Seq, SvdParams::default()).unwrap();
        let k = m.min(n);
        let no = faer::linalg::svd::ComputeSvdVectors::No;
        let req =
            faer::linalg::svd::svd_scratch::<f64>(m, n, no, no, faer::Par::Seq, Default::default());
        let mut buf = faer::dyn_stack::MemBuffer::new(req);
        let mut faer_s = Mat::<f64>::zeros(k, 1);
        faer::linalg::svd::svd(
            a.as_ref(),
            faer_s.as_mut().col_mut(0).as_diagonal_mut(),
            None,
            None,
            faer::Par::Seq,
            faer::dyn_stack::MemStack::new(&mut buf),
            Default::default(),
        )
        .unwrap();
        assert_eq!(s, (0..k).map(|i| faer_s[(i, 0)]).collect::<Vec<_>>());
    }
}

#[test]
fn every_executor_gives_the_same_values() {
    for (m, n) in [(90, 70), (70, 90), (200, 60), (60, 200)] {
        let a = mat::<c64>(m, n, 3.0);
        let base = run(&a, true, &Seq, false);
        check(&a, &base, "base");
        let same = |exec: &dyn Executor, force: bool| {
            let r = run(&a, true, exec, force);
            // A serial executor reduces with faer's bidiagonalization, a parallel one with
            // teamalg's (the same steps, its matrix-vector products cut in row shares that
            // faer rounds by share), and the vectors start from Householder factors formed in
            // column chunks: values and vectors equal to rounding, and each a valid SVD.
            for (x, y) in r.s.iter().zip(&base.s) {
                assert!(
                    (x - y).abs() <= weyl(m.max(n), base.s[0]),
                    "{x} against {y}"
                );
            }
            check(&a, &r, "executor");
            for (x, y) in [(&r.u, &base.u), (&r.v, &base.v)] {
                // A forward comparison, not a backward bound (`check` above is that): these
                // matrices' values are apart by far more than the rounding, so their vectors
                // agree to about `C u n / gap`.
                let diff = (x - y).norm_max();
                assert!(diff <= 1e-12, "vectors differ by {diff:e} on an executor");
            }
        };
        every_executor(same);
    }
}

#[test]
fn rank_deficient_graded_and_tiny_matrices() {
    let n = 48;
    // Rank 5: a product of 48x5 and 5x48 factors.
    let l = mat::<f64>(n, 5, 4.0);
    let rt = mat::<f64>(5, n, 5.0);
    let low = &l * &rt;
    let r = run(&low, false, &Seq, false);
    check(&low, &r, "rank 5");
    assert!(r.s[5] <= weyl(n, r.s[0]), "{:?}", &r.s[..7]);
    // Graded columns over 12 decades.
    let graded = Mat::from_fn(n, n, |i, j| {
        mat::<f64>(n, n, 6.0)[(i, j)] * 10f64.powf(-(j as f64) / 4.0)
    });
    check(&graded, &run(&graded, false, &Seq, false), "graded");
    // Tiny: subnormal-scaled entries keep a small residual relative to their own norm.
    let tiny = Mat::from_fn(20, 20, |i, j| mat::<f64>(20, 20, 7.0)[(i, j)] * 1e-310);
    check(&tiny, &run(&tiny, false, &Seq, false), "tiny");
    // Clustered: a multiple of an orthogonal matrix has every value equal.
    let q = run(&mat::<f64>(30, 30, 8.0), false, &Seq, false).u;
    let r = run(&q, false, &Seq, false);
    check(&q, &r, "clustered");
    assert!(r.s.iter().all(|x| (x - 1.0).abs() <= weyl(n, 1.0)));
}

#[test]
fn non_finite_input_is_refused() {
    let mut a = mat::<f64>(4, 3, 1.0);
    a[(2, 1)] = f64::NAN;
    let mut s = vec![0.0; 3];
    let err = svd(a.as_ref(), &mut s, None, None, &Seq, SvdParams::default()).unwrap_err();
    assert_eq!(err, BidiagSvdError::NotFinite);
    assert_eq!(s, vec![0.0; 3]);
}

/// Weyl's bound on how far the singular values of `A + E` move from `A`'s: `||E||_2`, here the
/// backward-error bound `30 u n ||A||_2` of a stable SVD (`top` is `||A||_2`).
fn weyl(n: usize, top: f64) -> f64 {
    30.0 * eps::<f64>() * n.max(1) as f64 * top
}

/// `||A - U_k diag(s) V_k^H||_F` and `||A||_F`, in `f64`.
fn reconstruction<T: Rotate>(a: &Mat<T>, s: &[f64], u: &Mat<T>, v: &Mat<T>) -> (f64, f64) {
    let (mut res, mut norm) = (0.0f64, 0.0f64);
    for i in 0..a.nrows() {
        for j in 0..a.ncols() {
            let (mut re, mut im) = parts(a[(i, j)]);
            norm += re * re + im * im;
            for (l, sl) in s.iter().enumerate() {
                let (vr, vi) = parts(v[(j, l)]);
                let p = mul(parts(u[(i, l)]), (vr * sl, -vi * sl));
                re -= p.0;
                im -= p.1;
            }
            res += re * re + im * im;
        }
    }
    (res.sqrt(), norm.sqrt())
}

/// Full (or thin, or absent) `U` and `V` filled with `fill` beforehand, on both paths: the
/// factors come back orthonormal and `A = U_k S V_k^H`, both to `30 u n`, whatever the buffers
/// held (faer's serial SVD of a shape longer than 11/6 times wide forms a full factor as
/// `Q [U_R X; 0 I]` without writing `X`).
fn full_factors_whatever_the_buffer_held<T: Sample + Rotate>() {
    let shapes = [(10, 3), (3, 10), (40, 4), (1, 2), (3, 1)];
    for (m, n) in shapes {
        let k = m.min(n);
        let bound = 30.0 * eps::<T>() * m.max(n) as f64;
        for a in [mat::<T>(m, n, 9.0), Mat::<T>::zeros(m, n)] {
            for fill in [7.0, f64::NAN] {
                // Full, thin, absent: every pairing with at least one full factor.
                for (fu, fv) in [
                    (Some(true), Some(true)),
                    (Some(true), None),
                    (None, Some(true)),
                ]
                .into_iter()
                .chain([(Some(true), Some(false)), (Some(false), Some(true))])
                {
                    for path in [SvdPath::Auto, SvdPath::Faer, SvdPath::Own] {
                        let what = format!(
                            "{m}x{n} {} fill {fill} U {fu:?} V {fv:?} {path:?}",
                            std::any::type_name::<T>()
                        );
                        let buf = |rows: usize, full: bool| {
                            Mat::<T>::from_fn(rows, if full { rows } else { k }, |_, _| {
                                parts::from((fill, fill))
                            })
                        };
                        let (mut u, mut v) = (fu.map(|f| buf(m, f)), fv.map(|f| buf(n, f)));
                        let mut s = vec![<<T as Rotate>::RealPart as Real>::ZERO; k];
                        let p = SvdParams {
                            path,
                            ..SvdParams::default()
                        };
                        svd(
                            a.as_ref(),
                            &mut s,
                            u.as_mut().map(|x| x.as_mut()),
                            v.as_mut().map(|x| x.as_mut()),
                            &Seq,
                            p,
                        )
                        .unwrap();
                        for (name, q) in [("U", &u), ("V", &v)] {
                            if let Some(q) = q {
                                let e = orthogonality(q);
                                assert!(e <= bound, "{what}: ||{name}^H {name} - I|| = {e:e}");
                            }
                        }
                        // The reconstruction, where both sides were asked for.
                        if let (Some(u), Some(v)) = (&u, &v) {
                            let s: Vec<f64> = s.iter().map(|x| x.to_f64()).collect();
                            let (res, norm) = reconstruction(&a, &s, u, v);
                            assert!(
                                res <= bound * norm,
                                "{what}: ||A - U S V^H|| = {res:e} > {:e}",
                                bound * norm
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn full_factors_orthonormal_whatever_the_buffer_held() {
    full_factors_whatever_the_buffer_held::<f64>();
    full_factors_whatever_the_buffer_held::<c64>();
}

#[test]
fn refusal_with_full_factors_writes_nothing() {
    // The full factors' identity comes after the finiteness check.
    let mut a = mat::<f64>(1, 3, 1.0);
    a[(0, 2)] = f64::NAN;
    let mut u = Mat::<f64>::from_fn(1, 1, |_, _| 7.0);
    let mut v = Mat::<f64>::from_fn(3, 3, |_, _| 7.0);
    let mut s = vec![7.0];
    let err = svd(
        a.as_ref(),
        &mut s,
        Some(u.as_mut()),
        Some(v.as_mut()),
        &Seq,
        SvdParams::default(),
    )
    .unwrap_err();
    assert_eq!(err, BidiagSvdError::NotFinite);
    assert_eq!(s, vec![7.0]);
    assert!(u[(0, 0)] == 7.0 && (0..3).all(|j| (0..3).all(|i| v[(i, j)] == 7.0)));
}
