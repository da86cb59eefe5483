//! The sparse LU (`teamalg::linalg::SparseLu`): backward error of every solve on every
//! executor and scalar type, pivoting that a small diagonal forces, one factor at one width on
//! every team executor and the same to rounding across widths, the analysis reused, trees
//! that are one chain and one with many leaves, the determinant against the dense LU's, and
//! every refusal with the input unchanged.

use faer::sparse::linalg::matmul::sparse_dense_matmul;
use faer::sparse::{SparseColMat, Triplet};
use faer::{Accum, Mat, Par, c64};
use teamalg::Exec;
use teamalg::gates::{Family, ParThreshold};
use teamalg::kernels::par::Executor;
use teamalg::linalg::{self, LinalgError, Options, SparseLu, SparseOrdering, SymbolicLu};

use super::sample::{self, Sample, every_executor, team};
use super::sparse_cholesky::{band, grid2, grid3, hub, on, order, orderings, star};

/// An unsymmetric matrix on the pattern of `edges` (`(i, j)`, `i > j`, both `(i, j)` and
/// `(j, i)` stored), with `diagonal` times a sample on the diagonal: small, the pivots come
/// from off the diagonal.
fn unsymmetric<T: Sample>(
    n: usize,
    edges: &[(usize, usize)],
    diagonal: f64,
) -> SparseColMat<usize, T> {
    let mut t = Vec::new();
    for (k, &(i, j)) in edges.iter().enumerate() {
        t.push(Triplet::new(i, j, T::sample(k % 97, k % 89, 0.3)));
        t.push(Triplet::new(j, i, T::sample(k % 83, k % 79, 0.6)));
    }
    for i in 0..n {
        let d: T = faer::traits::math_utils::mul_real(
            &T::sample(i % 101, 7, 0.9),
            &faer::traits::math_utils::from_f64(diagonal),
        );
        t.push(Triplet::new(i, i, d));
    }
    SparseColMat::try_new_from_triplets(n, n, &t).unwrap()
}

/// `||A x - b||_F <= C u n ||A||_F ||x||_F` (`C` of [`sample::backward_bound`]), `A` or its
/// transpose or adjoint.
fn assert_solves<T: Sample>(what: &str, a: &SparseColMat<usize, T>, x: &Mat<T>, b: &Mat<T>) {
    let mut r = b.clone();
    sparse_dense_matmul(
        r.as_mut(),
        Accum::Add,
        a.as_ref(),
        x.as_ref(),
        -T::one(),
        Par::Seq,
    );
    let norm_a = sample::norm(a.to_dense().as_ref());
    let bound = sample::backward_bound::<T>(a.nrows(), norm_a) * sample::norm(x.as_ref());
    let res = sample::norm(r.as_ref());
    assert!(res <= bound, "{what}: ||A x - b|| = {res:e} > {bound:e}");
}

fn forced(yes: bool) -> Options {
    let t = if yes {
        ParThreshold::Fixed(0)
    } else {
        ParThreshold::Derived
    };
    Options::new().threshold(Family::SparseLu, t)
}

fn transposed<T: Sample>(a: &SparseColMat<usize, T>, adjoint: bool) -> SparseColMat<usize, T> {
    if adjoint {
        a.as_ref().adjoint().to_col_major().unwrap()
    } else {
        a.as_ref().transpose().to_col_major().unwrap()
    }
}

fn solves_everywhere<T: Sample>() {
    for (n, edges) in [grid2(24), grid3(8), band(300, 3), star(200)] {
        let a = unsymmetric::<T>(n, &edges, 0.05);
        let symbolic = SymbolicLu::new(a.symbolic()).unwrap();
        let b = sample::mat::<T>(n, 3, 0.7);
        let (at, ah) = (transposed(&a, false), transposed(&a, true));
        every_executor(|exec: &dyn Executor, force| {
            let lu = SparseLu::new_with(&symbolic, a.as_ref(), exec, &forced(force)).unwrap();
            let what = format!("n {n}, forced {force}");
            assert_solves(&what, &a, &lu.solve(&b, exec).unwrap(), &b);
            assert_solves(&what, &at, &lu.solve_transpose(&b, exec).unwrap(), &b);
            assert_solves(&what, &ah, &lu.solve_adjoint(&b, exec).unwrap(), &b);
        });
    }
}

#[test]
fn every_solve_is_within_the_backward_bound_on_every_executor() {
    solves_everywhere::<f64>();
    solves_everywhere::<c64>();
}

#[test]
fn a_small_diagonal_makes_it_pivot() {
    let (n, edges) = grid2(12);
    let a = unsymmetric::<f64>(n, &edges, 1e-3);
    let lu = SparseLu::new(a.as_ref(), on(&Exec::serial())).unwrap();
    let q = lu.symbolic().col_perm().arrays().0.to_vec();
    let p = lu.row_perm();
    let mut seen = vec![false; n];
    p.iter().for_each(|&i| seen[i] = true);
    assert!(seen.iter().all(|&s| s), "P is a permutation");
    let off = (0..n).filter(|&k| p[k] != q[k]).count();
    assert!(off > n / 4, "only {off} pivots off the diagonal");
}

/// The fronts' values of a factor, in order.
fn values_of(lu: &SparseLu<f64>) -> Vec<f64> {
    let x = Mat::<f64>::from_fn(lu.symbolic().nrows(), 1, |i, _| (i as f64 + 1.0).sqrt());
    // Two solves read every entry of L and U: equal bits there are equal factors for this
    // test's purpose, with the pivot rows.
    let mut out = lu
        .solve(&x, on(&Exec::serial()))
        .unwrap()
        .col(0)
        .iter()
        .copied()
        .collect::<Vec<_>>();
    out.extend(
        lu.solve_transpose(&x, on(&Exec::serial()))
            .unwrap()
            .col(0)
            .iter()
            .copied(),
    );
    out.extend(lu.row_perm().iter().map(|&i| i as f64));
    out
}

#[test]
fn one_width_gives_one_factor_and_widths_agree_to_rounding() {
    let (n, edges) = grid3(11);
    let a = unsymmetric::<f64>(n, &edges, 0.3);
    let symbolic = SymbolicLu::new(a.symbolic()).unwrap();
    let serial = SparseLu::new_with_symbolic(&symbolic, a.as_ref(), on(&Exec::serial())).unwrap();
    let want = values_of(&serial);
    let gave_up = |f: &dyn Fn() -> SparseLu<f64>| {
        let (lu, seen) = teamalg::gates::trace::collect(f);
        let g = seen
            .iter()
            .any(|d| d.reason == teamalg::gates::trace::Reason::GaveUp);
        (values_of(&lu), g)
    };
    let team3 = team(3);
    let (on_team, t_gave_up) = (0..5)
        .map(|_| {
            gave_up(&|| {
                SparseLu::new_with(&symbolic, a.as_ref(), on(&team3), &forced(true)).unwrap()
            })
        })
        .find(|(_, g)| !g)
        .unwrap_or_else(|| {
            gave_up(&|| {
                SparseLu::new_with(&symbolic, a.as_ref(), on(&team3), &forced(true)).unwrap()
            })
        });
    let (token, g) = gave_up(&|| {
        SparseLu::new_with(&symbolic, a.as_ref(), on(&team3.exec(3)), &forced(true)).unwrap()
    });
    if !g && !t_gave_up {
        assert!(token == on_team, "a team token of 3: not the team's bits");
    }
    let top = want.iter().map(|x| x.abs()).fold(0.0, f64::max);
    for width in [2, 3, 4, 8] {
        let t = team(width);
        let lu = SparseLu::new_with(&symbolic, a.as_ref(), on(&t), &forced(true)).unwrap();
        let got = values_of(&lu);
        let n_vals = 2 * n;
        let off = got[..n_vals]
            .iter()
            .zip(&want[..n_vals])
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(
            off <= 1e-10 * top,
            "width {width}: {off:e} from the serial solves"
        );
        assert_eq!(got[n_vals..], want[n_vals..], "width {width}: other pivots");
    }
}

#[test]
fn one_analysis_serves_new_values() {
    let (n, edges) = grid2(20);
    let symbolic = SymbolicLu::new(unsymmetric::<f64>(n, &edges, 1.0).symbolic()).unwrap();
    let team = team(2);
    for diagonal in [1.0, 0.01, 100.0] {
        let a = unsymmetric::<f64>(n, &edges, diagonal);
        let lu = SparseLu::new_with(&symbolic, a.as_ref(), on(&team), &forced(true)).unwrap();
        let b = sample::mat::<f64>(n, 1, diagonal);
        let mut x = b.clone();
        lu.solve_in_place(x.as_mut(), on(&team)).unwrap();
        assert_solves(&format!("diagonal {diagonal}"), &a, &x, &b);
    }
}

#[test]
fn the_determinant_is_the_dense_lus() {
    let (n, edges) = grid2(9);
    for diagonal in [0.05, 3.0] {
        let a = unsymmetric::<f64>(n, &edges, diagonal);
        let dense = a.to_dense();
        let want = linalg::Lu::new(dense.as_ref(), on(&Exec::serial())).unwrap();
        let lu = SparseLu::new(a.as_ref(), on(&team(2))).unwrap();
        let (s, l) = lu.slogdet().unwrap();
        let (ws, wl) = want.slogdet().unwrap();
        assert_eq!(s, ws, "the sign");
        assert!(
            (l - wl).abs() <= 1e-10 * wl.abs().max(1.0),
            "{l} against {wl}"
        );
        let d = lu.determinant().unwrap();
        assert!((d - want.determinant().unwrap()).abs() <= 1e-10 * d.abs());
    }
    let c = unsymmetric::<c64>(n, &grid2(9).1, 0.1);
    let want = linalg::Lu::new(c.to_dense().as_ref(), on(&Exec::serial())).unwrap();
    let (s, l) = SparseLu::new(c.as_ref(), on(&Exec::serial()))
        .unwrap()
        .slogdet()
        .unwrap();
    let (ws, wl) = want.slogdet().unwrap();
    assert!((s - ws).norm() <= 1e-10 && (l - wl).abs() <= 1e-10 * wl.abs().max(1.0));
}

#[test]
fn refusals_name_what_is_wrong_and_change_nothing() {
    let (n, edges) = grid2(10);
    let a = unsymmetric::<f64>(n, &edges, 0.5);
    let serial = Exec::serial();
    let exec = on(&serial);
    // Not square.
    let wide = SparseColMat::<usize, f64>::try_new_from_triplets(3, 4, &[Triplet::new(0, 0, 1.0)])
        .unwrap();
    assert!(matches!(
        SymbolicLu::new(wide.symbolic()),
        Err(LinalgError::NotSquare {
            rows: 3,
            cols: 4,
            ..
        })
    ));
    // A row without entries: structurally singular, in A's numbering.
    let mut t: Vec<_> = (0..6)
        .map(|i| Triplet::new(i, i, 1.0))
        .filter(|e| e.row != 4)
        .collect();
    t.push(Triplet::new(3, 4, 2.0));
    let holed = SparseColMat::<usize, f64>::try_new_from_triplets(6, 6, &t).unwrap();
    let err = SparseLu::new(holed.as_ref(), exec).unwrap_err();
    assert!(
        matches!(
            err,
            LinalgError::StructurallySingular {
                op: "SparseLu::new",
                ..
            }
        ),
        "{err:?}"
    );
    // Another pattern, another order.
    let symbolic = SymbolicLu::new(a.symbolic()).unwrap();
    let other = unsymmetric::<f64>(n, &band(n, 2).1, 0.5);
    assert!(matches!(
        SparseLu::new_with_symbolic(&symbolic, other.as_ref(), exec),
        Err(LinalgError::PatternMismatch { .. })
    ));
    let small = unsymmetric::<f64>(50, &band(50, 2).1, 0.5);
    assert!(matches!(
        SparseLu::new_with_symbolic(&symbolic, small.as_ref(), exec),
        Err(LinalgError::ShapeMismatch {
            expected: 100,
            found: 50,
            ..
        })
    ));
    // A zero column: singular, the column named; A unchanged.
    let mut zeroed = a.clone();
    let before = a.clone();
    let j = 37;
    for v in zeroed.val_of_col_mut(j) {
        *v = 0.0;
    }
    for exec in [on(&Exec::serial()), &team(2)] {
        let err = SparseLu::new_with(&symbolic, zeroed.as_ref(), exec, &forced(true)).unwrap_err();
        assert_eq!(
            err,
            LinalgError::Singular {
                op: "SparseLu::new",
                index: j
            }
        );
    }
    // Not finite.
    let mut bad = a.clone();
    bad.val_mut()[5] = f64::NAN;
    assert!(matches!(
        SparseLu::new_with_symbolic(&symbolic, bad.as_ref(), exec),
        Err(LinalgError::NotFinite { .. })
    ));
    assert!(a.val() == before.val(), "A is only read");
    // A right-hand side of the wrong rows, unchanged.
    let lu = SparseLu::new_with_symbolic(&symbolic, a.as_ref(), exec).unwrap();
    let mut b = Mat::<f64>::ones(n + 1, 2);
    assert!(matches!(
        lu.solve_in_place(b.as_mut(), exec),
        Err(LinalgError::ShapeMismatch {
            expected: 100,
            found: 101,
            ..
        })
    ));
    assert!(b == Mat::<f64>::ones(n + 1, 2));
}

#[test]
fn empty_and_one_by_one() {
    let empty = SparseColMat::<usize, f64>::try_new_from_triplets(0, 0, &[]).unwrap();
    let lu = SparseLu::new(empty.as_ref(), on(&Exec::serial())).unwrap();
    assert_eq!(lu.determinant().unwrap(), 1.0);
    let one = SparseColMat::<usize, f64>::try_new_from_triplets(1, 1, &[Triplet::new(0, 0, -4.0)])
        .unwrap();
    let lu = SparseLu::new(one.as_ref(), on(&Exec::serial())).unwrap();
    assert_eq!(lu.determinant().unwrap(), -4.0);
    let x = lu
        .solve(Mat::<f64>::ones(1, 1), on(&Exec::serial()))
        .unwrap();
    assert_eq!(x[(0, 0)], -0.25);
}

#[test]
fn faer_solver_trait_solves_serially() {
    use faer::linalg::solvers::SolveCore;
    let (n, edges) = grid2(8);
    let a = unsymmetric::<c64>(n, &edges, 0.2);
    let lu = SparseLu::new(a.as_ref(), on(&team(2))).unwrap();
    let b = sample::mat::<c64>(n, 2, 0.4);
    let mut x = b.clone();
    lu.solve_in_place_with_conj(faer::Conj::No, x.as_mut());
    assert_solves("SolveCore", &a, &x, &b);
    let mut y = b.clone();
    lu.solve_transpose_in_place_with_conj(faer::Conj::Yes, y.as_mut());
    assert_solves("SolveCore adjoint", &transposed(&a, true), &y, &b);
}

#[test]
fn one_analysis_is_shared_by_threads_that_factor_at_once() {
    let (n, edges) = grid2(16);
    let symbolic = SymbolicLu::new(unsymmetric::<f64>(n, &edges, 0.2).symbolic()).unwrap();
    let team = team(2);
    let factors: Vec<SparseLu<f64>> = std::thread::scope(|s| {
        let handles: Vec<_> = [0.2, 0.5, 2.0]
            .map(|d| {
                let (symbolic, team) = (&symbolic, &team);
                let edges = &edges;
                s.spawn(move || {
                    let a = unsymmetric::<f64>(n, edges, d);
                    let serial = Exec::serial();
                    let exec = if d < 1.0 { on(team) } else { on(&serial) };
                    let lu = SparseLu::new_with(symbolic, a.as_ref(), exec, &forced(true));
                    lu.unwrap()
                })
            })
            .into_iter()
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // Each factor, solved on another thread than the one that made it.
    std::thread::scope(|s| {
        for (lu, d) in factors.iter().zip([0.2, 0.5, 2.0]) {
            s.spawn(move || {
                let a = unsymmetric::<f64>(n, &grid2(16).1, d);
                let b = sample::mat::<f64>(n, 2, d);
                let x = lu.solve(&b, on(&Exec::serial())).unwrap();
                assert_solves(&format!("diagonal {d}"), &a, &x, &b);
            });
        }
    });
}

/// `A`'s diagonal and a full first column: the columns' graph is a star around column 0.
pub(crate) fn arrow(m: usize, n: usize) -> SparseColMat<usize, f64> {
    let mut t: Vec<_> = (0..n)
        .map(|i| Triplet::new(i, i, 2.0 + i as f64 / n as f64))
        .collect();
    t.extend((1..m).map(|i| Triplet::new(i, 0, 1.0 / (1 + i) as f64)));
    t.extend((n..m).map(|i| Triplet::new(i, i % n, 0.5)));
    SparseColMat::try_new_from_triplets(m, n, &t).unwrap()
}

/// The column orderings (`SparseOrdering`): a custom order is the one used (column 0 first
/// fills `U`, last fills nothing), each ordering's factor solves serially and on a team of 2
/// with the same determinant, and a custom order of the wrong length is refused.
#[test]
fn every_ordering_is_used_and_solves() {
    let n = 60;
    let a = arrow(n, n);
    let fill = |first: bool| {
        let order = hub(n, first);
        SymbolicLu::new_ordered(a.symbolic(), SparseOrdering::Custom(order.as_ref()))
            .unwrap()
            .len_values()
    };
    assert!(fill(true) >= n * n / 2, "column 0 first: {}", fill(true));
    assert!(fill(false) <= 4 * n, "column 0 last: {}", fill(false));
    let short = order(vec![0]);
    assert_eq!(
        SymbolicLu::new_ordered(a.symbolic(), SparseOrdering::Custom(short.as_ref())).unwrap_err(),
        LinalgError::ShapeMismatch {
            op: "SymbolicLu::new_ordered",
            operand: "ordering",
            dim: linalg::Dim::Cols,
            expected: n,
            found: 1,
        }
    );

    let (n, edges) = grid3(8);
    let a = unsymmetric::<f64>(n, &edges, 0.05);
    let b = sample::mat::<f64>(n, 2, 0.4);
    let reversed = order((0..n).rev().collect());
    let team = team(2);
    let want = SparseLu::new(a.as_ref(), on(&Exec::serial()))
        .unwrap()
        .log_abs_det()
        .unwrap();
    for ordering in orderings(&reversed) {
        let symbolic = SymbolicLu::new_ordered(a.symbolic(), ordering).unwrap();
        for exec in [on(&Exec::serial()), on(&team)] {
            let lu = SparseLu::new_with(&symbolic, a.as_ref(), exec, &forced(true)).unwrap();
            let x = lu.solve(&b, exec).unwrap();
            assert_solves(&format!("{ordering:?}"), &a, &x, &b);
            let got = lu.log_abs_det().unwrap();
            assert!(
                (got - want).abs() <= 1e-10 * want.abs(),
                "{ordering:?}: {got} {want}"
            );
        }
    }
    // Dissection is METIS's order, not AMD's or COLAMD's under another name.
    #[cfg(feature = "metis")]
    {
        let nd = SymbolicLu::new_ordered(a.symbolic(), SparseOrdering::NestedDissection).unwrap();
        let amd = SymbolicLu::new(a.symbolic()).unwrap();
        assert_ne!(
            nd.col_perm().arrays().0,
            amd.col_perm().arrays().0,
            "dissection is not faer's own order"
        );
    }
}
