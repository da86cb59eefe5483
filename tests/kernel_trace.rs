//! With the `trace` feature, every region of every kernel records its gate decision.

#![cfg(feature = "trace")]

use faer::{Accum, Mat};
use teamalg::gates::trace;
use teamalg::linalg;

#[path = "common/sample.rs"]
mod sample;
use sample::team;

#[test]
fn every_region_records_its_decision() {
    let team = team(2);
    trace::enable();
    trace::drain();

    // LU of 512: panels of 64, a section after each of the first seven; the first is large
    // enough to go two wide.
    let mut a = Mat::<f64>::from_fn(512, 512, |i, j| {
        if i == j {
            600.0
        } else {
            ((i * 7 + j * 3) % 11) as f64
        }
    });
    linalg::lu(a.as_mut(), &team);
    let lu: Vec<_> = trace::drain()
        .into_iter()
        .filter(|d| d.site == "lu/panel")
        .collect();
    assert_eq!(lu.len(), 7, "{lu:?}");
    assert!(lu.iter().all(|d| d.sections == 1));
    assert_eq!(lu[0].width, 2, "{:?}", lu[0]);
    assert_eq!(lu[0].dims, [512, 512, 64]);

    // A small Cholesky: its first section is below the floor, so it asks once and stays serial.
    let mut s = Mat::<f64>::from_fn(100, 100, |i, j| if i == j { 200.0 } else { 1.0 });
    linalg::cholesky(s.as_mut(), &team).unwrap();
    let ch = trace::drain();
    assert_eq!(ch.len(), 1, "{ch:?}");
    assert_eq!((ch[0].site, ch[0].width), ("cholesky/panel", 1));

    // A tiny product stays serial, and says so.
    let (x, mut c) = (Mat::<f64>::ones(16, 16), Mat::<f64>::zeros(16, 16));
    linalg::matmul(
        c.as_mut(),
        Accum::Replace,
        x.as_ref(),
        x.as_ref(),
        1.0,
        &team,
    )
    .unwrap();
    let g = trace::drain();
    assert_eq!(g.len(), 1, "{g:?}");
    assert_eq!(
        (g[0].site, g[0].width, g[0].dims),
        ("gemm", 1, [16, 16, 16])
    );
    trace::disable();
}
