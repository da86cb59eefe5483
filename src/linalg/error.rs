//! What a linear-algebra call can refuse, with every field a value a program can act on.

use std::fmt;

/// Which dimension of an operand a [`LinalgError::ShapeMismatch`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dim {
    /// Its number of rows.
    Rows,
    /// Its number of columns.
    Cols,
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dim::Rows => "rows",
            Dim::Cols => "columns",
        })
    }
}

/// What a linear-algebra call can refuse. Every variant names the operation (`op`, also
/// [`LinalgError::op`]); those about an input name the operand as the call's documentation
/// does (`"A"`, `"B"`, `"C"`, `"alpha"`).
///
/// The checks (`ShapeMismatch`, `NotSquare`, `NotFinite`, `Singular`, `NotTall`) run before
/// anything is written: the call then changed nothing. `NotPositiveDefinite` and
/// `NoConvergence` are found while computing: an in-place Cholesky then leaves a partial
/// factorization (see the variant), the owned [`Cholesky::new`](super::Cholesky::new) leaves
/// the input as it was; an SVD or EVD leaves its outputs holding no result and its input as
/// it was.
///
/// ```
/// use faer::{Accum, Mat};
/// use teamalg::linalg::{self, Dim, LinalgError};
/// use teamalg::Exec;
///
/// let (a, b) = (Mat::<f64>::ones(3, 4), Mat::<f64>::ones(5, 2));
/// let mut c = Mat::<f64>::zeros(3, 2);
/// let err = linalg::matmul(c.as_mut(), Accum::Replace, a.as_ref(), b.as_ref(), 1.0, &Exec::serial());
/// assert_eq!(
///     err,
///     Err(LinalgError::ShapeMismatch { op: "matmul", operand: "B", dim: Dim::Rows, expected: 4, found: 5 })
/// );
/// assert_eq!(err.unwrap_err().to_string(), "matmul: B has 5 rows, 4 expected");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum LinalgError {
    /// An operand's dimension does not fit the others'.
    ShapeMismatch {
        /// The operation.
        op: &'static str,
        /// The operand.
        operand: &'static str,
        /// Which of its dimensions.
        dim: Dim,
        /// What the other operands need.
        expected: usize,
        /// What it has.
        found: usize,
    },
    /// A matrix that must be square is not.
    NotSquare {
        /// The operation.
        op: &'static str,
        /// The operand.
        operand: &'static str,
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
    },
    /// An input holds a NaN or an infinity where the operation reads it (see the module's NaN
    /// policy).
    NotFinite {
        /// The operation.
        op: &'static str,
        /// The operand.
        operand: &'static str,
        /// The row of the first such entry found (0 for a scalar).
        row: usize,
        /// Its column (0 for a scalar).
        col: usize,
    },
    /// The norm given to an `rcond` (`a_norm`, `||A||_1`) is NaN, infinite or negative: no
    /// norm, and no estimate could be made from it.
    NotANorm {
        /// The operation.
        op: &'static str,
    },
    /// Cholesky: the matrix is not positive definite; the pivot of column `index` was not
    /// positive. An in-place factorization holds the factor of its leading `index` columns and
    /// an updated remainder (as LAPACK's `potrf`).
    NotPositiveDefinite {
        /// The operation.
        op: &'static str,
        /// The column whose pivot failed.
        index: usize,
    },
    /// A singular factorization or a solve (or inverse) with one: the pivot `index` is zero
    /// (the diagonal entry of LU's `U`, of `LDL^H`'s `D`, Bunch-Kaufman's block, or the
    /// eigenvalue), or a triangular solve ([`solve_triangular`](super::solve_triangular), a
    /// [`TriangularView`](super::TriangularView)'s solve, a batch's) meets a zero on a
    /// non-unit diagonal at `index`. [`Qr`](super::Qr)'s own solves report a singular `R` as
    /// [`LinalgError::RankDeficient`] instead.
    Singular {
        /// The operation.
        op: &'static str,
        /// The first zero pivot.
        index: usize,
    },
    /// Least squares asked of a QR of a wide matrix (`rows < cols`): the system is
    /// underdetermined. Factor the adjoint instead and use
    /// [`Qr::min_norm_adjoint`](super::Qr::min_norm_adjoint) for the minimum-norm solution.
    NotTall {
        /// The operation.
        op: &'static str,
        /// The factored matrix's rows.
        rows: usize,
        /// Its columns.
        cols: usize,
    },
    /// Least squares or a solve with a QR whose `R` is singular, exactly (a zero on its
    /// diagonal, as a column equal to an earlier one or a combination of others leaves it) or
    /// numerically: its condition estimate ([`Qr::rcond`](super::Qr::rcond)) is at most `k`
    /// times the machine epsilon (`k = min(m, n)`), so the answer would carry no correct
    /// digit; or a [`FullPivLu`](super::FullPivLu) solve whose numerical rank is short. `rank`
    /// is the numerical rank (for a QR, from `R`'s singular values, at most `k - 1`; for a
    /// `SparseQr`, the count of `R`'s diagonal entries above its tolerance, an estimate), `of`
    /// the rank a solution needs. Use
    /// [`ColPivQr::lstsq`](super::ColPivQr::lstsq) or [`Svd::lstsq`](super::Svd::lstsq) for
    /// the minimum-norm solution of a rank-deficient system; the message names both.
    RankDeficient {
        /// The operation.
        op: &'static str,
        /// The estimated numerical rank.
        rank: usize,
        /// The full rank, `min(m, n)`.
        of: usize,
    },
    /// The scratch a `_with_scratch` call was given holds less than its `_scratch` function
    /// asks for; nothing was written.
    ScratchTooSmall {
        /// The operation.
        op: &'static str,
        /// The bytes the call needs (its `_scratch` function's `unaligned_bytes_required`).
        needed: usize,
        /// The bytes the stack holds.
        held: usize,
    },
    /// The system's estimated reciprocal condition number is below the floor the call's
    /// options set ([`Options::min_rcond`](super::Options::min_rcond)), or, for
    /// [`Eigen::inverse`](super::Eigen::inverse), the eigenvector matrix's is at most `n` times
    /// the machine epsilon: the solution could have no correct digit, so none is returned;
    /// `B` is unchanged.
    IllConditioned {
        /// The operation.
        op: &'static str,
        /// The estimate, `1 / (||A||_1 est(||A^-1||_1))`.
        rcond: f64,
        /// The floor it is below.
        limit: f64,
    },
    /// An `LDL^H` without pivoting ([`Ldlt::new`](super::Ldlt::new)) whose factors grew too
    /// large: `growth`, `|| |L| |D| |L|^H ||_inf / ||A||_inf` ([`Ldlt::growth`](super::Ldlt::growth)),
    /// is above `limit`, so a solve's backward error could be `growth` times a stable one's.
    /// The matrix needs pivoting: use [`Lblt`](super::Lblt) (Bunch-Kaufman).
    PivotGrowth {
        /// The operation.
        op: &'static str,
        /// The growth measured.
        growth: f64,
        /// The bound it is above.
        limit: f64,
    },
    /// A Hermitian call checked its input ([`Options::check_hermitian`](super::Options::check_hermitian))
    /// and `A[(row, col)]` differs from the conjugate of `A[(col, row)]` by more than rounding
    /// (`row == col`: a diagonal entry with an imaginary part); nothing was written.
    NotHermitian {
        /// The operation.
        op: &'static str,
        /// The entry's row.
        row: usize,
        /// The entry's column.
        col: usize,
    },
    /// An iterative decomposition (SVD, self-adjoint EVD) did not converge within its
    /// documented iteration limit (`docs/svd.md`); the outputs hold no result. Not seen on any
    /// finite input so far: report the matrix.
    NoConvergence {
        /// The operation.
        op: &'static str,
    },
    /// The result has more entries than its index type can count (a sparse product with `u32`
    /// indices and more than `i32::MAX` entries: faer's limit is the signed maximum of the
    /// index type). Use a wider index type (`u64`, `usize`).
    IndexOverflow {
        /// The operation.
        op: &'static str,
    },
    /// The result could not be allocated: an owned form's result, copy or scratch (sized
    /// before anything is read, so a huge operand is refused at once), or a sparse product
    /// whose structure does not fit in memory.
    OutOfMemory {
        /// The operation.
        op: &'static str,
    },
    /// A sparse matrix factored with an analysis made for another pattern: column `col` holds
    /// other row indices than the analysed pattern's (or the same in another order). Analyse
    /// the new pattern (`SymbolicCholesky::new`).
    PatternMismatch {
        /// The operation.
        op: &'static str,
        /// The first column that differs.
        col: usize,
    },
    /// A sparse matrix whose pattern no values can make nonsingular (`SymbolicLu::new`), or
    /// of full column rank (`SymbolicQr::new`): in the analysis's column order, column `index`
    /// of `A` is the first that no remaining row can pivot, as when rows without entries, or
    /// more columns than rows meeting a set of rows, leave a column uncovered. A numerical
    /// zero pivot is [`LinalgError::Singular`], a numerically rank-deficient matrix
    /// [`LinalgError::RankDeficient`].
    StructurallySingular {
        /// The operation.
        op: &'static str,
        /// `A`'s column.
        index: usize,
    },
    /// A batch's slices do not hold one entry per problem (`linalg::batch`): the operand
    /// slice has `found` entries where the batch has `expected` problems.
    BatchLength {
        /// The operation.
        op: &'static str,
        /// The operand slice.
        operand: &'static str,
        /// The problems of the batch (the first operand's length).
        expected: usize,
        /// The operand's entries.
        found: usize,
    },
}

impl LinalgError {
    /// The operation that refused.
    pub fn op(&self) -> &'static str {
        // A copy's name, taken out of it: `op_mut` is the one place that lists the variants.
        let mut e = *self;
        std::mem::take(e.op_mut())
    }

    /// The same error, as the operation `op`'s: the refusal of an inner call named by the
    /// public call the caller made.
    pub(crate) fn named(mut self, op: &'static str) -> Self {
        *self.op_mut() = op;
        self
    }

    /// Every variant's operation (exhaustive: a new variant must be named here).
    fn op_mut(&mut self) -> &mut &'static str {
        match self {
            LinalgError::ShapeMismatch { op, .. }
            | LinalgError::NotSquare { op, .. }
            | LinalgError::NotFinite { op, .. }
            | LinalgError::NotANorm { op }
            | LinalgError::NotPositiveDefinite { op, .. }
            | LinalgError::Singular { op, .. }
            | LinalgError::NotTall { op, .. }
            | LinalgError::RankDeficient { op, .. }
            | LinalgError::IllConditioned { op, .. }
            | LinalgError::PivotGrowth { op, .. }
            | LinalgError::ScratchTooSmall { op, .. }
            | LinalgError::NotHermitian { op, .. }
            | LinalgError::NoConvergence { op }
            | LinalgError::IndexOverflow { op }
            | LinalgError::OutOfMemory { op }
            | LinalgError::PatternMismatch { op, .. }
            | LinalgError::StructurallySingular { op, .. }
            | LinalgError::BatchLength { op, .. } => op,
        }
    }
}

impl fmt::Display for LinalgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LinalgError::ShapeMismatch {
                op,
                operand,
                dim,
                expected,
                found,
            } => write!(f, "{op}: {operand} has {found} {dim}, {expected} expected"),
            LinalgError::NotSquare {
                op,
                operand,
                rows,
                cols,
            } => write!(f, "{op}: {operand} must be square, it is {rows}x{cols}"),
            LinalgError::NotFinite {
                op,
                operand,
                row,
                col,
            } => write!(f, "{op}: {operand}[({row}, {col})] is not finite"),
            LinalgError::NotANorm { op } => write!(
                f,
                "{op}: a_norm is not a norm of A (NaN, infinite or negative)"
            ),
            LinalgError::NotPositiveDefinite { op, index } => write!(
                f,
                "{op}: the matrix is not positive definite (pivot {index} is not positive)"
            ),
            LinalgError::Singular { op, index } => {
                write!(f, "{op}: the matrix is singular (pivot {index} is zero)")
            }
            LinalgError::NotTall { op, rows, cols } => write!(
                f,
                "{op}: A is {rows}x{cols}, wider than tall (underdetermined: factor A^H and use min_norm_adjoint)"
            ),
            LinalgError::RankDeficient { op, rank, of } => write!(
                f,
                "{op}: A is numerically rank-deficient (estimated rank {rank} of {of}): use ColPivQr::lstsq or Svd::lstsq for the minimum-norm solution"
            ),
            LinalgError::ScratchTooSmall { op, needed, held } => write!(
                f,
                "{op}: the scratch holds {held} bytes, {needed} needed (size it with the call's _scratch function)"
            ),
            LinalgError::IllConditioned { op, rcond, limit } => write!(
                f,
                "{op}: A is ill-conditioned (estimated reciprocal condition number {rcond:.1e}, below the limit {limit:.1e})"
            ),
            LinalgError::PivotGrowth { op, growth, limit } => write!(
                f,
                "{op}: without pivoting the factors grew {growth:.1e} times larger than A (limit {limit:.1e}): use Lblt (Bunch-Kaufman) for this indefinite matrix"
            ),
            LinalgError::NotHermitian { op, row, col } => write!(
                f,
                "{op}: A is not Hermitian: A[({row}, {col})] differs from the conjugate of A[({col}, {row})]"
            ),
            LinalgError::NoConvergence { op } => {
                write!(f, "{op}: the iteration did not converge")
            }
            LinalgError::IndexOverflow { op } => write!(
                f,
                "{op}: the result has more entries than its index type can count"
            ),
            LinalgError::OutOfMemory { op } => write!(f, "{op}: the result does not fit in memory"),
            LinalgError::PatternMismatch { op, col } => write!(
                f,
                "{op}: column {col} of A has another pattern than the analysis was made for (analyse the new pattern)"
            ),
            LinalgError::StructurallySingular { op, index } => write!(
                f,
                "{op}: the pattern is structurally singular (no row can pivot column {index})"
            ),
            LinalgError::BatchLength {
                op,
                operand,
                expected,
                found,
            } => write!(
                f,
                "{op}: {operand} has {found} entries, one per problem ({expected}) expected"
            ),
        }
    }
}

// Equality is reflexive: the only floats, `IllConditioned`'s estimate and floor and
// `PivotGrowth`'s growth and bound, are never NaN (a NaN estimate is reported as 0,
// `Options::min_rcond` refuses a NaN floor, and a NaN growth is not above any bound).
impl Eq for LinalgError {}

impl std::error::Error for LinalgError {}
