//! The eigendecomposition of a real symmetric tridiagonal matrix with vectors, torn as in
//! Cuppen's divide and conquer into as many leaves as the width asks (two up to width 2, a
//! power of two above): the leaves are solved at once (faer's serial solver, one per
//! participant at a time), then merged pairwise, level by level, each merge on the executor:
//! deflation, the secular equation per root, Gu and Eisenstat's recomputed `z` for orthogonal
//! vectors, and the product with the blocks' vectors through teamalg's GEMM. Design record: `docs/svd.md` ("The parallel
//! tridiagonal solver").

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::evd::{
    self_adjoint_evd_scratch as faer_evd_scratch, tridiagonal_self_adjoint_evd, ComputeEigenvectors,
};
use faer::linalg::{temp_mat_scratch, temp_mat_zeroed};
use faer::mat::AsMatMut;
use faer::traits::ComplexField;
use faer::{Accum, ColMut, ColRef, MatMut, Par};

use crate::exec::par::{Executor, Part};
use crate::exec::sections::{self, Busy};
use crate::exec::tiles::Tiles;
use crate::gemm::{matmul, GemmParams};
use crate::spectral::scalar::Real;
use crate::spectral::secular::{
    close_pair, offset_root, recomputed_z, rotate_cols, run_chunks, unit_columns,
};

/// The smallest order divide: each half then still has faer's divide and conquer or a QR
/// iteration of at least 64 rows to do.
pub(crate) const MIN_ORDER: usize = 128;

/// How [`solve`] runs: on how many participants, and how its merge's GEMMs decide to go
/// parallel.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Divide {
    pub width: usize,
    pub gemm: GemmParams,
}

/// The halves' solver did not converge.
#[derive(Debug)]
pub(crate) struct NoConvergence;

/// Where a merged column has nonzeros: the top half's rows, the bottom half's, or both (two
/// columns mixed by a deflating rotation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rows {
    Top,
    Both,
    Bottom,
}

fn half_scratch<R: ComplexField>(m: usize) -> StackReq {
    faer_evd_scratch::<R>(m, ComputeEigenvectors::Yes, Par::Seq, Default::default())
}

/// The most leaves a matrix is torn into.
const MAX_LEAVES: usize = 64;

/// How many leaves an order-`n` matrix is torn into for `width` participants: a power of two,
/// at least `width` where the matrix allows, at most [`MAX_LEAVES`], each leaf at least half
/// of [`MIN_ORDER`]; 2 for widths up to 2.
pub(crate) fn leaf_count(n: usize, width: usize) -> usize {
    let mut p = width.max(2).next_power_of_two().min(MAX_LEAVES);
    while p > 2 && n / p < MIN_ORDER / 2 {
        p /= 2;
    }
    p
}

/// The scratch of `p` leaves of an order-`n` matrix solved at once.
fn leaves_scratch<R: ComplexField>(n: usize, p: usize) -> StackReq {
    let one = half_scratch::<R>(n / p + 1);
    StackReq::all_of(&vec![one; p])
}

/// The scratch of one merge of order `n`: the grouped copy, the merged product, the
/// differences and the merged problem's vectors.
fn merge_scratch<R: ComplexField>(n: usize) -> StackReq {
    StackReq::all_of(&[
        temp_mat_scratch::<R>(n, n).array(2),
        temp_mat_scratch::<R>(n + 1, n),
        temp_mat_scratch::<R>(n, n),
    ])
}

/// The scratch [`solve`] needs for order `n`, on any width.
pub(crate) fn solve_scratch<R: ComplexField>(n: usize) -> StackReq {
    // Every leaf count the widths can ask for (powers of two).
    let mut leaves = StackReq::EMPTY;
    let mut p = 2;
    while p <= MAX_LEAVES {
        leaves = leaves.or(leaves_scratch::<R>(n, p));
        p *= 2;
    }
    StackReq::all_of(&[
        // The leaves' and the merged blocks' vectors, in turn.
        temp_mat_scratch::<R>(n, n).array(2),
        leaves.or(merge_scratch::<R>(n)),
    ])
}

/// The eigenvalues (`w`, non-decreasing) and orthonormal eigenvectors (`out`, `n x n`) of the
/// symmetric tridiagonal matrix with diagonal `diag` and off-diagonal `off` (`n - 1` entries;
/// any further entries are ignored), on `divide.width` participants of `exec`. `n` is at least
/// [`MIN_ORDER`].
///
/// The matrix is torn at once into [`leaf_count`] leaves (two up to width 2), which are solved
/// in one section, a leaf per participant at a time; then the leaves are merged pairwise, level
/// by level, each merge on the whole team. So every participant has a leaf to solve at any
/// width, and the merges' products are the team's GEMMs.
pub(crate) fn solve<R: Real>(
    diag: &[R],
    off: &[R],
    w: &mut [R],
    out: MatMut<'_, R>,
    divide: Divide,
    exec: &(impl Executor + ?Sized),
    stack: &mut MemStack,
) -> Result<(), NoConvergence> {
    let Divide { width, gemm } = divide;
    let n = diag.len();
    assert!(n >= 2 && off.len() >= n - 1 && w.len() == n);
    assert!(out.nrows() == n && out.ncols() == n);
    let mut out = out;
    // Scale to the largest entry, so that neither tiny nor huge matrices under- or overflow in
    // the secular equation (LAPACK's `dstedc` does the same).
    let scale =
        diag.iter()
            .chain(&off[..n - 1])
            .fold(R::ZERO, |m, x| if x.abs() > m { x.abs() } else { m });
    if scale == R::ZERO {
        w.fill(R::ZERO);
        out.fill(R::ZERO);
        for i in 0..n {
            out[(i, i)] = R::ONE;
        }
        return Ok(());
    }
    let inv = R::ONE / scale;
    let leaves = leaf_count(n, width);
    let bounds: Vec<usize> = (0..=leaves).map(|i| i * n / leaves).collect();
    // Cuppen's tear at each boundary b: T = diag(T1 - |e| u u^T, T2 - |e| u u^T) + |e| (u_b-1 +
    // sign(e) u_b)(..)^T, with e = off[b - 1] and u the unit vectors.
    let mut d: Vec<R> = diag.iter().map(|&x| x * inv).collect();
    let mut e: Vec<R> = off[..n - 1].iter().map(|&x| x * inv).collect();
    e.push(R::ZERO);
    let mut beta = vec![R::ZERO; leaves + 1];
    for (l, &b) in bounds.iter().enumerate().take(leaves).skip(1) {
        beta[l] = e[b - 1];
        d[b - 1] -= beta[l].abs();
        d[b] -= beta[l].abs();
        e[b - 1] = R::ZERO;
    }

    let (mut q, stack) = temp_mat_zeroed::<R, _, _>(n, n, stack);
    let mut q = q.as_mat_mut();
    // The blocks merged below the top level (none with two leaves).
    let inner = if leaves > 2 { n } else { 0 };
    let (mut next, stack) = temp_mat_zeroed::<R, _, _>(inner, inner, stack);
    let mut next = next.as_mat_mut();
    let mut dvals = vec![R::ZERO; n];
    solve_leaves(
        (&d, &e),
        &mut dvals,
        q.as_mut(),
        &bounds,
        width,
        exec,
        stack,
    )?;

    // Merge pairs of blocks, level by level; the last merge writes to `out`.
    let mut span = 1;
    while span < leaves {
        let last = 2 * span == leaves;
        for g in (0..leaves).step_by(2 * span) {
            let (o, mid, end) = (bounds[g], bounds[g + span], bounds[g + 2 * span]);
            let nb = end - o;
            let dest = if last {
                out.as_mut()
            } else {
                next.as_mut().submatrix_mut(o, o, nb, nb)
            };
            merge(
                &mut dvals[o..end],
                q.as_mut().submatrix_mut(o, o, nb, nb),
                (mid - o, beta[g + span]),
                dest,
                (width, gemm),
                exec,
                stack,
            );
        }
        std::mem::swap(&mut q, &mut next);
        span *= 2;
    }
    for (w, &v) in w.iter_mut().zip(&dvals) {
        *w = v * scale;
    }
    Ok(())
}

/// Merges two adjacent blocks of a torn matrix: `q` (`nb x nb`) holds the blocks' vectors on
/// its diagonal (the first `n1` columns the top block's) and `d` their values; the tear
/// between them had off-diagonal `beta`. Writes the merged values to `d` in increasing order
/// and their vectors to `dest`.
fn merge<R: Real>(
    d: &mut [R],
    mut q: MatMut<'_, R>,
    (n1, beta): (usize, R),
    mut dest: MatMut<'_, R>,
    (width, gemm): (usize, GemmParams),
    exec: &(impl Executor + ?Sized),
    stack: &mut MemStack,
) {
    let n = d.len();
    let n2 = n - n1;
    // z = (last row of Q1, sign(b) first row of Q2) / sqrt 2, rho = 2 |b|: norm(z) = 1.
    let half = R::ONE / R::from_f64(2.0).sqrt();
    let sign = if beta < R::ZERO { -R::ONE } else { R::ONE };
    let mut z: Vec<R> = (0..n)
        .map(|c| {
            if c < n1 {
                q[(n1 - 1, c)] * half
            } else {
                sign * q[(n1, c)] * half
            }
        })
        .collect();
    let rho = R::from_f64(2.0) * beta.abs();
    let mut rows: Vec<Rows> = (0..n)
        .map(|c| if c < n1 { Rows::Top } else { Rows::Bottom })
        .collect();

    let (kept, deflated) = deflate(d, &mut z, &mut rows, rho, q.as_mut());
    let k = kept.len();

    // The merged columns, grouped by rows (top, both, bottom) so that each half's product
    // skips the blocks that are zero.
    let mut group: Vec<usize> = (0..k).collect();
    group.sort_by_key(|&i| rows[kept[i]]);
    let mut slot = vec![0; k];
    for (p, &i) in group.iter().enumerate() {
        slot[i] = p;
    }
    let k1 = kept.iter().filter(|&&c| rows[c] == Rows::Top).count();
    let k3 = kept.iter().filter(|&&c| rows[c] == Rows::Bottom).count();

    let (mut qg, stack) = temp_mat_zeroed::<R, _, _>(n, k, stack);
    let mut qg = qg.as_mat_mut();
    for (p, &i) in group.iter().enumerate() {
        qg.as_mut().col_mut(p).copy_from(q.as_ref().col(kept[i]));
    }
    let (mut m, stack) = temp_mat_zeroed::<R, _, _>(n, k, stack);
    let mut m = m.as_mat_mut();
    let (mut delta, stack) = temp_mat_zeroed::<R, _, _>(k + 1, k, stack);
    let mut delta = delta.as_mat_mut();
    let (mut v, _) = temp_mat_zeroed::<R, _, _>(k, k, stack);
    let mut v = v.as_mat_mut();

    if k > 0 {
        let dk: Vec<R> = kept.iter().map(|&c| d[c]).collect();
        let zk: Vec<R> = kept.iter().map(|&c| z[c]).collect();
        roots(&dk, &zk, rho, delta.as_mut(), width, exec);
        let zhat = recomputed_z(&zk, |j, i| delta[(j, i)], |i, j| dk[i] - dk[j], width, exec);
        // The merged problem's unit eigenvectors, zhat_j / (d_j - lambda_i) normalized.
        let entry = |j: usize, i: usize| zhat[j] / delta[(j, i)];
        unit_columns(&entry, &slot, v.as_mut(), width, exec);
        let k12 = k - k3;
        matmul(
            m.as_mut().subrows_mut(0, n1),
            Accum::Replace,
            qg.as_ref().submatrix(0, 0, n1, k12),
            v.as_ref().subrows(0, k12),
            R::ONE,
            exec,
            gemm,
        );
        matmul(
            m.as_mut().subrows_mut(n1, n2),
            Accum::Replace,
            qg.as_ref().submatrix(n1, k1, n2, k - k1),
            v.as_ref().subrows(k1, k - k1),
            R::ONE,
            exec,
            gemm,
        );
    }

    // Every eigenvalue in order, each with its column: a root with its product column, a
    // deflated value with its (rotated) column of the blocks' vectors.
    let mut all: Vec<(R, usize, bool)> = Vec::with_capacity(n);
    all.extend((0..k).map(|i| (delta[(k, i)], i, true)));
    all.extend(deflated.iter().map(|&c| (d[c], c, false)));
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (r, &(value, src, root)) in all.iter().enumerate() {
        d[r] = value;
        let col = if root {
            m.as_ref().col(src)
        } else {
            q.as_ref().col(src)
        };
        dest.as_mut().col_mut(r).copy_from(col);
    }
}

/// Solves the leaves `bounds[l]..bounds[l + 1]` at once, each by one participant (all on the
/// caller when `width` is 1): their eigenvalues go to `w`, their vectors to the diagonal
/// blocks of `q`.
fn solve_leaves<R: Real>(
    (d, e): (&[R], &[R]),
    w: &mut [R],
    q: MatMut<'_, R>,
    bounds: &[usize],
    width: usize,
    exec: &(impl Executor + ?Sized),
    stack: &mut MemStack,
) -> Result<(), NoConvergence> {
    let leaves = bounds.len() - 1;
    let mut jobs = Vec::with_capacity(leaves);
    let mut rest_w = w;
    let mut rest_q = q;
    let mut stack = stack;
    for l in 0..leaves {
        let (a, b) = (bounds[l], bounds[l + 1]);
        let (wl, tail) = rest_w.split_at_mut(b - a);
        rest_w = tail;
        let req = half_scratch::<R>(b - a);
        let (buf, rest) = stack.make_aligned_uninit::<u8>(req.size_bytes(), req.align_bytes());
        stack = rest;
        // The leaf's diagonal block of what is left of q, and what is below and right of it.
        let (top, bottom) = rest_q.split_at_row_mut(b - a);
        let (ql, _) = top.split_at_col_mut(b - a);
        rest_q = bottom.split_at_col_mut(b - a).1;
        jobs.push(Mutex::new(Some((&d[a..b], &e[a..b], wl, ql, buf))));
    }
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let busy = Busy::default();
    let body = |p: Part<'_>| {
        busy.time(p.index(), || loop {
            let j = next.fetch_add(1, Relaxed);
            let Some(job) = jobs.get(j) else { break };
            let taken = job.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some((d, e, w, q, buf)) = taken {
                let done = tridiagonal_self_adjoint_evd(
                    ColRef::from_slice(d).as_diagonal(),
                    ColRef::from_slice(e).as_diagonal(),
                    ColMut::from_slice_mut(w).as_diagonal_mut(),
                    Some(q),
                    Par::Seq,
                    MemStack::new(buf),
                    Default::default(),
                );
                if done.is_err() {
                    failed.store(true, Relaxed);
                }
            }
        })
    };
    sections::run(
        exec,
        "evd/halves",
        bounds[leaves],
        width.min(leaves),
        &busy,
        &body,
    );
    if failed.load(Relaxed) {
        Err(NoConvergence)
    } else {
        Ok(())
    }
}

/// Deflation, as in LAPACK's `dlaed2`: a column whose `z` entry is negligible keeps its value
/// and vector; of two columns whose values are close, a rotation zeroes one's `z` entry and that
/// one keeps its (rotated) vector. Returns the kept columns in increasing order of value and
/// the deflated ones.
fn deflate<R: Real>(
    d: &mut [R],
    z: &mut [R],
    rows: &mut [Rows],
    rho: R,
    mut q: MatMut<'_, R>,
) -> (Vec<usize>, Vec<usize>) {
    let n = d.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| d[a].total_cmp(&d[b]));
    let big = |s: &[R]| {
        s.iter()
            .fold(R::ZERO, |m, x| if x.abs() > m { x.abs() } else { m })
    };
    let tol = R::from_f64(8.0) * R::EPS * if big(d) > big(z) { big(d) } else { big(z) };
    let (mut kept, mut deflated) = (Vec::with_capacity(n), Vec::new());
    let mut prev: Option<usize> = None;
    for &c in &order {
        if rho * z[c].abs() <= tol {
            deflated.push(c);
            continue;
        }
        let Some(p) = prev else {
            prev = Some(c);
            continue;
        };
        if let Some((cs, sn)) = close_pair(d, z, p, c, tol) {
            rotate_cols(q.as_mut(), p, c, cs, sn);
            if rows[p] != rows[c] {
                rows[p] = Rows::Both;
                rows[c] = Rows::Both;
            }
            deflated.push(p);
        } else {
            kept.push(p);
        }
        prev = Some(c);
    }
    kept.extend(prev);
    (kept, deflated)
}

/// The roots of the secular equation, one per chunk of columns: column `i` of `delta` gets
/// `d_j - lambda_i` in its first `k` rows and `lambda_i` in row `k`.
fn roots<R: Real>(
    d: &[R],
    z: &[R],
    rho: R,
    delta: MatMut<'_, R>,
    width: usize,
    exec: &(impl Executor + ?Sized),
) {
    let k = d.len();
    let tiles = Tiles::new(delta);
    let chunk = |c: usize, chunks: usize| {
        let (i0, i1) = (c * k / chunks, (c + 1) * k / chunks);
        // SAFETY: chunk c owns columns i0..i1; the ranges partition 0..k.
        let mut cols = unsafe { tiles.tile(0, k + 1, i0, i1) };
        for i in i0..i1 {
            let col = cols.as_mut().col_mut(i - i0).try_as_col_major_mut();
            let col = col.expect("a fresh matrix is column-major").as_slice_mut();
            let (diff, lambda) = col.split_at_mut(k);
            lambda[0] = secular_root(d, z, rho, i, diff);
        }
    };
    run_chunks(exec, width, k, &chunk);
}

/// Root `i` (in increasing order) of `1 / rho + sum_j z_j^2 / (d_j - x) = 0`, for increasing
/// `d`, nonzero `z` and `rho > 0`; `diff[j]` gets `d_j - root`, computed from the nearer pole
/// so that it keeps its relative accuracy ([`offset_root`] iterates).
fn secular_root<R: Real>(d: &[R], z: &[R], rho: R, i: usize, diff: &mut [R]) -> R {
    let k = d.len();
    let rhoinv = R::ONE / rho;
    let two = R::from_f64(2.0);
    if k == 1 {
        let t = rho * z[0] * z[0];
        diff[0] = -t;
        return d[0] + t;
    }
    // The origin (a pole) and the bracket, as offsets from it.
    let (origin, lo, hi) = if i + 1 < k {
        let mid = (d[i + 1] - d[i]) / two;
        let f = z
            .iter()
            .zip(d)
            .fold(rhoinv, |f, (&zj, &dj)| f + zj * zj / ((dj - d[i]) - mid));
        if f >= R::ZERO {
            (i, R::ZERO, mid)
        } else {
            (i + 1, -mid, R::ZERO)
        }
    } else {
        let norm2 = z.iter().fold(R::ZERO, |s, &x| s + x * x);
        (i, R::ZERO, rho * norm2)
    };
    let sigma = d[origin];
    for (x, &dj) in diff.iter_mut().zip(d) {
        *x = dj - sigma;
    }
    // The two poles of the model: around the root, or the last two for the last root.
    let (p, q) = if i + 1 < k { (i, i + 1) } else { (i - 1, i) };
    sigma + offset_root(diff, z, rhoinv, (p, q), lo, hi)
}
