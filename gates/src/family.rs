//! The family list: every kernel family, its name and unit of work, and how its split scales
//! beyond the widths measured. A family's built-in rows (its serial rate and split costs) are
//! its kernel's (`kernels/src/<decomposition>/cost.rs`), handed to the gates through a
//! [`Catalogue`](crate::Catalogue).

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
    /// Sparse Cholesky, numeric phase (supernodal, left-looking); unit: multiply-add of the
    /// supernodes' updates, diagonal blocks and panels.
    SparseCholesky,
    /// Sparse LU with partial pivoting, numeric phase (multifrontal over the column tree);
    /// unit: multiply-add of the fronts' panels, solves and updates.
    SparseLu,
    /// Sparse QR, numeric phase (multifrontal over the column tree); unit: multiply-add of the
    /// fronts' Householder factorizations.
    SparseQr,
}

/// How many families there are.
pub const FAMILIES: usize = 18;

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
        Family::SparseCholesky,
        Family::SparseLu,
        Family::SparseQr,
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
            Family::SparseCholesky => "sparse_cholesky",
            Family::SparseLu => "sparse_lu",
            Family::SparseQr => "sparse_qr",
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

    /// How fast the family's efficiency falls beyond the widest width its split was fitted at,
    /// as the `g` of `efficiency(k) = efficiency(w) (w / k)^g`: fitted to the efficiencies the
    /// 16-core Intel Xeon runs imply (`docs/scale.md`, "The model's extrapolation"), at 2048
    /// where that row was measured at every width, else at 1024. GEMM's fell from 0.96 at
    /// width 2 to 0.69 at 16 (`g` 0.16 at 1024, 0.21 at 4096), LU's from 0.89 to 0.37 (0.42),
    /// Cholesky's by 0.69 from width 4 to 16 at 2048 and 0.79 at 1024, QR's by 0.94 to 0.96
    /// from width 4. The triangular solve takes GEMM's (its parallel part is the same blocked
    /// product); the families those runs did not measure take 0.5, about the middle of the
    /// measured ones.
    pub fn decay(self) -> f64 {
        match self {
            Family::Gemm | Family::TriangularSolve => 0.2,
            Family::LuPartial => 0.4,
            Family::Cholesky | Family::Ldlt | Family::Lblt => 0.7,
            Family::Qr => 0.9,
            _ => 0.5,
        }
    }
}
