//! Every region of every kernel records its gate decision, with its own family and a reason.

use faer::{Accum, Mat};
use teamalg::gates::trace::{self, Reason};
use teamalg::gates::{Family, ParThreshold, Source};
use teamalg::linalg;

#[test]
fn every_region_records_its_decision() {
    // Decisions of the model alone: the live view would add what a busy test machine's
    // sections lose (`PoolBuilder::live_view`).
    let team = teamalg::Pool::builder()
        .threads(2)
        .live_view(false)
        .build()
        .unwrap()
        .into_team(2)
        .unwrap();

    // LU of 512: panels of 64; the call decides once (seven sections, two wide), then each
    // section after the first asks again, and so does the last section, the deferred row
    // swaps of the columns left of the last panel.
    let mut a = Mat::<f64>::from_fn(512, 512, |i, j| {
        if i == j {
            600.0
        } else {
            ((i * 7 + j * 3) % 11) as f64
        }
    });
    let (_, lu) = trace::collect(|| drop(linalg::lu(a.as_mut(), &team)));
    assert_eq!(lu.len(), 8, "{lu}");
    assert!(lu.iter().all(|d| d.family == Family::LuPartial), "{lu}");
    assert_eq!(
        (lu[0].site, lu[0].sections, lu[0].dims),
        ("lu", 7, [512, 512, 64])
    );
    assert_eq!((lu[0].width, lu[0].reason), (2, Reason::Paid), "{lu}");
    assert!(lu[0].overhead > std::time::Duration::ZERO, "{lu}");
    assert!(
        lu[1..7]
            .iter()
            .all(|d| d.site == "lu/panel" && d.sections == 1),
        "{lu}"
    );
    assert_eq!((lu[7].site, lu[7].sections), ("lu/swaps", 1), "{lu}");
    // A later section weighs its dispatch alone.
    assert!(
        lu[1..]
            .iter()
            .all(|d| d.overhead.is_zero() && d.efficiency == 1.0),
        "{lu}"
    );

    // A small Cholesky asks once, stays serial, and says why.
    let mut s = Mat::<f64>::from_fn(40, 40, |i, j| if i == j { 200.0 } else { 1.0 });
    let (r, ch) = trace::collect(|| linalg::cholesky(s.as_mut(), &team).map(drop));
    r.unwrap();
    assert_eq!(ch.len(), 1, "{ch}");
    assert_eq!(
        (ch[0].site, ch[0].family, ch[0].width),
        ("cholesky", Family::Cholesky, 1)
    );
    assert!(
        matches!(ch[0].reason, Reason::NotPaid | Reason::BelowModelledMinimum),
        "{ch}"
    );

    // A tiny product stays serial, and says so.
    let (x, mut c) = (Mat::<f64>::ones(16, 16), Mat::<f64>::zeros(16, 16));
    let (r, g) = trace::collect(|| linalg::matmul(&mut c, Accum::Replace, &x, &x, 1.0, &team));
    r.unwrap();
    assert_eq!(g.len(), 1, "{g}");
    assert_eq!(
        (g[0].site, g[0].width, g[0].dims),
        ("gemm", 1, [16, 16, 16])
    );
    assert_eq!(
        (g[0].reason, g[0].source),
        (Reason::NotPaid, Source::Derived)
    );

    // The triangular solve names its own family; a call's threshold shows as the call's.
    let t = Mat::<f64>::from_fn(256, 256, |i, j| {
        if i == j {
            4.0
        } else if i > j {
            0.5
        } else {
            0.0
        }
    });
    let mut b = Mat::<f64>::ones(256, 256);
    let never = linalg::Options::new().threshold(Family::TriangularSolve, ParThreshold::Never);
    let (r, ts) = trace::collect(|| {
        linalg::solve_triangular_with(
            t.as_ref(),
            b.as_mut(),
            linalg::SolveSide::Left,
            linalg::Triangle::Lower,
            linalg::Diag::NonUnit,
            &team,
            &never,
        )
    });
    r.unwrap();
    assert_eq!(ts.len(), 1, "{ts}");
    assert_eq!(
        (ts[0].family, ts[0].reason, ts[0].source, ts[0].width),
        (Family::TriangularSolve, Reason::Never, Source::Call, 1)
    );

    // On a serial executor the reason is the budget.
    let (_, one) = trace::collect(|| {
        linalg::matmul(
            c.as_mut(),
            Accum::Replace,
            x.as_ref(),
            x.as_ref(),
            1.0,
            &teamalg::Exec::serial(),
        )
    });
    assert_eq!(one[0].reason, Reason::Budget1);
}
