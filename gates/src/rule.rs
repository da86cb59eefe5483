//! The rule: a region goes parallel only when its serial time pays for its dispatches.

use std::num::NonZeroUsize;
use std::time::Duration;

use crate::model::SplitCost;

/// How many times its dispatch cost a region must be worth. At the threshold a region that
/// scales 3x on 6 threads is 1.5x faster, and one that scales 2x is not slower.
pub const PAYS: f64 = 3.0;

/// Whether a region of serial time `estimate` that makes `sections` dispatches of
/// `dispatch_cost` each pays for going parallel. A cost of `Duration::MAX` (no parallel
/// dispatch possible) never pays; zero sections always pay.
#[inline]
pub fn pays_at(estimate: Duration, sections: usize, dispatch_cost: Duration) -> bool {
    if dispatch_cost == Duration::MAX {
        return false;
    }
    // In nanoseconds, where the thresholds of measured rows are exact.
    let need = PAYS * sections as f64 * dispatch_cost.as_nanos() as f64;
    estimate.as_nanos() as f64 >= need
}

/// The width in `1..=budget` that minimises `sections * cost(k) + estimate / k` among the
/// widths `k >= 2` that pay; ties go to the smaller width; 1 when none pays.
pub fn width_for_by(
    estimate: Duration,
    sections: usize,
    budget: NonZeroUsize,
    cost: impl Fn(NonZeroUsize) -> Duration,
) -> NonZeroUsize {
    let est = estimate.as_nanos() as f64;
    let mut best = NonZeroUsize::MIN;
    let mut best_time = est;
    for k in 2..=budget.get() {
        let k = NonZeroUsize::new(k).expect("k >= 2");
        let d = cost(k);
        if !pays_at(estimate, sections, d) {
            continue;
        }
        let t = sections as f64 * d.as_nanos() as f64 + est / k.get() as f64;
        if t < best_time {
            best = k;
            best_time = t;
        }
    }
    best
}

/// What the rule found for a region (see [`choose`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Some width pays its dispatches and is modelled faster than serial: the chosen width.
    Paid,
    /// No width's sections are paid for `PAYS` times by the estimate.
    NotPaid,
    /// Some width pays its dispatches, but with the family's split costs (overhead per
    /// section, efficiency) it is not modelled faster than serial.
    NotFaster,
}

/// The rule with the family's split costs. A width `k >= 2` qualifies when the estimate pays
/// its dispatches (`estimate >= PAYS * sections * D(k)`, [`pays_at`]) and the modelled parallel
/// time `sections * (D(k) + overhead) + estimate / (k * efficiency)` is below the estimate;
/// the qualifying width with the least modelled time wins (ties to the smaller), 1 when none
/// qualifies, with the reason. With [`SplitCost::FREE`] this is [`width_for_by`].
pub fn choose(
    estimate: Duration,
    sections: usize,
    budget: NonZeroUsize,
    split: SplitCost,
    cost: impl Fn(NonZeroUsize) -> Duration,
) -> (NonZeroUsize, Verdict) {
    let est = estimate.as_nanos() as f64;
    let split = if split.is_valid() {
        split
    } else {
        SplitCost::FREE
    };
    let mut best = NonZeroUsize::MIN;
    let mut best_time = est;
    let mut verdict = Verdict::NotPaid;
    for k in 2..=budget.get() {
        let k = NonZeroUsize::new(k).expect("k >= 2");
        let d = cost(k);
        if !pays_at(estimate, sections, d) {
            continue;
        }
        let per_section = d.as_nanos() as f64 + split.overhead_ns;
        let t = sections as f64 * per_section + est / (k.get() as f64 * split.efficiency);
        if t < best_time {
            best = k;
            best_time = t;
            verdict = Verdict::Paid;
        } else if verdict == Verdict::NotPaid {
            verdict = Verdict::NotFaster;
        }
    }
    (best, verdict)
}
