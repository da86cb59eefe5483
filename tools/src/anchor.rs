//! One measured anchor of a dispatch row: what `teamalg calibrate` measured at one kind and
//! width, and what it rejected (read by the calibration and by its load check).

use teamalg::gates::DispatchKind;

/// One measured anchor of a dispatch row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Anchor {
    /// The kind of token.
    pub kind: DispatchKind,
    /// The width.
    pub width: usize,
    /// The cost recorded, ns; `None` when too few samples survived (the class row stays).
    pub cost: Option<u32>,
    /// The 10th and 90th percentiles of the kept samples, ns.
    pub spread: (f64, f64),
    /// Samples taken.
    pub samples: usize,
    /// Samples rejected because two shares ran on one thread.
    pub serial: usize,
    /// Samples rejected because a thread was descheduled.
    pub descheduled: usize,
    /// Rounds run.
    pub rounds: usize,
    /// Whether most rounds' medians agreed with the cost within
    /// [`STABLE`](crate::calibrate::STABLE).
    pub stable: bool,
}
