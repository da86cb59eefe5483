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
            pub fn solve<B: Conjugate<Canonical = T>>(
                &self,
                b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<Mat<T>, LinalgError> {
                let mut x = b.as_mat_ref().to_owned();
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
            pub fn solve_transpose<B: Conjugate<Canonical = T>>(
                &self,
                b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<Mat<T>, LinalgError> {
                let mut x = b.as_mat_ref().to_owned();
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
                super::factors::conjugate(b.as_mut());
                self.transpose_solve(b.as_mut(), exec, p);
                super::factors::conjugate(b);
                Ok(())
            }

            /// The solution `X` of `A^H X = B`, on `exec`.
            pub fn solve_adjoint<B: Conjugate<Canonical = T>>(
                &self,
                b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<Mat<T>, LinalgError> {
                let mut x = b.as_mat_ref().to_owned();
                self.solve_adjoint_in_place(x.as_mut(), exec)?;
                Ok(x)
            }

            /// Overwrites `b` with the solution `X` of the right solve `X A = B` (`A^T X^T =
            /// B^T`; `B` has `A`'s order as its column count), on `exec`.
            pub fn rsolve_in_place(
                &self,
                mut b: impl faer::mat::AsMatMut<T = T, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<(), LinalgError> {
                let b = b.as_mat_mut().transpose_mut();
                let p = self.ready("rsolve", &b)?;
                self.transpose_solve(b, exec, p);
                Ok(())
            }

            /// The solution `X` of `X A = B`, on `exec`.
            pub fn rsolve<B: Conjugate<Canonical = T>>(
                &self,
                b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<Mat<T>, LinalgError> {
                let mut x = b.as_mat_ref().to_owned();
                self.rsolve_in_place(x.as_mut(), exec)?;
                Ok(x)
            }

            /// Overwrites `b` with the solution `X` of `X A^H = B` (`A conj(X)^T =
            /// conj(B)^T`), on `exec`.
            pub fn rsolve_adjoint_in_place(
                &self,
                mut b: impl faer::mat::AsMatMut<T = T, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<(), LinalgError> {
                let mut b = b.as_mat_mut().transpose_mut();
                let p = self.ready("rsolve_adjoint", &b)?;
                super::factors::conjugate(b.as_mut());
                self.plain_solve(b.as_mut(), exec, p);
                super::factors::conjugate(b);
                Ok(())
            }

            /// The solution `X` of `X A^H = B`, on `exec`.
            pub fn rsolve_adjoint<B: Conjugate<Canonical = T>>(
                &self,
                b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<Mat<T>, LinalgError> {
                let mut x = b.as_mat_ref().to_owned();
                self.rsolve_adjoint_in_place(x.as_mut(), exec)?;
                Ok(x)
            }

            /// `A^-1`, solving against the identity on `exec`.
            pub fn inverse(&self, exec: &(impl Executor + ?Sized)) -> Result<Mat<T>, LinalgError> {
                let n = self.factors().nrows();
                let mut x = super::factors::identity::<T>(n);
                let p = self.ready("inverse", &x.as_mut())?;
                self.plain_solve(x.as_mut(), exec, p);
                Ok(x)
            }
        }
    };
}

pub(crate) use solve_forms;
