//! The SVD of a real upper bidiagonal matrix with vectors by divide and conquer (Gu and
//! Eisenstat, as LAPACK's `dbdsdc`): the matrix is torn at a middle row into a wide top block
//! and a square bottom block, each solved recursively (teamalg's bidiagonal QR at the leaves),
//! and merged by the singular-value secular equation. At the top the two blocks are solved at
//! once, one per participant, and the merge runs on the executor: roots and vectors in chunks,
//! the products through teamalg's GEMM. On a team wider than two, a block from order 512
//! solves its two blocks one after the other, each torn again with its merge on the executor,
//! down to the blocks whose two halves run at once. Every block writes its vectors straight
//! into its parent's basis, and every buffer comes from the caller's scratch, so a call that
//! holds its scratch touches no fresh memory. Design record: `docs/svd.md` ("The bidiagonal divide and
//! conquer").

use std::sync::Mutex;

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::{temp_mat_scratch, temp_mat_zeroed};
use faer::mat::AsMatMut;
use faer::traits::ComplexField;
use faer::{Accum, MatMut, MatRef};

use teamalg_gates::ParThreshold;

use crate::exec::par::{Executor, Part, Seq};
use crate::exec::sections::{self, Busy};
use crate::gemm::{matmul, GemmParams};
use crate::spectral::secular::{
    close_pair, offset_root, recomputed_z, rotate_cols, run_chunks, unit_columns,
};
use crate::svd::bidiag_svd::{bidiag_svd, BidiagSvdError, BidiagSvdParams, Real};

mod merge;
use merge::{merge, merge_scratch};

/// The largest order solved by the bidiagonal QR (a leaf); larger orders are torn in two.
pub const LEAF: usize = 32;

/// How [`solve`] runs its top level: on how many participants, and how its merge's GEMMs
/// decide to go parallel.
#[derive(Debug, Clone, Copy)]
pub struct Divide {
    /// The most participants of the divide and conquer (two blocks solved at once take at
    /// most two; wider, a block from order 512 solves its two one after the other on all).
    pub width: usize,
    /// How the top merge's GEMMs decide to go parallel.
    pub gemm: GemmParams,
}

/// The scratch of a block of order `n` solved serially (its two blocks one after the other).
fn serial_scratch<R: ComplexField>(n: usize) -> StackReq {
    if n <= LEAF {
        StackReq::EMPTY
    } else {
        let r = n / 2;
        StackReq::all_of(&[
            merge_scratch::<R>(n),
            StackReq::any_of(&[serial_scratch::<R>(r), serial_scratch::<R>(n - r - 1)]),
        ])
    }
}

/// The smallest block whose two blocks are solved one after the other, each on the whole team,
/// when the team is wider than two (below it, they are solved at once, one per participant).
const DEEP_MIN: usize = 512;

/// The scratch [`solve`] needs for order `n` on any width: its two blocks solved at once, or
/// (from `DEEP_MIN`) one after the other, each as a top block.
pub fn solve_scratch<R: ComplexField>(n: usize) -> StackReq {
    if n <= LEAF {
        return StackReq::EMPTY;
    }
    let r = n / 2;
    let at_once = StackReq::all_of(&[serial_scratch::<R>(r), serial_scratch::<R>(n - r - 1)]);
    let blocks = if n >= DEEP_MIN {
        StackReq::any_of(&[
            at_once,
            solve_scratch::<R>(r),
            solve_scratch::<R>(n - r - 1),
        ])
    } else {
        at_once
    };
    StackReq::all_of(&[merge_scratch::<R>(n), blocks])
}

/// The singular values (`s`, non-increasing) and vectors (`u` and `v`, `n x n`, column-major)
/// of the upper bidiagonal matrix with diagonal `d` and superdiagonal `e` (`n - 1` entries):
/// `B = U diag(s) V^T`. The top tear runs on `divide.width` participants of `exec`; `stack`
/// holds at least [`solve_scratch`]`(n)`.
///
/// # Errors
/// [`BidiagSvdError::NotFinite`] (nothing written) when `d` or `e` holds an infinity or a NaN;
/// [`BidiagSvdError::NoConvergence`] when the QR iteration of a leaf does not converge.
///
/// # Panics
/// When the lengths or shapes disagree, or `u` or `v` is not column-major.
///
/// # Example
/// ```
/// use faer::dyn_stack::{MemBuffer, MemStack};
/// use faer::Mat;
/// use teamalg_kernels::bidiag_dc::{solve, solve_scratch, Divide};
/// use teamalg_kernels::par::Seq;
///
/// let n = 100;
/// let (d, e) = (vec![2.0f64; n], vec![1.0f64; n - 1]);
/// let (mut s, mut u, mut v) = (vec![0.0; n], Mat::zeros(n, n), Mat::zeros(n, n));
/// let mut buf = MemBuffer::new(solve_scratch::<f64>(n));
/// let divide = Divide { width: 1, gemm: Default::default() };
/// solve((&d, &e), &mut s, u.as_mut(), v.as_mut(), divide, &Seq, MemStack::new(&mut buf)).unwrap();
/// // The values of this Toeplitz bidiagonal lie in (1, 3).
/// assert!(s[0] < 3.0 && s[n - 1] > 1.0 && s.windows(2).all(|w| w[0] >= w[1]));
/// ```
pub fn solve<R: Real>(
    (d, e): (&[R], &[R]),
    s: &mut [R],
    mut u: MatMut<'_, R>,
    mut v: MatMut<'_, R>,
    divide: Divide,
    exec: &(impl Executor + ?Sized),
    stack: &mut MemStack,
) -> Result<(), BidiagSvdError> {
    let n = d.len();
    assert!(e.len() + 1 == n.max(1) && s.len() == n);
    assert!(u.nrows() == n && u.ncols() == n && v.nrows() == n && v.ncols() == n);
    assert!(
        n == 0 || (u.row_stride() == 1 && v.row_stride() == 1),
        "U and V must be column-major"
    );
    if !d.iter().chain(e).all(|x| x.is_finite()) {
        return Err(BidiagSvdError::NotFinite);
    }
    let width = divide.width.min(exec.width()).max(1);
    // Scale to the largest entry, so that neither tiny nor huge matrices under- or overflow in
    // the secular equation (as LAPACK's `dbdsdc` does).
    let scale = d
        .iter()
        .chain(e)
        .fold(R::ZERO, |m, x| if x.abs() > m { x.abs() } else { m });
    if scale == R::ZERO {
        s.fill(R::ZERO);
        identity(u.as_mut());
        identity(v.as_mut());
        return Ok(());
    }
    let inv = R::ONE / scale;
    let d: Vec<R> = d.iter().map(|&x| x * inv).collect();
    let e: Vec<R> = e.iter().map(|&x| x * inv).collect();
    if n <= LEAF || width <= 1 {
        // Serial throughout, its products too: the call's gate said the executor does not pay.
        serially(&d, &e, s, u.as_mut(), v.as_mut(), stack)?;
    } else {
        let run = Run {
            width,
            exec,
            gemm: divide.gemm,
        };
        square(&d, &e, s, u.as_mut(), v.as_mut(), run, stack)?;
    }
    for x in s.iter_mut() {
        *x *= scale;
    }
    sort(s, u, v);
    Ok(())
}

/// Where a block runs: the top level on the caller's executor, every other block serially.
struct Run<'a, E: Executor + ?Sized> {
    width: usize,
    exec: &'a E,
    gemm: GemmParams,
}

// A derive would ask `E: Copy`; the struct holds only a reference to it.
impl<E: Executor + ?Sized> Clone for Run<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E: Executor + ?Sized> Copy for Run<'_, E> {}

impl Run<'static, Seq> {
    /// A block below the top: on the calling thread, its products too.
    fn serial() -> Self {
        Run {
            width: 1,
            exec: &Seq,
            gemm: GemmParams::default(),
        }
    }
}

fn identity<R: Real>(mut x: MatMut<'_, R>) {
    x.fill(R::ZERO);
    for i in 0..x.nrows().min(x.ncols()) {
        x[(i, i)] = R::ONE;
    }
}

/// Orders the values non-increasing, with their columns.
fn sort<R: Real>(s: &mut [R], u: MatMut<'_, R>, v: MatMut<'_, R>) {
    let mut order: Vec<usize> = (0..s.len()).collect();
    order.sort_by(|&a, &b| s[b].total_cmp(&s[a]));
    let old = s.to_vec();
    for (x, &from) in s.iter_mut().zip(&order) {
        *x = old[from];
    }
    permute_cols(u, &order);
    permute_cols(v, &order);
}

/// Column `c` of `x` takes what was column `order[c]` (a permutation), in place, cycle by
/// cycle with one column in hand.
fn permute_cols<R: Real>(mut x: MatMut<'_, R>, order: &[usize]) {
    let n = order.len();
    let mut done = vec![false; n];
    let mut held = faer::Col::<R>::zeros(x.nrows());
    for start in 0..n {
        if done[start] {
            continue;
        }
        done[start] = true;
        if order[start] == start {
            continue;
        }
        held.copy_from(x.as_ref().col(start));
        let mut c = start;
        loop {
            let from = order[c];
            if from == start {
                x.as_mut().col_mut(c).copy_from(&held);
                break;
            }
            copy_col(x.as_mut(), from, c);
            done[from] = true;
            c = from;
        }
    }
}

/// Column `to` of `x` takes column `from`'s entries.
fn copy_col<R: Real>(x: MatMut<'_, R>, from: usize, to: usize) {
    if from < to {
        let (a, mut b) = x.split_at_col_mut(to);
        b.as_mut().col_mut(0).copy_from(a.col(from));
    } else {
        let (mut a, b) = x.split_at_col_mut(from);
        a.as_mut().col_mut(to).copy_from(b.col(0));
    }
}

/// A square block below the top, on the calling thread: a leaf, or torn again.
fn serially<R: Real>(
    d: &[R],
    e: &[R],
    s: &mut [R],
    u: MatMut<'_, R>,
    v: MatMut<'_, R>,
    stack: &mut MemStack,
) -> Result<(), BidiagSvdError> {
    square(d, e, s, u, v, Run::serial(), stack)
}

/// A leaf: the bidiagonal QR on identity factors.
fn leaf<R: Real>(
    d: &[R],
    e: &[R],
    s: &mut [R],
    mut u: MatMut<'_, R>,
    mut v: MatMut<'_, R>,
) -> Result<(), BidiagSvdError> {
    s.copy_from_slice(d);
    let mut e = e.to_vec();
    identity(u.as_mut());
    identity(v.as_mut());
    // A leaf's rotations (at most 32 columns) never pay for a section.
    let params = BidiagSvdParams {
        threshold: Some(ParThreshold::Never),
        ..BidiagSvdParams::default()
    };
    bidiag_svd::<R>(s, &mut e, Some(u), Some(v), &Seq, params)
}

/// A square block where `run` says: a leaf up to order [`LEAF`]; above it, its two blocks
/// solved into the merge's bases ([`blocks`]), then merged into `u` and `v`.
fn square<R: Real, E: Executor + ?Sized>(
    d: &[R],
    e: &[R],
    s: &mut [R],
    u: MatMut<'_, R>,
    v: MatMut<'_, R>,
    run: Run<'_, E>,
    stack: &mut MemStack,
) -> Result<(), BidiagSvdError> {
    let n = d.len();
    if n <= LEAF {
        return leaf(d, e, s, u, v);
    }
    let r = n / 2;
    let (mut left, stack) = temp_mat_zeroed::<R, _, _>(n, n, stack);
    let mut left = left.as_mat_mut();
    let (mut right, stack) = temp_mat_zeroed::<R, _, _>(n, n, stack);
    let mut right = right.as_mat_mut();
    // The arrow's coordinates: r is the torn row (left) and the top block's null vector
    // (right); below r the top block's pairs, above it the bottom block's.
    let mut dd = vec![R::ZERO; n];
    {
        let (top_l, bottom_l) = left.as_mut().split_at_row_mut(r + 1);
        let (top_r, bottom_r) = right.as_mut().split_at_row_mut(r + 1);
        let (s1, rest) = dd.split_at_mut(r);
        let u1 = top_l.submatrix_mut(0, 0, r, r);
        let v1 = top_r.submatrix_mut(0, 0, r + 1, r + 1);
        let u2 = bottom_l.submatrix_mut(0, r + 1, n - r - 1, n - r - 1);
        let v2 = bottom_r.submatrix_mut(0, r + 1, n - r - 1, n - r - 1);
        let top = (&d[..r], &e[..r], s1, u1, v1);
        let bottom = (&d[r + 1..], &e[r + 1..], &mut rest[1..], u2, v2);
        blocks(top, bottom, run, stack)?;
    }
    left[(r, r)] = R::ONE;
    let alpha = d[r];
    let beta = e.get(r).copied().unwrap_or(R::ZERO);
    let mut z: Vec<R> = (0..n)
        .map(|j| {
            if j <= r {
                alpha * right[(r, j)]
            } else {
                beta * right[(r + 1, j)]
            }
        })
        .collect();
    merge(
        (&mut dd, &mut z),
        r,
        [alpha, beta],
        [left.as_mut(), right.as_mut()],
        (s, [u, v]),
        run,
        stack,
    );
    Ok(())
}

type Block<'a, 'b, R> = (&'a [R], &'a [R], &'b mut [R], MatMut<'b, R>, MatMut<'b, R>);

/// Solves the wide top block and the square bottom block: on a team wider than two and from
/// order [`DEEP_MIN`], one after the other, each on the whole team (so each is torn again and
/// its merge runs on the team); else at once, one per participant, when `run` has two or more;
/// else one after the other on the caller.
fn blocks<R: Real, E: Executor + ?Sized>(
    top: Block<'_, '_, R>,
    bottom: Block<'_, '_, R>,
    run: Run<'_, E>,
    stack: &mut MemStack,
) -> Result<(), BidiagSvdError> {
    let serial = |(d, e, s, u, v): Block<'_, '_, R>, wide_block: bool, stack: &mut MemStack| {
        if wide_block {
            wide(d, e, s, u, v, Run::serial(), stack)
        } else {
            serially(d, e, s, u, v, stack)
        }
    };
    if run.width <= 1 {
        serial(top, true, stack)?;
        return serial(bottom, false, stack);
    }
    let n = top.0.len() + bottom.0.len() + 1;
    if run.width > 2 && n >= DEEP_MIN {
        let (d, e, s, u, v) = top;
        wide(d, e, s, u, v, run, stack)?;
        let (d, e, s, u, v) = bottom;
        return square(d, e, s, u, v, run, stack);
    }
    let req = serial_scratch::<R>(top.0.len());
    let (buf, rest) = stack.make_aligned_uninit::<u8>(req.size_bytes(), req.align_bytes());
    // Each job is taken once, by the participant the index names.
    let jobs = [
        Mutex::new(Some((top, true, MemStack::new(buf)))),
        Mutex::new(Some((bottom, false, rest))),
    ];
    let results: [Mutex<Result<(), BidiagSvdError>>; 2] = [Mutex::new(Ok(())), Mutex::new(Ok(()))];
    let busy = Busy::default();
    let body = |p: Part<'_>| {
        busy.time(p.index(), || {
            for (job, result) in jobs.iter().zip(&results).skip(p.index()).step_by(p.width()) {
                let taken = job.lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some((block, wide_block, stack)) = taken {
                    *result.lock().unwrap_or_else(|e| e.into_inner()) =
                        serial(block, wide_block, stack);
                }
            }
        })
    };
    sections::run(run.exec, "svd/halves", n, run.width.min(2), &busy, &body);
    for result in results {
        result.into_inner().unwrap_or_else(|e| e.into_inner())?;
    }
    Ok(())
}

/// The wide block of `r` rows and `r + 1` columns (`d` and `e`, `r` entries each; `e[r - 1]`
/// sits in the last column), serially. Right rotations chase that entry up the last column
/// until the column is zero, leaving a square block; `v` (`(r + 1) x (r + 1)`) gets the
/// rotations times the square block's `V`, its last column the block's null vector. The square
/// block runs where `run` says.
fn wide<R: Real, E: Executor + ?Sized>(
    d: &[R],
    e: &[R],
    s: &mut [R],
    u: MatMut<'_, R>,
    mut v: MatMut<'_, R>,
    run: Run<'_, E>,
    stack: &mut MemStack,
) -> Result<(), BidiagSvdError> {
    let r = d.len();
    let (mut d, mut e) = (d.to_vec(), e.to_vec());
    // Rotation (i, c, s) mixes columns i and r: x_i <- c x_i + s x_r, x_r <- c x_r - s x_i.
    let mut rots = Vec::with_capacity(r);
    let mut f = e[r - 1];
    for i in (0..r).rev() {
        let h = d[i].hypot(f);
        let (c, s) = if h == R::ZERO {
            (R::ONE, R::ZERO)
        } else {
            (d[i] / h, f / h)
        };
        d[i] = h;
        rots.push((i, c, s));
        if i > 0 {
            f = -s * e[i - 1];
            e[i - 1] = c * e[i - 1];
        }
    }
    square(
        &d,
        &e[..r - 1],
        s,
        u,
        v.as_mut().submatrix_mut(0, 0, r, r),
        run,
        stack,
    )?;
    for j in 0..r {
        v[(r, j)] = R::ZERO;
        v[(j, r)] = R::ZERO;
    }
    v[(r, r)] = R::ONE;
    // V = G_1 G_2 ... G_r diag(W, 1): the last rotation acts first.
    // Each rotation mixes its own row with row r, so a column is worked down once with row
    // r's entry in a register (row by row, every entry is a cache line of its own).
    for j in 0..=r {
        let mut col = v.as_mut().col_mut(j);
        let mut y = col[r];
        for &(i, c, s) in rots.iter().rev() {
            let x = col[i];
            col[i] = c * x - s * y;
            y = s * x + c * y;
        }
        col[r] = y;
    }
    Ok(())
}
