//! The SVD and self-adjoint EVD facade: owned, into the caller's storage and with scratch
//! alike; conjugated views; every error typed, checked before anything is written; options
//! reaching the kernels' regions.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::{Mat, c64};
use teamalg::gates::trace::{self, Reason};

/// A forced region ran two wide, or was narrowed because another test of this binary held the
/// CPUs at that moment (`occupied`: a process never oversubscribes itself, forced or not).
fn two_wide(d: &trace::Decision) -> bool {
    d.width == 2 || d.reason == Reason::Occupied
}
use teamalg::gates::{Family, ParThreshold};
use teamalg::linalg::{self, Dim, LinalgError, Options, SelfAdjointEigen, Svd};
use teamalg::{Exec, Team};

use super::sample;
use sample::{assert_backward, backward_bound, mat, norm};

/// Two lists of singular values or eigenvalues of a matrix of size `n` and 2-norm `top`, from
/// two stable computations: each within Weyl's bound of the exact ones, `C u n top`, so within
/// twice that of each other.
fn assert_values_agree(what: &str, xs: &[f64], ys: &[f64], n: usize, top: f64) {
    assert_eq!(xs.len(), ys.len(), "{what}");
    let bound = 2.0 * backward_bound::<f64>(n, top);
    for (x, y) in xs.iter().zip(ys) {
        assert!(
            (x - y).abs() <= bound,
            "{what}: {x} against {y} (bound {bound:e})"
        );
    }
}

fn team() -> Team {
    sample::team(2)
}

fn hermitian(n: usize, seed: f64) -> Mat<c64> {
    sample::hermitian(n, seed)
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
        let thin = Svd::new_thin(&a, &team).unwrap();
        let full = Svd::new(&a, &team).unwrap();
        assert_eq!((thin.u().shape(), thin.v().shape()), ((m, k), (n, k)));
        assert_eq!((full.u().shape(), full.v().shape()), ((m, m), (n, n)));
        let (size, norm_a) = (m.max(n), norm(a.as_ref()));
        let what = |w: &str| format!("{m}x{n}: {w}");
        assert_backward::<c64>(
            &what("thin"),
            (thin.reconstruct() - &a).as_ref(),
            size,
            norm_a,
        );
        assert_backward::<c64>(
            &what("full"),
            (full.reconstruct() - &a).as_ref(),
            size,
            norm_a,
        );
        let (u, v) = (full.u().to_owned(), full.v().to_owned());
        assert_backward::<c64>(
            &what("U^H U - I"),
            (u.adjoint() * &u - eye(m)).as_ref(),
            size,
            1.0,
        );
        assert_backward::<c64>(
            &what("V^H V - I"),
            (v.adjoint() * &v - eye(n)).as_ref(),
            size,
            1.0,
        );
        let s = linalg::singular_values(&a, &team).unwrap();
        let top = thin.s().first().copied().unwrap_or(0.0);
        assert_values_agree(&what("values"), &s, thin.s(), size, top);
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
        assert_values_agree("scratch", &s, &s0, m, s0[0]);
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
            let what = format!("{m}x{n}, U {uc} columns, V {vc}");
            let size = m.max(n);
            assert_backward::<c64>(
                &what,
                (us * v.as_ref().subcols(0, k).adjoint() - &a).as_ref(),
                size,
                norm(a.as_ref()),
            );
            assert_backward::<c64>(&what, (u.adjoint() * &u - eye(uc)).as_ref(), size, 1.0);
            assert_backward::<c64>(&what, (v.adjoint() * &v - eye(vc)).as_ref(), size, 1.0);
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
    let svd = Svd::new_thin(a.adjoint(), &Exec::serial()).unwrap();
    assert_eq!(svd.u().shape(), (20, 20));
    let ah = a.adjoint().to_owned();
    assert_backward::<c64>(
        "A^H",
        (svd.reconstruct() - &ah).as_ref(),
        30,
        norm(a.as_ref()),
    );
    let direct = linalg::singular_values(&a, &Exec::serial()).unwrap();
    assert_values_agree("A^H against A", svd.s(), &direct, 30, direct[0]);
}

#[test]
fn svd_into_writes_what_it_is_given() {
    let a = mat::<f64>(12, 7, 3.0);
    let reference = Svd::new_thin(&a, &Exec::serial()).unwrap();
    let mut s = vec![0.0; 7];
    let mut u = Mat::<f64>::zeros(12, 12);
    let opts = Options::new();
    linalg::svd_into(a.as_ref(), &mut s, Some(u.as_mut()), None, &team(), &opts).unwrap();
    assert_values_agree("into", &s, reference.s(), 12, reference.s()[0]);
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
    let err = Svd::new_thin(&bad, &serial).unwrap_err();
    assert_eq!(err.op(), "svd");
}

#[test]
fn eigen_owned_values_and_into_agree() {
    let team = team();
    for n in [0, 1, 2, 33, 140] {
        let a = hermitian(n, 5.0);
        let eig = SelfAdjointEigen::new(&a, &team).unwrap();
        assert_eq!(eig.u().shape(), (n, n));
        let scale = eig.w().iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let what = |w: &str| format!("{n}: {w}");
        assert_backward::<c64>(
            &what("U W U^H - A"),
            (eig.reconstruct() - &a).as_ref(),
            n,
            norm(a.as_ref()),
        );
        let u = eig.u().to_owned();
        assert_backward::<c64>(
            &what("U^H U - I"),
            (u.adjoint() * &u - eye(n)).as_ref(),
            n,
            1.0,
        );
        let values = linalg::self_adjoint_eigenvalues(&a, &team).unwrap();
        assert_values_agree(&what("values only"), &values, eig.w(), n, scale);
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
            assert_values_agree(&what("into, serially"), &w, eig.w(), n, scale);
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
        assert_values_agree(&what("values, serial reduction"), &w2, &values, n, scale);
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
    let top = from_lower.w().iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert_values_agree(
        "upper against lower",
        from_lower.w(),
        from_upper.w(),
        25,
        top,
    );
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
        assert!(why.iter().any(|d| d.site == site && two_wide(d)), "{site}");
    }
    let forced = r.unwrap();
    let size = b.nrows().max(b.ncols());
    assert_values_agree("forced", forced.s(), serial.s(), size, serial.s()[0]);
    assert_backward::<f64>(
        "forced",
        (forced.reconstruct() - &b).as_ref(),
        size,
        norm(b.as_ref()),
    );
    // Values only from 128 are the own path too (dqds after the bidiagonalization), below it
    // faer's: the bidiagonalization asks the gate only from 128, with the options' threshold.
    let mut values = vec![0.0; 260];
    let (r, why) = trace::collect(|| {
        linalg::svd_into(b.as_ref(), &mut values, None, None, &team, &forced_svd)
    });
    r.unwrap();
    assert!(why.iter().any(|d| d.site == "bidiag" && two_wide(d)));
    assert_values_agree(
        "values only, forced",
        &values,
        serial.s(),
        size,
        serial.s()[0],
    );
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
    assert!(
        why.iter()
            .all(|d| d.width == 1 && d.reason == Reason::Never)
    );
    // Forced parallel: the tridiagonalization, the tridiagonal solver (and the GEMMs of its
    // merge) and the back-transformation on the team, the values equal to rounding.
    let forced = Options::new()
        .threshold(Family::Qr, ParThreshold::Fixed(0))
        .threshold(Family::TridiagStep, ParThreshold::Fixed(0))
        .threshold(Family::TridiagEvdDc, ParThreshold::Fixed(0))
        .threshold(Family::Gemm, ParThreshold::Fixed(0));
    let (r, why) = trace::collect(|| SelfAdjointEigen::new_with(&h, &team, &forced));
    for site in ["tridiag", "tridiag/step", "evd/solver", "gemm", "qr/apply"] {
        assert!(why.iter().any(|d| d.site == site && two_wide(d)), "{site}");
    }
    let top = serial.w().iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert_values_agree("EVD forced", r.unwrap().w(), serial.w(), 200, top);
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
    assert_values_agree("tall", &values, thin.s(), 300, thin.s()[0]);
    // Twice as long from order 256: the own path with vectors, the QR step first.
    let twice = mat::<f64>(512, 256, 4.0);
    let (r, why) =
        trace::collect(|| Svd::new_with(&twice, linalg::SvdVectors::Thin, &team, &forced));
    let own = r.unwrap();
    assert!(why.iter().any(|d| d.site.starts_with("qr")));
    assert_backward::<f64>(
        "twice as long",
        (own.reconstruct() - &twice).as_ref(),
        512,
        norm(twice.as_ref()),
    );
}
