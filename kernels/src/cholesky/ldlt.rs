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
use faer::linalg::temp_mat_scratch;
use faer::linalg::temp_mat_zeroed;
use faer::linalg::triangular_solve::solve_unit_lower_triangular_in_place;
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::traits::math_utils::{mul_real, real, recip};
use faer::traits::ComplexField;
use faer::{MatMut, Par};
use teamalg_gates::{Family, ParThreshold, Scalar};

use super::lower_update::LowerUpdate;
use crate::exec::call::Call;
use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::Executor;

/// Parameters of [`ldlt_in_place`].
#[derive(Debug, Clone, Copy, Default)]
pub struct LdltParams {
    /// Panel width; 0 picks one from the size (the Cholesky's, [`super::llt::block_size`]).
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
    let bs = super::llt::block_size(n).min(n);
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
        0 => super::llt::block_size(n),
        b => b,
    };
    let call = if n > bs {
        let units = crate::cholesky::cost::llt(n);
        let region = Region {
            site: "ldlt",
            dims: [n, n, bs],
            units,
            family: Family::Ldlt,
            sections: n.div_ceil(bs) - 1,
            scope: Scope::Call,
            call_units: units,
        };
        Some(gate::call::<T>(exec, region, params.threshold))
    } else {
        None
    };
    let w = call.as_ref().map_or(1, Call::width);
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
        let region = Region {
            site: "ldlt/panel",
            dims: [n - k, t, b],
            units: (t * t) as f64 * b as f64 / 2.0,
            family: Family::Ldlt,
            sections: 1,
            scope: Scope::Section,
            call_units: crate::cholesky::cost::llt(n),
        };
        let wk = gate::width::<T>(exec, region, params.threshold).min(w);
        let (left, trailing) = a.rb_mut().subrows_mut(k + b, t).split_at_col_mut(k + b);
        let l21 = left.rb().subcols(k, b);
        LowerUpdate::new(trailing, l21, w_panel.rb(), false).run(exec, wk);
        k += b;
    }
    Ok(())
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
