//! The bidiagonal SVD solver: singular values against an independent oracle (bisection on the
//! Sturm sequence of the Golub-Kahan tridiagonal, written here), `B = U diag(d) V^T` with `U`
//! and `V` orthogonal, every scalar type of the vectors, the same bits on every executor, and
//! its errors.

use faer::{Mat, c32, c64};
use teamalg::gates::ParThreshold;
use teamalg::kernels::bidiag_svd::{BidiagSvdError, BidiagSvdParams, Rotate, bidiag_svd};
use teamalg::kernels::par::{Executor, Seq};

use super::sample;
use sample::{every_executor, val};

/// How many eigenvalues of the Golub-Kahan tridiagonal of `(d, e)` (zero diagonal,
/// off-diagonal `d_0, e_0, d_1, e_1, ...`) lie below `x`: the negative pivots of `T - x I`.
fn sturm_count(d: &[f64], e: &[f64], x: f64) -> usize {
    let mut off = Vec::with_capacity(2 * d.len());
    for i in 0..d.len() {
        off.push(d[i]);
        if i < e.len() {
            off.push(e[i]);
        }
    }
    let mut count = 0;
    let mut q = -x;
    if q < 0.0 {
        count += 1;
    }
    for b in off {
        // A zero pivot is nudged to a tiny negative number, as in LAPACK's `dstebz`.
        let prev = if q == 0.0 { -f64::MIN_POSITIVE } else { q };
        q = -x - b * b / prev;
        if q < 0.0 {
            count += 1;
        }
    }
    count
}

/// The singular values of `(d, e)`, non-increasing, each found by bisection on the Sturm count
/// (for `x > 0`, the count is `n` plus the number of singular values below `x`).
fn oracle(d: &[f64], e: &[f64]) -> Vec<f64> {
    let n = d.len();
    let bound = d.iter().chain(e).map(|x| x.abs()).sum::<f64>() * 2.0 + f64::MIN_POSITIVE;
    (0..n)
        .map(|k| {
            // The k-th largest: the smallest x with at least n - k values below it.
            let below = n - k;
            let (mut lo, mut hi) = (0.0f64, bound);
            for _ in 0..5000 {
                let mid = if lo > 0.0 && hi / lo > 2.0 {
                    (lo * hi).sqrt()
                } else if lo == 0.0 {
                    hi / 2.0
                } else {
                    0.5 * (lo + hi)
                };
                if mid <= lo || mid >= hi {
                    break;
                }
                if sturm_count(d, e, mid) >= n + below {
                    hi = mid;
                } else {
                    lo = mid;
                }
                if hi == 0.0 || (hi - lo) <= 1e-17 * hi {
                    break;
                }
            }
            if hi <= f64::MIN_POSITIVE * 4.0 {
                0.0
            } else {
                hi
            }
        })
        .collect()
}

/// A graded bidiagonal: entries fall geometrically over `orders` decades, with random factors.
fn graded(n: usize, orders: f64, seed: f64) -> (Vec<f64>, Vec<f64>) {
    let scale = |i: usize| 10f64.powf(-orders * i as f64 / (n.max(2) - 1) as f64);
    let d = (0..n)
        .map(|i| scale(i) * (1.0 + 0.5 * val(i, 0, seed)))
        .collect();
    let e = (0..n.saturating_sub(1))
        .map(|i| scale(i) * (1.0 + 0.5 * val(i, 1, seed)))
        .collect();
    (d, e)
}

fn random(n: usize, seed: f64) -> (Vec<f64>, Vec<f64>) {
    let d = (0..n).map(|i| val(i, 0, seed)).collect();
    let e = (0..n.saturating_sub(1)).map(|i| val(i, 1, seed)).collect();
    (d, e)
}

fn values(d: &[f64], e: &[f64]) -> Vec<f64> {
    let (mut d, mut e) = (d.to_vec(), e.to_vec());
    bidiag_svd::<f64>(&mut d, &mut e, None, None, &Seq, Default::default()).unwrap();
    d
}

fn max_rel_err(got: &[f64], want: &[f64]) -> f64 {
    got.iter()
        .zip(want)
        .map(|(g, w)| {
            if *w == 0.0 {
                g.abs()
            } else {
                (g - w).abs() / w
            }
        })
        .fold(0.0, f64::max)
}

#[test]
fn the_oracle_agrees_with_a_known_2x2() {
    // [3 4; 0 0]: 5 and 0; [1 1; 0 1]: the golden ratio and its inverse.
    assert!(max_rel_err(&oracle(&[3.0, 0.0], &[4.0]), &[5.0, 0.0]) < 1e-15);
    let phi = (1.0 + 5f64.sqrt()) / 2.0;
    assert!(max_rel_err(&oracle(&[1.0, 1.0], &[1.0]), &[phi, 1.0 / phi]) < 1e-15);
}

#[test]
fn graded_values_are_relatively_accurate_to_1e_14() {
    for (n, orders) in [
        (8, 30.0),
        (40, 30.0),
        (100, 20.0),
        (100, 100.0),
        (257, 30.0),
        // Below the square root of the smallest normal number times 1/eps dqds declines and
        // the QR runs.
        (60, 150.0),
    ] {
        for seed in [1.0, 2.0, 3.0] {
            let (d, e) = graded(n, orders, seed);
            let want = oracle(&d, &e);
            let got = values(&d, &e);
            let err = max_rel_err(&got, &want);
            assert!(
                err <= 1e-14,
                "n {n}, {orders} decades, seed {seed}: {err:e}"
            );
            // Reversed grading (small at the top) converges bottom to top.
            let (dr, er): (Vec<f64>, Vec<f64>) = (
                d.iter().rev().copied().collect(),
                e.iter().rev().copied().collect(),
            );
            let err = max_rel_err(&values(&dr, &er), &oracle(&dr, &er));
            assert!(err <= 1e-14, "reversed n {n}: {err:e}");
        }
    }
}

#[test]
fn random_values_match_the_oracle() {
    for n in [0, 1, 2, 3, 10, 63, 64, 65, 200] {
        let (d, e) = random(n, 7.0);
        let want = oracle(&d, &e);
        let got = values(&d, &e);
        let big = want.first().copied().unwrap_or(0.0);
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() <= 1e-14 * big.max(1e-300),
                "n {n}: {g} against {w}"
            );
        }
        assert!(got.windows(2).all(|w| w[0] >= w[1]) && got.iter().all(|x| *x >= 0.0));
    }
}

/// Values only run dqds, with vectors the QR: both relatively accurate, so they agree to
/// rounding on graded, clustered, glued and random matrices.
#[test]
fn dqds_and_the_qr_agree() {
    let clustered = |n: usize| {
        let d = vec![1.0; n];
        let e = (0..n - 1).map(|i| 1e-3 * (1.0 + val(i, 1, 4.0))).collect();
        (d, e)
    };
    let glued = |n: usize| {
        let d = (0..n).map(|i| 1.0 + 1e-9 * val(i, 0, 6.0)).collect();
        let e = (0..n - 1)
            .map(|i| if i % 20 == 19 { 1e-12 } else { 0.5 })
            .collect();
        (d, e)
    };
    for n in [3, 31, 100, 301] {
        for (d, e) in [random(n, 9.0), graded(n, 40.0, 8.0), clustered(n), glued(n)] {
            let (mut dv, mut ev) = (d.clone(), e.clone());
            let mut u = Mat::<f64>::identity(n, n);
            bidiag_svd::<f64>(
                &mut dv,
                &mut ev,
                Some(u.as_mut()),
                None,
                &Seq,
                Default::default(),
            )
            .unwrap();
            let err = max_rel_err(&values(&d, &e), &dv);
            assert!(err <= 2e-14, "n {n}: {err:e}");
        }
    }
}

#[test]
fn zeros_on_the_diagonal_give_exact_zero_values() {
    // Singular: zeros on the diagonal leave rank 4 here (rows 4 and 5 are parallel, the rest
    // independent), so exactly one value is zero.
    let d = vec![1.0, 0.0, 2.0, 0.0, 3.0];
    let e = vec![0.5, 0.25, 0.125, 0.0625];
    let got = values(&d, &e);
    let want = oracle(&d, &e);
    assert_eq!(got.iter().filter(|x| **x == 0.0).count(), 1, "{got:?}");
    assert!(max_rel_err(&got, &want) < 1e-14, "{got:?} {want:?}");
}

#[test]
fn subnormal_scaled_values_keep_their_relative_accuracy() {
    let (d, e) = random(30, 11.0);
    let s = 1e-300;
    let (ds, es): (Vec<f64>, Vec<f64>) = (
        d.iter().map(|x| x * s).collect(),
        e.iter().map(|x| x * s).collect(),
    );
    let got = values(&ds, &es);
    let want = values(&d, &e);
    for (g, w) in got.iter().zip(&want) {
        assert!((g / s - w).abs() <= 1e-12 * want[0], "{g} against {w}");
    }
}

/// `B` (`n x n`) from `(d, e)`.
fn bidiagonal(d: &[f64], e: &[f64]) -> Mat<f64> {
    let n = d.len();
    Mat::from_fn(n, n, |i, j| {
        if i == j {
            d[i]
        } else if j == i + 1 {
            e[i]
        } else {
            0.0
        }
    })
}

/// Runs the solver with vectors on `exec`, `U` and `V` starting as the identity.
fn vectors(
    d: &[f64],
    e: &[f64],
    exec: &dyn Executor,
    force: bool,
    batch: usize,
) -> (Vec<f64>, Mat<f64>, Mat<f64>) {
    let n = d.len();
    let (mut d, mut e) = (d.to_vec(), e.to_vec());
    let mut u = Mat::<f64>::identity(n, n);
    let mut v = Mat::<f64>::identity(n, n);
    let params = BidiagSvdParams {
        batch,
        threshold: force.then_some(ParThreshold::Fixed(0)),
    };
    bidiag_svd::<f64>(
        &mut d,
        &mut e,
        Some(u.as_mut()),
        Some(v.as_mut()),
        exec,
        params,
    )
    .unwrap();
    assert!(e.iter().all(|x| *x == 0.0));
    (d, u, v)
}

fn check_vectors(b: &Mat<f64>, s: &[f64], u: &Mat<f64>, v: &Mat<f64>) {
    let n = s.len();
    let sigma = Mat::from_fn(n, n, |i, j| if i == j { s[i] } else { 0.0 });
    let norm = b.norm_l2().max(f64::MIN_POSITIVE);
    let res = (u * &sigma * v.transpose() - b).norm_l2() / norm;
    // The backward-error bound `C u n` (relative to ||B||).
    let bound = sample::C * f64::EPSILON / 2.0 * n.max(1) as f64;
    assert!(res <= bound, "n {n}: residual {res:e} > {bound:e}");
    for q in [u, v] {
        let orth = (q.transpose() * q - Mat::<f64>::identity(n, n)).norm_l2();
        assert!(orth <= bound, "n {n}: orthogonality {orth:e} > {bound:e}");
    }
}

#[test]
fn vectors_reconstruct_b_and_are_orthogonal() {
    for n in [1, 2, 3, 17, 64, 65, 150] {
        for (d, e) in [random(n, 3.0), graded(n, 30.0, 5.0)] {
            let b = bidiagonal(&d, &e);
            for batch in [1, 8] {
                let (s, u, v) = vectors(&d, &e, &Seq, false, batch);
                check_vectors(&b, &s, &u, &v);
                // Without vectors the values come from dqds: the same to rounding.
                let err = max_rel_err(&values(&d, &e), &s);
                assert!(err <= 1e-14, "values with and without vectors: {err:e}");
            }
        }
    }
}

#[test]
fn every_executor_gives_the_same_bits() {
    let (d, e) = random(120, 9.0);
    let (s0, u0, v0) = vectors(&d, &e, &Seq, false, 2);
    let check = |exec: &dyn Executor, force: bool| {
        let (s, u, v) = vectors(&d, &e, exec, force, 2);
        assert_eq!(s, s0);
        assert!(u == u0 && v == v0, "vectors differ on an executor");
    };
    every_executor(check);
}

/// Runs the solver on `U = X`, `V = Y` (not orthogonal, `p x n` and `q x n`) of scalar `T` on a
/// team (forced parallel) and checks `X U_B` and `Y V_B` against the real solver's `U_B` and
/// `V_B`. `make` builds a `T` from real and imaginary parts, `parts` reads them back.
fn on_matrices<T, R>(make: impl Fn(f64, f64) -> T, parts: impl Fn(T) -> (f64, f64), unit: f64)
where
    T: Rotate<RealPart = R>,
    R: teamalg::kernels::bidiag_svd::Real + Rotate<RealPart = R>,
{
    let n = 40;
    let (d, e) = random(n, 4.0);
    // The reference U_B and V_B come from the same real type: f32 and f64 may end with the
    // opposite sign on a pair of singular vectors.
    let (s, ub, vb) = {
        let (mut d, mut e): (Vec<R>, Vec<R>) = (
            d.iter().map(|x| R::from_f64(*x)).collect(),
            e.iter().map(|x| R::from_f64(*x)).collect(),
        );
        let mut u = Mat::<R>::from_fn(n, n, |i, j| R::from_f64(if i == j { 1.0 } else { 0.0 }));
        let mut v = u.clone();
        bidiag_svd::<R>(
            &mut d,
            &mut e,
            Some(u.as_mut()),
            Some(v.as_mut()),
            &Seq,
            Default::default(),
        )
        .unwrap();
        let wide = |m: &Mat<R>| Mat::<f64>::from_fn(n, n, |i, j| m[(i, j)].to_f64());
        let s: Vec<f64> = d.iter().map(|x| x.to_f64()).collect();
        (s, wide(&u), wide(&v))
    };
    let (p, q) = (33, 57);
    let x = Mat::<T>::from_fn(p, n, |i, j| make(val(i, j, 1.0), val(i, j, 2.0)));
    let y = Mat::<T>::from_fn(q, n, |i, j| make(val(i, j, 3.0), val(i, j, 4.0)));
    let (mut xu, mut yv) = (x.clone(), y.clone());
    let (mut dd, mut ee): (Vec<R>, Vec<R>) = (
        d.iter().map(|x| R::from_f64(*x)).collect(),
        e.iter().map(|x| R::from_f64(*x)).collect(),
    );
    let team = sample::team(2);
    let params = BidiagSvdParams {
        batch: 3,
        threshold: Some(ParThreshold::Fixed(0)),
    };
    bidiag_svd::<T>(
        &mut dd,
        &mut ee,
        Some(xu.as_mut()),
        Some(yv.as_mut()),
        &team,
        params,
    )
    .unwrap();
    // Rounding bounds of the form `C u n ||.||`: the values against the reference's (the same
    // type's, so the same iteration), and each row of `X U_B` (a product of rotations applied
    // to the row) against the row times the reference `U_B`.
    let bound = sample::C * unit * n as f64;
    for (g, w) in dd.iter().zip(&s) {
        assert!((g.to_f64() - w).abs() <= bound * s[0]);
    }
    for (got, mat, b) in [(&xu, &x, &ub), (&yv, &y, &vb)] {
        for i in 0..mat.nrows() {
            let row: f64 = (0..n)
                .map(|k| {
                    let (a, c) = parts(mat[(i, k)]);
                    a * a + c * c
                })
                .sum::<f64>()
                .sqrt();
            for j in 0..n {
                let (mut re, mut im) = (0.0, 0.0);
                for k in 0..n {
                    let (a, c) = parts(mat[(i, k)]);
                    re += a * b[(k, j)];
                    im += c * b[(k, j)];
                }
                let (gr, gi) = parts(got[(i, j)]);
                let diff = (gr - re).abs().max((gi - im).abs());
                assert!(
                    diff <= bound * row,
                    "({i}, {j}): {diff:e} > {:e}",
                    bound * row
                );
            }
        }
    }
}

#[test]
fn rotations_act_on_every_scalar_type() {
    let (u64_, u32_) = (f64::EPSILON / 2.0, f32::EPSILON as f64 / 2.0);
    on_matrices::<f64, f64>(|re, _| re, |x| (x, 0.0), u64_);
    on_matrices::<f32, f32>(|re, _| re as f32, |x| (x as f64, 0.0), u32_);
    on_matrices::<c64, f64>(c64::new, |x| (x.re, x.im), u64_);
    on_matrices::<c32, f32>(
        |re, im| c32::new(re as f32, im as f32),
        |x| (x.re as f64, x.im as f64),
        u32_,
    );
}

#[test]
fn non_finite_input_is_refused_and_kept() {
    for bad in [f64::NAN, f64::INFINITY] {
        let mut d = vec![1.0, bad, 2.0];
        let mut e = vec![0.5, 0.5];
        let mut u = Mat::<f64>::identity(3, 3);
        let err = bidiag_svd::<f64>(
            &mut d,
            &mut e,
            Some(u.as_mut()),
            None,
            &Seq,
            Default::default(),
        )
        .unwrap_err();
        assert_eq!(err, BidiagSvdError::NotFinite);
        assert_eq!(d[0], 1.0);
        assert_eq!(d[2], 2.0);
        assert_eq!(e, vec![0.5, 0.5]);
        assert!(u == Mat::<f64>::identity(3, 3));
    }
}
