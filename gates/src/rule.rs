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
    /// Some width pays and is modelled faster than serial: the chosen width.
    Paid,
    /// No width's sections are paid for `PAYS` times by the estimate.
    NotPaid,
    /// Some width pays its dispatch, but with the family's split costs (overhead, efficiency,
    /// the lead's part) it is not modelled faster than serial.
    NotFaster,
}

/// The rule with the family's split costs: the width in `1..=budget` that minimises the
/// modelled time `sections * (D(k) + overhead) + max(lead, estimate / k) / efficiency` among
/// the widths `k >= 2` whose sections are paid for (`estimate >= PAYS * sections * (D(k) +
/// overhead)`) and whose modelled time is below `estimate`; 1 when none qualifies, with the
/// reason.
pub fn choose(
    estimate: Duration,
    lead: Duration,
    sections: usize,
    budget: NonZeroUsize,
    split: SplitCost,
    cost: impl Fn(NonZeroUsize) -> Duration,
) -> (NonZeroUsize, Verdict) {
    let est = estimate.as_nanos() as f64;
    let lead = lead.as_nanos() as f64;
    let eff = if split.is_valid() {
        split.efficiency
    } else {
        1.0
    };
    let over = if split.is_valid() {
        split.overhead_ns
    } else {
        0.0
    };
    let mut best = NonZeroUsize::MIN;
    let mut best_time = est;
    let mut verdict = Verdict::NotPaid;
    for k in 2..=budget.get() {
        let k = NonZeroUsize::new(k).expect("k >= 2");
        let d = cost(k);
        if d == Duration::MAX {
            continue;
        }
        let per_section = d.as_nanos() as f64 + over;
        if est < PAYS * sections as f64 * per_section {
            continue;
        }
        let t = sections as f64 * per_section + lead.max(est / k.get() as f64) / eff;
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
