//! The sparse QR (`teamalg::linalg::SparseQr`): least squares and the minimum-norm adjoint
//! solve within the backward bound on every executor and scalar type, the same answers to rounding across widths, the analysis
//! reused, trees that are one chain and one with many leaves, rows without entries, rank
//! deficiency refused, and every refusal with the input unchanged.

use faer::sparse::linalg::matmul::sparse_dense_matmul;
use faer::sparse::{SparseColMat, Triplet};
use faer::{Accum, Mat, Par, c64};
use teamalg::Exec;
use teamalg::gates::{Family, ParThreshold};
use teamalg::kernels::par::Executor;
use teamalg::linalg::{self, LinalgError, Options, SparseOrdering, SparseQr, SymbolicQr};

use super::sample::{self, Sample, every_executor, team};
use super::sparse_cholesky::{band, grid2, grid3, hub, on, order, orderings, star};
use super::sparse_lu::arrow;

/// A tall matrix: an unsymmetric matrix on the pattern of `edges` (`(i, j)`, `i > j`, both
/// stored) with a diagonal, over `extra` rows of two entries each (every `extra`-th... column
/// pairs spread over the columns).
fn tall<T: Sample>(n: usize, edges: &[(usize, usize)], extra: usize) -> SparseColMat<usize, T> {
    let mut t = Vec::new();
    for (k, &(i, j)) in edges.iter().enumerate() {
        t.push(Triplet::new(i, j, T::sample(k % 97, k % 89, 0.3)));
        t.push(Triplet::new(j, i, T::sample(k % 83, k % 79, 0.6)));
    }
    for i in 0..n {
        t.push(Triplet::new(i, i, T::sample(i % 101, 7, 0.9)));
    }
    for r in 0..extra {
        let (a, b) = ((r * 7) % n, (r * 13 + 1) % n);
        t.push(Triplet::new(n + r, a, T::sample(r % 71, 3, 0.4)));
        if b != a {
            t.push(Triplet::new(n + r, b, T::sample(r % 67, 5, 0.8)));
        }
    }
    SparseColMat::try_new_from_triplets(n + extra, n, &t).unwrap()
}

/// The least-squares conditions: `||A^H (b - A x)||_F <= C u m ||A||_F (||A||_F ||x||_F +
/// ||b||_F)` (`C` of [`sample::backward_bound`]), and the residual's norm is that of the last
/// `m - n` rows of the in-place answer `full`.
fn assert_least_squares<T: Sample>(
    what: &str,
    a: &SparseColMat<usize, T>,
    full: &Mat<T>,
    b: &Mat<T>,
) {
    let (m, n) = (a.nrows(), a.ncols());
    let x = full.subrows(0, n);
    let mut r = b.clone();
    sparse_dense_matmul(r.as_mut(), Accum::Add, a.as_ref(), x, -T::one(), Par::Seq);
    let mut normal = Mat::<T>::zeros(n, b.ncols());
    let at = a.as_ref().adjoint().to_col_major().unwrap();
    sparse_dense_matmul(
        normal.as_mut(),
        Accum::Replace,
        at.as_ref(),
        r.as_ref(),
        T::one(),
        Par::Seq,
    );
    let norm_a = sample::norm(a.to_dense().as_ref());
    let scale = norm_a * sample::norm(x) + sample::norm(b.as_ref());
    let bound = sample::backward_bound::<T>(m, norm_a) * scale;
    let got = sample::norm(normal.as_ref());
    assert!(got <= bound, "{what}: ||A^H r|| = {got:e} > {bound:e}");
    let (rest, res) = (
        sample::norm(full.subrows(n, m - n)),
        sample::norm(r.as_ref()),
    );
    let tol = sample::backward_bound::<T>(m, norm_a) * (sample::norm(x) + sample::norm(b.as_ref()));
    assert!(
        (rest - res).abs() <= tol.max(1e-300),
        "{what}: the residual's rows {rest:e}, its norm {res:e}"
    );
}

fn forced(yes: bool) -> Options {
    let t = if yes {
        ParThreshold::Fixed(0)
    } else {
        ParThreshold::Derived
    };
    Options::new().threshold(Family::SparseQr, t)
}

fn lstsq_everywhere<T: Sample>() {
    for (n, edges) in [grid2(20), grid3(7), band(300, 3), star(200)] {
        let a = tall::<T>(n, &edges, n / 2 + 3);
        let symbolic = SymbolicQr::new(a.symbolic()).unwrap();
        let b = sample::mat::<T>(a.nrows(), 3, 0.7);
        every_executor(|exec: &dyn Executor, force| {
            let qr = SparseQr::new_with(&symbolic, a.as_ref(), exec, &forced(force)).unwrap();
            assert!(qr.full_rank());
            let mut full = b.clone();
            qr.lstsq_in_place(full.as_mut(), exec).unwrap();
            assert_least_squares(&format!("n {n}, forced {force}"), &a, &full, &b);
            let x = qr.lstsq(&b, exec).unwrap();
            assert!(
                x == full.subrows(0, n),
                "lstsq is lstsq_in_place's top rows"
            );
        });
    }
}

#[test]
fn least_squares_hold_to_the_bound_on_every_executor() {
    lstsq_everywhere::<f64>();
    lstsq_everywhere::<c64>();
}

#[test]
fn a_square_matrix_solves() {
    let (n, edges) = grid2(15);
    let a = tall::<f64>(n, &edges, 0);
    let qr = SparseQr::new(a.as_ref(), on(&team(2))).unwrap();
    let b = sample::mat::<f64>(n, 2, 0.3);
    let x = qr.solve(&b, on(&team(2))).unwrap();
    let mut r = b.clone();
    sparse_dense_matmul(
        r.as_mut(),
        Accum::Add,
        a.as_ref(),
        x.as_ref(),
        -1.0,
        Par::Seq,
    );
    let norm_a = sample::norm(a.to_dense().as_ref());
    let bound = sample::backward_bound::<f64>(n, norm_a) * sample::norm(x.as_ref());
    assert!(sample::norm(r.as_ref()) <= bound);
    let tall = tall::<f64>(n, &edges, 4);
    let qr = SparseQr::new(tall.as_ref(), on(&Exec::serial())).unwrap();
    let b = sample::mat::<f64>(n + 4, 1, 0.3);
    assert!(matches!(
        qr.solve(&b, on(&Exec::serial())),
        Err(LinalgError::NotSquare { .. })
    ));
}

/// `||A^H x - b||_F <= C u m ||A||_F ||x||_F`, and `x` in `A`'s range (its least-squares
/// residual against `A` within the bound too).
fn assert_min_norm<T: Sample>(
    what: &str,
    qr: &SparseQr<T>,
    a: &SparseColMat<usize, T>,
    x: &Mat<T>,
    b: &Mat<T>,
) {
    let (m, n) = (a.nrows(), a.ncols());
    let ah = a.as_ref().adjoint().to_col_major().unwrap();
    let mut r = b.clone();
    sparse_dense_matmul(
        r.as_mut(),
        Accum::Add,
        ah.as_ref(),
        x.as_ref(),
        -T::one(),
        Par::Seq,
    );
    let norm_a = sample::norm(a.to_dense().as_ref());
    let bound = sample::backward_bound::<T>(m, norm_a) * sample::norm(x.as_ref());
    let got = sample::norm(r.as_ref());
    assert!(got <= bound, "{what}: ||A^H x - b|| = {got:e} > {bound:e}");
    let mut p = x.clone();
    qr.lstsq_in_place(p.as_mut(), on(&Exec::serial())).unwrap();
    let outside = sample::norm(p.subrows(n, m - n));
    let tol =
        sample::backward_bound::<T>(m, norm_a) * sample::norm(x.as_ref()) / norm_a.max(1e-300);
    assert!(
        outside <= tol,
        "{what}: x leaves A's range by {outside:e} > {tol:e}"
    );
}

fn adjoint_everywhere<T: Sample>() {
    for (n, edges) in [grid2(14), star(120)] {
        let a = tall::<T>(n, &edges, n / 3 + 2);
        let symbolic = SymbolicQr::new(a.symbolic()).unwrap();
        let b = sample::mat::<T>(n, 2, 0.4);
        every_executor(|exec: &dyn Executor, force| {
            let qr = SparseQr::new_with(&symbolic, a.as_ref(), exec, &forced(force)).unwrap();
            let x = qr.min_norm_adjoint(&b, exec).unwrap();
            assert_min_norm(&format!("n {n}, forced {force}"), &qr, &a, &x, &b);
        });
    }
}

#[test]
fn the_minimum_norm_adjoint_solve_holds_on_every_executor() {
    adjoint_everywhere::<f64>();
    adjoint_everywhere::<c64>();
    // Square: solve_adjoint, owned and in place, is A^-H b.
    let (n, edges) = grid2(12);
    let a = tall::<c64>(n, &edges, 0);
    let team = team(2);
    let qr = SparseQr::new(a.as_ref(), on(&team)).unwrap();
    let b = sample::mat::<c64>(n, 3, 0.2);
    let x = qr.solve_adjoint(&b, on(&team)).unwrap();
    assert_min_norm("square", &qr, &a, &x, &b);
    let mut y = b.clone();
    qr.solve_adjoint_in_place(y.as_mut(), on(&team)).unwrap();
    assert!(y == x, "in place is the owned form");
    // A tall A has no A^-H; a B of the wrong rows is refused.
    let t = tall::<f64>(n, &edges, 5);
    let qr = SparseQr::new(t.as_ref(), on(&team)).unwrap();
    assert!(matches!(
        qr.solve_adjoint(Mat::<f64>::ones(n + 5, 1), on(&team)),
        Err(LinalgError::NotSquare { .. })
    ));
    assert!(matches!(
        qr.min_norm_adjoint(Mat::<f64>::ones(n + 1, 1), on(&team)),
        Err(LinalgError::ShapeMismatch { .. })
    ));
}

#[test]
fn widths_agree_to_rounding() {
    let (n, edges) = grid3(10);
    let a = tall::<f64>(n, &edges, n);
    let symbolic = SymbolicQr::new(a.symbolic()).unwrap();
    let b = sample::mat::<f64>(a.nrows(), 2, 0.5);
    let serial = SparseQr::new_with_symbolic(&symbolic, a.as_ref(), on(&Exec::serial())).unwrap();
    let want = serial.lstsq(&b, on(&Exec::serial())).unwrap();
    let top = want.norm_max();
    for width in [2, 3, 4, 8] {
        let t = team(width);
        let qr = SparseQr::new_with(&symbolic, a.as_ref(), on(&t), &forced(true)).unwrap();
        let got = qr.lstsq(&b, on(&t)).unwrap();
        let off = (&got - &want).norm_max();
        assert!(off <= 1e-10 * top, "width {width}: {off:e} from serial");
        // A team token of the width: the same to rounding (the top fronts' dense QR claims
        // its chunks, so it is not bit for bit).
        let qr = SparseQr::new_with(&symbolic, a.as_ref(), on(&t.exec(width)), &forced(true));
        let got = qr.unwrap().lstsq(&b, on(&t)).unwrap();
        let off = (&got - &want).norm_max();
        assert!(
            off <= 1e-10 * top,
            "width {width}, token: {off:e} from serial"
        );
    }
}

#[test]
fn one_analysis_serves_new_values() {
    let (n, edges) = grid2(18);
    let base = tall::<f64>(n, &edges, 40);
    let symbolic = SymbolicQr::new(base.symbolic()).unwrap();
    let team = team(2);
    for scale in [1.0, 1e-3, 50.0] {
        let mut a = base.clone();
        for (k, v) in a.val_mut().iter_mut().enumerate() {
            *v *= scale * (1.0 + (k % 5) as f64 / 3.0);
        }
        let qr = SparseQr::new_with(&symbolic, a.as_ref(), on(&team), &forced(true)).unwrap();
        let b = sample::mat::<f64>(a.nrows(), 1, scale);
        let mut full = b.clone();
        qr.lstsq_in_place(full.as_mut(), on(&team)).unwrap();
        assert_least_squares(&format!("scale {scale}"), &a, &full, &b);
    }
}

#[test]
fn rows_without_entries_are_residual() {
    // Rows 3 and 9 of 12 are empty: their values of b are residual, whatever x.
    let mut t = Vec::new();
    let full_rows = [0, 1, 2, 4, 5, 6, 7, 8, 10, 11];
    for (k, &i) in full_rows.iter().enumerate() {
        t.push(Triplet::new(i, k % 5, 1.0 + k as f64));
        t.push(Triplet::new(i, (k + 2) % 5, 0.5 - k as f64 / 7.0));
    }
    let a = SparseColMat::<usize, f64>::try_new_from_triplets(12, 5, &t).unwrap();
    let qr = SparseQr::new(a.as_ref(), on(&Exec::serial())).unwrap();
    let b = sample::mat::<f64>(12, 2, 0.9);
    let mut full = b.clone();
    qr.lstsq_in_place(full.as_mut(), on(&Exec::serial()))
        .unwrap();
    assert_least_squares("empty rows", &a, &full, &b);
}

#[test]
fn rank_deficiency_is_refused() {
    let (n, edges) = grid2(10);
    let a = tall::<f64>(n, &edges, 30);
    // Column 17 made a copy of column 16's values on a pattern that holds both: the analysis
    // of the union, the values equal.
    let mut t = Vec::new();
    let dense = a.to_dense();
    for j in 0..n {
        for i in 0..a.nrows() {
            let src = if j == 17 { 16 } else { j };
            let v = dense[(i, src)];
            let both = dense[(i, 16)] != 0.0 || dense[(i, 17)] != 0.0;
            if v != 0.0 || ((j == 16 || j == 17) && both) {
                t.push(Triplet::new(i, j, v));
            }
        }
    }
    let bad = SparseColMat::<usize, f64>::try_new_from_triplets(a.nrows(), n, &t).unwrap();
    for exec in [on(&Exec::serial()), on(&team(2))] {
        let qr = SparseQr::new(bad.as_ref(), exec).unwrap();
        assert!(!qr.full_rank());
        let b = sample::mat::<f64>(a.nrows(), 1, 0.2);
        let mut x = b.clone();
        let err = qr.lstsq_in_place(x.as_mut(), exec).unwrap_err();
        assert!(
            matches!(err, LinalgError::RankDeficient { op: "SparseQr::lstsq_in_place", rank, of } if rank < n && of == n),
            "{err:?}"
        );
        assert!(x == b, "b unchanged");
    }
    // The same pattern with column 17's own values: full rank.
    let qr = SparseQr::new(a.as_ref(), on(&Exec::serial())).unwrap();
    assert!(qr.full_rank());
}

#[test]
fn refusals_name_what_is_wrong_and_change_nothing() {
    let (n, edges) = grid2(10);
    let a = tall::<f64>(n, &edges, 20);
    let serial = Exec::serial();
    let exec = on(&serial);
    // Wide.
    let wide = SparseColMat::<usize, f64>::try_new_from_triplets(3, 4, &[Triplet::new(0, 0, 1.0)])
        .unwrap();
    assert!(matches!(
        SymbolicQr::new(wide.symbolic()),
        Err(LinalgError::NotTall {
            rows: 3,
            cols: 4,
            ..
        })
    ));
    // A column without entries: structurally rank-deficient, in A's numbering.
    let t: Vec<_> = (0..8)
        .map(|i| Triplet::new(i, i % 6, 1.0 + i as f64))
        .filter(|e| e.col != 4)
        .collect();
    let holed = SparseColMat::<usize, f64>::try_new_from_triplets(8, 6, &t).unwrap();
    let err = SparseQr::new(holed.as_ref(), exec).unwrap_err();
    assert_eq!(
        err,
        LinalgError::StructurallySingular {
            op: "SparseQr::new",
            index: 4
        }
    );
    // Another pattern, another shape.
    let symbolic = SymbolicQr::new(a.symbolic()).unwrap();
    let other = tall::<f64>(n, &band(n, 2).1, 20);
    assert!(matches!(
        SparseQr::new_with_symbolic(&symbolic, other.as_ref(), exec),
        Err(LinalgError::PatternMismatch { .. })
    ));
    let small = tall::<f64>(n, &edges, 10);
    assert!(matches!(
        SparseQr::new_with_symbolic(&symbolic, small.as_ref(), exec),
        Err(LinalgError::ShapeMismatch { .. })
    ));
    // Not finite; A only read.
    let before = a.clone();
    let mut bad = a.clone();
    bad.val_mut()[5] = f64::NAN;
    assert!(matches!(
        SparseQr::new_with_symbolic(&symbolic, bad.as_ref(), exec),
        Err(LinalgError::NotFinite { .. })
    ));
    let qr = SparseQr::new_with_symbolic(&symbolic, a.as_ref(), exec).unwrap();
    assert!(a.val() == before.val(), "A is only read");
    // A right-hand side of the wrong rows, or not finite: unchanged.
    let mut b = Mat::<f64>::ones(n + 21, 2);
    assert!(matches!(
        qr.lstsq_in_place(b.as_mut(), exec),
        Err(LinalgError::ShapeMismatch {
            expected: 120,
            found: 121,
            ..
        })
    ));
    assert!(b == Mat::<f64>::ones(n + 21, 2));
    let mut b = Mat::<f64>::ones(n + 20, 1);
    b[(3, 0)] = f64::INFINITY;
    let kept = b.clone();
    assert!(matches!(
        qr.lstsq_in_place(b.as_mut(), exec),
        Err(LinalgError::NotFinite { .. })
    ));
    assert!(b.col(0).iter().zip(kept.col(0).iter()).all(|(x, y)| x == y));
}

#[test]
fn empty_and_one_column() {
    let empty = SparseColMat::<usize, f64>::try_new_from_triplets(3, 0, &[]).unwrap();
    let qr = SparseQr::new(empty.as_ref(), on(&Exec::serial())).unwrap();
    let x = qr
        .lstsq(Mat::<f64>::ones(3, 1), on(&Exec::serial()))
        .unwrap();
    assert_eq!(x.nrows(), 0);
    let t = [Triplet::new(0, 0, 3.0), Triplet::new(1, 0, 4.0)];
    let one = SparseColMat::<usize, f64>::try_new_from_triplets(2, 1, &t).unwrap();
    let qr = SparseQr::new(one.as_ref(), on(&Exec::serial())).unwrap();
    let mut b = Mat::<f64>::from_fn(2, 1, |i, _| [3.0, 4.0][i] * 2.0);
    qr.lstsq_in_place(b.as_mut(), on(&Exec::serial())).unwrap();
    assert!((b[(0, 0)] - 2.0).abs() < 1e-15 && b[(1, 0)].abs() < 1e-14);
}

#[test]
fn faer_lstsq_trait_solves_serially() {
    use faer::linalg::solvers::SolveLstsqCore;
    let (n, edges) = grid2(8);
    let a = tall::<c64>(n, &edges, 17);
    let qr = SparseQr::new(a.as_ref(), on(&team(2))).unwrap();
    let b = sample::mat::<c64>(a.nrows(), 2, 0.4);
    let mut full = b.clone();
    qr.solve_lstsq_in_place_with_conj(faer::Conj::No, full.as_mut());
    assert_least_squares("SolveLstsqCore", &a, &full, &b);
    // conj(A) x = b.
    let mut full = b.clone();
    qr.solve_lstsq_in_place_with_conj(faer::Conj::Yes, full.as_mut());
    let mut conj = a.clone();
    conj.val_mut().iter_mut().for_each(|v| *v = v.conj());
    assert_least_squares("SolveLstsqCore conjugated", &conj, &full, &b);
}

#[test]
fn one_analysis_is_shared_by_threads_that_factor_at_once() {
    let (n, edges) = grid2(14);
    let base = tall::<f64>(n, &edges, 30);
    let symbolic = SymbolicQr::new(base.symbolic()).unwrap();
    let team = team(2);
    let scaled = |s: f64| {
        let mut a = base.clone();
        a.val_mut().iter_mut().for_each(|v| *v *= s);
        a
    };
    // Three threads factor with one analysis at once, two of them on one team.
    let factors: Vec<SparseQr<f64>> = std::thread::scope(|s| {
        let handles: Vec<_> = [0.5, 1.0, 4.0]
            .map(|k| {
                let (symbolic, team, scaled) = (&symbolic, &team, &scaled);
                s.spawn(move || {
                    let a = scaled(k);
                    let serial = Exec::serial();
                    let exec = if k < 2.0 { on(team) } else { on(&serial) };
                    SparseQr::new_with(symbolic, a.as_ref(), exec, &forced(true)).unwrap()
                })
            })
            .into_iter()
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // Each factor, solved on another thread than the one that made it.
    std::thread::scope(|s| {
        for (qr, k) in factors.iter().zip([0.5, 1.0, 4.0]) {
            let scaled = &scaled;
            s.spawn(move || {
                let a = scaled(k);
                let b = sample::mat::<f64>(a.nrows(), 2, k);
                let mut full = b.clone();
                qr.lstsq_in_place(full.as_mut(), on(&Exec::serial()))
                    .unwrap();
                assert_least_squares(&format!("scale {k}"), &a, &full, &b);
            });
        }
    });
}

/// The column orderings (`SparseOrdering`): a custom order is the one used (column 0 first
/// fills `R`, last fills nothing), each ordering's factor gives the least-squares solution
/// serially and on a team of 2 with the same residual, and a custom order of the wrong
/// length is refused.
#[test]
fn every_ordering_is_used_and_solves() {
    let n = 60;
    let a = arrow(n + n / 2, n);
    let fill = |first: bool| {
        let order = hub(n, first);
        SymbolicQr::new_ordered(a.symbolic(), SparseOrdering::Custom(order.as_ref()))
            .unwrap()
            .len_values()
    };
    assert!(fill(true) >= n * n / 2, "column 0 first: {}", fill(true));
    assert!(fill(false) <= 8 * n, "column 0 last: {}", fill(false));
    let short = order(vec![0]);
    assert_eq!(
        SymbolicQr::new_ordered(a.symbolic(), SparseOrdering::Custom(short.as_ref())).unwrap_err(),
        LinalgError::ShapeMismatch {
            op: "SymbolicQr::new_ordered",
            operand: "ordering",
            dim: linalg::Dim::Cols,
            expected: n,
            found: 1,
        }
    );

    let (n, edges) = grid3(7);
    let a = tall::<f64>(n, &edges, n / 2 + 3);
    let b = sample::mat::<f64>(a.nrows(), 2, 0.4);
    let reversed = order((0..n).rev().collect());
    let team = team(2);
    let residual = |full: &Mat<f64>| sample::norm(full.subrows(n, a.nrows() - n));
    let mut want = b.clone();
    SparseQr::new(a.as_ref(), on(&Exec::serial()))
        .unwrap()
        .lstsq_in_place(want.as_mut(), on(&Exec::serial()))
        .unwrap();
    for ordering in orderings(&reversed) {
        let symbolic = SymbolicQr::new_ordered(a.symbolic(), ordering).unwrap();
        for exec in [on(&Exec::serial()), on(&team)] {
            let qr = SparseQr::new_with(&symbolic, a.as_ref(), exec, &forced(true)).unwrap();
            let mut full = b.clone();
            qr.lstsq_in_place(full.as_mut(), exec).unwrap();
            assert_least_squares(&format!("{ordering:?}"), &a, &full, &b);
            let (got, want) = (residual(&full), residual(&want));
            assert!(
                (got - want).abs() <= 1e-10 * want,
                "{ordering:?}: {got} {want}"
            );
        }
    }
    // Dissection is METIS's order, not AMD's or COLAMD's under another name.
    #[cfg(feature = "metis")]
    {
        let nd = SymbolicQr::new_ordered(a.symbolic(), SparseOrdering::NestedDissection).unwrap();
        let amd = SymbolicQr::new(a.symbolic()).unwrap();
        assert_ne!(
            nd.col_perm().arrays().0,
            amd.col_perm().arrays().0,
            "dissection is not faer's own order"
        );
    }
}
