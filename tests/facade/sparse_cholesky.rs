//! The sparse Cholesky (`teamalg::linalg::SparseCholesky`): backward error on every executor
//! and scalar type, faer's bits serially, the same factor on every executor of one width and
//! to rounding across widths, the analysis reused, trees that are one chain and one with many
//! leaves, and every refusal; and the sparse `LDL^H` on the same analysis
//! (`teamalg::linalg::SparseLdlt`) of indefinite matrices.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::perm::Perm;
use faer::sparse::linalg::matmul::sparse_dense_matmul;
use faer::sparse::{SparseColMat, Triplet};
use faer::{Accum, Mat, Par, Side, c64};
use teamalg::gates::{Family, ParThreshold};
use teamalg::kernels::par::Executor;
use teamalg::linalg::{
    self, LinalgError, Options, SparseCholesky, SparseLdlt, SparseOrdering, SymbolicCholesky,
};
use teamalg::{Exec, Pool};

use super::sample::{self, Sample, every_executor, team};

/// A sparse self-adjoint matrix given by its lower triangle, and the whole matrix for
/// residuals.
struct Problem<T> {
    lower: SparseColMat<usize, T>,
    full: SparseColMat<usize, T>,
}

/// The problem of `edges` (`(i, j)` with `i > j`) on `n` nodes: each edge's entry from
/// `Sample`, the diagonal the sum of the row's magnitudes plus `shift` (positive definite for
/// `shift > 0`).
fn problem<T: Sample>(n: usize, edges: &[(usize, usize)], shift: f64) -> Problem<T> {
    signed(n, edges, shift, |_| false)
}

/// [`problem`] with the diagonal entries of the rows where `negative` holds negated: strictly
/// diagonally dominant, so its `LDL^H` without pivoting exists, and its inertia is the
/// diagonal's signs.
fn signed<T: Sample>(
    n: usize,
    edges: &[(usize, usize)],
    shift: f64,
    negative: impl Fn(usize) -> bool,
) -> Problem<T> {
    let mut diag = vec![shift; n];
    let (mut lower, mut full) = (Vec::new(), Vec::new());
    for (k, &(i, j)) in edges.iter().enumerate() {
        let v = T::sample(k % 97, k % 89, 0.3);
        let mag = T::err(v, faer::traits::math_utils::zero());
        diag[i] += mag;
        diag[j] += mag;
        lower.push(Triplet::new(i, j, v));
        full.push(Triplet::new(i, j, v));
        full.push(Triplet::new(j, i, faer::traits::math_utils::conj(&v)));
    }
    for (i, &d) in diag.iter().enumerate() {
        let d: T = faer::traits::math_utils::from_f64(if negative(i) { -d } else { d });
        lower.push(Triplet::new(i, i, d));
        full.push(Triplet::new(i, i, d));
    }
    Problem {
        lower: SparseColMat::try_new_from_triplets(n, n, &lower).unwrap(),
        full: SparseColMat::try_new_from_triplets(n, n, &full).unwrap(),
    }
}

/// The edges of a `k x k` grid's 5-point stencil.
pub(crate) fn grid2(k: usize) -> (usize, Vec<(usize, usize)>) {
    let mut e = Vec::new();
    for x in 0..k {
        for y in 0..k {
            let i = x * k + y;
            if x + 1 < k {
                e.push((i + k, i));
            }
            if y + 1 < k {
                e.push((i + 1, i));
            }
        }
    }
    (k * k, e)
}

/// The edges of a `k^3` grid's 7-point stencil.
pub(crate) fn grid3(k: usize) -> (usize, Vec<(usize, usize)>) {
    let mut e = Vec::new();
    let at = |x: usize, y: usize, z: usize| (x * k + y) * k + z;
    for x in 0..k {
        for y in 0..k {
            for z in 0..k {
                let i = at(x, y, z);
                if x + 1 < k {
                    e.push((at(x + 1, y, z), i));
                }
                if y + 1 < k {
                    e.push((at(x, y + 1, z), i));
                }
                if z + 1 < k {
                    e.push((at(x, y, z + 1), i));
                }
            }
        }
    }
    (k * k * k, e)
}

/// A band of `width` below the diagonal: its tree is one chain.
pub(crate) fn band(n: usize, width: usize) -> (usize, Vec<(usize, usize)>) {
    let e = (0..n)
        .flat_map(|j| (j + 1..(j + 1 + width).min(n)).map(move |i| (i, j)))
        .collect();
    (n, e)
}

/// Node 0 coupled to every other node: after ordering, `n - 1` leaves below one root.
pub(crate) fn star(n: usize) -> (usize, Vec<(usize, usize)>) {
    (n, (1..n).map(|i| (i, 0)).collect())
}

/// `||A x - b||_F <= C u n ||A||_F ||x||_F`.
fn assert_solves<T: Sample>(what: &str, p: &Problem<T>, x: &Mat<T>, b: &Mat<T>) {
    let mut r = b.clone();
    sparse_dense_matmul(
        r.as_mut(),
        Accum::Add,
        p.full.as_ref(),
        x.as_ref(),
        -T::one(),
        Par::Seq,
    );
    let norm_a = sample::norm(p.full.to_dense().as_ref());
    let n = p.full.nrows();
    let bound = sample::backward_bound::<T>(n, norm_a) * sample::norm(x.as_ref());
    let res = sample::norm(r.as_ref());
    assert!(res <= bound, "{what}: ||A x - b|| = {res:e} > {bound:e}");
}

/// Every executor as one type: the solvers' code is then compiled once per scalar type in
/// this test binary, not once per executor type.
pub(crate) fn on(exec: &dyn Executor) -> &dyn Executor {
    exec
}

fn forced(yes: bool) -> Options {
    let t = if yes {
        ParThreshold::Fixed(0)
    } else {
        ParThreshold::Derived
    };
    Options::new().threshold(Family::SparseCholesky, t)
}

fn solves_everywhere<T: Sample>() {
    for (n, edges) in [grid2(24), grid3(9), band(400, 3), star(300)] {
        let p = problem::<T>(n, &edges, 0.5);
        let symbolic = SymbolicCholesky::new(p.lower.symbolic(), Side::Lower).unwrap();
        let b = sample::mat::<T>(n, 3, 0.7);
        every_executor(|exec: &dyn Executor, force| {
            let chol = SparseCholesky::new_with(&symbolic, p.lower.as_ref(), exec, &forced(force))
                .unwrap();
            let x = chol.solve(&b, exec).unwrap();
            assert_solves(&format!("n {n}, forced {force}"), &p, &x, &b);
        });
    }
}

#[test]
fn solves_within_the_backward_bound_on_every_executor() {
    solves_everywhere::<f64>();
    solves_everywhere::<c64>();
}

/// faer's own numeric factorization of `p` with `symbolic`'s analysis.
fn faer_values<T: Sample>(symbolic: &SymbolicCholesky, p: &Problem<T>) -> Vec<T> {
    let sym = symbolic.as_faer();
    let mut values = vec![faer::traits::math_utils::zero::<T>(); sym.len_val()];
    let mut mem =
        MemBuffer::new(sym.factorize_numeric_llt_scratch::<T>(Par::Seq, Default::default()));
    sym.factorize_numeric_llt(
        &mut values,
        p.lower.as_ref(),
        Side::Lower,
        Default::default(),
        Par::Seq,
        MemStack::new(&mut mem),
        Default::default(),
    )
    .unwrap();
    values
}

/// The factor in `values`: the strict upper triangle of each diagonal block, which holds
/// whatever the dense kernel that factored the block left there, zeroed.
fn factor_of<T: Sample>(symbolic: &SymbolicCholesky, values: &[T]) -> Vec<T> {
    use faer::sparse::linalg::cholesky::SymbolicCholeskyRaw;
    let SymbolicCholeskyRaw::Supernodal(s) = symbolic.as_faer().raw() else {
        panic!("supernodal")
    };
    let cpv = s.col_ptr_for_val();
    let mut out = values.to_vec();
    for k in 0..s.n_supernodes() {
        let cols = s.supernode_end()[k] - s.supernode_begin()[k];
        let rows = cols + s.supernode(k).pattern().len();
        for j in 0..cols {
            for i in 0..j {
                out[cpv[k] + j * rows + i] = faer::traits::math_utils::zero();
            }
        }
    }
    out
}

#[test]
fn serial_is_faers_factor_and_one_width_gives_one_factor() {
    let (n, edges) = grid3(10);
    let p = problem::<f64>(n, &edges, 0.5);
    let symbolic = SymbolicCholesky::new(p.lower.symbolic(), Side::Lower).unwrap();
    let want = faer_values(&symbolic, &p);
    let serial =
        SparseCholesky::new_with_symbolic(&symbolic, p.lower.as_ref(), on(&Exec::serial()))
            .unwrap();
    assert!(serial.values() == &want[..], "serially: faer's bits");
    // Width 3 on every team executor: the subtrees' supernodes as faer makes them, the top's
    // chunks by the width alone. A plain token's helpers take more, smaller chunks of the
    // dense kernels (`Executor::chunks`), which round differently: to rounding there.
    let team = team(3);
    let pool = Pool::builder().threads(3).build().unwrap();
    let token = Exec::new(&pool, 3).unwrap();
    // A factor at width 3, and whether a region of it gave up (a loaded machine: the rest of
    // that call ran serially, which rounds differently).
    let at3 = |exec: &dyn Executor| {
        let (chol, seen) = teamalg::gates::trace::collect(|| {
            SparseCholesky::new_with(&symbolic, p.lower.as_ref(), exec, &forced(true)).unwrap()
        });
        let gave_up = seen
            .iter()
            .any(|d| d.reason == teamalg::gates::trace::Reason::GaveUp);
        (factor_of(&symbolic, chol.values()), gave_up)
    };
    // The reference call again when it gave up (a loaded machine), so that the comparisons run.
    let (on_team, team_gave_up) = (0..5)
        .map(|_| at3(on(&team)))
        .find(|(_, gave_up)| !gave_up)
        .unwrap_or_else(|| at3(on(&team)));
    let want = factor_of(&symbolic, &want);
    let same = |what: &str, (got, gave_up): (Vec<f64>, bool)| {
        if !gave_up && !team_gave_up {
            assert!(got == on_team, "{what}: not the team's bits");
        }
    };
    same("a team token", at3(&team.exec(3)));
    team.exec(3)
        .team(|t| same("a scoped team", at3(&t)))
        .unwrap();
    let top = want.iter().map(|x| x.abs()).fold(0.0, f64::max);
    for (what, got) in [("team", &on_team), ("plain token", &at3(&token).0)] {
        let off = got
            .iter()
            .zip(&want)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(
            off <= 1e-12 * top,
            "{what}, width 3: {off:e} from faer's factor"
        );
    }
}

#[test]
fn widths_three_four_and_eight_agree_to_rounding() {
    let (n, edges) = grid2(40);
    let p = problem::<c64>(n, &edges, 0.1);
    let symbolic = SymbolicCholesky::new(p.lower.symbolic(), Side::Lower).unwrap();
    let want = factor_of(&symbolic, &faer_values(&symbolic, &p));
    let top = want.iter().map(|x| x.norm()).fold(0.0, f64::max);
    let b = sample::mat::<c64>(n, 2, 0.2);
    for width in [2, 3, 4, 8] {
        let team = team(width);
        let chol = SparseCholesky::new_with(&symbolic, p.lower.as_ref(), on(&team), &forced(true))
            .unwrap();
        let off = factor_of(&symbolic, chol.values())
            .iter()
            .zip(&want)
            .map(|(x, y)| (x - y).norm())
            .fold(0.0, f64::max);
        assert!(
            off <= 1e-12 * top,
            "width {width}: {off:e} from faer's factor"
        );
        let x = chol.solve(&b, on(&team)).unwrap();
        assert_solves(&format!("width {width}"), &p, &x, &b);
    }
}

#[test]
fn one_analysis_serves_new_values() {
    let (n, edges) = grid2(20);
    let symbolic = {
        let p = problem::<f64>(n, &edges, 1.0);
        SymbolicCholesky::new(p.lower.symbolic(), Side::Lower).unwrap()
    };
    let team = team(2);
    for shift in [1.0, 0.01, 100.0] {
        let p = problem::<f64>(n, &edges, shift);
        let chol = SparseCholesky::new_with(&symbolic, p.lower.as_ref(), on(&team), &forced(true))
            .unwrap();
        let b = sample::mat::<f64>(n, 1, shift);
        let mut x = b.clone();
        chol.solve_in_place(x.as_mut(), on(&team)).unwrap();
        assert_solves(&format!("shift {shift}"), &p, &x, &b);
        // The determinant against the dense one's.
        let dense = linalg::Cholesky::new(&p.full.to_dense(), on(&Exec::serial())).unwrap();
        let (want, got) = (dense.slogdet().unwrap().1, chol.slogdet().unwrap().1);
        assert!((want - got).abs() <= 1e-10 * want.abs(), "{want} {got}");
    }
}

#[test]
fn many_right_hand_sides_spread_with_the_serial_bits() {
    let (n, edges) = grid2(30);
    let p = problem::<f64>(n, &edges, 0.5);
    let b = sample::mat::<f64>(n, 40, 0.4);
    let serial = SparseCholesky::new(p.lower.as_ref(), Side::Lower, on(&Exec::serial()))
        .unwrap()
        .solve(&b, on(&Exec::serial()))
        .unwrap();
    let team = team(3);
    let symbolic = SymbolicCholesky::new(p.lower.symbolic(), Side::Lower).unwrap();
    let chol =
        SparseCholesky::new_with(&symbolic, p.lower.as_ref(), on(&team), &forced(true)).unwrap();
    let serial_chol =
        SparseCholesky::new_with_symbolic(&symbolic, p.lower.as_ref(), on(&Exec::serial()))
            .unwrap();
    let spread = serial_chol.solve(&b, on(&team)).unwrap();
    assert!(
        spread == serial,
        "the columns' results do not depend on who solves them"
    );
    assert_solves("spread", &p, &chol.solve(&b, on(&team)).unwrap(), &b);
}

#[test]
fn an_indefinite_column_is_named_on_every_executor() {
    let (n, edges) = grid2(20);
    let p = problem::<f64>(n, &edges, 0.5);
    let bad_col = 137;
    let mut t: Vec<Triplet<usize, usize, f64>> = Vec::new();
    for j in 0..n {
        for (i, v) in p.lower.row_idx_of_col(j).zip(p.lower.val_of_col(j)) {
            let v = if i == j && j == bad_col { -100.0 } else { *v };
            t.push(Triplet::new(i, j, v));
        }
    }
    let bad = SparseColMat::try_new_from_triplets(n, n, &t).unwrap();
    let symbolic = SymbolicCholesky::new(bad.symbolic(), Side::Lower).unwrap();
    every_executor(|exec: &dyn Executor, force| {
        let e = SparseCholesky::new_with(&symbolic, bad.as_ref(), exec, &forced(force));
        assert_eq!(
            e.unwrap_err(),
            LinalgError::NotPositiveDefinite {
                op: "SparseCholesky::new",
                index: bad_col
            }
        );
    });
}

#[test]
fn refusals_name_the_input() {
    let (n, edges) = grid2(6);
    let p = problem::<f64>(n, &edges, 0.5);
    let symbolic = SymbolicCholesky::new(p.lower.symbolic(), Side::Lower).unwrap();
    let serial = Exec::serial();
    let exec = on(&serial);
    // Not square.
    let wide = SparseColMat::<usize, f64>::try_new_from_triplets(3, 4, &[Triplet::new(0, 0, 1.0)])
        .unwrap();
    assert!(matches!(
        SymbolicCholesky::new(wide.symbolic(), Side::Lower),
        Err(LinalgError::NotSquare {
            rows: 3,
            cols: 4,
            ..
        })
    ));
    assert!(matches!(
        SparseCholesky::new_with_symbolic(&symbolic, wide.as_ref(), exec),
        Err(LinalgError::NotSquare { .. })
    ));
    // Another order.
    let (m, e) = grid2(5);
    let small = problem::<f64>(m, &e, 0.5);
    assert!(matches!(
        SparseCholesky::new_with_symbolic(&symbolic, small.lower.as_ref(), exec),
        Err(LinalgError::ShapeMismatch {
            expected: 36,
            found: 25,
            ..
        })
    ));
    // Another pattern: one more entry in column 2.
    let mut t: Vec<Triplet<usize, usize, f64>> = Vec::new();
    for j in 0..n {
        for (i, v) in p.lower.row_idx_of_col(j).zip(p.lower.val_of_col(j)) {
            t.push(Triplet::new(i, j, *v));
        }
    }
    t.push(Triplet::new(30, 2, 0.01));
    let other = SparseColMat::try_new_from_triplets(n, n, &t).unwrap();
    assert_eq!(
        SparseCholesky::new_with_symbolic(&symbolic, other.as_ref(), exec).unwrap_err(),
        LinalgError::PatternMismatch {
            op: "SparseCholesky::new",
            col: 2
        }
    );
    // A non-finite value.
    let mut nan = p.lower.clone();
    let at = nan.as_ref().symbolic().col_ptr()[4];
    nan.val_mut()[at] = f64::NAN;
    assert!(matches!(
        SparseCholesky::new_with_symbolic(&symbolic, nan.as_ref(), exec),
        Err(LinalgError::NotFinite { col: 4, .. })
    ));
    // A right-hand side of another height, and one with a NaN: `b` is kept.
    let chol = SparseCholesky::new_with_symbolic(&symbolic, p.lower.as_ref(), exec).unwrap();
    assert!(matches!(
        chol.solve(Mat::<f64>::ones(5, 1), exec),
        Err(LinalgError::ShapeMismatch {
            expected: 36,
            found: 5,
            ..
        })
    ));
    let mut b = Mat::<f64>::ones(n, 1);
    b[(3, 0)] = f64::NAN;
    let kept = b.clone();
    assert!(matches!(
        chol.solve_in_place(b.as_mut(), exec),
        Err(LinalgError::NotFinite { row: 3, .. })
    ));
    assert!(b[(0, 0)] == kept[(0, 0)] && b[(3, 0)].is_nan());
    // Too little scratch.
    let mut mem = MemBuffer::new(faer::dyn_stack::StackReq::new::<u8>(16));
    assert!(matches!(
        SparseCholesky::new_with_scratch(
            &symbolic,
            p.lower.as_ref(),
            exec,
            &Options::new(),
            MemStack::new(&mut mem)
        ),
        Err(LinalgError::ScratchTooSmall { .. })
    ));
    // The empty matrix.
    let empty = SparseColMat::<usize, f64>::try_new_from_triplets(0, 0, &[]).unwrap();
    let chol = SparseCholesky::new(empty.as_ref(), Side::Lower, exec).unwrap();
    assert_eq!(
        chol.solve(Mat::<f64>::zeros(0, 2), exec).unwrap().nrows(),
        0
    );
    assert_eq!(chol.determinant().unwrap(), 1.0);
}

#[test]
fn other_index_types_and_the_upper_triangle() {
    let (n, edges) = grid2(12);
    let p = problem::<f64>(n, &edges, 0.5);
    let upper = p.lower.as_ref().adjoint().to_col_major().unwrap();
    let mut t32 = Vec::new();
    for j in 0..n {
        for (i, v) in upper.row_idx_of_col(j).zip(upper.val_of_col(j)) {
            t32.push(Triplet::new(i as u32, j as u32, *v));
        }
    }
    let upper32 = SparseColMat::<u32, f64>::try_new_from_triplets(n, n, &t32).unwrap();
    let team = team(2);
    let chol = SparseCholesky::new(upper32.as_ref(), Side::Upper, on(&team)).unwrap();
    let b = sample::mat::<f64>(n, 1, 0.9);
    assert_solves("u32, upper", &p, &chol.solve(&b, on(&team)).unwrap(), &b);
}

/// The whole call asks the gate once: a 3D grid of 12^3 (about 1 ms serially, nothing gained
/// two wide) stays serial, a 2D grid of 100^2 (about 5 ms) goes two wide unless the machine is
/// loaded.
#[test]
fn the_gate_keeps_a_small_factorization_serial() {
    use teamalg::gates::trace;
    let team = team(2);
    let decide = |n: usize, edges: &[(usize, usize)]| {
        let p = problem::<f64>(n, edges, 0.5);
        let symbolic = SymbolicCholesky::new(p.lower.symbolic(), Side::Lower).unwrap();
        let (_, seen) = trace::collect(|| {
            SparseCholesky::new_with_symbolic(&symbolic, p.lower.as_ref(), on(&team)).unwrap()
        });
        seen.iter()
            .find(|d| d.site == "sparse_cholesky")
            .expect("a sparse_cholesky decision")
            .clone()
    };
    let (n, edges) = grid3(12);
    let small = decide(n, &edges);
    assert_eq!(small.width, 1, "{small:?}");
    let (n, edges) = grid2(100);
    let large = decide(n, &edges);
    let loaded = match large.reason {
        trace::Reason::Late | trace::Reason::Occupied => true,
        trace::Reason::WakeNotPaid => !large.late.is_zero(),
        _ => false,
    };
    assert_eq!(large.width, if loaded { 1 } else { 2 }, "{large:?}");
}

/// With two columns that are not positive definite, the one named is the one a serial
/// factorization meets first, on every executor: one in a subtree and one in the top, or both
/// in subtrees.
#[test]
fn the_first_failure_in_elimination_order_is_named() {
    let (n, edges) = grid2(30);
    let p = problem::<f64>(n, &edges, 0.5);
    let symbolic = SymbolicCholesky::new(p.lower.symbolic(), Side::Lower).unwrap();
    let order = symbolic.perm().arrays().0.to_vec();
    // Pairs of columns at spread positions of the elimination order: in one subtree, in two,
    // in a subtree and the top (before it, or after it in the postorder), in the top.
    let at = [
        5,
        n / 4,
        n / 3,
        n / 2,
        2 * n / 3,
        3 * n / 4,
        n - 80,
        n - 40,
        n - 20,
        n - 1,
    ];
    let pairs = at
        .iter()
        .flat_map(|&x| at.iter().map(move |&y| (x, y)))
        .filter(|(x, y)| x < y)
        .map(|(x, y)| (order[x], order[y]));
    for (first, second) in pairs {
        let mut t: Vec<Triplet<usize, usize, f64>> = Vec::new();
        for j in 0..n {
            for (i, v) in p.lower.row_idx_of_col(j).zip(p.lower.val_of_col(j)) {
                let bad = i == j && (j == first || j == second);
                t.push(Triplet::new(i, j, if bad { -100.0 } else { *v }));
            }
        }
        let bad = SparseColMat::try_new_from_triplets(n, n, &t).unwrap();
        let want = SparseCholesky::new_with_symbolic(&symbolic, bad.as_ref(), on(&Exec::serial()))
            .unwrap_err();
        every_executor(|exec: &dyn Executor, force| {
            let got = SparseCholesky::new_with(&symbolic, bad.as_ref(), exec, &forced(force));
            assert_eq!(
                got.unwrap_err(),
                want,
                "columns {first} and {second}, forced {force}"
            );
        });
    }
}

/// Input faer allows besides a compressed triangle: both triangles stored (the other one is
/// ignored), and a matrix with room left in its columns (`col_nnz`).
#[test]
fn both_triangles_and_uncompressed_columns() {
    let (n, edges) = grid2(15);
    let p = problem::<c64>(n, &edges, 0.5);
    let team = team(2);
    let b = sample::mat::<c64>(n, 2, 0.6);
    // The whole matrix, read through its lower triangle; a NaN above the diagonal is not
    // read, so not refused.
    let mut full = p.full.clone();
    let (col_ptr, row_idx) = (
        full.symbolic().col_ptr().to_vec(),
        full.symbolic().row_idx().to_vec(),
    );
    let above = (col_ptr[7]..col_ptr[8]).find(|&k| row_idx[k] < 7).unwrap();
    full.val_mut()[above] = c64::new(f64::NAN, 0.0);
    let chol = SparseCholesky::new(full.as_ref(), Side::Lower, on(&team)).unwrap();
    assert_solves(
        "both triangles",
        &p,
        &chol.solve(&b, on(&team)).unwrap(),
        &b,
    );
    // The lower triangle with two spare slots after each column.
    let lower = p.lower.as_ref();
    let (mut ptr, mut idx, mut val, mut nnz) = (vec![0usize], Vec::new(), Vec::new(), Vec::new());
    for j in 0..n {
        idx.extend(lower.row_idx_of_col(j));
        val.extend(lower.val_of_col(j).iter().copied());
        nnz.push(lower.row_idx_of_col_raw(j).len());
        idx.extend([0, 0]);
        val.extend([c64::new(9.0, 9.0); 2]);
        ptr.push(idx.len());
    }
    let sym = faer::sparse::SymbolicSparseColMat::new_checked(n, n, ptr, Some(nnz), idx);
    let spare = SparseColMat::new(sym, val);
    let symbolic = SymbolicCholesky::new(spare.symbolic(), Side::Lower).unwrap();
    let chol =
        SparseCholesky::new_with(&symbolic, spare.as_ref(), on(&team), &forced(true)).unwrap();
    assert_solves("spare slots", &p, &chol.solve(&b, on(&team)).unwrap(), &b);
    // The transpose solve: conj(A) x = b.
    let xt = chol.solve_transpose(&b, on(&team)).unwrap();
    let conj_p = Problem {
        lower: p.lower.clone(),
        full: SparseColMat::new(
            p.full.symbolic().to_owned().unwrap(),
            p.full.val().iter().map(|v| v.conj()).collect(),
        ),
    };
    assert_solves("transpose", &conj_p, &xt, &b);
    // The determinant of a Hermitian matrix is real and positive: against the dense one's.
    let dense = linalg::Cholesky::new(&p.full.to_dense(), on(&Exec::serial())).unwrap();
    let (want, got) = (dense.log_abs_det().unwrap(), chol.log_abs_det().unwrap());
    assert!((want - got).abs() <= 1e-10 * want.abs(), "{want} {got}");
    // faer's solver trait on the factor.
    use faer::linalg::solvers::SolveCore;
    let mut x = b.clone();
    chol.solve_in_place_with_conj(faer::Conj::No, x.as_mut());
    assert_solves("faer's trait", &p, &x, &b);
}

fn ldlt_solves_everywhere<T: Sample>() {
    for (n, edges) in [grid2(24), grid3(9), band(300, 3)] {
        let p = signed::<T>(n, &edges, 0.5, |i| i % 3 == 0);
        let symbolic = SymbolicCholesky::new(p.lower.symbolic(), Side::Lower).unwrap();
        let b = sample::mat::<T>(n, 3, 0.8);
        every_executor(|exec: &dyn Executor, force| {
            let ldlt =
                SparseLdlt::new_with(&symbolic, p.lower.as_ref(), exec, &forced(force)).unwrap();
            let x = ldlt.solve(&b, exec).unwrap();
            assert_solves(&format!("LDL^H, n {n}, forced {force}"), &p, &x, &b);
            let inertia = ldlt.inertia();
            assert_eq!(
                (inertia.negative, inertia.positive, inertia.zero),
                (n.div_ceil(3), n - n.div_ceil(3), 0),
                "n {n}"
            );
        });
    }
}

#[test]
fn ldlt_solves_an_indefinite_matrix_on_every_executor() {
    ldlt_solves_everywhere::<f64>();
    ldlt_solves_everywhere::<c64>();
}

#[test]
fn ldlt_is_faers_serially_and_agrees_across_widths() {
    let (n, edges) = grid2(40);
    let p = signed::<c64>(n, &edges, 0.2, |i| i % 5 == 1);
    let symbolic = SymbolicCholesky::new(p.lower.symbolic(), Side::Lower).unwrap();
    let sym = symbolic.as_faer();
    let mut want = vec![c64::new(0.0, 0.0); sym.len_val()];
    let mut mem =
        MemBuffer::new(sym.factorize_numeric_ldlt_scratch::<c64>(Par::Seq, Default::default()));
    sym.factorize_numeric_ldlt(
        &mut want,
        p.lower.as_ref(),
        Side::Lower,
        Default::default(),
        Par::Seq,
        MemStack::new(&mut mem),
        Default::default(),
    )
    .unwrap();
    let serial =
        SparseLdlt::new_with_symbolic(&symbolic, p.lower.as_ref(), on(&Exec::serial())).unwrap();
    assert!(serial.values() == &want[..], "serially: faer's bits");
    let top = want.iter().map(|x| x.norm()).fold(0.0, f64::max);
    let dense = linalg::Ldlt::new(&p.full.to_dense(), on(&Exec::serial())).unwrap();
    for width in [2, 3, 8] {
        let team = team(width);
        let ldlt =
            SparseLdlt::new_with(&symbolic, p.lower.as_ref(), on(&team), &forced(true)).unwrap();
        let off = ldlt
            .values()
            .iter()
            .zip(&want)
            .map(|(x, y)| (x - y).norm())
            .fold(0.0, f64::max);
        assert!(
            off <= 1e-12 * top,
            "width {width}: {off:e} from faer's factor"
        );
        let (want_det, got_det) = (dense.slogdet().unwrap(), ldlt.slogdet().unwrap());
        assert!((want_det.1 - got_det.1).abs() <= 1e-10 * want_det.1.abs());
        assert!(
            (want_det.0 - got_det.0).norm() < 1e-12,
            "the determinant's sign"
        );
    }
}

#[test]
fn ldlt_names_a_zero_pivot_on_every_executor() {
    // A grid with one node cut off and its diagonal zero: the pivot of its column is zero.
    let (n, edges) = grid2(20);
    let cut = 77;
    let edges: Vec<_> = edges
        .into_iter()
        .filter(|&(i, j)| i != cut && j != cut)
        .collect();
    let p = signed::<f64>(n, &edges, 0.5, |i| i % 2 == 0);
    let mut t: Vec<Triplet<usize, usize, f64>> = Vec::new();
    for j in 0..n {
        for (i, v) in p.lower.row_idx_of_col(j).zip(p.lower.val_of_col(j)) {
            t.push(Triplet::new(
                i,
                j,
                if i == cut && j == cut { 0.0 } else { *v },
            ));
        }
    }
    let bad = SparseColMat::try_new_from_triplets(n, n, &t).unwrap();
    let symbolic = SymbolicCholesky::new(bad.symbolic(), Side::Lower).unwrap();
    every_executor(|exec: &dyn Executor, force| {
        let e = SparseLdlt::new_with(&symbolic, bad.as_ref(), exec, &forced(force));
        assert_eq!(
            e.unwrap_err(),
            LinalgError::Singular {
                op: "SparseLdlt::new",
                index: cut
            }
        );
    });
}

/// One analysis shared by threads that factor at once, each on its own team, and the factors
/// moved to other threads to be solved with: the analysis is reference-counted and `Sync`.
#[test]
fn one_analysis_shared_by_threads() {
    let (n, edges) = grid2(20);
    let p = problem::<f64>(n, &edges, 0.5);
    let symbolic = SymbolicCholesky::new(p.lower.symbolic(), Side::Lower).unwrap();
    let b = sample::mat::<f64>(n, 1, 0.3);
    let factors: Vec<SparseCholesky<f64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let symbolic = symbolic.clone();
                let lower = p.lower.as_ref();
                s.spawn(move || {
                    let team = team(2);
                    SparseCholesky::new_with(&symbolic, lower, on(&team), &forced(true)).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    drop(symbolic);
    std::thread::scope(|s| {
        for chol in &factors {
            let (p, b) = (&p, &b);
            s.spawn(move || {
                let x = chol.solve(b, on(&Exec::serial())).unwrap();
                assert_solves("shared analysis", p, &x, b);
            });
        }
    });
}

/// The permutation whose forward array is `fwd`.
pub(crate) fn order(fwd: Vec<usize>) -> Perm<usize> {
    let n = fwd.len();
    let mut inv = vec![0usize; n];
    for (k, &i) in fwd.iter().enumerate() {
        inv[i] = k;
    }
    Perm::new_checked(fwd.into_boxed_slice(), inv.into_boxed_slice(), n)
}

/// The order of `n` vertices with vertex 0 (a star's hub) first or last.
pub(crate) fn hub(n: usize, first: bool) -> Perm<usize> {
    order(if first {
        (0..n).collect()
    } else {
        (1..n).chain([0]).collect()
    })
}

/// Every ordering, the custom one `custom`.
pub(crate) fn orderings(custom: &Perm<usize>) -> Vec<SparseOrdering<'_>> {
    vec![
        SparseOrdering::Amd,
        SparseOrdering::Custom(custom.as_ref()),
        #[cfg(feature = "metis")]
        SparseOrdering::NestedDissection,
    ]
}

/// The orderings a user can pick (`SparseOrdering`): a custom order is the one the analysis
/// uses (the star's hub first fills the whole factor, its hub last fills nothing), each
/// ordering's factor solves serially and on a team of 2 with the same determinant, the
/// `LDL^H` on the same analysis too, and a custom order of the wrong length is refused.
#[test]
fn every_ordering_is_used_and_solves() {
    let (n, edges) = star(60);
    let p = problem::<f64>(n, &edges, 1.0);
    let fill = |first: bool| {
        let order = hub(n, first);
        let ordering = SparseOrdering::Custom(order.as_ref());
        SymbolicCholesky::new_ordered(p.lower.symbolic(), Side::Lower, ordering)
            .unwrap()
            .len_values()
    };
    assert!(fill(true) >= n * (n + 1) / 2, "hub first: {}", fill(true));
    assert!(fill(false) <= 3 * n, "hub last: {}", fill(false));
    let short = order(vec![1, 0]);
    let ordering = SparseOrdering::Custom(short.as_ref());
    assert_eq!(
        SymbolicCholesky::new_ordered(p.lower.symbolic(), Side::Lower, ordering).unwrap_err(),
        LinalgError::ShapeMismatch {
            op: "SymbolicCholesky::new_ordered",
            operand: "ordering",
            dim: linalg::Dim::Cols,
            expected: n,
            found: 2,
        }
    );

    let (n, edges) = grid3(8);
    let p = problem::<f64>(n, &edges, 0.5);
    let mixed = signed::<f64>(n, &edges, 0.5, |i| i % 3 == 0);
    let b = sample::mat::<f64>(n, 2, 0.4);
    let reversed = order((0..n).rev().collect());
    let det = |symbolic: &SymbolicCholesky, exec: &dyn Executor| {
        let chol =
            SparseCholesky::new_with(symbolic, p.lower.as_ref(), exec, &forced(true)).unwrap();
        let x = chol.solve(&b, exec).unwrap();
        assert_solves("Cholesky", &p, &x, &b);
        let ldlt =
            SparseLdlt::new_with(symbolic, mixed.lower.as_ref(), exec, &forced(true)).unwrap();
        let x = ldlt.solve(&b, exec).unwrap();
        assert_solves("LDL^H", &mixed, &x, &b);
        (chol.log_abs_det().unwrap(), ldlt.log_abs_det().unwrap())
    };
    let team = team(2);
    let amd = SymbolicCholesky::new(p.lower.symbolic(), Side::Lower).unwrap();
    let (want, want_ldlt) = det(&amd, on(&Exec::serial()));
    for ordering in orderings(&reversed) {
        let symbolic =
            SymbolicCholesky::new_ordered(p.lower.symbolic(), Side::Lower, ordering).unwrap();
        for exec in [on(&Exec::serial()), on(&team)] {
            let (got, got_ldlt) = det(&symbolic, exec);
            assert!(
                (got - want).abs() <= 1e-10 * want.abs(),
                "{ordering:?}: {got} {want}"
            );
            assert!(
                (got_ldlt - want_ldlt).abs() <= 1e-10 * want_ldlt.abs(),
                "{ordering:?}: {got_ldlt} {want_ldlt}"
            );
        }
    }
    // Dissection is METIS's order, not AMD's or COLAMD's under another name.
    #[cfg(feature = "metis")]
    {
        let nd = SymbolicCholesky::new_ordered(
            p.lower.symbolic(),
            Side::Lower,
            SparseOrdering::NestedDissection,
        )
        .unwrap();
        assert_ne!(
            nd.perm().arrays().0,
            amd.perm().arrays().0,
            "dissection is not faer's own order"
        );
    }
}

/// Every ordering on the empty matrix and on one entry: analyses that factor and solve.
#[test]
fn every_ordering_takes_empty_and_one_entry() {
    for n in [0usize, 1] {
        let a = SparseColMat::<usize, f64>::try_new_from_triplets(
            n,
            n,
            &(0..n).map(|i| Triplet::new(i, i, 2.0)).collect::<Vec<_>>(),
        )
        .unwrap();
        let identity = order((0..n).collect());
        let b = Mat::<f64>::ones(n, 1);
        for ordering in orderings(&identity) {
            let exec = Exec::serial();
            let symbolic =
                SymbolicCholesky::new_ordered(a.symbolic(), Side::Lower, ordering).unwrap();
            let chol = SparseCholesky::new_with_symbolic(&symbolic, a.as_ref(), on(&exec)).unwrap();
            let x = chol.solve(&b, on(&exec)).unwrap();
            assert!(x.nrows() == n && (n == 0 || (x[(0, 0)] - 0.5).abs() < 1e-15));
            let lu = linalg::SymbolicLu::new_ordered(a.symbolic(), ordering).unwrap();
            let x = linalg::SparseLu::new_with_symbolic(&lu, a.as_ref(), on(&exec))
                .unwrap()
                .solve(&b, on(&exec))
                .unwrap();
            assert!(x.nrows() == n && (n == 0 || (x[(0, 0)] - 0.5).abs() < 1e-15));
            let qr = linalg::SymbolicQr::new_ordered(a.symbolic(), ordering).unwrap();
            let x = linalg::SparseQr::new_with_symbolic(&qr, a.as_ref(), on(&exec))
                .unwrap()
                .lstsq(&b, on(&exec))
                .unwrap();
            assert!(x.nrows() == n && (n == 0 || (x[(0, 0)] - 0.5).abs() < 1e-15));
        }
    }
}
