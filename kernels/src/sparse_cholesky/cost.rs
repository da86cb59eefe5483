//! The sparse Cholesky's work count ([`Family::SparseCholesky`]: multiply-adds of the
//! left-looking supernodal factorization, counted where the step makes them) and the family's
//! built-in rows.
//!
//! [`Family::SparseCholesky`]: teamalg_gates::Family::SparseCholesky

use teamalg_gates::{Anchors, AppleRate, Rows, SplitCost, SplitRow};

use faer::sparse::linalg::cholesky::supernodal::SymbolicSupernodalCholesky;

/// What moving one entry costs (zeroing the block, scattering `A`'s and an update's entries
/// into it), in multiply-adds, and what one supernode's step costs besides its entries and
/// products (finding its descendants' rows, calling the dense kernels). Fitted to faer's serial
/// factorization of eleven 2D and 3D grids (30^2 to 500^2, 8^3 to 26^3) on the AMD EPYC host:
/// 0.038 ns per multiply-add, 2.5 ns per entry and 310 ns per supernode predicted every time
/// within 12 % (the 8^3 grid, 0.24 ms, within 30 %) (`docs/sparse-cholesky.md`, "The cost").
/// Without them a 2D grid's factorization ran 4 times slower per multiply-add than a 3D
/// grid's of the same count.
pub const ENTRY: f64 = 65.0;

/// See [`ENTRY`].
pub const SUPERNODE: f64 = 8000.0;

/// The work of one supernode's step, in multiply-adds: the updates it gathers from its
/// descendants (`descendants`, each the lower part of a product of the descendant's rows from
/// this supernode's first column down by its rows in this supernode's columns), its diagonal
/// block's factorization (`c^3 / 6`) and its panel's solve (`r c^2 / 2`), for `c` columns and
/// `r` rows below; [`ENTRY`] for each entry of its block and of each update, and
/// [`SUPERNODE`].
pub fn supernode(sym: &SymbolicSupernodalCholesky<usize>, s: usize, descendants: &[usize]) -> f64 {
    let (start, end) = (sym.supernode_begin()[s], sym.supernode_end()[s]);
    let c = (end - start) as f64;
    let r = sym.supernode(s).pattern().len() as f64;
    let mut work = SUPERNODE + c * c * c / 6.0 + r * c * c / 2.0 + ENTRY * (c + r) * c;
    for &d in descendants {
        let d_cols = (sym.supernode_end()[d] - sym.supernode_begin()[d]) as f64;
        let pattern = sym.supernode(d).pattern();
        let p0 = pattern.partition_point(|&i| i < start);
        let mid = pattern[p0..].partition_point(|&i| i < end) as f64;
        let rows = (pattern.len() - p0) as f64;
        let entries = rows * mid - mid * (mid - 1.0) / 2.0;
        work += entries * (d_cols + ENTRY);
    }
    work
}

/// Multiply-adds of solving with the factor for `k` right-hand sides: two passes over the
/// factor's `values` entries.
pub fn solve(values: usize, k: usize) -> f64 {
    2.0 * values as f64 * k as f64
}

/// The x86-64 rate, ns per unit: flat, since [`ENTRY`] and [`SUPERNODE`] make the unit the
/// same time at every size (0.038 ns in real arithmetic; complex took 2.5 times as long on a
/// 3D grid of 20^3; single precision is not measured and takes double's).
const ANCHORS: Anchors = [
    (1e5, [0.038, 0.095, 0.038, 0.095]),
    (1e7, [0.038, 0.095, 0.038, 0.095]),
    (1e9, [0.038, 0.095, 0.038, 0.095]),
    (1e11, [0.038, 0.095, 0.038, 0.095]),
];

/// The split at width 2, fitted to the kernel program's cells on the AMD EPYC host
/// (`docs/perf/runs/kernels-log.md`, "The sparse Cholesky"): the factorizations of the 3D grid
/// of 12^3 (1 ms) gained nothing two wide, those of the 2D grid of 100^2 (4 to 6 ms) and
/// larger about 0.6 to 0.75 of serial. The overhead stands for the top's many small sections
/// and the caller's serial work between them.
const SPLIT: SplitRow = (
    SplitCost::new(600000.0, 0.85),
    SplitCost::new(600000.0, 0.85),
);

/// The sparse Cholesky's built-in rows.
pub const ROWS: Rows = Rows::new(Some(ANCHORS), AppleRate::ScaledFromGemm, Some(SPLIT));
