//! Condition estimates: the 1-norm estimator of Hager and Higham (LAPACK's `xLACN2`), which
//! finds `||X||_1` of a matrix known only through products with `X` and `X^H`, in a few of
//! each. A factorization's `rcond` applies it to `X = A^{-1}` through its solves, so an estimate
//! costs a few triangular solves, `O(n^2)`, against the factorization's `O(n^3)`.
//!
//! The estimate is a lower bound of `||A^{-1}||_1` (it is `||A^{-1} x||_1` for an `x` with
//! `||x||_1 = 1`), almost always within a factor of 3 of it, so `rcond` is an upper bound of
//! the true reciprocal condition number, almost always within a factor of 3.

use std::sync::OnceLock;

use faer::mat::AsMatRef;
use faer::traits::math_utils::{
    abs, abs1, from_f64, is_finite, is_nan, mul_real, one, recip, zero,
};
use faer::{Mat, MatMut, MatRef};
use teamalg_kernels::par::Seq;
use teamalg_kernels::triangular::{self, Diag, SolveParams, SolveSide, Triangle};

use super::check::Stored;
use super::views::conjugate;
use super::{real_to_f64, Field, LinalgError, Options};

/// The most products with `X` the estimator makes after its first (LAPACK's `ITMAX`).
const ITERATIONS: usize = 5;

/// `||x||_1` of a column, with the modulus of each entry.
fn norm1<T: Field>(x: MatRef<'_, T>) -> T::Real {
    (0..x.nrows()).fold(zero(), |s, i| s + abs(&x[(i, 0)]))
}

/// Overwrites the column's entries with their signs: each divided by its magnitude (1 where
/// an entry is zero).
fn to_signs<T: Field>(mut x: MatMut<'_, T>) {
    for i in 0..x.nrows() {
        let m = abs(&x[(i, 0)]);
        x[(i, 0)] = if m == zero() {
            one()
        } else {
            mul_real(&x[(i, 0)], &recip(&m))
        };
    }
}

/// The index of the entry of largest magnitude (the first of equals).
fn largest<T: Field>(x: MatRef<'_, T>) -> usize {
    (0..x.nrows()).fold(0, |j, i| {
        if abs(&x[(i, 0)]) > abs(&x[(j, 0)]) {
            i
        } else {
            j
        }
    })
}

/// Estimates `||X||_1` of an `n x n` matrix `X` given `apply(x, adjoint)`, which overwrites
/// the column `x` with `X x` (or `X^H x` when `adjoint`). Hager's method with Higham's
/// refinements (LAPACK's `xLACN2`): at most 2 + 2 [`ITERATIONS`] products. Not finite when a
/// product overflows (an `apply` that fails fills `x` with NaN to say so). Its one column of
/// workspace is allocated here; [`norm1_estimate_in`] takes it from the caller.
pub(crate) fn norm1_estimate<T: Field>(
    n: usize,
    apply: impl FnMut(MatMut<'_, T>, bool),
) -> T::Real {
    let mut x = Mat::<T>::zeros(n, 1);
    norm1_estimate_in(x.as_mut(), apply)
}

/// [`norm1_estimate`] in the caller's column `x` (`n x 1`, its entries overwritten): every
/// vector of the estimator lives there in turn, so the estimate allocates nothing.
pub(crate) fn norm1_estimate_in<T: Field>(
    mut x: MatMut<'_, T>,
    mut apply: impl FnMut(MatMut<'_, T>, bool),
) -> T::Real {
    let n = x.nrows();
    if n == 0 {
        return zero();
    }
    x.fill(from_f64(1.0 / n as f64));
    apply(x.as_mut(), false);
    let mut estimate = norm1(x.as_ref());
    if n == 1 || !is_finite(&estimate) {
        return estimate;
    }
    to_signs(x.as_mut());
    apply(x.as_mut(), true);
    let mut j = largest(x.as_ref());
    for _ in 0..ITERATIONS {
        x.fill(zero());
        x[(j, 0)] = one();
        apply(x.as_mut(), false);
        let next = norm1(x.as_ref());
        if !is_finite(&next) {
            return next;
        }
        if next <= estimate {
            break;
        }
        estimate = next;
        to_signs(x.as_mut());
        apply(x.as_mut(), true);
        let last = j;
        j = largest(x.as_ref());
        if abs(&x[(last, 0)]) >= abs(&x[(j, 0)]) {
            break;
        }
    }
    // Higham's alternative vector, which catches the matrices the iteration underestimates.
    for i in 0..n {
        let v = 1.0 + i as f64 / (n - 1) as f64;
        x[(i, 0)] = from_f64(if i % 2 == 0 { v } else { -v });
    }
    apply(x.as_mut(), false);
    let other = norm1(x.as_ref()) * from_f64::<T::Real>(2.0 / (3.0 * n as f64));
    if other > estimate {
        other
    } else {
        estimate
    }
}

/// `||A||_1`: the largest column sum, of `|re| + |im|` for a complex entry (as faer's
/// `norm_l1` and BLAS's `dzasum` measure; within a factor of `sqrt 2` of the sum of moduli),
/// through faer's vectorized sums: about one read of `A`. The norm the `rcond` of
/// [`Lu`](super::Lu) and [`Cholesky`](super::Cholesky) take. NaN when an entry is NaN (a NaN
/// column sum wins, as in LAPACK's `dlange`), else infinite when an entry is.
///
/// ```
/// use faer::Mat;
/// let a = Mat::<f64>::from_fn(2, 2, |i, j| [[1.0, -4.0], [2.0, 3.0]][i][j]);
/// assert_eq!(teamalg::linalg::norm_l1(&a), 7.0);
/// ```
pub fn norm_l1<T: Field>(a: impl AsMatRef<T = T, Rows = usize, Cols = usize>) -> T::Real {
    let a = a.as_mat_ref();
    (0..a.ncols()).fold(zero(), |m: T::Real, j| larger(m, a.col(j).norm_l1()))
}

/// The larger of a running maximum `m` and a column sum `s`, NaN once either is (as LAPACK's
/// `dlange`): `s > m` alone is false for a NaN `s`, which the maximum would then drop.
fn larger<R: faer::traits::RealField>(m: R, s: R) -> R {
    if is_nan(&m) {
        m
    } else if is_nan(&s) || s > m {
        s
    } else {
        m
    }
}

/// `1 / (||A||_1 est(||A^{-1}||_1))` of an order-`n` matrix: 1 for the empty matrix (as
/// LAPACK's `gecon`), 0 for a zero matrix or when the inverse's estimate is not finite.
pub(crate) fn reciprocal<T: Field>(n: usize, norm: T::Real, inverse_norm: T::Real) -> T::Real {
    if n == 0 {
        one()
    } else if norm == zero() || inverse_norm == zero() || !is_finite(&inverse_norm) {
        zero()
    } else {
        recip(&(norm * inverse_norm))
    }
}

/// Refuses an `a_norm` given to an `rcond` that is no norm (NaN, infinite or negative): the
/// estimate from it would be NaN, zero or negative, never a number to compare with a limit.
pub(crate) fn norm_arg<T: Field>(a_norm: &T::Real) -> Result<(), LinalgError> {
    if is_finite(a_norm) && *a_norm >= zero::<T::Real>() {
        return Ok(());
    }
    Err(LinalgError::NotANorm { op: "rcond" })
}

/// The estimated reciprocal condition number of the upper triangle of the square `r`, in
/// `[0, 1]` (LAPACK's `trcon` in the 1-norm): a few serial triangular solves, `O(n^2)`;
/// exactly 0 when a diagonal entry is zero.
pub(crate) fn triangular_rcond<T: Field>(r: MatRef<'_, T>) -> T::Real {
    let mut x = Mat::<T>::zeros(r.nrows(), 1);
    triangular_rcond_in(r, x.as_mut())
}

/// [`triangular_rcond`] with the estimator's column from the caller (`n x 1`).
pub(crate) fn triangular_rcond_in<T: Field>(r: MatRef<'_, T>, work: MatMut<'_, T>) -> T::Real {
    let k = r.nrows();
    if (0..k).any(|i| r[(i, i)] == zero::<T>()) {
        return zero();
    }
    let norm = (0..k).fold(zero::<T::Real>(), |m, j| {
        let s = r.col(j).subrows(0, j + 1).norm_l1();
        if s > m {
            s
        } else {
            m
        }
    });
    let p = SolveParams::default();
    let (left, upper, lower) = (SolveSide::Left, Triangle::Upper, Triangle::Lower);
    let inverse = norm1_estimate_in::<T>(work, |mut x, adjoint| {
        if adjoint {
            // R^H x = b  <=>  R^T conj(x) = conj(b).
            conjugate(x.as_mut());
            triangular::solve_in_place(r.transpose(), x.as_mut(), left, lower, Diag::NonUnit, &Seq, p);
            conjugate(x.as_mut());
        } else {
            triangular::solve_in_place(r, x.as_mut(), left, upper, Diag::NonUnit, &Seq, p);
        }
    });
    reciprocal::<T>(k, norm, inverse)
}

/// `||A||_1` of the Hermitian matrix whose lower triangle `a` holds, as [`norm_l1`] measures
/// it (`|re| + |im|` per entry): one read of the triangle, each strict entry counted in its
/// column and in its mirror's.
fn hermitian_norm_l1<T: Field>(a: MatRef<'_, T>) -> T::Real {
    let n = a.nrows();
    let mut sums = vec![zero::<T::Real>(); n];
    for j in 0..n {
        for i in j..n {
            let v = abs1(&a[(i, j)]);
            if i != j {
                sums[i] += v;
            }
            sums[j] += v;
        }
    }
    sums.into_iter().fold(zero(), larger)
}

/// The solves' guard of a factorization made with [`Options::min_rcond`]: `||A||_1`, measured
/// before the factorization overwrites `A`, and the estimate, made by the first guarded solve
/// and kept for the others (both as `f64`, exact for the real types).
#[derive(Debug, Default)]
pub(crate) struct Guard {
    norm: Option<f64>,
    estimate: OnceLock<f64>,
}

impl Guard {
    /// Measures `a` (all of it, or the lower triangle of a Hermitian matrix) when the options
    /// set a floor; nothing otherwise.
    pub(crate) fn measure<T: Field>(a: MatRef<'_, T>, options: &Options, stored: Stored) -> Self {
        let norm = options.rcond_limit().map(|_| {
            real_to_f64::<T>(&match stored {
                Stored::Lower => hermitian_norm_l1::<T>(a),
                _ => norm_l1(a),
            })
        });
        Guard {
            norm,
            estimate: OnceLock::new(),
        }
    }

    /// `Err(IllConditioned)` when the options set a floor and the estimate (`rcond` of
    /// `||A||_1`, made once) is below it.
    pub(crate) fn check<T: Field>(
        &self,
        op: &'static str,
        options: &Options,
        rcond: impl FnOnce(T::Real) -> T::Real,
    ) -> Result<(), LinalgError> {
        let (Some(limit), Some(norm)) = (options.rcond_limit(), self.norm) else {
            return Ok(());
        };
        let estimate = *self.estimate.get_or_init(|| {
            let r = real_to_f64::<T>(&rcond(from_f64(norm)));
            // NaN (factors that are not finite) reads as singular.
            if r.is_nan() {
                0.0
            } else {
                r
            }
        });
        if estimate < limit {
            return Err(LinalgError::IllConditioned {
                op,
                rcond: estimate,
                limit,
            });
        }
        Ok(())
    }
}
