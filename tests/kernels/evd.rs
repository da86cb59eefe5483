//! The self-adjoint EVD: `A U = U diag(w)` to rounding, `U` unitary, values against faer's,
//! every scalar type, edge orders and both tridiagonal solvers (below and above order 128),
//! the lower triangle alone read, the same values on every executor, rank-deficient,
//! clustered and tiny matrices, and its errors.

use faer::{Mat, c32, c64};
use teamalg::gates::ParThreshold;
use teamalg::kernels::bidiag_svd::{Real, Rotate};
use teamalg::kernels::evd::{EvdError, EvdParams, self_adjoint_evd};
use teamalg::kernels::par::{Executor, Seq};

use super::parts;
use super::sample;
use parts::{eps, from, mul, orthogonality, parts};
use sample::{Sample, every_executor, hermitian, mat};

struct Result<T> {
    w: Vec<f64>,
    u: Mat<T>,
}

fn params(force: bool) -> EvdParams {
    let threshold = force.then_some(ParThreshold::Fixed(0));
    EvdParams {
        tridiag: threshold,
        threshold,
        solver: threshold,
        gemm: threshold,
    }
}

fn run<T: Sample + Rotate>(a: &Mat<T>, exec: &dyn Executor, force: bool) -> Result<T> {
    let n = a.nrows();
    let mut w = vec![<<T as Rotate>::RealPart as Real>::ZERO; n];
    let mut u = Mat::<T>::zeros(n, n);
    self_adjoint_evd(a.as_ref(), &mut w, Some(u.as_mut()), exec, params(force)).unwrap();
    Result {
        w: w.iter().map(|x| x.to_f64()).collect(),
        u,
    }
}

fn values<T: Sample + Rotate>(a: &Mat<T>) -> Vec<f64> {
    let mut w = vec![<<T as Rotate>::RealPart as Real>::ZERO; a.nrows()];
    self_adjoint_evd(a.as_ref(), &mut w, None, &Seq, EvdParams::default()).unwrap();
    w.iter().map(|x| x.to_f64()).collect()
}

/// `||A U - U W|| / ||A||` and the largest entry of `U^H U - I`, `A` read from its lower
/// triangle.
fn errors<T: Rotate>(a: &Mat<T>, r: &Result<T>) -> (f64, f64) {
    let n = a.nrows();
    let at = |i: usize, j: usize| {
        if i >= j {
            parts(a[(i, j)])
        } else {
            let (re, im) = parts(a[(j, i)]);
            (re, -im)
        }
    };
    let (mut res, mut norm) = (0.0f64, 0.0f64);
    for i in 0..n {
        for j in 0..n {
            let (re, im) = at(i, j);
            norm += re * re + im * im;
            let (mut re, mut im) = (0.0, 0.0);
            for l in 0..n {
                let p = mul(at(i, l), parts(r.u[(l, j)]));
                re += p.0;
                im += p.1;
            }
            let (ur, ui) = parts(r.u[(i, j)]);
            re -= ur * r.w[j];
            im -= ui * r.w[j];
            res += re * re + im * im;
        }
    }
    let orth = orthogonality(&r.u);
    (res.sqrt() / norm.sqrt().max(f64::MIN_POSITIVE), orth)
}

fn check<T: Sample + Rotate>(a: &Mat<T>, r: &Result<T>, what: &str) {
    let n = a.nrows();
    let (res, orth) = errors(a, r);
    // faer's own level: a small multiple of the unit roundoff times the order.
    let bound = 30.0 * eps::<T>() * (n.max(1) as f64);
    assert!(res <= bound, "{what} {n}: residual {res:e} > {bound:e}");
    assert!(
        orth <= bound,
        "{what} {n}: orthogonality {orth:e} > {bound:e}"
    );
    assert!(
        r.w.windows(2).all(|w| w[0] <= w[1]),
        "{what} {n}: not sorted"
    );
}

/// Edge orders, block edges, and both sides of the divide-and-conquer threshold (128).
const ORDERS: [usize; 11] = [0, 1, 2, 3, 31, 32, 33, 64, 127, 128, 150];

fn every_order<T: Sample + Rotate>() {
    for n in ORDERS {
        let a = hermitian::<T>(n, 1.0);
        let r = run(&a, &Seq, false);
        check(&a, &r, "random");
        // Values only (the QL iteration) agree with the values beside the vectors.
        let scale = r.w.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1.0);
        for (x, y) in values(&a).iter().zip(&r.w) {
            let tol = 20.0 * eps::<T>() * n as f64 * scale;
            assert!((x - y).abs() <= tol, "{n}: values only {x} against {y}");
        }
    }
}

#[test]
fn f64_every_order() {
    every_order::<f64>();
}

#[test]
fn f32_every_order() {
    every_order::<f32>();
}

#[test]
fn c64_every_order() {
    every_order::<c64>();
}

#[test]
fn c32_every_order() {
    every_order::<c32>();
}

#[test]
fn values_match_faers() {
    for n in [40, 140] {
        let a = hermitian::<c64>(n, 2.0);
        let ours = run(&a, &Seq, false).w;
        let theirs = a.self_adjoint_eigenvalues(faer::Side::Lower).unwrap();
        let scale = theirs.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        for (x, y) in ours.iter().zip(&theirs) {
            assert!((x - y).abs() <= weyl(n, scale), "{x} against {y}");
        }
    }
}

#[test]
fn only_the_lower_triangle_is_read() {
    let a = hermitian::<c64>(50, 3.0);
    let mut b = a.clone();
    for j in 0..50 {
        for i in 0..j {
            b[(i, j)] = c64::new(f64::NAN, 7.0);
        }
        // The diagonal's imaginary part is taken as zero.
        b[(j, j)].im = 5.0;
    }
    let (ra, rb) = (run(&a, &Seq, false), run(&b, &Seq, false));
    assert_eq!(ra.w, rb.w);
    assert_eq!(ra.u, rb.u);
}

#[test]
fn every_executor_gives_the_same_values() {
    for n in [90, 160] {
        let a = hermitian::<c64>(n, 4.0);
        let base = run(&a, &Seq, false);
        check(&a, &base, "base");
        let scale = base.w.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let parallel = std::cell::RefCell::new(None::<Vec<f64>>);
        let same = |exec: &dyn Executor, force: bool| {
            let r = run(&a, exec, force);
            check(&a, &r, "executor");
            // A serial reduction is faer's; a parallel one is teamalg's, whose bands sum
            // their partial products in the same order at every width: the same bits on every
            // executor that goes parallel, and equal to rounding to the serial values.
            for (x, y) in r.w.iter().zip(&base.w) {
                assert!((x - y).abs() <= weyl(n, scale), "{x} against {y}");
            }
            if force && exec.width() > 1 {
                let mut first = parallel.borrow_mut();
                match &*first {
                    Some(w) => assert_eq!(&r.w, w),
                    None => *first = Some(r.w.clone()),
                }
            }
        };
        every_executor(same);
    }
}

/// The parallel reduction (forced on a team) at every order and scalar type.
fn every_order_in_parallel<T: Sample + Rotate>() {
    let team = sample::team(3);
    for n in ORDERS.into_iter().chain([200]) {
        let a = hermitian::<T>(n, 9.0);
        check(&a, &run(&a, &team, true), "parallel");
    }
    // Columns already reduced (no reflection: an infinite tau): diagonal, tridiagonal, and a
    // block of zeros below the subdiagonal.
    let n = 150;
    let full = hermitian::<T>(n, 10.0);
    for keep in [0, 1, 40] {
        let a = Mat::from_fn(n, n, |i, j| {
            if i.abs_diff(j) <= keep.min(1) || (i.abs_diff(j) <= keep && j > 60) {
                full[(i, j)]
            } else {
                from((0.0, 0.0))
            }
        });
        check(&a, &run(&a, &team, true), "reduced");
    }
}

#[test]
fn every_order_in_parallel_f64() {
    every_order_in_parallel::<f64>();
}

#[test]
fn every_order_in_parallel_f32() {
    every_order_in_parallel::<f32>();
}

#[test]
fn every_order_in_parallel_c64() {
    every_order_in_parallel::<c64>();
}

#[test]
fn every_order_in_parallel_c32() {
    every_order_in_parallel::<c32>();
}

#[test]
fn rank_deficient_clustered_and_tiny_matrices() {
    let n = 60;
    // Rank 4: L L^T with L 60x4.
    let l = mat::<f64>(n, 4, 5.0);
    let low = &l * l.transpose();
    let r = run(&low, &Seq, false);
    check(&low, &r, "rank 4");
    let top = r.w[n - 1];
    assert!(r.w[..n - 4].iter().all(|x| x.abs() <= weyl(n, top)));
    // Clustered: the identity plus a tiny perturbation has every value near one.
    let near = Mat::from_fn(n, n, |i, j| {
        f64::from(u8::from(i == j)) + 1e-12 * hermitian::<f64>(n, 6.0)[(i, j)]
    });
    let r = run(&near, &Seq, false);
    check(&near, &r, "clustered");
    // Within the perturbation's norm of one, plus the rounding.
    let e = (&near - Mat::<f64>::identity(n, n)).norm_l2();
    assert!(r.w.iter().all(|x| (x - 1.0).abs() <= e + weyl(n, 1.0)));
    // Tiny: subnormal-scaled entries keep a small residual relative to their own norm.
    let tiny = Mat::from_fn(20, 20, |i, j| hermitian::<f64>(20, 7.0)[(i, j)] * 1e-300);
    check(&tiny, &run(&tiny, &Seq, false), "tiny");
    // Graded: the diagonal over 12 decades.
    let graded = Mat::from_fn(n, n, |i, j| {
        hermitian::<f64>(n, 8.0)[(i, j)] * 10f64.powf(-((i + j) as f64) / 10.0)
    });
    check(&graded, &run(&graded, &Seq, false), "graded");
}

#[test]
fn non_finite_input_is_refused() {
    let mut a = hermitian::<f64>(5, 1.0);
    a[(3, 1)] = f64::INFINITY;
    let mut w = vec![0.0; 5];
    let mut u = Mat::<f64>::zeros(5, 5);
    let err = self_adjoint_evd(
        a.as_ref(),
        &mut w,
        Some(u.as_mut()),
        &Seq,
        EvdParams::default(),
    )
    .unwrap_err();
    assert_eq!(err, EvdError::NotFinite);
    assert_eq!(w, vec![0.0; 5]);
    assert_eq!(u, Mat::<f64>::zeros(5, 5));
}

/// `Q diag(w) Q^H` for a reproducible unitary `Q` (from an EVD of a random matrix).
fn with_values<T: Sample + Rotate>(w: &[f64], seed: f64) -> Mat<T> {
    let n = w.len();
    let q = run(&hermitian::<T>(n, seed), &Seq, false).u;
    let qw = Mat::from_fn(n, n, |i, j| {
        let (re, im) = parts(q[(i, j)]);
        from::<T>((re * w[j], im * w[j]))
    });
    Mat::from_fn(n, n, |i, j| {
        let (mut re, mut im) = (0.0, 0.0);
        for l in 0..n {
            let (qr, qi) = parts(q[(j, l)]);
            let p = mul(parts(qw[(i, l)]), (qr, -qi));
            re += p.0;
            im += p.1;
        }
        from::<T>((re, im))
    })
}

/// The split tridiagonal solver (order 128 and up, forced on a team) on spectra that make it
/// deflate or cluster: repeated values, close pairs, a glued tridiagonal, grading, tiny and
/// huge scales; and it is the split solver that ran, torn into one leaf per participant (two
/// levels of merges at width 4, three at width 8).
fn split_solver_on_hard_spectra<T: Sample + Rotate>() {
    for (width, n) in [(2, 128), (2, 257), (4, 257), (8, 520)] {
        let team = sample::team(width);
        let (r, seen) = teamalg::kernels::sections::collect(|| {
            let a = hermitian::<T>(n, 11.0);
            let r = run(&a, &team, true);
            check(&a, &r, "split random");
            r
        });
        let leaves = seen.iter().find(|s| s.site == "evd/halves");
        assert_eq!(
            leaves.map(|s| s.width),
            Some(width),
            "{n} on {width}: not torn into {width} leaves"
        );
        if width > 4 || (width, n) == (2, 257) {
            // Oversubscribed on small hosts: the random matrix alone. The hard spectra run on
            // two leaves at 128 and on four at 257 (two levels of merges); two leaves at 257
            // would repeat the first's merges.
            continue;
        }
        if eps::<T>() > 1e-10 && n > 128 {
            // In single precision the close pairs and the grading are below the type's
            // resolution: its spectra run on two leaves at 128 only.
            continue;
        }
        // Values beside the vectors agree with faer's values only.
        let a = hermitian::<T>(n, 11.0);
        let scale = r.w.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        for (x, y) in values(&a).iter().zip(&r.w) {
            assert!((x - y).abs() <= 20.0 * eps::<T>() * n as f64 * scale);
        }
        let spectra: [(&str, Vec<f64>); 4] = [
            // Two values only: almost every root deflates.
            (
                "repeated",
                (0..n)
                    .map(|i| if i % 3 == 0 { 2.0 } else { -1.0 })
                    .collect(),
            ),
            // Pairs closer than the deflation tolerance and pairs just above it.
            (
                "pairs",
                (0..n)
                    .map(|i| (i / 2) as f64 + (i % 2) as f64 * 1e-13)
                    .collect(),
            ),
            // Graded over 12 decades.
            (
                "graded",
                (0..n)
                    .map(|i| 10f64.powf(-12.0 * i as f64 / n as f64))
                    .collect(),
            ),
            // A cluster around one with a few outliers.
            (
                "cluster",
                (0..n)
                    .map(|i| {
                        if i < 4 {
                            10.0 * i as f64
                        } else {
                            1.0 + 1e-10 * i as f64
                        }
                    })
                    .collect(),
            ),
        ];
        for (what, w) in spectra {
            let a = with_values::<T>(&w, 12.0);
            let r = run(&a, &team, true);
            check(&a, &r, what);
        }
        // A glued tridiagonal: 2x2 blocks joined by off-diagonals of 1e-15, given dense.
        let glued = Mat::from_fn(n, n, |i, j| {
            let v = if i == j {
                1.0 + (i % 5) as f64
            } else if i.abs_diff(j) == 1 {
                if i.min(j) % 2 == 0 { 1.0 } else { 1e-15 }
            } else {
                0.0
            };
            from::<T>((v, 0.0))
        });
        check(&glued, &run(&glued, &team, true), "glued");
        // Tiny and huge scales.
        // (The residual is measured in f64 through squares, so they stay in its range.)
        let b = hermitian::<T>(n, 13.0);
        for s in [1e-150f64, 1e150] {
            let s = if eps::<T>() > 1e-10 { s.powf(0.1) } else { s };
            let a = Mat::from_fn(n, n, |i, j| {
                let (re, im) = parts(b[(i, j)]);
                from::<T>((re * s, im * s))
            });
            check(&a, &run(&a, &team, true), "scaled");
        }
    }
}

#[test]
fn split_solver_on_hard_spectra_f64() {
    split_solver_on_hard_spectra::<f64>();
}

#[test]
fn split_solver_on_hard_spectra_c64() {
    split_solver_on_hard_spectra::<c64>();
}

#[test]
fn split_solver_on_hard_spectra_f32() {
    split_solver_on_hard_spectra::<f32>();
}

/// Weyl's bound on how far the eigenvalues of `A + E` move from `A`'s: `||E||_2`, here the
/// backward-error bound `30 u n ||A||_2` of a stable EVD (`top` is `||A||_2`).
fn weyl(n: usize, top: f64) -> f64 {
    30.0 * eps::<f64>() * n.max(1) as f64 * top
}
