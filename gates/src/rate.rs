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

/// The serial rate of a kernel family: nanoseconds per unit, one thread, per scalar type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// ns per unit, `f64`.
    pub real: f64,
    /// ns per unit, `c64`.
    pub cplx: f64,
    /// ns per unit, `f32`.
    pub real_single: f64,
    /// ns per unit, `c32`.
    pub cplx_single: f64,
}

impl Rate {
    /// A rate whose single-precision types take half the time of the double ones (twice the
    /// lanes per vector): the assumption for rows where single precision was not measured.
    pub const fn halved(real: f64, cplx: f64) -> Rate {
        Rate {
            real,
            cplx,
            real_single: real / 2.0,
            cplx_single: cplx / 2.0,
        }
    }

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
            ScalarKind::F32 => self.real_single,
            ScalarKind::C32 => self.cplx_single,
        }
    }

    /// The four rates, in the order `f64, c64, f32, c32` (the profile's order).
    pub fn values(&self) -> [f64; 4] {
        [self.real, self.cplx, self.real_single, self.cplx_single]
    }
}

/// A kernel family and its unit of work. The families of teamalg's own kernels (GEMM,
/// triangular solve, LU, Cholesky, QR) count multiply-adds, so one unit means the same work in
/// each and a family's rate says how fast its kernel runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Family {
    /// GEMM; unit: multiply-add (`m n k`).
    Gemm,
    /// Triangular solve with many right-hand sides; unit: multiply-add (`n^2 k / 2`).
    TriangularSolve,
    /// LU with partial pivoting; unit: multiply-add (`n^3 / 3` when square).
    LuPartial,
    /// Cholesky; unit: multiply-add (`n^3 / 6`).
    Cholesky,
    /// Householder QR; unit: multiply-add (`m n^2 - n^3 / 3`).
    Qr,
    /// `LDL^H` without pivoting; unit: multiply-add (`n^3 / 6`).
    Ldlt,
    /// Bunch-Kaufman `L B L^H`; unit: multiply-add (`n^3 / 6`).
    Lblt,
    /// One step of LU with full pivoting; unit: element of the trailing block.
    LuFullStep,
    /// One step of QR with column pivoting; unit: element of the trailing block.
    QrColPivStep,
    /// One bidiagonalization step; unit: element of the trailing block.
    BidiagStep,
    /// One tridiagonalization step; unit: element of rem^2 / 2.
    TridiagStep,
    /// Householder rank-one apply; unit: target element.
    HouseholderRank1,
    /// Bidiagonal SVD, divide and conquer; unit: m^2.
    BidiagSvdDc,
    /// Tridiagonal EVD, divide and conquer; unit: m^2.
    TridiagEvdDc,
    /// Sparse times sparse, numeric phase; unit: multiply-add.
    SparseProduct,
}

/// How many families there are.
pub const FAMILIES: usize = 15;

impl Family {
    /// Every family.
    pub const ALL: [Family; FAMILIES] = [
        Family::Gemm,
        Family::TriangularSolve,
        Family::LuPartial,
        Family::Cholesky,
        Family::Qr,
        Family::Ldlt,
        Family::Lblt,
        Family::LuFullStep,
        Family::QrColPivStep,
        Family::BidiagStep,
        Family::TridiagStep,
        Family::HouseholderRank1,
        Family::BidiagSvdDc,
        Family::TridiagEvdDc,
        Family::SparseProduct,
    ];

    /// The family's position in [`Family::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The family's name in profiles, tables and `TEAMALG_THRESHOLDS`.
    pub fn name(self) -> &'static str {
        match self {
            Family::Gemm => "gemm",
            Family::TriangularSolve => "triangular_solve",
            Family::LuPartial => "lu",
            Family::Cholesky => "cholesky",
            Family::Qr => "qr",
            Family::Ldlt => "ldlt",
            Family::Lblt => "lblt",
            Family::LuFullStep => "lu_full_step",
            Family::QrColPivStep => "qr_col_piv_step",
            Family::BidiagStep => "bidiag_step",
            Family::TridiagStep => "tridiag_step",
            Family::HouseholderRank1 => "householder_rank1",
            Family::BidiagSvdDc => "bidiag_svd_dc",
            Family::TridiagEvdDc => "tridiag_evd_dc",
            Family::SparseProduct => "sparse_product",
        }
    }

    /// The family named `name` (its [`Family::name`], or `lu_partial` and `trsm` for LU and
    /// the triangular solve).
    pub fn from_name(name: &str) -> Option<Family> {
        match name {
            "lu_partial" => Some(Family::LuPartial),
            "trsm" => Some(Family::TriangularSolve),
            _ => Family::ALL.into_iter().find(|f| f.name() == name),
        }
    }

    /// The families whose regions teamalg's kernels gate today, which `teamalg calibrate`
    /// measures.
    pub const KERNELS: [Family; 5] = [
        Family::Gemm,
        Family::TriangularSolve,
        Family::LuPartial,
        Family::Cholesky,
        Family::Qr,
    ];
}

/// The most anchors a [`RateCurve`] holds.
pub const MAX_RATE_ANCHORS: usize = 8;

/// A family's serial rate as a function of the call's size: anchors `(units, rate)` measured at
/// a few sizes (small calls run fewer units per nanosecond), interpolated linearly in
/// `ln(units)` between anchors and taken flat beyond the first and the last.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateCurve {
    units: [f64; MAX_RATE_ANCHORS],
    rates: [Rate; MAX_RATE_ANCHORS],
    len: u8,
}

impl RateCurve {
    /// One rate at every size.
    pub const fn flat(rate: Rate) -> RateCurve {
        RateCurve {
            units: [1.0; MAX_RATE_ANCHORS],
            rates: [rate; MAX_RATE_ANCHORS],
            len: 1,
        }
    }

    /// A curve through `(units, rate)` anchors with positive, strictly increasing units and
    /// positive finite rates (1 to [`MAX_RATE_ANCHORS`] of them).
    pub fn new(anchors: &[(f64, Rate)]) -> Result<RateCurve, String> {
        if anchors.is_empty() || anchors.len() > MAX_RATE_ANCHORS {
            return Err(format!(
                "a rate curve holds 1 to {MAX_RATE_ANCHORS} anchors ({} given)",
                anchors.len()
            ));
        }
        let mut c = RateCurve::flat(anchors[0].1);
        for (i, &(u, r)) in anchors.iter().enumerate() {
            if !(u.is_finite() && u > 0.0) || (i > 0 && u <= anchors[i - 1].0) {
                return Err(format!(
                    "anchor units must be positive and increasing ({u})"
                ));
            }
            if r.values().iter().any(|x| !(x.is_finite() && *x > 0.0)) {
                return Err(format!("rates must be positive ({r:?})"));
            }
            c.units[i] = u;
            c.rates[i] = r;
        }
        c.len = anchors.len() as u8;
        Ok(c)
    }

    /// The same curve with every rate multiplied by `factor` (a host `1 / factor` times as
    /// fast).
    pub fn scaled(mut self, factor: f64) -> RateCurve {
        for r in &mut self.rates {
            *r = Rate {
                real: r.real * factor,
                cplx: r.cplx * factor,
                real_single: r.real_single * factor,
                cplx_single: r.cplx_single * factor,
            };
        }
        self
    }

    /// The anchors, in order.
    pub fn anchors(&self) -> impl Iterator<Item = (f64, Rate)> + '_ {
        (0..self.len as usize).map(|i| (self.units[i], self.rates[i]))
    }

    /// The rate of a call of `units` units.
    pub fn at(&self, units: f64) -> Rate {
        let n = self.len as usize;
        if n == 1 || units.is_nan() || units <= self.units[0] {
            return self.rates[0];
        }
        if units >= self.units[n - 1] {
            return self.rates[n - 1];
        }
        let i = (1..n).find(|&i| self.units[i] >= units).unwrap_or(n - 1);
        let (u0, u1) = (self.units[i - 1].ln(), self.units[i].ln());
        let t = (units.ln() - u0) / (u1 - u0);
        let (a, b) = (self.rates[i - 1].values(), self.rates[i].values());
        let v = |k: usize| a[k] + (b[k] - a[k]) * t;
        Rate {
            real: v(0),
            cplx: v(1),
            real_single: v(2),
            cplx_single: v(3),
        }
    }
}
