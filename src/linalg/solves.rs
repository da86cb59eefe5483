//! The solve forms every square factorization offers, written once: a type gives its checks
//! (`ready`) and its two unchecked solves (`plain_solve`: `A X = B`, `transpose_solve`:
//! `A^T X = B`), and [`solve_forms`] makes the public calls: left solves with `A`, `A^T` and
//! `A^H`, right solves (`X A = B`, `X A^H = B`), each in place and owned, and the inverse.

/// The public solve calls of a factorization type `$ty` (with a lifetime when `$lt` is
/// given), from its `ready`, `plain_solve` and `transpose_solve`.
macro_rules! solve_forms {
    ($ty:ident $(<$lt:lifetime>)?) => {
        impl<T: Field> $ty<$($lt,)? T> {
            /// Overwrites `b` with the solution `X` of `A X = B`, on `exec`.
            pub fn solve_in_place(
                &self,
                mut b: impl faer::mat::AsMatMut<T = T, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<(), LinalgError> {
                let b = b.as_mat_mut();
                let p = self.ready("solve", &b)?;
                self.plain_solve(b, exec, p);
                Ok(())
            }

            /// The solution `X` of `A X = B` (`B` may be a conjugated view), on `exec`.
            /// Errors: those of the in-place form, and [`LinalgError::OutOfMemory`] when `X`
            /// cannot be allocated (sized before `B` is read).
            pub fn solve<B: Conjugate<Canonical = T>>(
                &self,
                b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<Mat<T>, LinalgError> {
                // Sized before `B` is read: a `B` too large to copy is refused at once.
                let mut x = super::scratch::copy("solve", b.as_mat_ref())?;
                self.solve_in_place(x.as_mut(), exec)?;
                Ok(x)
            }

            /// Overwrites `b` with the solution `X` of `A^T X = B`, on `exec`.
            pub fn solve_transpose_in_place(
                &self,
                mut b: impl faer::mat::AsMatMut<T = T, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<(), LinalgError> {
                let b = b.as_mat_mut();
                let p = self.ready("solve_transpose", &b)?;
                self.transpose_solve(b, exec, p);
                Ok(())
            }

            /// The solution `X` of `A^T X = B`, on `exec`.
            /// Errors: those of the in-place form, and [`LinalgError::OutOfMemory`] when `X`
            /// cannot be allocated (sized before `B` is read).
            pub fn solve_transpose<B: Conjugate<Canonical = T>>(
                &self,
                b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<Mat<T>, LinalgError> {
                // Sized before `B` is read: a `B` too large to copy is refused at once.
                let mut x = super::scratch::copy("solve_transpose", b.as_mat_ref())?;
                self.solve_transpose_in_place(x.as_mut(), exec)?;
                Ok(x)
            }

            /// Overwrites `b` with the solution `X` of `A^H X = B` (`A^T conj(X) =
            /// conj(B)`), on `exec`.
            pub fn solve_adjoint_in_place(
                &self,
                mut b: impl faer::mat::AsMatMut<T = T, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<(), LinalgError> {
                let mut b = b.as_mat_mut();
                // Checked before the conjugation, so a refused call leaves `b` as it was.
                let p = self.ready("solve_adjoint", &b)?;
                super::views::conjugate(b.as_mut());
                self.transpose_solve(b.as_mut(), exec, p);
                super::views::conjugate(b);
                Ok(())
            }

            /// The solution `X` of `A^H X = B`, on `exec`.
            /// Errors: those of the in-place form, and [`LinalgError::OutOfMemory`] when `X`
            /// cannot be allocated (sized before `B` is read).
            pub fn solve_adjoint<B: Conjugate<Canonical = T>>(
                &self,
                b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<Mat<T>, LinalgError> {
                // Sized before `B` is read: a `B` too large to copy is refused at once.
                let mut x = super::scratch::copy("solve_adjoint", b.as_mat_ref())?;
                self.solve_adjoint_in_place(x.as_mut(), exec)?;
                Ok(x)
            }

            /// Overwrites `b` with the solution `X` of the right solve `X A = B` (`A^T X^T =
            /// B^T`; `B` has `A`'s order as its column count), on `exec`. Errors: those of
            /// [`Self::solve_in_place`], about `B` as passed: a
            /// [`LinalgError::ShapeMismatch`] names its columns, a [`LinalgError::NotFinite`]
            /// its `(row, col)`.
            pub fn rsolve_in_place(
                &self,
                mut b: impl faer::mat::AsMatMut<T = T, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<(), LinalgError> {
                let b = b.as_mat_mut().transpose_mut();
                let p = self.ready("rsolve", &b).map_err(super::solves::as_passed)?;
                self.transpose_solve(b, exec, p);
                Ok(())
            }

            /// The solution `X` of `X A = B`, on `exec`.
            /// Errors: those of the in-place form, and [`LinalgError::OutOfMemory`] when `X`
            /// cannot be allocated (sized before `B` is read).
            pub fn rsolve<B: Conjugate<Canonical = T>>(
                &self,
                b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<Mat<T>, LinalgError> {
                // Sized before `B` is read: a `B` too large to copy is refused at once.
                let mut x = super::scratch::copy("rsolve", b.as_mat_ref())?;
                self.rsolve_in_place(x.as_mut(), exec)?;
                Ok(x)
            }

            /// Overwrites `b` with the solution `X` of `X A^H = B` (`A conj(X)^T =
            /// conj(B)^T`; `B` has `A`'s order as its column count), on `exec`. Errors: as
            /// [`Self::rsolve_in_place`]'s, about `B` as passed.
            pub fn rsolve_adjoint_in_place(
                &self,
                mut b: impl faer::mat::AsMatMut<T = T, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<(), LinalgError> {
                let mut b = b.as_mat_mut().transpose_mut();
                let p = self.ready("rsolve_adjoint", &b).map_err(super::solves::as_passed)?;
                super::views::conjugate(b.as_mut());
                self.plain_solve(b.as_mut(), exec, p);
                super::views::conjugate(b);
                Ok(())
            }

            /// The solution `X` of `X A^H = B`, on `exec`.
            /// Errors: those of the in-place form, and [`LinalgError::OutOfMemory`] when `X`
            /// cannot be allocated (sized before `B` is read).
            pub fn rsolve_adjoint<B: Conjugate<Canonical = T>>(
                &self,
                b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<Mat<T>, LinalgError> {
                // Sized before `B` is read: a `B` too large to copy is refused at once.
                let mut x = super::scratch::copy("rsolve_adjoint", b.as_mat_ref())?;
                self.rsolve_adjoint_in_place(x.as_mut(), exec)?;
                Ok(x)
            }

            /// `A^-1`, solving against the identity on `exec`.
            pub fn inverse(&self, exec: &(impl Executor + ?Sized)) -> Result<Mat<T>, LinalgError> {
                let n = self.factors().nrows();
                let mut x = super::views::identity::<T>(n);
                let p = self.ready("inverse", &x.as_mut())?;
                self.plain_solve(x.as_mut(), exec, p);
                Ok(x)
            }
        }
    };
}

pub(crate) use solve_forms;

/// An error of `ready`, which a right solve runs on `B^T`, about `B` as the caller passed it:
/// `B^T`'s rows are `B`'s columns and its entry `(i, j)` is `B`'s `(j, i)`. Mapping the error,
/// rather than checking `B` again before `ready`, keeps the order of each type's checks (its
/// shape, singularity and finiteness refusals) the same as the left solves'.
pub(crate) fn as_passed(e: super::LinalgError) -> super::LinalgError {
    use super::{Dim, LinalgError};
    match e {
        LinalgError::ShapeMismatch {
            op,
            operand: "B",
            dim: Dim::Rows,
            expected,
            found,
        } => LinalgError::ShapeMismatch {
            op,
            operand: "B",
            dim: Dim::Cols,
            expected,
            found,
        },
        LinalgError::NotFinite {
            op,
            operand: "B",
            row,
            col,
        } => LinalgError::NotFinite {
            op,
            operand: "B",
            row: col,
            col: row,
        },
        e => e,
    }
}

/// faer's solver traits (`SolveCore`, `DenseSolveCore`, and so `Solve` and `DenseSolve`) for a
/// factorization type, so that code generic over faer's decompositions takes it. Their
/// contract has no error and no executor: the solves run serially on the calling thread, with
/// no checks but the shapes (a mismatch panics, as faer's do), and a singular factorization
/// gives non-finite results, as faer's.
macro_rules! faer_solvers {
    ($ty:ident $(<$lt:lifetime>)?) => {
        impl<T: Field> faer::linalg::solvers::ShapeCore for $ty<$($lt,)? T> {
            fn nrows(&self) -> usize {
                self.factors().nrows()
            }
            fn ncols(&self) -> usize {
                self.factors().ncols()
            }
        }

        impl<T: Field> faer::linalg::solvers::SolveCore<T> for $ty<$($lt,)? T> {
            #[track_caller]
            fn solve_in_place_with_conj(&self, conj: faer::Conj, mut rhs: MatMut<'_, T>) {
                let n = self.factors().nrows();
                assert!(self.factors().ncols() == n && rhs.nrows() == n, "solve: shapes");
                let p = teamalg_kernels::triangular::SolveParams::default();
                // conj(A) X = B  <=>  A conj(X) = conj(B).
                let flip = conj == faer::Conj::Yes;
                if flip {
                    super::views::conjugate(rhs.as_mut());
                }
                self.plain_solve(rhs.as_mut(), &teamalg_kernels::par::Seq, p);
                if flip {
                    super::views::conjugate(rhs);
                }
            }

            #[track_caller]
            fn solve_transpose_in_place_with_conj(&self, conj: faer::Conj, mut rhs: MatMut<'_, T>) {
                let n = self.factors().nrows();
                assert!(self.factors().ncols() == n && rhs.nrows() == n, "solve: shapes");
                let p = teamalg_kernels::triangular::SolveParams::default();
                let flip = conj == faer::Conj::Yes;
                if flip {
                    super::views::conjugate(rhs.as_mut());
                }
                self.transpose_solve(rhs.as_mut(), &teamalg_kernels::par::Seq, p);
                if flip {
                    super::views::conjugate(rhs);
                }
            }
        }

        impl<T: Field> faer::linalg::solvers::DenseSolveCore<T> for $ty<$($lt,)? T> {
            fn reconstruct(&self) -> Mat<T> {
                $ty::reconstruct(self)
            }

            #[track_caller]
            fn inverse(&self) -> Mat<T> {
                let n = self.factors().nrows();
                let mut x = super::views::identity::<T>(n);
                faer::linalg::solvers::SolveCore::solve_in_place_with_conj(self, faer::Conj::No, x.as_mut());
                x
            }
        }
    };
}

pub(crate) use faer_solvers;
