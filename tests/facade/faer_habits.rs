//! The calls a faer user writes first, ported: each compiles and gives faer's shapes, and code
//! generic over faer's solver traits takes teamalg's factorizations.

use faer::linalg::solvers::{DenseSolve, DenseSolveCore, Solve};
use faer::{c64, Mat, Side};
use teamalg::linalg::{self, Cholesky, FullPivLu, Lblt, Ldlt, Lu, Options, Svd};
use teamalg::Exec;

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
