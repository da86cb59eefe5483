//! What a Householder QR keeps, plain ([`Qr`](super::Qr)) or pivoted
//! ([`ColPivQr`](super::ColPivQr)): `R` on and above the diagonal of one matrix, the reflectors'
//! vectors below it, their block factors beside it (faer's layout); and `Q` applied or formed
//! from them.

use faer::{Mat, MatMut, MatRef};
use teamalg_gates::Family;
use teamalg_kernels::par::Executor;
use teamalg_kernels::qr::apply_q_in_place;
use teamalg_kernels::triangular::{Diag, Triangle};

use super::check::{self, Stored};
use super::store::Store;
use super::{Dim, Field, LinalgError, Options, TriangularView};

/// A Householder QR's factors and block factors.
#[derive(Debug)]
pub(crate) struct Reflectors<'a, T> {
    pub(crate) factors: Store<'a, T>,
    pub(crate) h: Mat<T>,
}

impl<T: Field> Reflectors<'_, T> {
    pub(crate) fn factors(&self) -> MatRef<'_, T> {
        self.factors.as_ref()
    }

    /// `min(m, n)`: the reflectors, and `R`'s rows.
    pub(crate) fn size(&self) -> usize {
        let f = self.factors();
        f.nrows().min(f.ncols())
    }

    /// `R`, `min(m, n) x n`, upper trapezoidal: a view into the factors.
    pub(crate) fn r(&self) -> TriangularView<'_, T> {
        let f = self.factors();
        TriangularView::new(f.subrows(0, self.size()), Triangle::Upper, Diag::NonUnit)
    }

    /// `Q B` or `Q^H B` in place on `exec` (family `Qr`'s threshold from `options`), unchecked.
    pub(crate) fn q_on(
        &self,
        b: MatMut<'_, T>,
        adjoint: bool,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) {
        let basis = self.factors().subcols(0, self.size());
        let threshold = options.get(Family::Qr);
        apply_q_in_place(basis, self.h.as_ref(), b, adjoint, exec, threshold);
    }

    /// [`Reflectors::q_on`] after the checks of `op`: `b` has `m` rows and, when the options
    /// ask, is finite.
    pub(crate) fn apply(
        &self,
        op: &'static str,
        b: MatMut<'_, T>,
        adjoint: bool,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<(), LinalgError> {
        check::dim(op, "B", Dim::Rows, self.factors().nrows(), b.nrows())?;
        if options.checks_finite() {
            check::finite(op, "B", b.as_ref(), Stored::All)?;
        }
        self.q_on(b, adjoint, exec, options);
        Ok(())
    }

    /// The first `cols` columns of `Q` (`Q` applied to the first columns of the identity),
    /// sized before anything is formed: `OutOfMemory` (named `op`) for a `Q` that cannot be had.
    pub(crate) fn q_cols(
        &self,
        op: &'static str,
        cols: usize,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<Mat<T>, LinalgError> {
        let mut q = super::scratch::zeros::<T>(op, self.factors().nrows(), cols)?;
        for i in 0..cols.min(q.nrows()) {
            q[(i, i)] = T::one_impl();
        }
        self.q_on(q.as_mut(), false, exec, options);
        Ok(q)
    }
}
