//! Every kernel on teams wider than two (3, 4 and 8; on a 2-CPU host 4 and 8 are
//! oversubscribed), every section forced parallel: the results hold to the backward-error
//! bound, and where the algorithm promises it they are those of width 2 (the same pivots, the
//! same factors to rounding).

use faer::{Accum, Mat, c64};
use teamalg::Team;
use teamalg::gates::{Family, ParThreshold};
use teamalg::linalg::{
    self, Cholesky, ColPivQr, Diag, FullPivLu, Lblt, Ldlt, Lu, Options, Qr, SelfAdjointEigen,
    SolveSide, Svd, SvdVectors, Triangle,
};

use super::sample;
use sample::{assert_backward, hermitian, mat, norm, spd, team};

const WIDTHS: [usize; 3] = [3, 4, 8];

/// Every family forced to the team's full width from the first unit.
fn forced() -> Options {
    Family::ALL.into_iter().fold(Options::new(), |o, f| {
        o.threshold(f, ParThreshold::Fixed(0))
    })
}

fn teams() -> Vec<(usize, Team)> {
    std::iter::once(2)
        .chain(WIDTHS)
        .map(|w| (w, team(w)))
        .collect()
}

/// `max |x - y| / max |y|`.
fn rel(x: &Mat<c64>, y: &Mat<c64>) -> f64 {
    (x - y).norm_max() / y.norm_max().max(f64::MIN_POSITIVE)
}

#[test]
fn gemm_and_triangular_solve() {
    let o = forced();
    let (a, b) = (mat::<c64>(150, 90, 0.3), mat::<c64>(90, 110, 0.7));
    let t = Mat::<c64>::from_fn(120, 120, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Less => c64::new(0.0, 0.0),
        std::cmp::Ordering::Equal => c64::new(4.0, 1.0),
        std::cmp::Ordering::Greater => mat::<c64>(120, 120, 0.2)[(i, j)],
    });
    let rhs = mat::<c64>(120, 70, 0.5);
    let mut first = None;
    for (w, team) in teams() {
        let mut c = Mat::<c64>::zeros(150, 110);
        let one = c64::new(1.0, 0.0);
        linalg::matmul_with(&mut c, Accum::Replace, &a, &b, one, &team, &o).unwrap();
        let want = &a * &b;
        assert!(rel(&c, &want) <= 1e-13, "gemm, width {w}");
        let mut x = rhs.clone();
        let (left, lower) = (SolveSide::Left, Triangle::Lower);
        linalg::solve_triangular_with(&t, &mut x, left, lower, Diag::NonUnit, &team, &o).unwrap();
        assert_backward::<c64>(
            &format!("trsm, width {w}"),
            (&t * &x - &rhs).as_ref(),
            120,
            norm(t.as_ref()) * norm(x.as_ref()),
        );
        // GEMM's chunks split the output: each entry is one product, whatever the width.
        match &first {
            None => first = Some(c),
            Some(c2) => assert_eq!(c.as_ref(), c2.as_ref(), "gemm, width {w} against 2"),
        }
    }
}

/// LU's row order and factors, Cholesky's factor and QR's factors, at width 2.
type Factors = (Vec<usize>, Mat<c64>, Mat<c64>, Mat<c64>);

#[test]
fn lu_cholesky_and_qr() {
    let o = forced();
    let a = mat::<c64>(260, 260, 0.45);
    let h = spd::<c64>(260, 0.15);
    let na = norm(a.as_ref());
    let mut base: Option<Factors> = None;
    for (w, team) in teams() {
        let lu = Lu::new_with(&a, &team, &o).unwrap();
        assert_backward::<c64>(
            &format!("lu, width {w}"),
            (lu.reconstruct() - &a).as_ref(),
            260,
            na,
        );
        let chol = Cholesky::new_with(&h, &team, &o).unwrap();
        assert_backward::<c64>(
            &format!("cholesky, width {w}"),
            (chol.reconstruct() - &h).as_ref(),
            260,
            norm(h.as_ref()),
        );
        let qr = Qr::new_with(&a, &team, &o).unwrap();
        assert_backward::<c64>(
            &format!("qr, width {w}"),
            (qr.reconstruct() - &a).as_ref(),
            260,
            na,
        );
        let p = lu.p().arrays().0.to_vec();
        let (f, l, r) = (
            lu.factors().to_owned(),
            chol.l().to_mat(),
            qr.factors().to_owned(),
        );
        match &base {
            None => base = Some((p, f, l, r)),
            Some((p2, f2, l2, r2)) => {
                assert_eq!(&p, p2, "lu pivots, width {w} against 2");
                assert!(rel(&f, f2) <= 1e-10, "lu factors, width {w}");
                assert!(rel(&l, l2) <= 1e-10, "cholesky factor, width {w}");
                assert!(rel(&r, r2) <= 1e-10, "qr factors, width {w}");
            }
        }
    }
}

#[test]
fn pivoted_and_symmetric_indefinite() {
    let o = forced();
    let a = mat::<c64>(140, 140, 0.65);
    let h = hermitian::<c64>(140, 0.25);
    let mut base: Option<[Vec<usize>; 4]> = None;
    for (w, team) in teams() {
        let cp = ColPivQr::new_with(&a, &team, &o).unwrap();
        let fp = FullPivLu::new_with(&a, &team, &o).unwrap();
        let bk = Lblt::new_with(&h, &team, &o).unwrap();
        let ld = Ldlt::new_with(&spd::<c64>(140, 0.4), &team, &o).unwrap();
        let na = norm(a.as_ref());
        assert_backward::<c64>(
            &format!("col_piv_qr, width {w}"),
            (cp.reconstruct() - &a).as_ref(),
            140,
            na,
        );
        assert_backward::<c64>(
            &format!("full_piv_lu, width {w}"),
            (fp.reconstruct() - &a).as_ref(),
            140,
            na,
        );
        assert_backward::<c64>(
            &format!("lblt, width {w}"),
            (bk.reconstruct() - &h).as_ref(),
            140,
            norm(h.as_ref()),
        );
        let s = spd::<c64>(140, 0.4);
        assert_backward::<c64>(
            &format!("ldlt, width {w}"),
            (ld.reconstruct() - &s).as_ref(),
            140,
            norm(s.as_ref()),
        );
        let perms = [
            cp.p().arrays().0.to_vec(),
            fp.p().arrays().0.to_vec(),
            fp.q().arrays().0.to_vec(),
            bk.p().arrays().0.to_vec(),
        ];
        match &base {
            None => base = Some(perms),
            Some(b) => assert_eq!(&perms, b, "pivots, width {w} against 2"),
        }
    }
}

#[test]
fn svd_and_self_adjoint_evd() {
    let o = forced();
    let a = mat::<c64>(300, 260, 0.55);
    let h = hermitian::<c64>(260, 0.85);
    let mut base: Option<(Vec<f64>, Vec<f64>)> = None;
    for (w, team) in teams() {
        let svd = Svd::new_with(&a, SvdVectors::Thin, &team, &o).unwrap();
        assert_backward::<c64>(
            &format!("svd, width {w}"),
            (svd.reconstruct() - &a).as_ref(),
            300,
            norm(a.as_ref()),
        );
        let evd = SelfAdjointEigen::new_with(&h, &team, &o).unwrap();
        assert_backward::<c64>(
            &format!("evd, width {w}"),
            (evd.reconstruct() - &h).as_ref(),
            260,
            norm(h.as_ref()),
        );
        let (s, e) = (svd.s().to_vec(), evd.w().to_vec());
        match &base {
            None => base = Some((s, e)),
            Some((s2, e2)) => {
                let top = s2[0];
                let ds = s
                    .iter()
                    .zip(s2)
                    .map(|(x, y)| (x - y).abs())
                    .fold(0.0, f64::max);
                assert!(ds <= 1e-12 * top, "singular values, width {w}: {ds:e}");
                let big = e2.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                let de = e
                    .iter()
                    .zip(e2)
                    .map(|(x, y)| (x - y).abs())
                    .fold(0.0, f64::max);
                assert!(de <= 1e-12 * big, "eigenvalues, width {w}: {de:e}");
            }
        }
    }
}
