//! The reduction of a general matrix to upper bidiagonal form, `A = U B V^H`, on the executor:
//! blocked as LAPACK's `gebrd` (`labrd` panels), in faer's layout and with faer's reflectors,
//! so the SVD's back-transformations take the result as they take faer's own. A panel of `nb`
//! steps leaves the trailing matrix as it was and keeps each step's updates as thin factors,
//! `A = A0 - L R^H`; each step reads the untouched trailing matrix twice (`y = A0^H u` and
//! `x = A0 w`, corrected by the thin factors), and the panel ends in one rank-`2 nb` GEMM.
//! faer's fused one-stage steps read the trailing matrix twice and write it once; here the
//! writes go into the GEMM. Each of the three passes shares out the same columns, so a
//! participant keeps its own columns in its cache across the panel. Design record:
//! `docs/svd.md` ("The parallel bidiagonalization").

use faer::linalg::householder::make_householder_in_place;
use faer::linalg::matmul::matmul;
use faer::linalg::svd::bidiag::{
    bidiag_in_place as faer_bidiag, bidiag_in_place_scratch as faer_bidiag_scratch,
};
use faer::traits::math_utils::{add, conj, mul_real, one, recip};
use faer::traits::ComplexField;
use faer::{Accum, Mat, MatMut, MatRef, Par};
use teamalg_gates::{Family, ParThreshold, Scalar};

use crate::exec::call::Call;
use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::{Executor, Part};
use crate::exec::sections::{self, Busy};
use crate::exec::tiles::Tiles;
use crate::spectral::householder::block_factors;
use crate::spectral::passes::Passes;

/// The most column chunks of a pass: enough to balance sixteen participants.
const MAX_CHUNKS: usize = 16;

/// A chunk has at least this many columns, so that its pass outweighs its share of the sums
/// after it.
const CHUNK_COLS: usize = 32;

/// Below this order a serial call is faer's fused reduction: in the cache its single pass
/// per step costs less than the panel's corrections (the blocked steps measured 1.37x faer's
/// time at order 64, 1.07x at 128 and 0.86x at 256 on one core of the AMD EPYC host;
/// `docs/perf/runs/kernels-log.md`, "The blocked bidiagonalization").
const BLOCKED_SERIAL_MIN: usize = 192;

/// The steps of a panel.
fn panel_steps(n: usize) -> usize {
    if n <= 256 {
        16
    } else {
        32
    }
}

/// The scratch of [`bidiag_in_place`]: faer's, for the serial path.
pub fn bidiag_in_place_scratch<T: ComplexField>(m: usize, n: usize) -> faer::dyn_stack::StackReq {
    faer_bidiag_scratch::<T>(m, n, Par::Seq, Default::default())
}

/// Reduces `a` (`m x n`) in place to upper bidiagonal form `A = U B V^H`, in faer's layout:
/// `B` on the diagonal and superdiagonal, the left Householder vectors below the diagonal,
/// the right ones right of the superdiagonal, and the block factors in `hl`
/// (`bsl x min(m, n)`) and `hr` (`bsr x (min(m, n) - 1)`). When `m >= n` and the gate says
/// the call pays (family [`Family::BidiagStep`]), or the matrix is large enough that the
/// blocked steps pay serially, this is the blocked reduction, its passes on the executor;
/// otherwise faer's serial `bidiag_in_place`.
///
/// # Panics
/// When `a` is not column-major, or `hl` or `hr` has the wrong number of columns.
pub fn bidiag_in_place<T>(
    a: MatMut<'_, T>,
    hl: MatMut<'_, T>,
    hr: MatMut<'_, T>,
    exec: &(impl Executor + ?Sized),
    threshold: Option<ParThreshold>,
    stack: &mut faer::dyn_stack::MemStack,
) where
    T: ComplexField + Scalar,
{
    let (m, n) = (a.nrows(), a.ncols());
    let size = m.min(n);
    assert!(hl.ncols() == size && hr.ncols() == size.saturating_sub(1));
    assert!(hl.nrows() >= 1 && (size < 2 || hr.nrows() >= 1));
    let units = crate::svd::cost::bidiag_from(m, n);
    let region = Region {
        site: "bidiag",
        dims: [m, n, 0],
        units: units[0],
        family: Family::BidiagStep,
        sections: 2 * size,
        scope: Scope::Call,
        call_units: units[0],
    };
    let call = if size > 2 && m >= n {
        Some(gate::call::<T>(exec, region, threshold))
    } else {
        None
    };
    let w = call.as_ref().map_or(1, Call::width);
    if w <= 1 && (m < n || n < BLOCKED_SERIAL_MIN) {
        faer_bidiag(a, hl, hr, Par::Seq, stack, Default::default());
        return;
    }
    if w > 1 {
        exec.warm(w);
    }
    let on = Passes {
        exec,
        width: w,
        threshold,
    };
    reduce(a, hl, hr, &units, on);
}

/// Reduces `a` (`m x n`, `m >= n`) as faer's `bidiag_in_place` does, with the panel's passes
/// on at most `on.width` participants.
fn reduce<T>(
    mut a: MatMut<'_, T>,
    mut hl: MatMut<'_, T>,
    mut hr: MatMut<'_, T>,
    units: &[f64],
    on: Passes<'_, impl Executor + ?Sized>,
) where
    T: ComplexField + Scalar,
{
    let (m, n) = (a.nrows(), a.ncols());
    assert!(m >= n);
    let size = n;
    let nb = panel_steps(n).min(size.max(1));
    let mut f = Factors {
        l: Mat::<T>::zeros(m, 2 * nb),
        r: Mat::<T>::zeros(n, 2 * nb),
        nb,
    };
    let mut work = Work {
        parts: Mat::<T>::zeros(m, Chunks::new(n, on.width).count),
        small: Mat::<T>::zeros(2 * nb, Chunks::new(n, on.width).count),
        t: Mat::<T>::zeros(2 * nb, 1),
        row: Mat::<T>::zeros(n, 1),
    };
    let (mut taus_l, mut taus_r) = (Vec::with_capacity(size), Vec::with_capacity(size));
    let mut k = 0;
    while k < size {
        let kb = nb.min(size - k);
        for j in 0..kb {
            let (tl, tr) = step(a.as_mut(), &mut f, &mut work, [k + j, j], units, on);
            taus_l.push(tl);
            taus_r.extend(tr);
        }
        let e = k + kb;
        if e < size {
            let (l, r) = (f.l.as_ref(), f.r.as_ref());
            let (l, r) = (l.subcols(nb - kb, 2 * kb), r.subcols(nb - kb, 2 * kb));
            trailing(a.as_mut(), l, r, e, units, on);
        }
        k = e;
    }
    block_factors(a.as_ref().subcols(0, size), hl.as_mut(), &taus_l);
    if size > 1 {
        let basis = a.as_ref().submatrix(0, 1, size - 1, n - 1).transpose();
        block_factors(basis, hr.as_mut(), &taus_r);
    }
}

/// A panel's thin factors, `A = A0 - L R^H` over the columns used so far: `L = [X' U]`
/// (`m x 2 nb`) and `R = [W' Y]` (`n x 2 nb`), where `U`'s and `W`'s columns are the left and
/// right reflectors (with their unit entries), `Y` and `X` the left and right steps' products,
/// and `X'`, `W'` hold their columns in reverse order. Step `j`'s pairs are then columns
/// `nb - j .. nb + j` of both, one block for each product with them.
struct Factors<T> {
    l: Mat<T>,
    r: Mat<T>,
    nb: usize,
}

/// A step's buffers: the chunks' partial products, the small corrections and row `g`.
struct Work<T> {
    parts: Mat<T>,
    small: Mat<T>,
    t: Mat<T>,
    row: Mat<T>,
}

/// Step `j` of the panel, on row and column `g` of `A`: the left reflector of column `g`, then
/// (while a column is right of it) `y`, row `g`, its right reflector and `x`. Returns the two
/// reflectors' coefficients.
fn step<T>(
    mut a: MatMut<'_, T>,
    f: &mut Factors<T>,
    work: &mut Work<T>,
    [g, j]: [usize; 2],
    units: &[f64],
    on: Passes<'_, impl Executor + ?Sized>,
) -> (T::Real, Option<T::Real>)
where
    T: ComplexField + Scalar,
{
    let (m, n) = (a.nrows(), a.ncols());
    let nb = f.nb;
    let (mm, nn) = (m - g, n - g - 1);
    // The pairs so far: columns p0..p1 of L and R.
    let (p0, p1) = (nb - j, nb + j);
    // Column g, rows g..: the panel's updates so far.
    if j > 0 {
        let col = a.as_mut().col_mut(g).subrows_mut(g, mm).as_mat_mut();
        let (lg, rg) = (
            f.l.as_ref().submatrix(g, p0, mm, 2 * j),
            f.r.as_ref().submatrix(g, p0, 1, 2 * j),
        );
        matmul(col, Accum::Add, lg, rg.adjoint(), -one::<T>(), Par::Seq);
    }
    let tl = {
        let col = a.as_mut().col_mut(g).subrows_mut(g, mm);
        let (mut head, tail) = col.split_at_row_mut(1);
        make_householder_in_place(&mut head[0], tail).tau
    };
    f.l[(g, p1)] = one();
    for i in g + 1..m {
        f.l[(i, p1)] = a[(i, g)].clone();
    }
    if nn == 0 {
        return (tl, None);
    }
    // y = (A0^H u - R (L^H u)) / tl over columns g+1.., the correction's small product first.
    let u = f.l.as_ref().submatrix(g, p1, mm, 1);
    let t = work.t.as_mut().subrows_mut(0, 2 * j);
    matmul(
        t,
        Accum::Replace,
        f.l.as_ref().submatrix(g, p0, mm, 2 * j).adjoint(),
        u,
        one::<T>(),
        Par::Seq,
    );
    let tl_inv = recip(&tl);
    {
        let a0 = a.as_ref().submatrix(g, g + 1, mm, nn);
        let t = work.t.as_ref().subrows(0, 2 * j);
        let ys = Tiles::new(f.r.as_mut().submatrix_mut(g + 1, p0, nn, 2 * j + 1));
        let chunk = |_: usize, c0: usize, c1: usize| {
            // SAFETY: chunk [c0, c1) owns those rows of R; the chunks partition 0..nn.
            let yc = unsafe { ys.tile(c0, c1, 0, 2 * j + 1) };
            let (prev, mut out) = yc.split_at_col_mut(2 * j);
            let a0c = a0.subcols(c0, c1 - c0).adjoint();
            matmul(out.as_mut(), Accum::Replace, a0c, u, one::<T>(), Par::Seq);
            matmul(
                out.as_mut(),
                Accum::Add,
                prev.as_ref(),
                t,
                -one::<T>(),
                Par::Seq,
            );
            for e in out.col_mut(0).iter_mut() {
                *e = mul_real(e, &tl_inv);
            }
        };
        pass::<T, _>(nn, "bidiag/left", [m, g], &chunk, units, on);
    }
    // Row g, columns g+1..: A0's row less L R^H (with this step's u and y).
    let mut row = work.row.as_mut().subrows_mut(0, nn);
    for (c, e) in row.as_mut().col_mut(0).iter_mut().enumerate() {
        *e = a[(g, g + 1 + c)].clone();
    }
    {
        let rr = f.r.as_ref().submatrix(g + 1, p0, nn, 2 * j + 1).conjugate();
        let lg = f.l.as_ref().submatrix(g, p0, 1, 2 * j + 1).transpose();
        matmul(row.as_mut(), Accum::Add, rr, lg, -one::<T>(), Par::Seq);
    }
    let tr = {
        let col = row.as_mut().col_mut(0);
        let (mut head, tail) = col.split_at_row_mut(1);
        make_householder_in_place(&mut head[0], tail).tau
    };
    // The right reflector acts as A conj(G) with G = I - v v^H / tr: its vector is conj(v).
    let pw = nb - 1 - j;
    for c in 0..nn {
        a[(g, g + 1 + c)] = row[(c, 0)].clone();
        f.r[(g + 1 + c, pw)] = if c == 0 { one() } else { conj(&row[(c, 0)]) };
    }
    // x = (A0 w - L (R^H w)) / tr over rows g+1.., each chunk of columns adding its part of
    // both products.
    let mr = m - g - 1;
    let tr_inv = recip(&tr);
    let Work {
        parts, small, t, ..
    } = work;
    let used = {
        let a0 = a.as_ref().submatrix(g + 1, g + 1, mr, nn);
        let (rw, rp) =
            f.r.as_ref()
                .submatrix(g + 1, pw, nn, 2 * j + 2)
                .split_at_col(1);
        let ps = Tiles::new(parts.as_mut().subrows_mut(0, mr));
        let ss = Tiles::new(small.as_mut().subrows_mut(0, 2 * j + 1));
        let chunk = |p: usize, c0: usize, c1: usize| {
            // SAFETY: chunk p owns column p of `parts` and of `small`; one chunk per index.
            let (pt, st) = unsafe { (ps.tile(0, mr, p, p + 1), ss.tile(0, 2 * j + 1, p, p + 1)) };
            let (cols, wc) = (c1 - c0, rw.subrows(c0, c1 - c0));
            matmul(
                pt,
                Accum::Replace,
                a0.subcols(c0, cols),
                wc,
                one::<T>(),
                Par::Seq,
            );
            let rc = rp.subrows(c0, cols).adjoint();
            matmul(st, Accum::Replace, rc, wc, one::<T>(), Par::Seq);
        };
        pass::<T, _>(nn, "bidiag/right", [m, g], &chunk, units, on)
    };
    let (lx, lp) = f.l.as_mut().subrows_mut(g + 1, mr).split_at_col_mut(p0);
    let mut x = lx.subcols_mut(pw, 1);
    x.copy_from(parts.as_ref().subcols(0, 1).subrows(0, mr));
    let mut s = t.as_mut().subrows_mut(0, 2 * j + 1);
    s.copy_from(small.as_ref().submatrix(0, 0, 2 * j + 1, 1));
    for p in 1..used {
        let q = parts.as_ref().col(p).subrows(0, mr);
        for (e, q) in x.as_mut().col_mut(0).iter_mut().zip(q.iter()) {
            *e = add(e, q);
        }
        let q = small.as_ref().col(p).subrows(0, 2 * j + 1);
        for (e, q) in s.as_mut().col_mut(0).iter_mut().zip(q.iter()) {
            *e = add(e, q);
        }
    }
    let lp = lp.as_ref().subcols(0, 2 * j + 1);
    matmul(
        x.as_mut(),
        Accum::Add,
        lp,
        s.as_ref(),
        -one::<T>(),
        Par::Seq,
    );
    for e in x.col_mut(0).iter_mut() {
        *e = mul_real(e, &tr_inv);
    }
    (tl, Some(tr))
}

/// The panel's end: `A[e.., e..] -= L R^H` (the panel's pairs), the columns shared out.
fn trailing<T>(
    a: MatMut<'_, T>,
    l: MatRef<'_, T>,
    r: MatRef<'_, T>,
    e: usize,
    units: &[f64],
    on: Passes<'_, impl Executor + ?Sized>,
) where
    T: ComplexField + Scalar,
{
    let (m, n) = (a.nrows(), a.ncols());
    let (mr, nr) = (m - e, n - e);
    let tiles = Tiles::new(a.submatrix_mut(e, e, mr, nr));
    let chunk = |_: usize, c0: usize, c1: usize| {
        // SAFETY: chunk [c0, c1) owns those columns of the trailing matrix.
        let at = unsafe { tiles.tile(0, mr, c0, c1) };
        let (lt, rt) = (l.subrows(e, mr), r.subrows(e + c0, c1 - c0));
        matmul(at, Accum::Add, lt, rt.adjoint(), -one::<T>(), Par::Seq);
    };
    pass::<T, _>(nr, "bidiag/trailing", [m, e], &chunk, units, on);
}

/// Column chunks of a pass over `nn` columns: equal, at least [`CHUNK_COLS`] wide.
#[derive(Clone, Copy)]
struct Chunks {
    count: usize,
    nn: usize,
}

impl Chunks {
    /// The chunks of `nn` columns for a call `width` wide: one a participant, each at least
    /// [`CHUNK_COLS`] wide. A chunk's partial products are summed after the pass in chunk
    /// order, so the bits depend on the call's width, not on the pass's.
    fn new(nn: usize, width: usize) -> Self {
        Chunks {
            count: (nn / CHUNK_COLS).clamp(1, width.clamp(1, MAX_CHUNKS)),
            nn,
        }
    }

    /// The columns of chunk `p`.
    fn bounds(self, p: usize) -> (usize, usize) {
        (p * self.nn / self.count, (p + 1) * self.nn / self.count)
    }
}

/// Runs `chunk` over `nn` columns in chunks, on as many participants as the gate gives
/// (family [`Family::BidiagStep`], units the `(m - g) x nn` elements read), at most the
/// chunks; returns the chunk count (the chunks depend on the call's width, not on the pass's,
/// so the partial products sum the same way whoever works them).
fn pass<T, E>(
    nn: usize,
    site: &'static str,
    [m, g]: [usize; 2],
    chunk: &(dyn Fn(usize, usize, usize) + Sync),
    units: &[f64],
    on: Passes<'_, E>,
) -> usize
where
    T: Scalar,
    E: Executor + ?Sized,
{
    let Passes {
        exec,
        width,
        threshold,
    } = on;
    let chunks = Chunks::new(nn, width);
    let region = Region {
        site,
        dims: [m - g, nn, g],
        units: ((m - g) * nn) as f64,
        family: Family::BidiagStep,
        sections: 1,
        scope: Scope::Section,
        call_units: units[g],
    };
    let w = if width > 1 && chunks.count > 1 {
        gate::width::<T>(exec, region, threshold)
            .min(width)
            .min(chunks.count)
    } else {
        1
    };
    run(exec, site, g, chunks, w, chunk);
    chunks.count
}

/// Runs the chunks on `w` participants, each a contiguous run of chunks; on the caller when
/// `w` is 1 or the call gave up (`exec/call.rs`): the same chunks, so the same bits.
fn run(
    exec: &(impl Executor + ?Sized),
    site: &'static str,
    g: usize,
    chunks: Chunks,
    w: usize,
    chunk: &(dyn Fn(usize, usize, usize) + Sync),
) {
    let busy = Busy::default();
    let count = chunks.count;
    let body = |part: Part<'_>| {
        let (i, pw) = (part.index(), part.width());
        busy.time(i, || {
            for p in i * count / pw..(i + 1) * count / pw {
                let (c0, c1) = chunks.bounds(p);
                chunk(p, c0, c1);
            }
        });
    };
    sections::run(exec, site, g, w, &busy, &body);
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use faer::Mat;

    use super::*;

    /// Two participants on scoped threads, one per section.
    struct Two;

    // SAFETY: `run` calls part `i` of `max(width, 1)` once for each `i`, and the scope joins
    // every thread before it returns (rule 1); the provided chunk methods run on it (rule 2);
    // it offers no barrier (rule 3).
    unsafe impl Executor for Two {
        fn width(&self) -> usize {
            2
        }
        fn dispatch_cost(&self, _: usize) -> Duration {
            Duration::from_nanos(1)
        }
        fn run(&self, width: usize, f: &(dyn Fn(Part<'_>) + Sync)) {
            let width = width.max(1);
            std::thread::scope(|s| {
                for i in 1..width {
                    s.spawn(move || f(Part::new(i, width, None)));
                }
                f(Part::new(0, width, None));
            });
        }
        fn has_barrier(&self) -> bool {
            false
        }
    }

    fn reduced() -> (Mat<f64>, Mat<f64>, Mat<f64>) {
        let (m, n) = (230, 200);
        // Full rank (a splitmix hash): past a zero column the reflectors follow rounding.
        let mut a = Mat::from_fn(m, n, |i, j| {
            let z = ((i * n + j) as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let z = (z ^ (z >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            (z >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        });
        let bs = 8;
        let mut hl = Mat::zeros(bs, n);
        let mut hr = Mat::zeros(bs, n - 1);
        let fixed = Some(ParThreshold::Fixed(0));
        let on = Passes {
            exec: &Two,
            width: 2,
            threshold: fixed,
        };
        let units = crate::svd::cost::bidiag_from(m, n);
        reduce(a.as_mut(), hl.as_mut(), hr.as_mut(), &units, on);
        (a, hl, hr)
    }

    /// Sections a call that gave up takes to the caller work the same chunks: the same bits.
    #[test]
    fn the_caller_works_the_same_chunks() {
        let (parallel, seen) = sections::collect(reduced);
        for site in ["bidiag/left", "bidiag/right", "bidiag/trailing"] {
            assert!(
                seen.iter().any(|s| s.site == site && s.width == 2),
                "{site}"
            );
        }
        let gave_up = crate::exec::call::given_up();
        let (off, seen) = sections::collect(reduced);
        drop(gave_up);
        assert!(seen.iter().all(|s| s.width == 1));
        assert!(parallel == off);
    }
}
