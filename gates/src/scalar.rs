//! The scalar types teamalg's kernels offer, and the sealed trait that names them.

use num_complex::{Complex32, Complex64};

/// The scalar types teamalg's kernels offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarKind {
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `Complex<f32>`.
    C32,
    /// `Complex<f64>`.
    C64,
}

/// A scalar type with a known [`ScalarKind`]: exactly `f32`, `f64`, `Complex32` and
/// `Complex64`. The trait is sealed, so `KIND` names the type itself, and code may rely on it:
/// teamalg's finiteness check reads a slice of a `Scalar` of kind `C64` as twice as many `f64`s.
///
/// ```compile_fail
/// struct Mine;
/// impl teamalg_gates::Scalar for Mine { // sealed: not implementable outside the crate
///     const KIND: teamalg_gates::ScalarKind = teamalg_gates::ScalarKind::F64;
/// }
/// ```
pub trait Scalar: sealed::Sealed {
    /// Which kind it is.
    const KIND: ScalarKind;
}

mod sealed {
    /// Only the four types below are scalars.
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for num_complex::Complex32 {}
    impl Sealed for num_complex::Complex64 {}
}

impl Scalar for f32 {
    const KIND: ScalarKind = ScalarKind::F32;
}
impl Scalar for f64 {
    const KIND: ScalarKind = ScalarKind::F64;
}
impl Scalar for Complex32 {
    const KIND: ScalarKind = ScalarKind::C32;
}
impl Scalar for Complex64 {
    const KIND: ScalarKind = ScalarKind::C64;
}
