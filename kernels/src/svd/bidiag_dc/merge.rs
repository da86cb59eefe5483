//! One merge of the bidiagonal divide and conquer: the arrow across the torn row, its
//! deflation, the secular equation's roots on the executor, and the vectors of the merged
//! block formed by products on the executor. Design record: `docs/svd.md`.

use super::*;

/// Where a basis column has nonzeros: the top block's rows (with the torn row), the bottom
/// block's, or both (two columns mixed by a deflating rotation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rows {
    Top,
    Both,
    Bottom,
}

/// The scratch of one merge of order `n`: its two bases and one side's coefficients.
pub(super) fn merge_scratch<R: ComplexField>(n: usize) -> StackReq {
    temp_mat_scratch::<R>(n, n).array(3)
}

/// Merges the solved blocks across the torn row: `dd` holds the blocks' values with zero at
/// `r`, `z` the arrow's first row, `bases` the two bases (`U = diag(U1, 1, U2)` with the torn
/// row's unit column at `r`, `V = diag(V1, V2)` with the top block's null vector at `r`).
///
/// `U^T B V` is, after a permutation, the arrow `M` with `z` in its first row and `dd` on
/// the rest of its diagonal, whose first entry is zero. `M^T M = D^2 + z z^T`, so the values
/// are the roots of `1 + sum_j z_j^2 / (d_j^2 - x^2)`. Writes the values to `s` and the
/// vectors to `out`, in no particular order.
pub(super) fn merge<R: Real, E: Executor + ?Sized>(
    (dd, z): (&mut [R], &mut [R]),
    r: usize,
    [alpha, beta]: [R; 2],
    bases: [MatMut<'_, R>; 2],
    (s, out): (&mut [R], [MatMut<'_, R>; 2]),
    run: Run<'_, E>,
    stack: &mut MemStack,
) {
    let n = dd.len();
    let [mut left, mut right] = bases;
    let mut rows_u: Vec<Rows> = (0..n)
        .map(|c| if c <= r { Rows::Top } else { Rows::Bottom })
        .collect();
    let mut rows_v = rows_u.clone();
    let big = dd.iter().chain([&alpha, &beta]).fold(
        R::ZERO,
        |m, x| {
            if x.abs() > m {
                x.abs()
            } else {
                m
            }
        },
    );
    let tol = R::from_f64(8.0) * R::EPS * big;
    let (kept, deflated) = deflate(
        dd,
        z,
        r,
        [&mut rows_u, &mut rows_v],
        [left.as_mut(), right.as_mut()],
        tol,
    );
    let k = kept.len();
    let dk: Vec<R> = kept.iter().map(|&c| dd[c]).collect();
    let zk: Vec<R> = kept.iter().map(|&c| z[c]).collect();
    let roots = roots(&dk, &zk, run);
    // Pole j minus root i, from the root's origin as it was solved.
    let diff = |j: usize, i: usize| {
        let (o, tau, _) = roots[i];
        (dk[j] - dk[o]) * (dk[j] + dk[o]) - tau
    };
    let zhat = recomputed_z(
        &zk,
        diff,
        |i, j| (dk[i] - dk[j]) * (dk[i] + dk[j]),
        run.width,
        run.exec,
    );
    for (i, root) in roots.iter().enumerate() {
        s[i] = root.2;
    }
    let (mut coef, _) = temp_mat_zeroed::<R, _, _>(k, k, stack);
    let mut coef = coef.as_mat_mut();
    let [mut out_u, mut out_v] = out;
    for (p, &c) in deflated.iter().enumerate() {
        s[k + p] = dd[c];
        out_u
            .as_mut()
            .col_mut(k + p)
            .copy_from(left.as_ref().col(c));
        out_v
            .as_mut()
            .col_mut(k + p)
            .copy_from(right.as_ref().col(c));
    }
    for (side, basis, rows, out) in [
        (Side::Left, left.as_mut(), &rows_u, out_u.as_mut()),
        (Side::Right, right.as_mut(), &rows_v, out_v.as_mut()),
    ] {
        let groups = Groups::new(&kept, rows);
        // The arrow's unit singular vectors on this side, one column per root: the left ones
        // (-1, d_j zhat_j / (d_j^2 - s_i^2)), the right ones zhat_j / (d_j^2 - s_i^2).
        let entry = |j: usize, i: usize| match side {
            Side::Left if j == 0 => -R::ONE,
            Side::Left => dk[j] * zhat[j] / diff(j, i),
            Side::Right => zhat[j] / diff(j, i),
        };
        unit_columns(&entry, &groups.slot, coef.as_mut(), run.width, run.exec);
        // The basis's kept columns moved to the front in grouped order (the deflated ones,
        // already copied out, behind them), so that each block's product reads them in place.
        let order: Vec<usize> = groups.cols.iter().chain(&deflated).copied().collect();
        let mut basis = basis;
        permute_cols(basis.as_mut(), &order);
        groups.product(
            basis.as_ref().subcols(0, k),
            r + 1,
            coef.as_ref(),
            out.subcols_mut(0, k),
            run,
        );
    }
}

/// Deflation, as in LAPACK's `dlasd2`: a column whose `z` entry is negligible keeps its value
/// and vectors; a value within `tol` of zero is set to zero and its `z` entry rotated into the
/// torn row's (on the right only: the arrow's first row is the torn row); of two columns whose
/// values are close, a rotation on both sides zeroes one's `z` entry and that one keeps its
/// (rotated) vectors. Column `r` is always kept, its `z` entry at least `tol`. Returns the
/// kept columns (`r`, then increasing values) and the deflated ones.
fn deflate<R: Real>(
    d: &mut [R],
    z: &mut [R],
    r: usize,
    rows: [&mut Vec<Rows>; 2],
    bases: [MatMut<'_, R>; 2],
    tol: R,
) -> (Vec<usize>, Vec<usize>) {
    let n = d.len();
    let [rows_u, rows_v] = rows;
    let [mut left, mut right] = bases;
    let mut order: Vec<usize> = (0..n).filter(|&c| c != r).collect();
    order.sort_by(|&a, &b| d[a].total_cmp(&d[b]));
    let (mut kept, mut deflated) = (vec![r], Vec::new());
    let mut prev: Option<usize> = None;
    for &c in &order {
        if z[c].abs() <= tol {
            deflated.push(c);
            continue;
        }
        if d[c] <= tol {
            let h = z[r].hypot(z[c]);
            let (cs, sn) = (z[r] / h, z[c] / h);
            rotate_cols(right.as_mut(), r, c, cs, sn);
            mix(rows_v, r, c);
            z[r] = h;
            z[c] = R::ZERO;
            d[c] = R::ZERO;
            deflated.push(c);
            continue;
        }
        let Some(p) = prev else {
            prev = Some(c);
            continue;
        };
        if let Some((cs, sn)) = close_pair(d, z, p, c, tol) {
            rotate_cols(left.as_mut(), p, c, cs, sn);
            rotate_cols(right.as_mut(), p, c, cs, sn);
            mix(rows_u, p, c);
            mix(rows_v, p, c);
            deflated.push(p);
        } else {
            kept.push(p);
        }
        prev = Some(c);
    }
    kept.extend(prev);
    if z[r].abs() < tol {
        z[r] = tol;
    }
    (kept, deflated)
}

fn mix(rows: &mut [Rows], p: usize, q: usize) {
    if rows[p] != rows[q] {
        rows[p] = Rows::Both;
        rows[q] = Rows::Both;
    }
}

/// The roots of the secular equation in chunks: for each, the pole it was solved from, its
/// offset `tau` in `x^2` from that pole, and the value.
fn roots<R: Real, E: Executor + ?Sized>(d: &[R], z: &[R], run: Run<'_, E>) -> Vec<(usize, R, R)> {
    let k = d.len();
    let out: Vec<Mutex<Vec<(usize, R, R)>>> = (0..k.max(1)).map(|_| Mutex::default()).collect();
    let chunk = |c: usize, chunks: usize| {
        let (i0, i1) = (c * k / chunks, (c + 1) * k / chunks);
        let mut diff = vec![R::ZERO; k];
        let found: Vec<_> = (i0..i1)
            .map(|i| singular_root(d, z, i, &mut diff))
            .collect();
        *out[c].lock().unwrap_or_else(|e| e.into_inner()) = found;
    };
    run_chunks(run.exec, run.width, k, &chunk);
    out.into_iter()
        .flat_map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}

/// Root `i` (in increasing order) of `1 + sum_j z_j^2 / (d_j^2 - x^2) = 0`, for `d_0 = 0 <
/// d_1 < ...` and nonzero `z`, as an offset `tau` in `x^2` from the nearer pole `o`, each
/// pole's offset formed as `(d_j - d_o)(d_j + d_o)` so that it keeps its relative accuracy.
/// Returns `(o, tau, x)`; `diff` is scratch of `d`'s length.
fn singular_root<R: Real>(d: &[R], z: &[R], i: usize, diff: &mut [R]) -> (usize, R, R) {
    let k = d.len();
    if k == 1 {
        return (0, z[0] * z[0], z[0].abs());
    }
    let gap = |o: usize, j: usize| (d[j] - d[o]) * (d[j] + d[o]);
    let (origin, lo, hi) = if i + 1 < k {
        let mid = gap(i, i + 1) / R::from_f64(2.0);
        let f = (0..k).fold(R::ONE, |f, j| f + z[j] * z[j] / (gap(i, j) - mid));
        if f >= R::ZERO {
            (i, R::ZERO, mid)
        } else {
            (i + 1, -mid, R::ZERO)
        }
    } else {
        let norm2 = z.iter().fold(R::ZERO, |s, &x| s + x * x);
        (i, R::ZERO, norm2)
    };
    for (j, x) in diff.iter_mut().enumerate() {
        *x = gap(origin, j);
    }
    let (p, q) = if i + 1 < k { (i, i + 1) } else { (i - 1, i) };
    let tau = offset_root(diff, z, R::ONE, (p, q), lo, hi);
    let o = d[origin];
    (origin, tau, (o * o + tau).sqrt())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

/// One side's kept columns in grouped order: those in the top block's rows, in both, in the
/// bottom block's.
struct Groups {
    /// The basis column of each grouped position.
    cols: Vec<usize>,
    /// The grouped position of each kept column.
    slot: Vec<usize>,
    top: usize,
    bottom: usize,
}

impl Groups {
    fn new(kept: &[usize], rows: &[Rows]) -> Self {
        let mut order: Vec<usize> = (0..kept.len()).collect();
        order.sort_by_key(|&i| rows[kept[i]]);
        let mut slot = vec![0; kept.len()];
        for (p, &i) in order.iter().enumerate() {
            slot[i] = p;
        }
        let count = |want: Rows| kept.iter().filter(|&&c| rows[c] == want).count();
        Groups {
            cols: order.iter().map(|&i| kept[i]).collect(),
            slot,
            top: count(Rows::Top),
            bottom: count(Rows::Bottom),
        }
    }

    /// `out = basis coef`, the basis's columns and `coef`'s rows in grouped order, where the
    /// basis's rows `0..split` are the top block's and the rest the bottom block's: each
    /// block's product skips the columns that are zero in its rows.
    fn product<R: Real, E: Executor + ?Sized>(
        &self,
        basis: MatRef<'_, R>,
        split: usize,
        coef: MatRef<'_, R>,
        mut out: MatMut<'_, R>,
        run: Run<'_, E>,
    ) {
        let (n, k) = (basis.nrows(), self.cols.len());
        let (k1, k3) = (self.top, self.bottom);
        matmul(
            out.as_mut().subrows_mut(0, split),
            Accum::Replace,
            basis.submatrix(0, 0, split, k - k3),
            coef.subrows(0, k - k3),
            R::ONE,
            run.exec,
            run.gemm,
        );
        matmul(
            out.as_mut().subrows_mut(split, n - split),
            Accum::Replace,
            basis.submatrix(split, k1, n - split, k - k1),
            coef.subrows(k1, k - k1),
            R::ONE,
            run.exec,
            run.gemm,
        );
    }
}
