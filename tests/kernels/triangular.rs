//! Triangular solve with many right-hand sides, every side / triangle / diagonal, on every
//! executor, checked by its residual.

use faer::linalg::matmul::matmul as faer_matmul;
use faer::{Accum, Mat, Par, c64};
use teamalg::gates::ParThreshold;
use teamalg::kernels::par::{Executor, Seq};
use teamalg::kernels::triangular::{Diag, SolveParams, SolveSide, Triangle, solve_in_place};
use teamalg::{Exec, Pool};

/// A well-conditioned triangular matrix as it will be read (the other triangle zero, ones on
/// the diagonal when unit), and the full matrix the kernel is given (garbage elsewhere).
fn triangular(n: usize, triangle: Triangle, diag: Diag) -> (Mat<c64>, Mat<c64>) {
    let full = Mat::from_fn(n, n, |i, j| {
        let x = ((i * 13 + j * 7) as f64 * 0.37).sin();
        if i == j {
            c64::new(2.0 + x.abs(), 0.5)
        } else {
            c64::new(x / n as f64, 0.3 * x / n as f64)
        }
    });
    let eff = Mat::from_fn(n, n, |i, j| {
        let inside = match triangle {
            Triangle::Lower => i >= j,
            Triangle::Upper => i <= j,
        };
        if i == j && diag == Diag::Unit {
            c64::new(1.0, 0.0)
        } else if inside {
            full[(i, j)]
        } else {
            c64::new(0.0, 0.0)
        }
    });
    (full, eff)
}

fn check(
    exec: &impl Executor,
    n: usize,
    k: usize,
    side: SolveSide,
    triangle: Triangle,
    diag: Diag,
) {
    let (full, eff) = triangular(n, triangle, diag);
    let (r, c) = match side {
        SolveSide::Left => (n, k),
        SolveSide::Right => (k, n),
    };
    let b = Mat::from_fn(r, c, |i, j| {
        c64::new(((i + 2 * j) as f64).cos(), (i as f64).sin())
    });
    let mut x = b.clone();
    let params = SolveParams {
        threshold: Some(ParThreshold::Fixed(0)),
    };
    solve_in_place(
        full.as_ref(),
        x.as_mut(),
        side,
        triangle,
        diag,
        exec,
        params,
    );
    let mut back = Mat::<c64>::zeros(r, c);
    match side {
        SolveSide::Left => faer_matmul(
            back.as_mut(),
            Accum::Replace,
            eff.as_ref(),
            x.as_ref(),
            c64::new(1.0, 0.0),
            Par::Seq,
        ),
        SolveSide::Right => faer_matmul(
            back.as_mut(),
            Accum::Replace,
            x.as_ref(),
            eff.as_ref(),
            c64::new(1.0, 0.0),
            Par::Seq,
        ),
    }
    for i in 0..r {
        for j in 0..c {
            let e = (back[(i, j)] - b[(i, j)]).norm();
            assert!(
                e < 1e-10,
                "{side:?} {triangle:?} {diag:?} n {n} k {k}: residual {e} at ({i},{j})"
            );
        }
    }
}

fn all(exec: &impl Executor) {
    for n in [0, 1, 2, 3, 63, 64, 65, 129] {
        for k in [1, 3, 64, 130] {
            for side in [SolveSide::Left, SolveSide::Right] {
                for triangle in [Triangle::Lower, Triangle::Upper] {
                    for diag in [Diag::Unit, Diag::NonUnit] {
                        check(exec, n, k, side, triangle, diag);
                    }
                }
            }
        }
    }
}

#[test]
fn on_every_executor() {
    all(&Seq);
    let pool = Pool::builder().threads(3).build().unwrap();
    all(&Exec::new(&pool, 3).unwrap());
    let team = pool.into_team(3).unwrap();
    all(&team);
}

#[test]
fn real_types_match_the_serial_kernel() {
    let team = Pool::builder()
        .threads(2)
        .build()
        .unwrap()
        .into_team(2)
        .unwrap();
    let n = 100;
    let t = Mat::<f64>::from_fn(n, n, |i, j| {
        if i == j {
            3.0
        } else {
            ((i + j) as f64).sin() / n as f64
        }
    });
    let b = Mat::<f64>::from_fn(n, 70, |i, j| ((i * j) as f64).cos());
    let mut want = b.clone();
    faer::linalg::triangular_solve::solve_lower_triangular_in_place(
        t.as_ref(),
        want.as_mut(),
        Par::Seq,
    );
    let mut got = b.clone();
    let force = SolveParams {
        threshold: Some(ParThreshold::Fixed(0)),
    };
    solve_in_place(
        t.as_ref(),
        got.as_mut(),
        SolveSide::Left,
        Triangle::Lower,
        Diag::NonUnit,
        &team,
        force,
    );
    assert_eq!(got, want, "chunks of columns solve exactly as the whole");
    let t32 = Mat::<f32>::from_fn(n, n, |i, j| t[(i, j)] as f32);
    let mut b32 = Mat::<f32>::from_fn(n, 70, |i, j| b[(i, j)] as f32);
    solve_in_place(
        t32.as_ref(),
        b32.as_mut(),
        SolveSide::Left,
        Triangle::Lower,
        Diag::NonUnit,
        &team,
        force,
    );
    for i in 0..n {
        for j in 0..70 {
            assert!((b32[(i, j)] as f64 - want[(i, j)]).abs() < 1e-4);
        }
    }
}

#[test]
fn the_facade_checks_shapes_and_writes_nothing_on_error() {
    use teamalg::linalg::{self, LinalgError};
    let t = Mat::<f64>::from_fn(4, 4, |i, j| if i == j { 2.0 } else { 0.1 });
    let rect = Mat::<f64>::zeros(4, 3);
    let mut b = Mat::<f64>::from_fn(4, 2, |i, j| (i + j) as f64);
    let before = b.clone();
    let e = linalg::solve_triangular(
        rect.as_ref(),
        b.as_mut(),
        SolveSide::Left,
        Triangle::Lower,
        Diag::NonUnit,
        &Seq,
    );
    assert_eq!(
        e,
        Err(LinalgError::NotSquare {
            op: "solve_triangular",
            operand: "T",
            rows: 4,
            cols: 3
        })
    );
    let e = linalg::solve_triangular(
        t.as_ref(),
        b.as_mut(),
        SolveSide::Right,
        Triangle::Lower,
        Diag::NonUnit,
        &Seq,
    );
    assert!(matches!(e, Err(LinalgError::ShapeMismatch { .. })));
    assert_eq!(
        e.unwrap_err().to_string(),
        "solve_triangular: B has 2 columns, 4 expected"
    );
    assert_eq!(b, before);
    linalg::solve_triangular(
        t.as_ref(),
        b.as_mut(),
        SolveSide::Left,
        Triangle::Lower,
        Diag::NonUnit,
        &Exec::serial(),
    )
    .unwrap();
    assert!((2.0 * b[(0, 0)] - before[(0, 0)]).abs() < 1e-12);
    // matmul
    let (a, bb) = (Mat::<f64>::zeros(3, 5), Mat::<f64>::zeros(4, 2));
    let mut c = Mat::<f64>::from_fn(3, 2, |_, _| 7.0);
    let e = linalg::matmul(
        c.as_mut(),
        faer::Accum::Replace,
        a.as_ref(),
        bb.as_ref(),
        1.0,
        &Seq,
    );
    assert!(matches!(
        e,
        Err(LinalgError::ShapeMismatch { op: "matmul", .. })
    ));
    assert!(c.col_iter().all(|col| col.iter().all(|&x| x == 7.0)));
}
