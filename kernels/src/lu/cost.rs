//! LU's work counts, in its families' units: multiply-adds for partial pivoting
//! ([`Family::LuPartial`]), an element of the trailing block a step updates for full pivoting
//! ([`Family::LuFullStep`]). The kernels and the batch ([`crate::drive::batch`]) read them
//! here, so one LU is counted one way.
//!
//! [`Family::LuPartial`]: teamalg_gates::Family::LuPartial
//! [`Family::LuFullStep`]: teamalg_gates::Family::LuFullStep

use teamalg_gates::{AppleRate, Rate, Rows, SplitCost};

/// Multiply-adds of an LU of a `rows x cols` matrix (`rows * cols * r - (rows + cols) r^2 / 2
/// + r^3 / 3` with `r` the smaller side; `n^3 / 3` when square).
pub fn partial(rows: usize, cols: usize) -> f64 {
    let (m, n) = (rows as f64, cols as f64);
    let r = m.min(n);
    m * n * r - (m + n) * r * r / 2.0 + r * r * r / 3.0
}

/// Multiply-adds of solving with the factors of order `n` for `k` right-hand sides (the two
/// triangular solves).
pub fn solve(n: usize, k: usize) -> f64 {
    let n = n as f64;
    n * n * k as f64
}

/// Multiply-adds to update one trailing column: the triangular solve and the GEMM.
pub(crate) fn update_column(rows_below: usize, b: usize) -> f64 {
    rows_below as f64 * b as f64 + (b * b) as f64 / 2.0
}

/// Multiply-adds of factoring a `rows x b` panel.
pub(crate) fn panel(rows: usize, b: usize) -> f64 {
    rows as f64 * (b * b) as f64 / 2.0
}

/// Units of work of full pivoting's steps from `k` on, for an `m x n` matrix (an element of
/// the trailing block a step updates).
pub fn full_pivot_from(m: usize, n: usize, k: usize) -> f64 {
    (k..m.min(n))
        .map(|s| ((m - s - 1) * (n - s - 1)) as f64)
        .sum()
}

/// Partial pivoting's built-in rows ([`Family::LuPartial`](teamalg_gates::Family::LuPartial)).
pub const PARTIAL_ROWS: Rows = Rows::new(
    Some([
        (10923.0, [0.2732, 0.4502, 0.2980, 0.4933]),
        (87381.0, [0.1464, 0.2913, 0.1301, 0.2328]),
        (699051.0, [0.0866, 0.2152, 0.0673, 0.1399]),
        (5592405.0, [0.0620, 0.1864, 0.0403, 0.1032]),
    ]),
    AppleRate::ScaledFromGemm,
    Some((
        SplitCost::new(5832.0, 0.945),
        SplitCost::new(12450.0, 0.869),
    )),
);

/// Full pivoting's steps' built-in rows ([`Family::LuFullStep`](teamalg_gates::Family::LuFullStep)). Its steps, forced parallel
/// on a team of two, took 2.0x and 1.3x faer's fused serial factorization at orders 256 and
/// 512 on the 2-vCPU AMD EPYC host (owned forms, 2026-12-06: one section per step, each a
/// rank-one update and the column maxima, memory-bound): two wide never pays, so it keeps
/// faer's serial path.
pub const FULL_PIVOT_ROWS: Rows = Rows::new(
    None,
    AppleRate::Measured(Rate::halved(0.216, 0.600)),
    Some((SplitCost::new(3500.0, 0.5), SplitCost::new(3500.0, 0.5))),
);
