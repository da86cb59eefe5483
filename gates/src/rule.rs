//! The rule: a region goes parallel only when its serial time pays for its dispatches.

use std::num::NonZeroUsize;
use std::time::Duration;

use crate::split::{SplitCost, SplitCurve};

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
/// time `sections * (D(k) + overhead) + estimate / (k * efficiency)` is below the estimate,
/// with the overhead and efficiency `split` gives at `k`; the qualifying width with the least
/// modelled time wins (ties to the smaller), 1 when none qualifies, with the reason. With
/// [`SplitCurve::FREE`] this is [`width_for_by`].
pub fn choose(
    estimate: Duration,
    sections: usize,
    budget: NonZeroUsize,
    split: &SplitCurve,
    cost: impl Fn(NonZeroUsize) -> Duration,
) -> (NonZeroUsize, Verdict) {
    let est = estimate.as_nanos() as f64;
    let mut best = NonZeroUsize::MIN;
    let mut best_time = est;
    let mut verdict = Verdict::NotPaid;
    for k in 2..=budget.get() {
        let k = NonZeroUsize::new(k).expect("k >= 2");
        let d = cost(k);
        if !pays_at(estimate, sections, d) {
            continue;
        }
        let t = modelled(est, sections, k, d, split);
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

/// What a region asks the gate: everything [`decide`] weighs.
#[derive(Debug, Clone, Copy)]
pub struct Ask {
    /// The region's serial time.
    pub estimate: Duration,
    /// The dispatches it makes.
    pub sections: usize,
    /// The most participants the executor offers (1: serial, whatever the rule says).
    pub budget: usize,
    /// The family's split costs for a whole call; [`SplitCurve::FREE`] for a later section of
    /// a call or a region of no family.
    pub split: SplitCurve,
    /// The threshold in force.
    pub threshold: crate::ParThreshold,
    /// The call's units of work (what `ParThreshold::Fixed` compares).
    pub call_units: f64,
    /// What the region pays once because participants sleep and must be woken (zero when
    /// none sleeps).
    pub wake: Duration,
    /// What each section loses now to participants that run late (the executor's live
    /// view; zero on a quiet machine).
    pub late: Duration,
}

/// The gate's one decision: the width a region runs at and why. Every parallel region of
/// teamalg, kernel or user code (`Exec::pays`, `Exec::width_for`), answers through here.
///
/// - A budget below 2 runs serially ([`Reason::Budget1`](crate::trace::Reason::Budget1)).
/// - `ParThreshold::Never` and `Fixed` are the caller's word: serial, or the whole budget at
///   or above the floor.
/// - `Derived`: [`choose`] over `cost(k) + late` per section, then the wake. A region that
///   [`choose`] sends parallel on a quiet machine but not with the live lateness added is
///   serial with [`Reason::Late`](crate::trace::Reason::Late); one that pays its sections but
///   not the wake of its sleeping participants with
///   [`Reason::WakeNotPaid`](crate::trace::Reason::WakeNotPaid).
///
/// ```
/// use std::num::NonZeroUsize;
/// use std::time::Duration;
/// use teamalg_gates::trace::Reason;
/// use teamalg_gates::{decide, Ask, ParThreshold, SplitCurve};
///
/// let us = Duration::from_micros;
/// let ask = Ask {
///     estimate: us(200),
///     sections: 4,
///     budget: 2,
///     split: SplitCurve::FREE,
///     threshold: ParThreshold::Derived,
///     call_units: 0.0,
///     wake: Duration::ZERO,
///     late: Duration::ZERO,
/// };
/// let cost = |_: NonZeroUsize| Duration::from_nanos(300);
/// assert_eq!(decide(ask, cost), (2, Reason::Paid));
/// // Participants that lose 50 us per section to a busy machine: serial.
/// assert_eq!(decide(Ask { late: us(50), ..ask }, cost), (1, Reason::Late));
/// ```
pub fn decide(ask: Ask, cost: impl Fn(NonZeroUsize) -> Duration) -> (usize, crate::trace::Reason) {
    use crate::trace::Reason;
    use crate::ParThreshold;
    if ask.budget < 2 {
        return (1, Reason::Budget1);
    }
    match ask.threshold {
        ParThreshold::Never => return (1, Reason::Never),
        ParThreshold::Fixed(floor) if ask.call_units >= floor as f64 => {
            return (ask.budget, Reason::FixedAbove)
        }
        ParThreshold::Fixed(_) => return (1, Reason::FixedBelow),
        ParThreshold::Derived => {}
    }
    let budget = NonZeroUsize::new(ask.budget).unwrap_or(NonZeroUsize::MIN);
    let late = |k: NonZeroUsize| cost(k).saturating_add(ask.late);
    let (w, verdict) = choose(ask.estimate, ask.sections, budget, &ask.split, late);
    match verdict {
        Verdict::Paid if !wake_pays(&ask, w, late(w)) => (1, Reason::WakeNotPaid),
        Verdict::Paid => (w.get(), Reason::Paid),
        _ if !ask.late.is_zero()
            && choose(ask.estimate, ask.sections, budget, &ask.split, &cost).1 == Verdict::Paid =>
        {
            (1, Reason::Late)
        }
        Verdict::NotPaid => (1, Reason::NotPaid),
        Verdict::NotFaster => (1, Reason::BelowModelledMinimum),
    }
}

/// What going parallel at width `w` is expected to gain over the estimate: the estimate less
/// the wake and the modelled parallel time with sections of cost `cost(w) + late` (zero when
/// it gains nothing). The bail-out of a call weighs its sections' losses against it.
///
/// ```
/// use std::num::NonZeroUsize;
/// use std::time::Duration;
/// use teamalg_gates::{gain, Ask, ParThreshold, SplitCurve};
///
/// let ask = Ask {
///     estimate: Duration::from_micros(1000),
///     sections: 10,
///     budget: 2,
///     split: SplitCurve::FREE,
///     threshold: ParThreshold::Derived,
///     call_units: 0.0,
///     wake: Duration::ZERO,
///     late: Duration::ZERO,
/// };
/// // 10 sections of 1 us and half the work each: 1000 - (10 + 500) us.
/// let g = gain(ask, 2, |_: NonZeroUsize| Duration::from_micros(1));
/// assert_eq!(g, Duration::from_micros(490));
/// ```
pub fn gain(ask: Ask, w: usize, cost: impl Fn(NonZeroUsize) -> Duration) -> Duration {
    let Some(k) = NonZeroUsize::new(w).filter(|k| k.get() >= 2) else {
        return Duration::ZERO;
    };
    let est = ask.estimate.as_nanos() as f64;
    let d = cost(k).saturating_add(ask.late);
    let t = ask.wake.as_nanos() as f64 + modelled(est, ask.sections, k, d, &ask.split);
    Duration::from_nanos((est - t).clamp(0.0, u64::MAX as f64) as u64)
}

/// Whether the region, at width `w` with sections of cost `d`, is still modelled faster than
/// serial once the wake of sleeping participants is added (the time until a woken
/// participant starts, which the leader cannot overlap). True when nothing sleeps.
fn wake_pays(ask: &Ask, w: NonZeroUsize, d: Duration) -> bool {
    if ask.wake.is_zero() {
        return true;
    }
    let est = ask.estimate.as_nanos() as f64;
    ask.wake.as_nanos() as f64 + modelled(est, ask.sections, w, d, &ask.split) < est
}

/// The modelled time at width `k`: `sections * (d + overhead) + est / (k * efficiency)`, with
/// the split cost at `k` ([`SplitCost::FREE`] where the curve's is not valid).
fn modelled(est: f64, sections: usize, k: NonZeroUsize, d: Duration, split: &SplitCurve) -> f64 {
    let s = split.at(k.get());
    let s = if s.is_valid() { s } else { SplitCost::FREE };
    sections as f64 * (d.as_nanos() as f64 + s.overhead_ns) + est / (k.get() as f64 * s.efficiency)
}
