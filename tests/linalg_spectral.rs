//! The SVD and self-adjoint EVD facade: owned, into the caller's storage and with scratch
//! alike; conjugated views; every error typed, checked before anything is written; options
//! reaching the kernels' regions.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::{c64, Mat};
use teamalg::gates::trace::{self, Reason};
use teamalg::gates::{Family, ParThreshold};
use teamalg::linalg::{self, Dim, LinalgError, Options, SelfAdjointEigen, Svd};
use teamalg::{Exec, Team};

#[path = "common/sample.rs"]
mod sample;
use sample::mat;

fn team() -> Team {
    sample::team(2)
}

fn hermitian(n: usize, seed: f64) -> Mat<c64> {
    let b = mat::<c64>(n, n, seed);
    Mat::from_fn(n, n, |i, j| (b[(i, j)] + b[(j, i)].conj()) * 0.5)
}

fn eye(n: usize) -> Mat<c64> {
    Mat::from_fn(n, n, |i, j| c64::new(f64::from(u8::from(i == j)), 0.0))
}

#[test]
fn svd_thin_full_and_values_agree() {
    let team = team();
    for (m, n) in [(0, 0), (1, 4), (40, 25), (25, 40), (64, 64)] {
        let a = mat::<c64>(m, n, 1.0);
        let k = m.min(n);
        let thin = Svd::new(&a, &team).unwrap();
        let full = Svd::new_full(&a, &team).unwrap();
        assert_eq!((thin.u().shape(), thin.v().shape()), ((m, k), (n, k)));
        assert_eq!((full.u().shape(), full.v().shape()), ((m, m), (n, n)));
        let tol = 1e-12 * (1.0 + thin.s().first().copied().unwrap_or(0.0));
        assert!((thin.reconstruct() - &a).norm_max() <= tol, "{m}x{n}");
        assert!((full.reconstruct() - &a).norm_max() <= tol, "{m}x{n}");
        assert!((full.u().adjoint() * full.u() - eye(m)).norm_max() <= 1e-12);
        assert!((full.v().adjoint() * full.v() - eye(n)).norm_max() <= 1e-12);
        let s = linalg::singular_values(&a, &team).unwrap();
        for (x, y) in s.iter().zip(thin.s()) {
            assert!((x - y).abs() <= tol, "{m}x{n}: {x} against {y}");
        }
    }
}

#[test]
fn svd_into_with_scratch_reuses_its_scratch() {
    // With vectors from order 256 the own path runs, taking every matrix from the caller's
    // scratch.
    let team = team();
    let opts = Options::new();
    let (m, n) = (270, 260);
    let a = mat::<c64>(m, n, 4.0);
    let (mut s0, mut u0) = (vec![0.0; n], Mat::<c64>::zeros(m, n));
    linalg::svd_into(a.as_ref(), &mut s0, Some(u0.as_mut()), None, &team, &opts).unwrap();
    let mut buf = MemBuffer::new(linalg::svd_scratch::<c64>(m, n, true));
    for _ in 0..2 {
        let (mut s, mut u) = (vec![0.0; n], Mat::<c64>::zeros(m, n));
        let stack = MemStack::new(&mut buf);
        linalg::svd_into_with_scratch(
            a.as_ref(),
            &mut s,
            Some(u.as_mut()),
            None,
            &team,
            &opts,
            stack,
        )
        .unwrap();
        for (x, y) in s.iter().zip(&s0) {
            assert!((x - y).abs() <= 1e-12 * s0[0], "{x} against {y}");
        }
        // The columns agree up to a unit phase each: compare |u^H u0| with the identity.
        assert!((u.adjoint() * &u0).norm_max() <= 1.0 + 1e-12);
        let overlap = u.adjoint() * &u0;
        for j in 0..n {
            assert!((overlap[(j, j)].norm() - 1.0).abs() <= 1e-9, "column {j}");
        }
    }
    // Mixed pairings (U full, V thin and the other way) on both paths: faer's (small) and
    // teamalg's own (from 256 with vectors).
    for (m, n) in [(20, 15), (15, 20), (270, 260), (260, 270)] {
        let a = mat::<c64>(m, n, 5.0);
        let k = m.min(n);
        let mut buf = MemBuffer::new(linalg::svd_scratch::<c64>(m, n, true));
        for (uc, vc) in [(m, k), (k, n)] {
            let (mut s, mut u, mut v) = (
                vec![0.0; k],
                Mat::<c64>::zeros(m, uc),
                Mat::<c64>::zeros(n, vc),
            );
            let stack = MemStack::new(&mut buf);
            linalg::svd_into_with_scratch(
                a.as_ref(),
                &mut s,
                Some(u.as_mut()),
                Some(v.as_mut()),
                &team,
                &opts,
                stack,
            )
            .unwrap();
            let us = Mat::from_fn(m, k, |i, j| u[(i, j)] * s[j]);
            let res = (us * v.as_ref().subcols(0, k).adjoint() - &a).norm_max();
            assert!(res <= 1e-11, "{m}x{n}, U {uc} columns, V {vc}: {res:e}");
            assert!((u.adjoint() * &u - eye(uc)).norm_max() <= 1e-12);
            assert!((v.adjoint() * &v - eye(vc)).norm_max() <= 1e-12);
        }
    }
    // A short s is a typed error before anything is written.
    let mut short = vec![0.0; n - 1];
    let stack = MemStack::new(&mut buf);
    let err =
        linalg::svd_into_with_scratch(a.as_ref(), &mut short, None, None, &team, &opts, stack)
            .unwrap_err();
    assert!(matches!(
        err,
        LinalgError::ShapeMismatch { operand: "s", .. }
    ));
}

#[test]
fn svd_of_a_conjugated_view() {
    let a = mat::<c64>(30, 20, 2.0);
    let svd = Svd::new(a.adjoint(), &Exec::serial()).unwrap();
    assert_eq!(svd.u().shape(), (20, 20));
    assert!((svd.reconstruct() - a.adjoint()).norm_max() <= 1e-12);
    let direct = linalg::singular_values(&a, &Exec::serial()).unwrap();
    for (x, y) in svd.s().iter().zip(&direct) {
        assert!((x - y).abs() <= 1e-12);
    }
}

#[test]
fn svd_into_writes_what_it_is_given() {
    let a = mat::<f64>(12, 7, 3.0);
    let reference = Svd::new(&a, &Exec::serial()).unwrap();
    let mut s = vec![0.0; 7];
    let mut u = Mat::<f64>::zeros(12, 12);
    let opts = Options::new();
    linalg::svd_into(a.as_ref(), &mut s, Some(u.as_mut()), None, &team(), &opts).unwrap();
    for (x, y) in s.iter().zip(reference.s()) {
        assert!((x - y).abs() <= 1e-13);
    }
    // The first columns span the same singular subspaces: |u_j^T u'_j| = 1 (distinct values).
    for j in 0..7 {
        let dot: f64 = (0..12).map(|i| u[(i, j)] * reference.u()[(i, j)]).sum();
        assert!((dot.abs() - 1.0).abs() <= 1e-10, "column {j}: {dot}");
    }
}

#[test]
fn svd_errors_are_typed_and_write_nothing() {
    let a = mat::<f64>(6, 4, 4.0);
    let opts = Options::new();
    let serial = Exec::serial();
    let mut s = vec![7.0; 3];
    let err = linalg::svd_into(a.as_ref(), &mut s, None, None, &serial, &opts).unwrap_err();
    assert_eq!(
        err,
        LinalgError::ShapeMismatch {
            op: "svd",
            operand: "s",
            dim: Dim::Rows,
            expected: 4,
            found: 3
        }
    );
    let mut s = vec![7.0; 4];
    let mut u = Mat::<f64>::zeros(6, 5);
    let err =
        linalg::svd_into(a.as_ref(), &mut s, Some(u.as_mut()), None, &serial, &opts).unwrap_err();
    assert!(matches!(
        err,
        LinalgError::ShapeMismatch {
            operand: "U",
            dim: Dim::Cols,
            expected: 4,
            found: 5,
            ..
        }
    ));
    let mut v = Mat::<f64>::zeros(5, 4);
    let err =
        linalg::svd_into(a.as_ref(), &mut s, None, Some(v.as_mut()), &serial, &opts).unwrap_err();
    assert!(matches!(
        err,
        LinalgError::ShapeMismatch {
            operand: "V",
            dim: Dim::Rows,
            ..
        }
    ));
    let mut bad = a.clone();
    bad[(4, 2)] = f64::NAN;
    let mut u = Mat::<f64>::zeros(6, 4);
    for opts in [Options::new(), Options::new().check_finite(false)] {
        // With the check off the kernel still refuses, and the entry is named all the same.
        let err = linalg::svd_into(bad.as_ref(), &mut s, Some(u.as_mut()), None, &serial, &opts)
            .unwrap_err();
        assert_eq!(
            err,
            LinalgError::NotFinite {
                op: "svd",
                operand: "A",
                row: 4,
                col: 2
            }
        );
        assert_eq!(s, vec![7.0; 4]);
        assert_eq!(u, Mat::<f64>::zeros(6, 4));
    }
    assert_eq!(err.to_string(), "svd: V has 5 rows, 4 expected");
    let err = Svd::new(&bad, &serial).unwrap_err();
    assert_eq!(err.op(), "svd");
}

#[test]
fn eigen_owned_values_and_into_agree() {
    let team = team();
    for n in [0, 1, 2, 33, 140] {
        let a = hermitian(n, 5.0);
        let eig = SelfAdjointEigen::new(&a, &team).unwrap();
        assert_eq!(eig.u().shape(), (n, n));
        let scale = eig.w().iter().fold(1.0f64, |m, x| m.max(x.abs()));
        assert!((eig.reconstruct() - &a).norm_max() <= 1e-12 * scale, "{n}");
        assert!((eig.u().adjoint() * eig.u() - eye(n)).norm_max() <= 1e-12);
        let values = linalg::self_adjoint_eigenvalues(&a, &team).unwrap();
        for (x, y) in values.iter().zip(eig.w()) {
            assert!((x - y).abs() <= 1e-12 * scale, "{n}: {x} against {y}");
        }
        // Into the caller's storage, in its scratch, serially, twice: the same bits both times
        // (a serial call is faer's reduction; the team's may be teamalg's parallel one, equal
        // to rounding).
        let mut first = None;
        let mut buf = MemBuffer::new(linalg::self_adjoint_eigen_scratch::<c64>(n, true));
        let (mut w, mut u) = (vec![0.0; n], Mat::<c64>::zeros(n, n));
        for _ in 0..2 {
            linalg::self_adjoint_eigen_into_with_scratch(
                a.as_ref(),
                &mut w,
                Some(u.as_mut()),
                &Exec::serial(),
                &Options::new(),
                MemStack::new(&mut buf),
            )
            .unwrap();
            for (x, y) in w.iter().zip(eig.w()) {
                assert!((x - y).abs() <= 1e-12 * scale, "{n}: {x} against {y}");
            }
            match &first {
                Some(f) => assert_eq!(&w, f),
                None => first = Some(w.clone()),
            }
        }
        let mut w2 = vec![0.0; n];
        let serial = Options::new().threshold(Family::TridiagStep, ParThreshold::Never);
        linalg::self_adjoint_eigen_into(a.as_ref(), &mut w2, None, &team, &serial).unwrap();
        // Values only run another solver (QL, not divide and conquer): the same bits as
        // `self_adjoint_eigenvalues` when both reduce serially.
        assert_eq!(
            w2,
            linalg::self_adjoint_eigenvalues(&a, &Exec::serial()).unwrap()
        );
        for (x, y) in w2.iter().zip(&values) {
            assert!((x - y).abs() <= 1e-12 * scale, "{n}: {x} against {y}");
        }
    }
}

#[test]
fn eigen_reads_the_lower_triangle_of_what_it_is_given() {
    let a = hermitian(25, 6.0);
    // Only the upper triangle holds the matrix: its adjoint view has it below.
    let upper = Mat::from_fn(25, 25, |i, j| {
        if i <= j {
            a[(i, j)]
        } else {
            c64::new(f64::NAN, 0.0)
        }
    });
    let from_lower = SelfAdjointEigen::new(&a, &Exec::serial()).unwrap();
    let from_upper = SelfAdjointEigen::new(upper.adjoint(), &Exec::serial()).unwrap();
    for (x, y) in from_lower.w().iter().zip(from_upper.w()) {
        assert!((x - y).abs() <= 1e-12);
    }
    // The NaN above the diagonal is never read, so it is no error.
    assert!(linalg::self_adjoint_eigenvalues(upper.transpose(), &Exec::serial()).is_ok());
}

#[test]
fn eigen_errors_are_typed_and_write_nothing() {
    let serial = Exec::serial();
    let opts = Options::new();
    let rect = Mat::<f64>::zeros(3, 4);
    assert_eq!(
        SelfAdjointEigen::new(&rect, &serial).unwrap_err(),
        LinalgError::NotSquare {
            op: "self_adjoint_eigen",
            operand: "A",
            rows: 3,
            cols: 4
        }
    );
    let a = Mat::<f64>::identity(4, 4);
    let mut w = vec![9.0; 3];
    let err = linalg::self_adjoint_eigen_into(a.as_ref(), &mut w, None, &serial, &opts);
    assert!(matches!(
        err,
        Err(LinalgError::ShapeMismatch { operand: "w", .. })
    ));
    let mut w = vec![9.0; 4];
    let mut u = Mat::<f64>::zeros(4, 3);
    let err = linalg::self_adjoint_eigen_into(a.as_ref(), &mut w, Some(u.as_mut()), &serial, &opts);
    assert!(matches!(
        err,
        Err(LinalgError::ShapeMismatch {
            operand: "U",
            dim: Dim::Cols,
            ..
        })
    ));
    let mut bad = a.clone();
    bad[(3, 1)] = f64::INFINITY;
    let mut u = Mat::<f64>::zeros(4, 4);
    for opts in [Options::new(), Options::new().check_finite(false)] {
        let err =
            linalg::self_adjoint_eigen_into(bad.as_ref(), &mut w, Some(u.as_mut()), &serial, &opts)
                .unwrap_err();
        assert_eq!(
            err,
            LinalgError::NotFinite {
                op: "self_adjoint_eigen",
                operand: "A",
                row: 3,
                col: 1
            }
        );
        assert_eq!(w, vec![9.0; 4]);
        assert_eq!(u, Mat::<f64>::zeros(4, 4));
    }
}

#[test]
fn options_reach_every_region() {
    let team = team();
    let never = Options::new()
        .threshold(Family::Qr, ParThreshold::Never)
        .threshold(Family::HouseholderRank1, ParThreshold::Never);
    let a = mat::<f64>(120, 120, 7.0);
    // With vectors below order 256 the SVD is faer's serial one (`docs/svd.md`): no region
    // asks the gate.
    let (r, why) = trace::collect(|| Svd::new_with(&a, linalg::SvdVectors::Thin, &team, &never));
    r.unwrap();
    assert!(why.is_empty());
    let c = mat::<f64>(200, 190, 6.0);
    let (r, why) = trace::collect(|| Svd::new_with(&c, linalg::SvdVectors::Thin, &team, &never));
    r.unwrap();
    assert!(why.is_empty());
    // From 256 teamalg's own path runs with vectors: its bidiagonalization, divide and
    // conquer and back-transformations ask the gate with the options' thresholds.
    let b = mat::<f64>(270, 260, 8.0);
    let never_svd = never
        .threshold(Family::BidiagStep, ParThreshold::Never)
        .threshold(Family::BidiagSvdDc, ParThreshold::Never);
    let (r, why) =
        trace::collect(|| Svd::new_with(&b, linalg::SvdVectors::Thin, &team, &never_svd));
    let serial = r.unwrap();
    for site in ["bidiag", "svd/solver", "qr/apply"] {
        assert!(why.iter().any(|d| d.site == site), "{site}");
    }
    // The divide and conquer's leaves and inner blocks run on a serial executor of their own.
    for d in why.iter() {
        assert!(
            d.width == 1 && matches!(d.reason, Reason::Never | Reason::Budget1),
            "{d:?}"
        );
    }
    let forced_svd = Options::new()
        .threshold(Family::Qr, ParThreshold::Fixed(0))
        .threshold(Family::BidiagStep, ParThreshold::Fixed(0))
        .threshold(Family::BidiagSvdDc, ParThreshold::Fixed(0))
        .threshold(Family::Gemm, ParThreshold::Fixed(0));
    let (r, why) =
        trace::collect(|| Svd::new_with(&b, linalg::SvdVectors::Thin, &team, &forced_svd));
    for site in ["bidiag", "svd/solver", "gemm", "qr/apply"] {
        assert!(why.iter().any(|d| d.site == site && d.width == 2), "{site}");
    }
    let forced = r.unwrap();
    for (x, y) in forced.s().iter().zip(serial.s()) {
        assert!((x - y).abs() <= 1e-11, "{x} against {y}");
    }
    assert!((forced.reconstruct() - &b).norm_max() <= 1e-11);
    // Values only from 128 are the own path too (dqds after the bidiagonalization), below it
    // faer's: the bidiagonalization asks the gate only from 128, with the options' threshold.
    let mut values = vec![0.0; 260];
    let (r, why) = trace::collect(|| {
        linalg::svd_into(b.as_ref(), &mut values, None, None, &team, &forced_svd)
    });
    r.unwrap();
    assert!(why.iter().any(|d| d.site == "bidiag" && d.width == 2));
    for (x, y) in values.iter().zip(serial.s()) {
        assert!((x - y).abs() <= 1e-11, "{x} against {y}");
    }
    let mut small = vec![0.0; 120];
    let (r, why) =
        trace::collect(|| linalg::svd_into(a.as_ref(), &mut small, None, None, &team, &forced_svd));
    r.unwrap();
    assert!(why.is_empty());
    let never = never
        .threshold(Family::TridiagStep, ParThreshold::Never)
        .threshold(Family::TridiagEvdDc, ParThreshold::Never);
    let h = Mat::from_fn(200, 200, |i, j| {
        a[(i % 120, j % 120)] + a[(j % 120, i % 120)]
    });
    let (r, why) = trace::collect(|| SelfAdjointEigen::new_with(&h, &team, &never));
    let serial = r.unwrap();
    for site in ["tridiag", "evd/solver"] {
        assert!(why.iter().any(|d| d.site == site), "{site}");
    }
    assert!(why
        .iter()
        .all(|d| d.width == 1 && d.reason == Reason::Never));
    // Forced parallel: the tridiagonalization, the tridiagonal solver (and the GEMMs of its
    // merge) and the back-transformation on the team, the values equal to rounding.
    let forced = Options::new()
        .threshold(Family::Qr, ParThreshold::Fixed(0))
        .threshold(Family::TridiagStep, ParThreshold::Fixed(0))
        .threshold(Family::TridiagEvdDc, ParThreshold::Fixed(0))
        .threshold(Family::Gemm, ParThreshold::Fixed(0));
    let (r, why) = trace::collect(|| SelfAdjointEigen::new_with(&h, &team, &forced));
    for site in ["tridiag", "tridiag/step", "evd/solver", "gemm", "qr/apply"] {
        assert!(why.iter().any(|d| d.site == site && d.width == 2), "{site}");
    }
    for (x, y) in r.unwrap().w().iter().zip(serial.w()) {
        assert!((x - y).abs() <= 1e-11, "{x} against {y}");
    }
}

#[test]
fn results_are_send_and_sync() {
    fn shareable<X: Send + Sync>() {}
    shareable::<Svd<c64>>();
    shareable::<SelfAdjointEigen<f32>>();
}

/// Elongated shapes: values only run the own path (its QR step first, then the
/// bidiagonalization on `R`, both asking the gate); with vectors the own path only up to twice
/// as long from order 256, faer's serial SVD beyond (no region asks). Both match the other
/// path's values to rounding.
#[test]
fn elongated_shapes_take_the_measured_path() {
    let team = team();
    let forced = Options::new()
        .threshold(Family::Qr, ParThreshold::Fixed(0))
        .threshold(Family::BidiagStep, ParThreshold::Fixed(0));
    let tall = mat::<f64>(300, 128, 3.0);
    let mut values = vec![0.0; 128];
    let (r, why) =
        trace::collect(|| linalg::svd_into(tall.as_ref(), &mut values, None, None, &team, &forced));
    r.unwrap();
    for site in ["qr", "bidiag"] {
        assert!(why.iter().any(|d| d.site.starts_with(site)), "{site}");
    }
    let (r, why) =
        trace::collect(|| Svd::new_with(&tall, linalg::SvdVectors::Thin, &team, &forced));
    let thin = r.unwrap();
    assert!(why.is_empty(), "{why:?}");
    for (x, y) in values.iter().zip(thin.s()) {
        assert!((x - y).abs() <= 1e-12 * thin.s()[0], "{x} against {y}");
    }
    // Twice as long from order 256: the own path with vectors, the QR step first.
    let twice = mat::<f64>(512, 256, 4.0);
    let (r, why) =
        trace::collect(|| Svd::new_with(&twice, linalg::SvdVectors::Thin, &team, &forced));
    let own = r.unwrap();
    assert!(why.iter().any(|d| d.site.starts_with("qr")));
    assert!((own.reconstruct() - &twice).norm_max() <= 1e-11);
}
