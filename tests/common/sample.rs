//! Scalar types, reproducible matrices and the executors for the kernel tests.

#![allow(dead_code)] // each test file uses its own part

use faer::linalg::matmul::matmul as faer_matmul;
use faer::traits::math_utils::{add, conj, from_f64, mul_real};
use faer::{Accum, Mat, Par, c32, c64};
use teamalg::kernels::par::{Executor, Seq};
use teamalg::{Exec, Pool, Team};

pub(crate) trait Sample: teamalg::linalg::Field + Copy {
    fn sample(i: usize, j: usize, seed: f64) -> Self;
    fn err(a: Self, b: Self) -> f64;
    fn one() -> Self;
    /// Relative tolerance for sums of `k` products.
    fn tol(k: usize) -> f64;
    /// The unit roundoff of the real type (half the distance from 1 to the next number).
    fn unit() -> f64;
}

/// The constant of every backward-error bound of the factorization and decomposition tests:
/// a residual is accepted when `||residual||_F <= C u n ||A||_F`, `u` the unit roundoff of the
/// scalar type ([`Sample::unit`]) and `n` the larger dimension. LAPACK's tests use 30.
pub(crate) const C: f64 = 30.0;

/// `||a||_F`, accumulated in `f64`.
pub(crate) fn norm<T: Sample>(a: faer::MatRef<'_, T>) -> f64 {
    let mut s = 0.0f64;
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            let x = T::err(a[(i, j)], faer::traits::math_utils::zero());
            s += x * x;
        }
    }
    s.sqrt()
}

/// `C u n ||A||_F`: the backward-error bound for a problem of size `n` on a matrix of norm
/// `norm_a` (see [`C`]).
pub(crate) fn backward_bound<T: Sample>(n: usize, norm_a: f64) -> f64 {
    C * T::unit() * n.max(1) as f64 * norm_a
}

/// Asserts `||residual||_F <= C u n ||A||_F` (see [`C`]).
pub(crate) fn assert_backward<T: Sample>(
    what: &str,
    residual: faer::MatRef<'_, T>,
    n: usize,
    norm_a: f64,
) {
    let r = norm(residual);
    let bound = backward_bound::<T>(n, norm_a);
    assert!(
        r <= bound,
        "{what}: ||residual|| = {r:e} > {C} u n ||A|| = {bound:e} (n = {n}, ||A|| = {norm_a:e})"
    );
}

/// A real value of the scalar type `T` (an `f32` or `f64`), as `f64`.
pub(crate) fn real_f64<T: Sample>(x: T::Real) -> f64 {
    let t: T = faer::traits::math_utils::from_real(&x);
    T::err(t, faer::traits::math_utils::zero())
}

/// A reproducible pseudo-random value in [-1, 1) for entry (i, j) (splitmix64 of the
/// position and seed), so test matrices are full rank.
pub(crate) fn val(i: usize, j: usize, seed: f64) -> f64 {
    let mut z = (i as u64)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add((j as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9))
        .wrapping_add(seed.to_bits());
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

impl Sample for f64 {
    fn sample(i: usize, j: usize, s: f64) -> Self {
        val(i, j, s)
    }
    fn err(a: Self, b: Self) -> f64 {
        (a - b).abs()
    }
    fn one() -> Self {
        1.0
    }
    fn tol(k: usize) -> f64 {
        1e-13 * (k as f64 + 1.0)
    }
    fn unit() -> f64 {
        f64::EPSILON / 2.0
    }
}
impl Sample for f32 {
    fn sample(i: usize, j: usize, s: f64) -> Self {
        val(i, j, s) as f32
    }
    fn err(a: Self, b: Self) -> f64 {
        (a - b).abs() as f64
    }
    fn one() -> Self {
        1.0
    }
    fn tol(k: usize) -> f64 {
        1e-5 * (k as f64 + 1.0)
    }
    fn unit() -> f64 {
        f32::EPSILON as f64 / 2.0
    }
}
impl Sample for c64 {
    fn sample(i: usize, j: usize, s: f64) -> Self {
        c64::new(val(i, j, s), val(j, i, s * 1.3))
    }
    fn err(a: Self, b: Self) -> f64 {
        (a - b).norm()
    }
    fn one() -> Self {
        c64::new(1.0, 0.0)
    }
    fn tol(k: usize) -> f64 {
        1e-13 * (k as f64 + 1.0)
    }
    fn unit() -> f64 {
        f64::EPSILON / 2.0
    }
}
impl Sample for c32 {
    fn sample(i: usize, j: usize, s: f64) -> Self {
        c32::new(val(i, j, s) as f32, val(j, i, s * 1.3) as f32)
    }
    fn err(a: Self, b: Self) -> f64 {
        (a - b).norm() as f64
    }
    fn one() -> Self {
        c32::new(1.0, 0.0)
    }
    fn tol(k: usize) -> f64 {
        1e-5 * (k as f64 + 1.0)
    }
    fn unit() -> f64 {
        f32::EPSILON as f64 / 2.0
    }
}

pub(crate) fn mat<T: Sample>(m: usize, n: usize, seed: f64) -> Mat<T> {
    Mat::from_fn(m, n, |i, j| T::sample(i, j, seed))
}

/// `B B^H + n I` for a reproducible `B`: Hermitian positive definite.
pub(crate) fn spd<T: Sample>(n: usize, seed: f64) -> Mat<T> {
    let b = mat::<T>(n, n, seed);
    let mut a = Mat::<T>::zeros(n, n);
    faer_matmul(
        a.as_mut(),
        Accum::Replace,
        b.as_ref(),
        b.adjoint(),
        T::one(),
        Par::Seq,
    );
    for i in 0..n {
        a[(i, i)] += from_f64::<T>(n as f64);
    }
    a
}

/// `(B + B^H) / 2` for a reproducible `B`: Hermitian.
pub(crate) fn hermitian<T: Sample>(n: usize, seed: f64) -> Mat<T> {
    let b = mat::<T>(n, n, seed);
    let half = from_f64::<T::Real>(0.5);
    Mat::from_fn(n, n, |i, j| {
        mul_real(&add(&b[(i, j)], &conj(&b[(j, i)])), &half)
    })
}

/// A team of `width` on a pool of its own.
pub(crate) fn team(width: usize) -> Team {
    Pool::builder()
        .threads(width)
        .build()
        .unwrap()
        .into_team(width)
        .unwrap()
}

/// Runs `f` on every executor a kernel meets, each with whether it is forced to its full width:
/// the serial ones, plain tokens and teams ([`serial_executors`], [`plain_tokens`],
/// [`team_executors`]). A test that a kernel gives the same result everywhere passes one
/// closure here that compares with its reference.
pub(crate) fn every_executor(f: impl Fn(&dyn Executor, bool)) {
    serial_executors(&f);
    plain_tokens(&f);
    team_executors(&f);
}

/// Runs `f` on the serial executors: `Seq` (forced: the kernels must cope with a forced width
/// they cannot have) and a serial token (gated).
pub(crate) fn serial_executors(f: impl Fn(&dyn Executor, bool)) {
    f(&Seq, true);
    f(&Exec::serial(), false);
}

/// Runs `f` on plain tokens of a pool of 3: all of it, forced, and two of it, gated.
pub(crate) fn plain_tokens(f: impl Fn(&dyn Executor, bool)) {
    let pool = Pool::builder().threads(3).build().unwrap();
    f(&Exec::new(&pool, 3).unwrap(), true);
    f(&Exec::new(&pool, 2).unwrap(), false);
}

/// Runs `f` on a team of 3 (the team itself, a team token, a scoped team; forced) and on a
/// team token of 2 (gated).
pub(crate) fn team_executors(f: impl Fn(&dyn Executor, bool)) {
    let team = team(3);
    f(&team, true);
    f(&team.exec(3), true);
    team.exec(3).team(|t| f(&t, true)).unwrap();
    f(&team.exec(2), false);
}
