//! QR with column pivoting: `A P = Q R` within the backward-error bound on every scalar type
//! and executor, `R`'s diagonal non-increasing, faer's own result on the serial path, one
//! result on every width of the parallel path, the rank against the SVD's, and the
//! minimum-norm least squares against the SVD's on rank-deficient, wide and tall input.

use faer::linalg::qr::col_pivoting::factor as faer_cp;
use faer::traits::math_utils::{abs, zero};
use faer::{Mat, MatRef, Par, c32, c64};
use teamalg::gates::{Family, ParThreshold};
use teamalg::kernels::par::Executor;
use teamalg::linalg::{self, ColPivQr, LinalgError, Options, Qr, Rotate, Svd};
use teamalg::{Exec, Pool};

use super::sample;
use sample::{Sample, assert_backward, every_executor, mat, norm, real_f64, team};

/// Every step forced onto the executor's full width, or left to the gate.
fn options(forced: bool) -> Options {
    if forced {
        Options::new().threshold(Family::QrColPivStep, ParThreshold::Fixed(0))
    } else {
        Options::new()
    }
}

/// `X Y` with `X` `m x r` and `Y` `r x n`: rank `r` (the factors are generic).
fn low_rank<T: Sample>(m: usize, n: usize, r: usize, seed: f64) -> Mat<T> {
    mat::<T>(m, r, seed) * mat::<T>(r, n, seed + 0.5)
}

/// `A P`, from the factorization's permutation.
fn permuted<T: Sample>(a: MatRef<'_, T>, qr: &ColPivQr<'_, T>) -> Mat<T> {
    let (fwd, _) = qr.p().arrays();
    Mat::from_fn(a.nrows(), a.ncols(), |i, j| a[(i, fwd[j])])
}

fn factors_back<T: Sample>(exec: &dyn Executor, forced: bool) {
    let o = options(forced);
    for (m, n) in [(0, 0), (1, 1), (1, 5), (5, 1), (40, 40), (70, 45), (45, 70)] {
        for a in [mat::<T>(m, n, 0.3), low_rank::<T>(m, n, n.min(m) / 2, 0.6)] {
            let qr = ColPivQr::new_with(&a, exec, &o).unwrap();
            let nrm = norm(a.as_ref());
            let q = qr.q_thin(exec).unwrap();
            let what = format!("A P = Q R, {m} x {n}");
            assert_backward::<T>(
                &what,
                (&q * qr.r().to_mat() - permuted(a.as_ref(), &qr)).as_ref(),
                m.max(n),
                nrm,
            );
            let k = m.min(n);
            let qtq = q.adjoint() * &q - Mat::<T>::identity(k, k);
            assert_backward::<T>(
                &format!("Q^H Q = I, {m} x {n}"),
                qtq.as_ref(),
                m.max(n),
                (k as f64).sqrt(),
            );
            // The pivoting's promise: |R_00| >= |R_11| >= ...
            let r = qr.r().to_mat();
            for i in 1..k {
                let (prev, next) = (
                    real_f64::<T>(abs(&r[(i - 1, i - 1)])),
                    real_f64::<T>(abs(&r[(i, i)])),
                );
                assert!(
                    next <= prev * (1.0 + 1e3 * T::unit()) + nrm * 1e2 * T::unit(),
                    "{what}: |R_{i}{i}| = {next:e} > {prev:e}"
                );
            }
            assert_backward::<T>(
                &format!("reconstruct, {m} x {n}"),
                (qr.reconstruct() - &a).as_ref(),
                m.max(n),
                nrm,
            );
        }
    }
}

#[test]
fn factors_back_on_every_executor() {
    every_executor(|e, forced| {
        factors_back::<f64>(e, forced);
        factors_back::<c64>(e, forced);
    });
    let t = team(2);
    factors_back::<f32>(&t, true);
    factors_back::<c32>(&t, true);
}

/// The serial path is faer's column-pivoted QR, bit for bit (the same block size).
#[test]
fn serial_path_is_faers() {
    for (m, n) in [(30, 20), (20, 30), (64, 64)] {
        let a = low_rank::<f64>(m, n, 12, 0.2) + mat::<f64>(m, n, 0.9) * 1e-3;
        let qr = ColPivQr::new(&a, &Exec::serial()).unwrap();
        let mut f = a.clone();
        let bs = qr.householder_factor().nrows();
        let mut h = Mat::<f64>::zeros(bs, m.min(n));
        let (mut p, mut pi) = (vec![0usize; n], vec![0usize; n]);
        let req =
            faer_cp::qr_in_place_scratch::<usize, f64>(m, n, bs, Par::Seq, Default::default());
        let mut buf = faer::dyn_stack::MemBuffer::new(req);
        let stack = faer::dyn_stack::MemStack::new(&mut buf);
        let (info, _) = faer_cp::qr_in_place(
            f.as_mut(),
            h.as_mut(),
            &mut p,
            &mut pi,
            Par::Seq,
            stack,
            Default::default(),
        );
        assert!(qr.factors() == f.as_ref() && qr.householder_factor() == h.as_ref());
        assert_eq!(qr.p().arrays().0, &p[..]);
        assert_eq!(qr.transpositions(), info.transposition_count);
    }
}

/// The parallel path's columns are each their own work, so every width gives one result.
#[test]
fn parallel_path_is_the_same_on_every_width() {
    let a = low_rank::<c64>(90, 70, 40, 0.1)
        + faer::Scale(c64::new(1e-6, 0.0)) * mat::<c64>(90, 70, 0.4);
    let o = options(true);
    let reference = ColPivQr::new_with(&a, &team(2), &o).unwrap();
    for w in [3, 4, 8] {
        let pool = Pool::builder().threads(w).build().unwrap();
        for qr in [
            ColPivQr::new_with(&a, &pool.into_team(w).unwrap(), &o).unwrap(),
            ColPivQr::new_with(
                &a,
                &Exec::new(&Pool::builder().threads(w).build().unwrap(), w).unwrap(),
                &o,
            )
            .unwrap(),
        ] {
            assert!(qr.factors() == reference.factors(), "width {w}");
            assert!(
                qr.householder_factor() == reference.householder_factor(),
                "width {w}"
            );
            assert_eq!(qr.p().arrays().0, reference.p().arrays().0, "width {w}");
        }
    }
}

fn rank_and_lstsq<T: Sample + Rotate>(exec: &dyn Executor, forced: bool) {
    let o = options(forced);
    for (m, n, r) in [
        (60, 40, 25),
        (40, 60, 25),
        (50, 50, 30),
        (50, 50, 50),
        (30, 20, 1),
        (8, 8, 0),
    ] {
        let a = low_rank::<T>(m, n, r, 0.7);
        let qr = ColPivQr::new_with(&a, exec, &o).unwrap();
        let svd = Svd::new_thin(&a, &Exec::serial()).unwrap();
        let what = format!("{m} x {n} of rank {r}");
        assert_eq!(qr.rank(None), r, "{what}");
        assert_eq!(svd.rank(None), r, "{what}");
        let b = mat::<T>(m, 3, 0.25);
        let x = qr.lstsq(&b, exec).unwrap();
        let best = svd.lstsq(&b, exec).unwrap();
        // The same minimum-norm solution: equal residuals and equal norms, to rounding.
        let tol = 1e3 * T::unit().sqrt().max(1e3 * T::unit());
        let (res, res_best) = (
            norm((&a * &x - &b).as_ref()),
            norm((&a * &best - &b).as_ref()),
        );
        assert!(
            res <= res_best * (1.0 + tol) + tol,
            "{what}: residual {res:e} against {res_best:e}"
        );
        let (nx, nb) = (norm(x.as_ref()), norm(best.as_ref()));
        assert!(
            nx <= nb * (1.0 + tol) + tol,
            "{what}: ||x|| = {nx:e} against {nb:e}"
        );
        assert!(
            norm((&x - &best).as_ref()) <= tol * (1.0 + nb),
            "{what}: x differs from the SVD's"
        );
    }
}

#[test]
fn rank_and_minimum_norm_least_squares_match_the_svd() {
    every_executor(|e, forced| rank_and_lstsq::<f64>(e, forced));
    let t = team(2);
    rank_and_lstsq::<c64>(&t, true);
    rank_and_lstsq::<f32>(&Exec::serial(), false);
    rank_and_lstsq::<c32>(&t, true);
}

/// Where plain QR refuses a rank-deficient system, the pivoted one answers it.
#[test]
fn qr_refuses_and_col_piv_qr_answers() {
    let a = Mat::<f64>::from_fn(3, 3, |i, j| (3 * i + j + 1) as f64); // [[1,2,3],[4,5,6],[7,8,9]]
    let b = Mat::<f64>::from_fn(3, 1, |i, _| [6.0, 15.0, 24.0][i]); // A (1, 1, 1)
    let err = Qr::new(&a, &Exec::serial())
        .unwrap()
        .solve(&b, &Exec::serial())
        .unwrap_err();
    assert!(
        matches!(err, LinalgError::RankDeficient { rank: 2, of: 3, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("ColPivQr::lstsq"));
    let qr = ColPivQr::new(&a, &Exec::serial()).unwrap();
    assert_eq!(qr.rank(None), 2);
    let x = qr.lstsq(&b, &Exec::serial()).unwrap();
    // The minimum-norm solution of a consistent system: (1, 1, 1) (orthogonal to (1, -2, 1)).
    for i in 0..3 {
        assert!((x[(i, 0)] - 1.0).abs() < 1e-12, "{:?}", x);
    }
    // A larger rcond cuts more: rank 1 keeps only the dominant direction.
    assert_eq!(qr.rank(Some(0.5)), 1);
}

#[test]
fn bad_input_is_refused_and_kept() {
    let mut a = mat::<f64>(6, 4, 0.2);
    a[(2, 3)] = f64::NAN;
    let kept = a.clone();
    let err = linalg::col_piv_qr(a.as_mut(), &Exec::serial()).unwrap_err();
    assert_eq!(err.to_string(), "col_piv_qr: A[(2, 3)] is not finite");
    let same = (0..6).all(|i| (0..4).all(|j| a[(i, j)].to_bits() == kept[(i, j)].to_bits()));
    assert!(same, "a refused matrix is left as it was");
    let qr = ColPivQr::new(&mat::<f64>(6, 4, 0.2), &Exec::serial()).unwrap();
    assert!(matches!(
        qr.lstsq(&Mat::<f64>::zeros(5, 1), &Exec::serial()),
        Err(LinalgError::ShapeMismatch { .. })
    ));
    let mut b = Mat::<f64>::zeros(6, 1);
    b[(4, 0)] = f64::INFINITY;
    assert_eq!(
        qr.lstsq(&b, &Exec::serial()).unwrap_err().to_string(),
        "lstsq: B[(4, 0)] is not finite"
    );
}

/// `U diag(sigma) V^H` (`m x n`, `m >= n`) with `U` and `V` the orthonormal factors of QRs of
/// reproducible matrices: a matrix with the singular values asked for.
fn with_values<T: Sample>(m: usize, n: usize, sigma: &[f64]) -> Mat<T> {
    let u = Qr::new(&mat::<T>(m, n, 0.31), &Exec::serial())
        .unwrap()
        .q_thin(&Exec::serial())
        .unwrap();
    let v = Qr::new(&mat::<T>(n, n, 0.77), &Exec::serial())
        .unwrap()
        .q_thin(&Exec::serial())
        .unwrap();
    let s = Mat::<T>::from_fn(n, n, |i, j| {
        if i == j {
            faer::traits::math_utils::from_f64(sigma[i])
        } else {
            zero()
        }
    });
    &u * &s * v.adjoint()
}

/// The rank against the SVD's on graded, clustered, Hilbert and Kahan matrices, and `rcond`
/// against the true reciprocal condition number of `R` (from its explicit inverse), within
/// a factor of 10.
fn families<T: Sample + Rotate>(exec: &dyn Executor, forced: bool) {
    let o = options(forced);
    let graded: Vec<f64> = (0..30)
        .map(|i| {
            if i < 20 {
                10f64.powf(-(i as f64) / 2.0)
            } else {
                0.0
            }
        })
        .collect();
    let clustered: Vec<f64> = (0..30)
        .map(|i| [1.0, 1e-3, 0.0][(i >= 15) as usize + (i >= 20) as usize])
        .collect();
    let full: Vec<f64> = (0..30).map(|i| 10f64.powf(-(i as f64) / 6.0)).collect();
    let kahan = Mat::<T>::from_fn(40, 40, |i, j| {
        let (s, c) = 1.2f64.sin_cos();
        let x = s.powi(i as i32)
            * if i == j {
                1.0
            } else if i < j {
                -c
            } else {
                0.0
            };
        faer::traits::math_utils::from_f64(x)
    });
    let hilbert = Mat::<T>::from_fn(8, 8, |i, j| {
        faer::traits::math_utils::from_f64(1.0 / (i + j + 1) as f64)
    });
    for (name, a, rank) in [
        ("graded", with_values::<T>(50, 30, &graded), 20),
        ("clustered", with_values::<T>(50, 30, &clustered), 20),
        ("graded, full rank", with_values::<T>(50, 30, &full), 30),
        ("Kahan", kahan, 40),
        ("Hilbert", hilbert, 8),
    ] {
        let qr = ColPivQr::new_with(&a, exec, &o).unwrap();
        assert_eq!(qr.rank(None), rank, "{name}");
        assert_eq!(
            Svd::new_thin(&a, &Exec::serial()).unwrap().rank(None),
            rank,
            "{name}: the SVD's"
        );
        if rank == a.ncols() {
            let r = qr.r().to_mat();
            let inv = linalg::Lu::new(&r, &Exec::serial())
                .unwrap()
                .inverse(&Exec::serial())
                .unwrap();
            let n1 = |x: MatRef<'_, T>| {
                (0..x.ncols())
                    .map(|j| {
                        (0..x.nrows())
                            .map(|i| real_f64::<T>(abs(&x[(i, j)])))
                            .sum::<f64>()
                    })
                    .fold(0.0, f64::max)
            };
            let truth = 1.0 / (n1(r.as_ref()) * n1(inv.as_ref()));
            let est = real_f64::<T>(qr.rcond().unwrap());
            // faer measures ||R||_1 with |re| + |im|, within sqrt 2 of the moduli's.
            assert!(
                est >= truth / 1.5 && est <= 10.0 * truth,
                "{name}: rcond {est:e} against {truth:e}"
            );
        }
    }
}

#[test]
fn rank_and_rcond_on_hard_families() {
    families::<f64>(&Exec::serial(), false);
    families::<f64>(&team(2), true);
    families::<c64>(&team(2), true);
}

/// One factorization may be shared by threads that solve with it at once.
#[test]
fn a_factorization_is_shared_between_threads() {
    fn shareable<X: Send + Sync>() {}
    shareable::<ColPivQr<'static, c64>>();
    let a = low_rank::<f64>(40, 30, 20, 0.3);
    let qr = ColPivQr::new(&a, &team(2)).unwrap();
    let best = qr.lstsq(&mat::<f64>(40, 1, 0.6), &Exec::serial()).unwrap();
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                let x = qr.lstsq(&mat::<f64>(40, 1, 0.6), &Exec::serial()).unwrap();
                assert!(x.as_ref() == best.as_ref());
            });
        }
    });
}

/// Columns that nearly coincide (`c_j u + s_j w_j`, orthonormal `u` and `w_j`, `c_j` about 1
/// and `s_j` about 1e-5, ordered differently): after the first step every norm cancels to
/// about 1e-5 of itself, so the parallel path recomputes them, and its pivots must follow the
/// recomputed norms, not the cancelled ones (which still order the columns by `c_j`), as
/// faer's serial path's do (the same `|R_jj|`), also at a scale whose squares overflow.
#[test]
fn parallel_pivots_follow_recomputed_norms() {
    fn check<T: Sample>(scale: f64) {
        let (m, n) = (60, 8);
        let basis = Qr::new(&mat::<T>(m, n, 0.2), &Exec::serial())
            .unwrap()
            .q_thin(&Exec::serial())
            .unwrap();
        let s = [0.0, 3.0, 7.0, 1.0, 5.0, 2.0, 6.0, 4.0];
        let c = [1.0, 1.05, 1.01, 1.07, 1.03, 1.06, 1.02, 1.04];
        let x = |v: f64| faer::traits::math_utils::from_f64::<T>(v);
        let a = Mat::<T>::from_fn(m, n, |i, j| {
            let w = if j == 0 { 0.0 } else { s[j] * 1e-5 };
            (basis[(i, 0)] * x(c[j]) + basis[(i, j)] * x(w)) * x(scale)
        });
        let parallel = ColPivQr::new_with(&a, &team(2), &options(true)).unwrap();
        let serial = ColPivQr::new(&a, &Exec::serial()).unwrap();
        let (rp, rs) = (parallel.r().to_mat(), serial.r().to_mat());
        for j in 0..n {
            let (p, q) = (
                real_f64::<T>(abs(&rp[(j, j)])),
                real_f64::<T>(abs(&rs[(j, j)])),
            );
            assert!(
                p.is_finite() && (p - q).abs() <= 1e-8 * q,
                "scale {scale:e}: |R_{j}{j}| = {p:e} on the team, {q:e} serially"
            );
        }
    }
    for scale in [1.0, 1e160] {
        check::<f64>(scale);
        check::<c64>(scale);
    }
}

/// A matrix that is not column-major (a transposed view) is factored in place on the parallel
/// path as its column-major copy is, bit for bit.
#[test]
fn parallel_path_takes_a_strided_matrix() {
    let a = low_rank::<c64>(50, 40, 25, 0.3)
        + faer::Scale(c64::new(1e-4, 0.0)) * mat::<c64>(50, 40, 0.8);
    let (t, o) = (team(2), options(true));
    let mut plain = a.clone();
    let want = linalg::col_piv_qr_with(plain.as_mut(), &t, &o).unwrap();
    let mut stored = a.transpose().to_owned();
    let strided = stored.as_mut().transpose_mut();
    assert_ne!(strided.row_stride(), 1);
    let got = linalg::col_piv_qr_with(strided, &t, &o).unwrap();
    assert!(got.factors() == want.factors());
    assert_eq!(got.p().arrays().0, want.p().arrays().0);
}
