//! The calls a faer user writes first, ported: each compiles and gives faer's shapes, and code
//! generic over faer's solver traits takes teamalg's factorizations.

use faer::linalg::solvers::{DenseSolve, DenseSolveCore, Solve};
use faer::{Mat, Side, c64};
use teamalg::Exec;
use teamalg::linalg::{self, Cholesky, FullPivLu, Lblt, Ldlt, Lu, Options, Svd};

use super::sample;
use sample::{mat, spd};

/// Code written against faer's traits: `A X = B` and `A^H X = B` solved, `A` rebuilt.
fn solves_through_faer<S: DenseSolve<c64>>(f: &S, a: &Mat<c64>) -> f64 {
    let b = mat::<c64>(a.nrows(), 2, 0.3);
    let x = f.solve(&b);
    let y = f.solve_adjoint(&b);
    let xr = f.rsolve(b.transpose());
    (a * &x - &b).norm_max()
        + (a.adjoint() * &y - &b).norm_max()
        + (&xr * a - b.transpose()).norm_max()
        + (f.reconstruct() - a).norm_max()
        + (a * f.inverse() - Mat::<c64>::identity(a.nrows(), a.nrows())).norm_max()
}

#[test]
fn generic_faer_code_takes_teamalg_factorizations() {
    let e = Exec::serial();
    let a = mat::<c64>(20, 20, 0.7);
    let s = spd::<c64>(20, 0.4);
    let h = &a + a.adjoint();
    assert!(solves_through_faer(&Lu::new(&a, &e).unwrap(), &a) < 1e-10);
    assert!(solves_through_faer(&FullPivLu::new(&a, &e).unwrap(), &a) < 1e-10);
    assert!(solves_through_faer(&Cholesky::new(&s, &e).unwrap(), &s) < 1e-10);
    assert!(solves_through_faer(&Ldlt::new(&s, &e).unwrap(), &s) < 1e-10);
    assert!(solves_through_faer(&Lblt::new(&h, &e).unwrap(), &h) < 1e-10);
    // faer's own decompositions agree.
    let theirs = a.partial_piv_lu();
    let ours = Lu::new(&a, &e).unwrap();
    let b = mat::<c64>(20, 1, 0.1);
    assert!((Solve::solve(&theirs, &b) - Solve::solve(&ours, &b)).norm_max() < 1e-12);
    assert!((DenseSolveCore::inverse(&theirs) - ours.inverse(&e).unwrap()).norm_max() < 1e-10);
}

#[test]
fn ported_calls_give_faers_shapes() {
    let e = Exec::serial();
    let a = mat::<f64>(7, 4, 0.2);
    // faer: a.svd() is full, a.thin_svd() thin; so are Svd::new and Svd::new_thin.
    let (full, thin) = (a.svd().unwrap(), a.thin_svd().unwrap());
    let ours = Svd::new(&a, &e).unwrap();
    assert_eq!(
        (ours.u().shape(), ours.v().shape()),
        (full.U().shape(), full.V().shape())
    );
    let ours = Svd::new_thin(&a, &e).unwrap();
    assert_eq!(
        (ours.u().shape(), ours.v().shape()),
        (thin.U().shape(), thin.V().shape())
    );
    // In-place calls take `&mut a` as faer users write it, and the `_into` calls any view.
    let mut sq = mat::<f64>(5, 5, 0.9);
    let det = linalg::lu(&mut sq, &e).unwrap().determinant().unwrap();
    assert!(det.is_finite());
    let c = mat::<c64>(6, 4, 0.5);
    let mut s = [0.0; 4];
    linalg::svd_into(c.adjoint(), &mut s, None, None, &e, &Options::new()).unwrap();
    let want = linalg::singular_values(&c, &e).unwrap();
    assert!(s.iter().zip(&want).all(|(x, y)| (x - y).abs() < 1e-12));
    // Permutations are faer's: compose with faer's own.
    let lu = Lu::new(&mat::<f64>(5, 5, 0.3), &e).unwrap();
    let p: faer::perm::PermRef<'_, usize> = lu.p();
    assert_eq!(p.inverse().arrays().1, p.arrays().0);
    // The side, as faer's `llt(Side::Upper)`.
    let spd_upper = spd::<f64>(6, 0.2);
    let want = spd_upper.llt(Side::Upper).unwrap();
    let got = Cholesky::new_with(&spd_upper, &e, &Options::new().side(Side::Upper)).unwrap();
    assert!((want.L() - got.l().to_mat()).norm_max() < 1e-12);
    // General EVD: faer's shapes, complex.
    let g = mat::<f64>(6, 6, 0.8);
    let evd = linalg::Eigen::new(&g, &e).unwrap();
    assert_eq!(evd.eigenvectors().shape(), g.eigen().unwrap().U().shape());
}

/// The largest singular value and the largest eigenvalue of `A^H A`, written with the one
/// bound every other call takes: `Field` alone reaches the SVD and the EVD, and their real
/// type is faer's `T::Real`.
fn spectral_with_field_alone<T: linalg::Field>(a: faer::MatRef<'_, T>) -> (T::Real, T::Real) {
    let e = Exec::serial();
    let s: T::Real = Svd::new_thin(a, &e).unwrap().s()[0];
    let gram = a.adjoint() * a;
    let w: Vec<T::Real> = linalg::self_adjoint_eigenvalues(&gram, &e).unwrap();
    (s, w[w.len() - 1])
}

#[test]
fn svd_and_evd_take_the_field_bound_alone() {
    let a = mat::<c64>(6, 4, 0.4);
    let (s, w) = spectral_with_field_alone(a.as_ref());
    assert!((s * s - w).abs() < 1e-10 * w);
    let a = mat::<f32>(5, 5, 0.1);
    let (s, w) = spectral_with_field_alone(a.as_ref());
    assert!((s * s - w).abs() < 1e-4 * w);
}

/// A faer user's accessors, by faer's names, on every decomposition, each giving what faer's
/// own decomposition of the same matrix gives (to rounding, up to the sign of a vector).
#[test]
fn faers_accessor_names_reach_every_decomposition() {
    let e = Exec::serial();
    let a = mat::<f64>(6, 6, 0.3);
    let s = spd::<f64>(6, 0.5);
    let tall = mat::<f64>(8, 5, 0.6);
    let close = |x: faer::MatRef<'_, f64>, y: faer::MatRef<'_, f64>| (x - y).norm_max() < 1e-12;

    let (lu, theirs) = (Lu::new(&a, &e).unwrap(), a.partial_piv_lu());
    assert!(close(lu.L().to_mat().as_ref(), theirs.L()));
    assert!(close(lu.U().to_mat().as_ref(), theirs.U()));
    assert_eq!(lu.P().arrays().0, theirs.P().arrays().0);
    let (fp, theirs) = (FullPivLu::new(&a, &e).unwrap(), a.full_piv_lu());
    assert_eq!(
        (fp.P().arrays().0, fp.Q().arrays().0),
        (theirs.P().arrays().0, theirs.Q().arrays().0)
    );
    assert!(close(fp.L().to_mat().as_ref(), theirs.L()));
    assert!(close(fp.U().to_mat().as_ref(), theirs.U()));
    let chol = Cholesky::new(&s, &e).unwrap();
    assert!(close(
        chol.L().to_mat().as_ref(),
        s.llt(Side::Lower).unwrap().L()
    ));
    let ldlt = Ldlt::new(&s, &e).unwrap();
    let theirs = s.ldlt(Side::Lower).unwrap();
    assert!(close(ldlt.L().to_mat().as_ref(), theirs.L()));
    assert!(
        ldlt.D()
            .iter()
            .enumerate()
            .all(|(i, d)| (d - theirs.D()[i]).abs() < 1e-12)
    );
    let lblt = Lblt::new(&s, &e).unwrap();
    assert_eq!(lblt.P().len(), 6);
    assert!((lblt.L().to_mat() * lblt.b() * lblt.L().to_mat().adjoint()).nrows() == 6);

    let (qr, theirs) = (linalg::Qr::new(&tall, &e).unwrap(), tall.qr());
    let r = |m: faer::MatRef<'_, f64>| {
        Mat::from_fn(5, 5, |i, j| if i <= j { m[(i, j)].abs() } else { 0.0 })
    };
    assert!(close(
        r(qr.R().to_mat().as_ref()).as_ref(),
        r(theirs.R()).as_ref()
    ));
    let (cp, theirs) = (linalg::ColPivQr::new(&tall, &e).unwrap(), tall.col_piv_qr());
    assert_eq!(cp.P().arrays().0, theirs.P().arrays().0);
    assert!(close(
        r(cp.R().to_mat().as_ref()).as_ref(),
        r(theirs.R()).as_ref()
    ));

    let (svd, theirs) = (Svd::new(&tall, &e).unwrap(), tall.svd().unwrap());
    assert!(
        svd.S()
            .iter()
            .enumerate()
            .all(|(i, x)| (x - theirs.S()[i]).abs() < 1e-12)
    );
    assert_eq!(
        (svd.U().shape(), svd.V().shape()),
        (theirs.U().shape(), theirs.V().shape())
    );
    let (evd, theirs) = (
        linalg::SelfAdjointEigen::new(&s, &e).unwrap(),
        s.self_adjoint_eigen(Side::Lower).unwrap(),
    );
    assert!(
        evd.S()
            .iter()
            .enumerate()
            .all(|(i, x)| (x - theirs.S()[i]).abs() < 1e-12)
    );
    assert_eq!(evd.U().shape(), theirs.U().shape());
    let (eig, theirs) = (linalg::Eigen::new(&a, &e).unwrap(), a.eigen().unwrap());
    assert_eq!(
        (eig.S().len(), eig.U().shape()),
        (theirs.S().dim(), theirs.U().shape())
    );
}

/// One signature per idea: every least-squares call takes `(B, exec)`, its cut-off through
/// `lstsq_with` and `Options::cutoff`; every `rcond` answers a `Result`; every pseudo-inverse
/// takes the executor.
#[test]
fn one_signature_per_idea() {
    let e = Exec::serial();
    let a = mat::<f64>(9, 4, 0.2);
    let b = mat::<f64>(9, 2, 0.7);
    let qr = linalg::Qr::new(&a, &e).unwrap().lstsq(&b, &e).unwrap();
    let cp = linalg::ColPivQr::new(&a, &e)
        .unwrap()
        .lstsq(&b, &e)
        .unwrap();
    let svd = Svd::new_thin(&a, &e).unwrap();
    let sv = svd.lstsq(&b, &e).unwrap();
    assert!((&qr - &cp).norm_max() < 1e-10 && (&qr - &sv).norm_max() < 1e-10);
    // A cut-off above every singular value leaves nothing: the zero solution. Pivoted QR
    // keeps its first column, as LAPACK's `gelsy` (rank 1): a worse fit than at full rank.
    let all = Options::new().cutoff(2.0);
    assert_eq!(svd.lstsq_with(&b, &e, &all).unwrap().norm_max(), 0.0);
    let cp = linalg::ColPivQr::new(&a, &e).unwrap();
    let resid = |x: &Mat<f64>| (&a * x - &b).norm_l2();
    let (cut, full) = (
        cp.lstsq_with(&b, &e, &all).unwrap(),
        cp.lstsq(&b, &e).unwrap(),
    );
    assert_eq!(cp.rank(Some(2.0)), 1);
    assert!(
        resid(&cut) > 1.01 * resid(&full),
        "{} {}",
        resid(&cut),
        resid(&full)
    );
    // Every rcond: a Result of the same real type.
    let sq = spd::<f64>(5, 0.1);
    let n1 = linalg::norm_l1(&sq);
    let rc: [Result<f64, linalg::LinalgError>; 6] = [
        Lu::new(&sq, &e).unwrap().rcond(n1),
        Cholesky::new(&sq, &e).unwrap().rcond(n1),
        Ldlt::new(&sq, &e).unwrap().rcond(n1),
        Lblt::new(&sq, &e).unwrap().rcond(n1),
        linalg::Qr::new(&sq, &e).unwrap().rcond(),
        linalg::ColPivQr::new(&sq, &e).unwrap().rcond(),
    ];
    assert!(
        rc.iter()
            .all(|r| matches!(r, Ok(x) if *x > 0.0 && *x <= 1.0))
    );
    // Pseudo-inverses take the executor and answer a Result.
    let p = svd.pseudoinverse(&e).unwrap();
    assert!((&a * &p * &a - &a).norm_max() < 1e-10);
    let h = linalg::SelfAdjointEigen::new(&sq, &e)
        .unwrap()
        .pseudoinverse(&e)
        .unwrap();
    assert!((&sq * &h - Mat::<f64>::identity(5, 5)).norm_max() < 1e-10);
}
