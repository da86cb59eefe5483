//! `A = L D L^H` without pivoting (lower, `L` unit lower triangular, `D` real diagonal),
//! blocked right-looking.
//!
//! Per panel of `block_size` columns: the diagonal block is factored by faer's serial
//! `LDL^H`, the panel below it solved (`W = A21 L11^-H`, kept in a buffer, and `L21 = W
//! D1^-1` in place), then ONE section updates the lower triangle of the trailing matrix, `A22
//! -= L21 W^H`, in column chunks balanced by cost (a column's update shrinks with its index),
//! each chunk a faer triangular product on its diagonal block and a GEMM below it, as the
//! Cholesky's. When the gate keeps the call serial (family [`Family::Ldlt`]), the matrix goes
//! to faer's serial `LDL^H`. Only the lower triangle is read. Design record:
//! `docs/kernels.md`.

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::cholesky::ldlt::factor::{
    cholesky_in_place as faer_ldlt, cholesky_in_place_scratch as faer_ldlt_scratch, LdltError,
};
use faer::linalg::matmul::matmul as faer_matmul;
use faer::linalg::matmul::triangular::{matmul as triangular_matmul, BlockStructure};
use faer::linalg::temp_mat_scratch;
use faer::linalg::temp_mat_zeroed;
use faer::linalg::triangular_solve::solve_unit_lower_triangular_in_place;
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::traits::math_utils::{mul_real, one, real, recip};
use faer::traits::ComplexField;
use faer::{Accum, MatMut, MatRef, Par};
use teamalg_gates::{Family, ParThreshold, Scalar};

use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::Executor;
use crate::exec::tiles::Tiles;

/// Parameters of [`ldlt_in_place`].
#[derive(Debug, Clone, Copy, Default)]
pub struct LdltParams {
    /// Panel width; 0 picks one from the size (the Cholesky's, [`super::cholesky::block_size`]).
    pub block_size: usize,
    /// How the call and each panel's section decide to go parallel (family
    /// [`Family::Ldlt`]); `None` leaves it to the executor's model.
    pub threshold: Option<ParThreshold>,
}

/// A pivot of `D` was exactly zero: the matrix has no `LDL^H` without pivoting (it may still
/// have a pivoted one, Bunch-Kaufman's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZeroPivot {
    /// The column whose pivot was zero.
    pub index: usize,
}

/// The scratch [`ldlt_in_place`] needs for an `n x n` matrix: faer's serial path's, or a
/// panel's worth of buffer for the parallel one.
pub fn ldlt_in_place_scratch<T: ComplexField>(n: usize) -> StackReq {
    let bs = super::cholesky::block_size(n).min(n);
    StackReq::any_of(&[
        faer_ldlt_scratch::<T>(n, Par::Seq, Default::default()),
        StackReq::all_of(&[
            faer_ldlt_scratch::<T>(bs, Par::Seq, Default::default()),
            temp_mat_scratch::<T>(n, bs),
        ]),
    ])
}

/// Factors the lower triangle of the Hermitian matrix `A` in place as `A = L D L^H`: `L`
/// strictly below the diagonal (its unit diagonal implicit), `D` on the diagonal (real parts
/// only). The strict upper triangle is not read; afterwards it holds unspecified values. On
/// error the matrix holds a partial factorization.
///
/// # Panics
/// When `A` is not square or the stack is smaller than [`ldlt_in_place_scratch`].
pub fn ldlt_in_place<T>(
    mut a: MatMut<'_, T>,
    exec: &(impl Executor + ?Sized),
    params: LdltParams,
    stack: &mut MemStack,
) -> Result<(), ZeroPivot>
where
    T: ComplexField + Scalar + Send + Sync,
{
    let n = a.nrows();
    assert_eq!(a.ncols(), n, "ldlt_in_place: A must be square");
    let bs = match params.block_size {
        0 => super::cholesky::block_size(n),
        b => b,
    };
    let w = if n > bs {
        let units = (n as f64).powi(3) / 6.0;
        let region = Region {
            site: "ldlt",
            dims: [n, n, bs],
            units,
            family: Family::Ldlt,
            sections: n.div_ceil(bs) - 1,
            scope: Scope::Call,
            call_units: units,
        };
        gate::width::<T>(exec, region, params.threshold)
    } else {
        1
    };
    if w <= 1 {
        return factor_block(a, 0, stack);
    }
    exec.warm(w);
    let (mut buf, stack) = temp_mat_zeroed::<T, _, _>(n, bs, stack);
    let mut buf = buf.as_mat_mut();
    let mut k = 0;
    while k < n {
        let b = bs.min(n - k);
        factor_block(a.rb_mut().submatrix_mut(k, k, b, b), k, stack)?;
        let t = n - k - b;
        if t == 0 {
            break;
        }
        let (top, mut below) = a.rb_mut().subcols_mut(k, b).split_at_row_mut(k + b);
        let l11 = top.rb().subrows(k, b);
        let mut w_panel = buf.rb_mut().submatrix_mut(0, 0, t, b);
        let mut l21 = below.rb_mut();
        // W L11^H = A21  <=>  conj(L11) W^T = A21^T.
        solve_unit_lower_triangular_in_place(
            l11.conjugate(),
            l21.rb_mut().transpose_mut(),
            Par::Seq,
        );
        w_panel.copy_from(l21.rb());
        for j in 0..b {
            let d_inv = recip(&real(&l11[(j, j)]));
            for i in 0..t {
                l21[(i, j)] = mul_real(&l21[(i, j)], &d_inv);
            }
        }
        let trailing = a.rb_mut().submatrix_mut(k + b, k + b, t, t);
        let step = Step {
            c: Tiles::new(trailing),
            l21: a.rb().submatrix(k + b, k, t, b),
            w: w_panel.rb(),
        };
        let region = Region {
            site: "ldlt/panel",
            dims: [n - k, t, b],
            units: (t * t) as f64 * b as f64 / 2.0,
            family: Family::Ldlt,
            sections: 1,
            scope: Scope::Section,
            call_units: (n as f64).powi(3) / 6.0,
        };
        let wk = gate::width::<T>(exec, region, params.threshold).min(w);
        if wk <= 1 {
            step.columns(0, t);
        } else {
            exec.run_chunks(wk, &|c, chunks| {
                step.columns(split(c, chunks, t), split(c + 1, chunks, t));
            });
        }
        k += b;
    }
    Ok(())
}

/// The first column of chunk `c` of `chunks` over a lower triangle of `t` columns, cut so
/// that each chunk updates about as many entries (column `j` has `t - j`).
fn split(c: usize, chunks: usize, t: usize) -> usize {
    if c >= chunks {
        return t;
    }
    let frac = c as f64 / chunks as f64;
    let x = t as f64 * (1.0 - (1.0 - frac).sqrt());
    (x.round() as usize).min(t)
}

/// One panel's update of the trailing lower triangle, shared by its participants.
struct Step<'a, T> {
    c: Tiles<T>,
    l21: MatRef<'a, T>,
    w: MatRef<'a, T>,
}

// SAFETY (`Sync` is derived from the parts): `Tiles` is `Sync` for `T: Send`, and the two
// views are read-only `MatRef`s, `Sync` for `T: Sync`.
impl<T: ComplexField> Step<'_, T> {
    /// `C -= L21[c.., :] W[c0..c1, :]^H` on the lower triangle of columns `c0..c1`.
    fn columns(&self, c0: usize, c1: usize) {
        let w = c1 - c0;
        if w == 0 {
            return;
        }
        let t = self.c.nrows();
        // SAFETY: the chunks partition the trailing columns; a chunk's tile is its columns'
        // lower part, rows c0..t, which no other chunk touches; `l21` and `w` lie outside the
        // trailing matrix (the panel and the buffer).
        let cols = unsafe { self.c.tile(c0, t, c0, c1) };
        let lhs = self.l21.subrows(c0, t - c0);
        let rhs = self.w.subrows(c0, w).adjoint();
        let (diag, below) = cols.split_at_row_mut(w);
        let (lhs_diag, lhs_below) = lhs.split_at_row(w);
        let minus = -one::<T>();
        triangular_matmul(
            diag,
            BlockStructure::TriangularLower,
            Accum::Add,
            lhs_diag,
            BlockStructure::Rectangular,
            rhs,
            BlockStructure::Rectangular,
            minus.clone(),
            Par::Seq,
        );
        faer_matmul(below, Accum::Add, lhs_below, rhs, minus, Par::Seq);
    }
}

/// Factors the diagonal block `diag` (starting at column `k`) with faer's serial `LDL^H`.
fn factor_block<T: ComplexField>(
    diag: MatMut<'_, T>,
    k: usize,
    stack: &mut MemStack,
) -> Result<(), ZeroPivot> {
    faer_ldlt(
        diag,
        Default::default(),
        Par::Seq,
        stack,
        Default::default(),
    )
    .map(|_| ())
    .map_err(|LdltError::ZeroPivot { index }| ZeroPivot { index: k + index })
}
