//! What splitting a family's regions costs beyond the dispatch, by width: [`SplitCost`] at one
//! width, [`SplitCurve`] across widths, [`Splits`] for real and complex scalars, and the
//! built-in fits (each family's rows, [`crate::builtin_split`], and its [`crate::Family::decay`]). The design record is `docs/gates.md`
//! ("Split costs per width").

use std::fmt;

use crate::scalar::ScalarKind;

/// What running a family's region on several participants costs beyond the dispatch at one
/// width: a fixed `overhead` per section (the lead's panel work the others wait for,
/// imbalance, the first touches of a member's cache) and an `efficiency` (the serial time over
/// the summed participant times, below 1 when split products run slower than whole ones).
///
/// The gate models a call of serial time `S` that makes `s` sections at width `k` as
/// `s * (D(k) + overhead) + S / (k * efficiency)` ([`crate::choose`]), with the cost its
/// family's [`SplitCurve`] gives at `k`. Both are properties of the family's whole call:
/// `teamalg calibrate` fits them from runs of each kernel at a width (every section parallel)
/// against its serial run, at sizes around where the two cross.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitCost {
    /// Nanoseconds per section beyond the dispatch cost.
    pub overhead_ns: f64,
    /// Serial time over summed participant time, in `(0, 1]`.
    pub efficiency: f64,
}

impl SplitCost {
    /// An overhead per section and an efficiency.
    pub const fn new(overhead_ns: f64, efficiency: f64) -> SplitCost {
        SplitCost {
            overhead_ns,
            efficiency,
        }
    }

    /// No cost beyond the dispatch: the rule as it stands.
    pub const FREE: SplitCost = SplitCost {
        overhead_ns: 0.0,
        efficiency: 1.0,
    };

    /// Whether the values can be used (finite, overhead at least 0, efficiency in `(0, 1]`).
    pub fn is_valid(&self) -> bool {
        self.overhead_ns.is_finite()
            && self.overhead_ns >= 0.0
            && self.efficiency.is_finite()
            && self.efficiency > 0.0
            && self.efficiency <= 1.0
    }
}

/// The most widths a [`SplitCurve`] holds.
pub const MAX_SPLIT_WIDTHS: usize = 8;

/// Why a [`SplitCurve`] could not be built.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum SplitCurveError {
    /// No anchor, or more than [`MAX_SPLIT_WIDTHS`].
    Count(usize),
    /// A width below 2, or widths not strictly increasing.
    Widths,
    /// An anchor's cost is not valid ([`SplitCost::is_valid`]).
    Cost {
        /// The anchor's width.
        width: usize,
    },
    /// A decay outside `[0, 1]`.
    Decay(f64),
}

impl fmt::Display for SplitCurveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitCurveError::Count(n) => write!(
                f,
                "a split curve holds 1 to {MAX_SPLIT_WIDTHS} widths ({n} given)"
            ),
            SplitCurveError::Widths => {
                write!(f, "split widths must be at least 2 and strictly increasing")
            }
            SplitCurveError::Cost { width } => write!(
                f,
                "the split at width {width} needs an overhead of at least 0 ns and an \
                 efficiency in (0, 1]"
            ),
            SplitCurveError::Decay(g) => write!(f, "a split decay must be in [0, 1] ({g} given)"),
        }
    }
}

impl std::error::Error for SplitCurveError {}

/// A family's split cost across widths: [`SplitCost`] anchors at the widths measured and a
/// decay `g` beyond the widest. [`SplitCurve::at`] reads it (`docs/gates.md`, "Split costs per
/// width"):
///
/// - at or below the narrowest anchor, that anchor's cost; at an anchor, its cost;
/// - between two anchors, the overhead linear and the efficiency geometric in `ln k`;
/// - beyond the widest anchor `w`, its overhead and `efficiency(w) * (w / k)^g`.
///
/// ```
/// use teamalg_gates::{SplitCost, SplitCurve};
///
/// let at = |overhead_ns, efficiency| SplitCost { overhead_ns, efficiency };
/// // Measured at widths 2 and 8: the decay is fitted to them (0.5 here).
/// let c = SplitCurve::new(&[(2, at(1000.0, 0.9)), (8, at(3000.0, 0.45))], 0.0).unwrap();
/// assert!((c.decay() - 0.5).abs() < 1e-12);
/// assert_eq!(c.at(8), at(3000.0, 0.45));
/// let four = c.at(4); // halfway in ln k
/// assert!((four.overhead_ns - 2000.0).abs() < 1e-9);
/// assert!((four.efficiency - 0.9 / 2f64.sqrt()).abs() < 1e-12);
/// let sixteen = c.at(16); // beyond: 0.45 (8 / 16)^0.5
/// assert!((sixteen.efficiency - 0.45 / 2f64.sqrt()).abs() < 1e-12);
///
/// // One anchor keeps the decay it is given.
/// let one = SplitCurve::new(&[(2, at(1000.0, 0.9))], 1.0).unwrap();
/// assert!((one.at(4).efficiency - 0.45).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitCurve {
    widths: [u16; MAX_SPLIT_WIDTHS],
    costs: [SplitCost; MAX_SPLIT_WIDTHS],
    len: u8,
    decay: f64,
}

impl SplitCurve {
    /// No cost at any width.
    pub const FREE: SplitCurve = SplitCurve::single(SplitCost::FREE, 0.0);

    /// One anchor at width 2 and `decay` beyond it, unchecked: an invalid cost reads as
    /// [`SplitCost::FREE`] in the rule ([`crate::choose`]), a decay outside `[0, 1]` is held in it.
    pub const fn single(cost: SplitCost, decay: f64) -> SplitCurve {
        SplitCurve {
            widths: [2; MAX_SPLIT_WIDTHS],
            costs: [cost; MAX_SPLIT_WIDTHS],
            len: 1,
            decay,
        }
    }

    /// A curve through `anchors` (`(width, cost)`, widths at least 2 and increasing, 1 to
    /// [`MAX_SPLIT_WIDTHS`] of them). The decay beyond the widest is fitted to the anchors'
    /// efficiencies when there are two or more (least squares of `ln efficiency` on `ln k`,
    /// held in `[0, 1]`), else `decay`.
    pub fn new(anchors: &[(usize, SplitCost)], decay: f64) -> Result<SplitCurve, SplitCurveError> {
        let n = anchors.len();
        if n == 0 || n > MAX_SPLIT_WIDTHS {
            return Err(SplitCurveError::Count(n));
        }
        if !(0.0..=1.0).contains(&decay) {
            return Err(SplitCurveError::Decay(decay));
        }
        let mut curve = SplitCurve::single(anchors[0].1, decay);
        for (i, &(width, cost)) in anchors.iter().enumerate() {
            let after_last = i == 0 || width > anchors[i - 1].0;
            if width < 2 || width > u16::MAX as usize || !after_last {
                return Err(SplitCurveError::Widths);
            }
            if !cost.is_valid() {
                return Err(SplitCurveError::Cost { width });
            }
            curve.widths[i] = width as u16;
            curve.costs[i] = cost;
        }
        curve.len = n as u8;
        if n >= 2 {
            curve.decay = fitted_decay(anchors);
        }
        Ok(curve)
    }

    /// The anchors: `(width, cost)`.
    pub fn anchors(&self) -> impl Iterator<Item = (usize, SplitCost)> + '_ {
        let n = self.len as usize;
        self.widths[..n]
            .iter()
            .zip(&self.costs[..n])
            .map(|(&w, &c)| (w as usize, c))
    }

    /// The decay beyond the widest anchor.
    pub fn decay(&self) -> f64 {
        self.decay
    }

    /// The split cost at width `k`.
    #[inline]
    pub fn at(&self, k: usize) -> SplitCost {
        let n = self.len as usize;
        let (widths, costs) = (&self.widths[..n], &self.costs[..n]);
        let k = k.max(1) as f64;
        let first = widths[0] as f64;
        if k <= first {
            return costs[0];
        }
        for i in 1..n {
            let (lo, hi) = (widths[i - 1] as f64, widths[i] as f64);
            if k <= hi {
                let t = (k / lo).ln() / (hi / lo).ln();
                let (a, b) = (costs[i - 1], costs[i]);
                return SplitCost {
                    overhead_ns: a.overhead_ns + t * (b.overhead_ns - a.overhead_ns),
                    efficiency: a.efficiency * (b.efficiency / a.efficiency).powf(t),
                };
            }
        }
        let (last, cost) = (widths[n - 1] as f64, costs[n - 1]);
        let g = self.decay.clamp(0.0, 1.0);
        SplitCost {
            overhead_ns: cost.overhead_ns,
            efficiency: cost.efficiency * (last / k).powf(g),
        }
    }
}

/// `-slope` of the least-squares line of `ln efficiency` on `ln width`, in `[0, 1]`.
fn fitted_decay(anchors: &[(usize, SplitCost)]) -> f64 {
    let n = anchors.len() as f64;
    let xs = anchors.iter().map(|(w, _)| (*w as f64).ln());
    let ys = anchors.iter().map(|(_, c)| c.efficiency.ln());
    let (mx, my) = (xs.clone().sum::<f64>() / n, ys.clone().sum::<f64>() / n);
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for (x, y) in xs.zip(ys) {
        sxx += (x - mx) * (x - mx);
        sxy += (x - mx) * (y - my);
    }
    (-sxy / sxx).clamp(0.0, 1.0)
}

/// A family's split curves for real (`f32`, `f64`) and complex (`c32`, `c64`) scalars.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Splits {
    /// Real scalars.
    pub real: SplitCurve,
    /// Complex scalars.
    pub cplx: SplitCurve,
}

impl Splits {
    /// Free for both.
    pub const FREE: Splits = Splits {
        real: SplitCurve::FREE,
        cplx: SplitCurve::FREE,
    };

    /// The curve for a scalar kind.
    pub fn for_kind(&self, kind: ScalarKind) -> SplitCurve {
        match kind {
            ScalarKind::F32 | ScalarKind::F64 => self.real,
            ScalarKind::C32 | ScalarKind::C64 => self.cplx,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(overhead_ns: f64, efficiency: f64) -> SplitCost {
        SplitCost {
            overhead_ns,
            efficiency,
        }
    }

    #[test]
    fn anchors_are_read_back_and_bounded_below() {
        let c = SplitCurve::new(&[(2, at(100.0, 0.9)), (4, at(300.0, 0.6))], 0.0).unwrap();
        assert_eq!(c.at(1), at(100.0, 0.9));
        assert_eq!(c.at(2), at(100.0, 0.9));
        assert_eq!(c.at(4), at(300.0, 0.6));
        let three = c.at(3);
        let t = 1.5f64.ln() / 2f64.ln();
        assert!((three.overhead_ns - (100.0 + 200.0 * t)).abs() < 1e-9);
        assert!((three.efficiency - 0.9 * (0.6f64 / 0.9).powf(t)).abs() < 1e-12);
        assert_eq!(c.anchors().count(), 2);
    }

    #[test]
    fn the_decay_is_fitted_and_held_in_range() {
        // A rising efficiency is not extrapolated upwards: g = 0.
        let up = SplitCurve::new(&[(2, at(0.0, 0.5)), (4, at(0.0, 0.9))], 0.7).unwrap();
        assert_eq!(up.decay(), 0.0);
        assert_eq!(up.at(64).efficiency, 0.9);
        // A fall faster than 1 / k is held at g = 1.
        let down = SplitCurve::new(&[(2, at(0.0, 0.9)), (4, at(0.0, 0.2))], 0.0).unwrap();
        assert_eq!(down.decay(), 1.0);
        assert!((down.at(8).efficiency - 0.1).abs() < 1e-12);
    }

    #[test]
    fn bad_curves_are_refused() {
        let ok = at(0.0, 1.0);
        assert_eq!(SplitCurve::new(&[], 0.0), Err(SplitCurveError::Count(0)));
        assert_eq!(
            SplitCurve::new(&[(1, ok)], 0.0),
            Err(SplitCurveError::Widths)
        );
        assert_eq!(
            SplitCurve::new(&[(4, ok), (4, ok)], 0.0),
            Err(SplitCurveError::Widths)
        );
        assert_eq!(
            SplitCurve::new(&[(2, at(-1.0, 1.0))], 0.0),
            Err(SplitCurveError::Cost { width: 2 })
        );
        assert_eq!(
            SplitCurve::new(&[(2, ok)], 1.5),
            Err(SplitCurveError::Decay(1.5))
        );
        let many: Vec<_> = (2..2 + MAX_SPLIT_WIDTHS + 1).map(|w| (w, ok)).collect();
        assert_eq!(
            SplitCurve::new(&many, 0.0),
            Err(SplitCurveError::Count(MAX_SPLIT_WIDTHS + 1))
        );
    }
}
