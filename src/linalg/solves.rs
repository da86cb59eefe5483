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
                    super::factors::conjugate(rhs.as_mut());
                }
                self.plain_solve(rhs.as_mut(), &teamalg_kernels::par::Seq, p);
                if flip {
                    super::factors::conjugate(rhs);
                }
            }

            #[track_caller]
            fn solve_transpose_in_place_with_conj(&self, conj: faer::Conj, mut rhs: MatMut<'_, T>) {
                let n = self.factors().nrows();
                assert!(self.factors().ncols() == n && rhs.nrows() == n, "solve: shapes");
                let p = teamalg_kernels::triangular::SolveParams::default();
                let flip = conj == faer::Conj::Yes;
                if flip {
                    super::factors::conjugate(rhs.as_mut());
                }
                self.transpose_solve(rhs.as_mut(), &teamalg_kernels::par::Seq, p);
                if flip {
                    super::factors::conjugate(rhs);
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
                let mut x = super::factors::identity::<T>(n);
                faer::linalg::solvers::SolveCore::solve_in_place_with_conj(self, faer::Conj::No, x.as_mut());
                x
            }
        }
    };
}

pub(crate) use faer_solvers;
