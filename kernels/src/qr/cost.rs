//! QR's work counts, in its families' units: multiply-adds for Householder QR
//! ([`Family::Qr`]), an element of the trailing block a step updates for column pivoting
//! ([`Family::QrColPivStep`]). The kernels and the batch ([`crate::drive::batch`]) read them
//! here.
//!
//! [`Family::Qr`]: teamalg_gates::Family::Qr
//! [`Family::QrColPivStep`]: teamalg_gates::Family::QrColPivStep

use teamalg_gates::{AppleRate, Rate, Rows, SplitCost};

/// Multiply-adds of a Householder QR of a `rows x cols` matrix: `s^2 (l - s / 3)` with `s` the
/// smaller side and `l` the larger (`2 n^3 / 3` when square).
pub fn householder(rows: usize, cols: usize) -> f64 {
    let (s, l) = (rows.min(cols) as f64, rows.max(cols) as f64);
    s * s * (l - s / 3.0)
}

/// Multiply-adds of a least-squares solve through QR of an `m x n` matrix (`m >= n`) with `k`
/// right-hand sides: the factorization and the applications of `Q^H` and `R^-1`.
pub fn lstsq(m: usize, n: usize, k: usize) -> f64 {
    let (m, n) = (m as f64, n as f64);
    m * n * n - n * n * n / 3.0 + 2.0 * m * n * k as f64
}

/// Multiply-adds to apply a block reflector of `b` vectors of `rows` rows to one column: `V^H c`,
/// the solve with `T^H`, and `c - V w`.
pub(crate) fn update_column(rows: usize, b: usize) -> f64 {
    2.0 * rows as f64 * b as f64 + (b * b) as f64 / 2.0
}

/// Multiply-adds of factoring a `rows x b` panel and forming its `T`.
pub(crate) fn panel(rows: usize, b: usize) -> f64 {
    1.5 * rows as f64 * (b * b) as f64
}

/// Units of work of column pivoting's steps from `k` on, for an `m x n` matrix (an element of
/// the trailing block a step updates).
pub fn col_piv_from(m: usize, n: usize, k: usize) -> f64 {
    (k..m.min(n)).map(|s| ((m - s) * (n - s - 1)) as f64).sum()
}

/// Householder QR's built-in rows ([`Family::Qr`](teamalg_gates::Family::Qr)); its split is free (not fitted).
pub const HOUSEHOLDER_ROWS: Rows = Rows::new(
    Some([
        (21845.0, [0.5433, 0.9898, 0.4965, 0.8284]),
        (174763.0, [0.2683, 0.5637, 0.2430, 0.4035]),
        (1398101.0, [0.1235, 0.3168, 0.1090, 0.2052]),
        (11184811.0, [0.0748, 0.2334, 0.0515, 0.1350]),
    ]),
    AppleRate::ScaledFromGemm,
    None,
);

/// Column pivoting's steps' built-in rows ([`Family::QrColPivStep`](teamalg_gates::Family::QrColPivStep)). The split is fitted by
/// hand to the rows forced parallel: each step's section costs about 3.5 us beyond its
/// dispatch (orders 256 to 1024 on the Intel Xeon host, `docs/perf/runs/kernels-log.md`), and
/// each participant runs its part at 0.63 of faer's fused serial pass in real arithmetic (the
/// fused pass, forced at 512 and 1024 on the AMD EPYC host: 1.06 and 0.98, 0.88 and 0.84 of
/// faer serial; the two passes before it ran at about half) and at 0.62 in complex. So two
/// wide pays in real from about order 1024, in complex from about 256.
pub const COL_PIV_ROWS: Rows = Rows::new(
    None,
    AppleRate::Measured(Rate::halved(0.202, 0.713)),
    Some((SplitCost::new(3500.0, 0.63), SplitCost::new(3500.0, 0.62))),
);
