//! Serial rates: nanoseconds per unit of work, one thread, per kernel family.

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

/// A scalar type with a known [`ScalarKind`].
pub trait Scalar {
    /// Which kind it is.
    const KIND: ScalarKind;
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

/// The serial rate of a kernel family: nanoseconds per unit for real (`f64`) and complex
/// (`c64`) scalars. `f32` and `c32` take half.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// ns per unit, `f64`.
    pub real: f64,
    /// ns per unit, `c64`.
    pub cplx: f64,
}

impl Rate {
    /// ns per unit for scalar type `T`.
    #[inline]
    pub fn of<T: Scalar>(&self) -> f64 {
        self.for_kind(T::KIND)
    }

    /// ns per unit for a scalar kind.
    #[inline]
    pub fn for_kind(&self, kind: ScalarKind) -> f64 {
        match kind {
            ScalarKind::F64 => self.real,
            ScalarKind::C64 => self.cplx,
            ScalarKind::F32 => self.real / 2.0,
            ScalarKind::C32 => self.cplx / 2.0,
        }
    }
}

/// A kernel family and its unit of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Family {
    /// GEMM (also block apply, triangular product and solve); unit: multiply-add.
    Gemm,
    /// LU with partial pivoting, whole; unit: flop (2/3 n^3).
    LuPartial,
    /// One step of LU with full pivoting; unit: element of the trailing block.
    LuFullStep,
    /// One step of QR with column pivoting; unit: element of the trailing block.
    QrColPivStep,
    /// One bidiagonalization step; unit: element of the trailing block.
    BidiagStep,
    /// One Hessenberg step; unit: element of n^2.
    HessenbergStep,
    /// One tridiagonalization step; unit: element of rem^2 / 2.
    TridiagStep,
    /// Matrix-vector product; unit: matrix element.
    Matvec,
    /// Householder rank-one apply; unit: target element.
    HouseholderRank1,
    /// Bidiagonal SVD, divide and conquer; unit: m^2.
    BidiagSvdDc,
    /// Tridiagonal EVD, divide and conquer; unit: m^2.
    TridiagEvdDc,
    /// Triangular inverse; unit: m^3.
    TriangularInverse,
    /// Sparse times sparse, numeric phase; unit: multiply-add.
    SparseProduct,
    /// Row swap; unit: swapped element.
    RowSwap,
}

impl Family {
    /// Every family.
    pub const ALL: [Family; 14] = [
        Family::Gemm,
        Family::LuPartial,
        Family::LuFullStep,
        Family::QrColPivStep,
        Family::BidiagStep,
        Family::HessenbergStep,
        Family::TridiagStep,
        Family::Matvec,
        Family::HouseholderRank1,
        Family::BidiagSvdDc,
        Family::TridiagEvdDc,
        Family::TriangularInverse,
        Family::SparseProduct,
        Family::RowSwap,
    ];

    /// The family's name in profiles.
    pub fn name(self) -> &'static str {
        match self {
            Family::Gemm => "gemm",
            Family::LuPartial => "lu_partial",
            Family::LuFullStep => "lu_full_step",
            Family::QrColPivStep => "qr_col_piv_step",
            Family::BidiagStep => "bidiag_step",
            Family::HessenbergStep => "hessenberg_step",
            Family::TridiagStep => "tridiag_step",
            Family::Matvec => "matvec",
            Family::HouseholderRank1 => "householder_rank1",
            Family::BidiagSvdDc => "bidiag_svd_dc",
            Family::TridiagEvdDc => "tridiag_evd_dc",
            Family::TriangularInverse => "triangular_inverse",
            Family::SparseProduct => "sparse_product",
            Family::RowSwap => "row_swap",
        }
    }

    /// The family named `name`.
    pub fn from_name(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The built-in rate (Apple M5, one thread; see `../shared/design.md` section 2). Complex
    /// rates marked "scaled" were not measured: they take four times the real rate (a complex
    /// multiply-add is four real ones; a complex swap moves twice the bytes, so twice).
    pub fn rate(self) -> Rate {
        let r = |real, cplx| Rate { real, cplx };
        match self {
            Family::Gemm => r(0.037, 0.165),
            Family::LuPartial => r(0.030, 0.030 * 4.0), // scaled
            Family::LuFullStep => r(0.216, 0.600),
            Family::QrColPivStep => r(0.202, 0.713),
            Family::BidiagStep => r(0.480, 1.36),
            Family::HessenbergStep => r(0.451, 1.57),
            Family::TridiagStep => r(0.339, 1.16),
            Family::Matvec => r(0.100, 0.340),
            Family::HouseholderRank1 => r(0.212, 0.725),
            Family::BidiagSvdDc => r(53.0, 53.0 * 4.0), // scaled
            Family::TridiagEvdDc => r(31.0, 31.0 * 4.0), // scaled
            Family::TriangularInverse => r(0.0096, 0.0344),
            Family::SparseProduct => r(1.5, 1.8),
            Family::RowSwap => r(0.55, 0.55 * 2.0), // scaled
        }
    }
}

/// How a gated region decides, per kernel family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ParThreshold {
    /// Ask the rule with the family's rate and the token's dispatch cost (the default).
    #[default]
    Derived,
    /// Go parallel only from this many units of the family's unit on.
    Fixed(u64),
    /// Always serial.
    Never,
}
