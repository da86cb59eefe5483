//! Sparse times dense (`teamalg::kernels::sparse`, `teamalg::linalg::sparse_dense_matmul`):
//! bitwise equal to faer's serial product on every executor (each column of `C` is computed as
//! faer computes it, whoever computes it), f64 and c64, edge shapes, unsorted row indices,
//! conjugated operands, and every user error with the output kept.

use faer::sparse::linalg::matmul::sparse_dense_matmul as faer_sparse_dense;
use faer::sparse::{SparseColMat, SymbolicSparseColMat};
use faer::{Accum, Mat, Par, c64};
use teamalg::Exec;
use teamalg::gates::ParThreshold;
use teamalg::kernels::par::Executor;
use teamalg::kernels::sparse::{SparseParams, sparse_dense_matmul};
use teamalg::linalg::{self, Dim, LinalgError};

use super::sample;
use sample::{Sample, every_executor, mat, val};

/// An `m x k` sparse matrix with about `per_col` entries per column at reproducible rows
/// (duplicates merged), values from `Sample`.
fn sparse<T: Sample>(m: usize, k: usize, per_col: usize, seed: f64) -> SparseColMat<usize, T> {
    let mut t = Vec::new();
    for j in 0..k {
        for e in 0..per_col.min(m) {
            let i = ((val(e, j, seed) + 1.0) * 0.5 * m as f64) as usize % m.max(1);
            t.push(faer::sparse::Triplet::new(
                i,
                j,
                T::sample(i, j, seed + 1.0),
            ));
        }
    }
    SparseColMat::try_new_from_triplets(m, k, &t).unwrap()
}

fn check<T: Sample>(exec: &dyn Executor, forced: bool) {
    let threshold = forced.then_some(ParThreshold::Fixed(0));
    for (m, k, n, per_col) in [
        (0, 0, 0, 1),
        (5, 0, 3, 1),
        (0, 4, 2, 1),
        (1, 1, 1, 1),
        (60, 40, 1, 3),
        (200, 150, 37, 5),
        (90, 300, 64, 12),
    ] {
        let a = sparse::<T>(m, k, per_col, 0.3);
        let b = mat::<T>(k, n, 0.7);
        for accum in [Accum::Replace, Accum::Add] {
            let mut want = mat::<T>(m, n, 0.9);
            let mut got = want.clone();
            let alpha = T::sample(3, 4, 0.5);
            faer_sparse_dense(
                want.as_mut(),
                accum,
                a.as_ref(),
                b.as_ref(),
                alpha,
                Par::Seq,
            );
            let p = SparseParams { threshold };
            sparse_dense_matmul(got.as_mut(), accum, a.as_ref(), b.as_ref(), alpha, &exec, p);
            assert_eq!(got, want, "{m}x{k} * {k}x{n}, {accum:?}, forced {forced}");
        }
    }
}

#[test]
fn equal_to_faer_serial_on_every_executor() {
    let all = |exec: &dyn Executor, forced: bool| {
        check::<f64>(exec, forced);
        check::<c64>(exec, forced);
    };
    every_executor(all);
}

#[test]
fn unsorted_rows_and_conjugated_operands() {
    // Column 0 lists row 2 before row 0.
    let symbolic = SymbolicSparseColMat::<usize>::new_unsorted_checked(
        3,
        2,
        vec![0, 2, 3],
        None,
        vec![2, 0, 1],
    );
    let a = SparseColMat::<usize, c64>::new(
        symbolic,
        vec![c64::new(1.0, 2.0), c64::new(3.0, -1.0), c64::new(0.5, 0.5)],
    );
    let b = mat::<c64>(2, 4, 0.2);
    let team = sample::team(2);
    let forced = SparseParams {
        threshold: Some(ParThreshold::Fixed(0)),
    };
    let (mut want, mut got) = (Mat::<c64>::zeros(3, 4), Mat::<c64>::zeros(3, 4));
    let one = c64::new(1.0, 0.0);
    faer_sparse_dense(
        want.as_mut(),
        Accum::Replace,
        a.as_ref(),
        b.as_ref(),
        one,
        Par::Seq,
    );
    sparse_dense_matmul(
        got.as_mut(),
        Accum::Replace,
        a.as_ref(),
        b.as_ref(),
        one,
        &team,
        forced,
    );
    assert_eq!(got, want);
    // conj(A) conj(B) = conj(A B).
    linalg::sparse_dense_matmul(
        &mut got,
        Accum::Replace,
        a.as_ref().conjugate(),
        b.conjugate(),
        one,
        &team,
    )
    .unwrap();
    let conj_want = Mat::<c64>::from_fn(3, 4, |i, j| want[(i, j)].conj());
    assert!((&got - &conj_want).norm_max() < 1e-14);
}

#[test]
fn the_facade_refuses_bad_input_and_writes_nothing() {
    let ex = Exec::serial();
    let a = sparse::<f64>(6, 5, 2, 0.1);
    let b = mat::<f64>(5, 3, 0.2);
    let mut c = Mat::<f64>::ones(6, 3);
    let keep = c.clone();
    let short = mat::<f64>(4, 3, 0.2);
    assert_eq!(
        linalg::sparse_dense_matmul(&mut c, Accum::Replace, a.as_ref(), &short, 1.0, &ex),
        Err(LinalgError::ShapeMismatch {
            op: "sparse_dense_matmul",
            operand: "B",
            dim: Dim::Rows,
            expected: 5,
            found: 4
        })
    );
    let mut bad_a = a.clone();
    let (j, p) = (3, 0);
    let row = a.as_ref().row_idx_of_col_raw(j)[p];
    bad_a.val_of_col_mut(j)[p] = f64::NAN;
    let err = linalg::sparse_dense_matmul(&mut c, Accum::Replace, bad_a.as_ref(), &b, 1.0, &ex);
    assert_eq!(
        err,
        Err(LinalgError::NotFinite {
            op: "sparse_dense_matmul",
            operand: "A",
            row,
            col: j
        })
    );
    let mut bad_b = b.clone();
    bad_b[(4, 2)] = f64::INFINITY;
    let err = linalg::sparse_dense_matmul(&mut c, Accum::Add, a.as_ref(), &bad_b, 1.0, &ex);
    assert!(
        matches!(
            err,
            Err(LinalgError::NotFinite {
                operand: "B",
                row: 4,
                col: 2,
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(c, keep, "refused calls wrote nothing");
    // Unchecked, the NaN goes through.
    let unchecked = linalg::Options::new().check_finite(false);
    linalg::sparse_dense_matmul_with(
        &mut c,
        Accum::Replace,
        bad_a.as_ref(),
        &b,
        1.0,
        &ex,
        &unchecked,
    )
    .unwrap();
    assert!(c[(row, 0)].is_nan());
}

/// The region goes through the gate with its own family, and a forced one runs two wide.
#[test]
fn the_region_is_gated_as_a_sparse_product() {
    use teamalg::gates::Family;
    use teamalg::gates::trace;
    let team = sample::team(2);
    let a = sparse::<f64>(300, 300, 8, 0.4);
    let b = mat::<f64>(300, 16, 0.5);
    let mut c = Mat::<f64>::zeros(300, 16);
    let forced = SparseParams {
        threshold: Some(ParThreshold::Fixed(0)),
    };
    let ((), why) = trace::collect(|| {
        sparse_dense_matmul(
            c.as_mut(),
            Accum::Replace,
            a.as_ref(),
            b.as_ref(),
            1.0,
            &team,
            forced,
        )
    });
    assert_eq!(why.len(), 1, "{why:?}");
    assert_eq!(
        (why[0].family, why[0].width),
        (Family::SparseProduct, 2),
        "{why:?}"
    );
    assert_eq!(why[0].units, a.compute_nnz() as f64 * 16.0);
}

/// Sparse times sparse: the same structure and values as faer's serial product, bitwise, on
/// every executor, forced and gated, with chunks of uneven cost.
#[test]
fn sparse_times_sparse_equals_faer_serial_on_every_executor() {
    use faer::sparse::linalg::matmul::sparse_sparse_matmul as faer_sparse_sparse;
    use teamalg::kernels::sparse::sparse_sparse_matmul;
    fn same<T: Sample>(exec: &dyn Executor, forced: bool) {
        let threshold = forced.then_some(ParThreshold::Fixed(0));
        for (m, k, n, pa, pb) in [
            (0, 0, 0, 1, 1),
            (4, 0, 3, 1, 1),
            (7, 5, 0, 2, 2),
            (1, 1, 1, 1, 1),
            (120, 80, 90, 4, 3),
            (300, 200, 150, 2, 9),
        ] {
            let a = sparse::<T>(m, k, pa, 0.2);
            let mut b = sparse::<T>(k, n, pb, 0.6);
            if n > 10 && k > 0 {
                // One heavy column: the chunks must not be cut by column count.
                let dense: Vec<_> = (0..k)
                    .map(|i| faer::sparse::Triplet::new(i, 0, T::sample(i, 0, 0.1)))
                    .collect();
                let mut t: Vec<_> = dense;
                for j in 1..n {
                    for (i, v) in b.as_ref().row_idx_of_col(j).zip(b.as_ref().val_of_col(j)) {
                        t.push(faer::sparse::Triplet::new(i, j, *v));
                    }
                }
                b = SparseColMat::try_new_from_triplets(k, n, &t).unwrap();
            }
            let alpha = T::sample(1, 2, 0.3);
            let want = faer_sparse_sparse(a.as_ref(), b.as_ref(), alpha, Par::Seq).unwrap();
            let p = SparseParams { threshold };
            let got = sparse_sparse_matmul(a.as_ref(), b.as_ref(), alpha, &exec, p).unwrap();
            let (g, w) = (got.as_ref(), want.as_ref());
            assert_eq!(
                g.symbolic().col_ptr(),
                w.symbolic().col_ptr(),
                "{m}x{k}x{n}, forced {forced}"
            );
            assert_eq!(g.symbolic().row_idx(), w.symbolic().row_idx());
            assert_eq!(g.val(), w.val());
        }
    }
    let all = |exec: &dyn Executor, forced: bool| {
        same::<f64>(exec, forced);
        same::<c64>(exec, forced);
    };
    every_executor(all);
}

#[test]
fn the_sparse_product_facade_checks_its_input() {
    let ex = Exec::serial();
    let a = sparse::<f64>(6, 5, 2, 0.1);
    let b = sparse::<f64>(4, 3, 2, 0.2);
    assert_eq!(
        linalg::sparse_sparse_matmul(a.as_ref(), b.as_ref(), 1.0, &ex).err(),
        Some(LinalgError::ShapeMismatch {
            op: "sparse_sparse_matmul",
            operand: "B",
            dim: Dim::Rows,
            expected: 5,
            found: 4
        })
    );
    let mut b = sparse::<f64>(5, 3, 2, 0.2);
    let row = b.as_ref().row_idx_of_col_raw(2)[0];
    b.val_of_col_mut(2)[0] = f64::NEG_INFINITY;
    assert_eq!(
        linalg::sparse_sparse_matmul(a.as_ref(), b.as_ref(), 1.0, &ex).err(),
        Some(LinalgError::NotFinite {
            op: "sparse_sparse_matmul",
            operand: "B",
            row,
            col: 2
        })
    );
    let unchecked = linalg::Options::new().check_finite(false);
    assert!(
        linalg::sparse_sparse_matmul_with(a.as_ref(), b.as_ref(), 1.0, &ex, &unchecked).is_ok()
    );
}
