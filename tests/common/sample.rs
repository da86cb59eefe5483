//! Scalar types and reproducible matrices for the kernel tests.

#![allow(dead_code)] // each test file uses its own part

use faer::traits::ComplexField;
use faer::{c32, c64, Mat};
use teamalg::gates::Scalar;

pub(crate) trait Sample: ComplexField + Scalar + Send + Sync + Copy {
    fn sample(i: usize, j: usize, seed: f64) -> Self;
    fn err(a: Self, b: Self) -> f64;
    fn one() -> Self;
    /// Relative tolerance for sums of `k` products.
    fn tol(k: usize) -> f64;
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
}

pub(crate) fn mat<T: Sample>(m: usize, n: usize, seed: f64) -> Mat<T> {
    Mat::from_fn(m, n, |i, j| T::sample(i, j, seed))
}
