//! Batches of independent problems: how one call of many problems goes parallel
//! (`docs/batch.md`). [`Plan`] decides the shape from the model's serial rates: which problems
//! run one at a time on the whole executor, and how wide the rest are spread. [`Claims`] hands
//! the spread problems out in chunks.

use std::ops::Range;

use std::time::Duration;

use teamalg_gates::{decide, Ask, Family, Model, ParThreshold, Scalar, SplitCurve};

use crate::exec::claims;
use crate::gate::{self, Region, Scope};
use crate::par::Executor;

/// How a batch runs: which problems go on the whole executor, and how wide the others spread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// The width the spread problems run at (1: on the caller, in order).
    pub spread_width: usize,
    /// Problems run one at a time on the whole executor.
    pub on_team: usize,
    /// A problem whose estimate is at least this many nanoseconds runs on the whole executor
    /// (infinite when none may).
    team_from_ns: f64,
    rate: Family,
}

impl Plan {
    /// The plan of a batch of `count` problems of `family` on `exec`, problem `i` of `units(i)`
    /// units of work in the unit of family `rate`, whose serial rate prices them (`family`
    /// itself for the kernels' families; GEMM's multiply-adds for a whole SVD or EVD, which no
    /// family rates); `site` names the spread region in the trace (`"batch/lu"`), `call` is
    /// the call's own threshold for `family`, which the trace and the thresholds name.
    ///
    /// A problem goes on the whole executor when it is at least one participant's share of the
    /// batch (`estimate * width >= total`) and its single call would pay going parallel at the
    /// executor's width (one section, the family's split costs, [`teamalg_gates::decide`]).
    /// The rest are spread: one section, its estimate the sum of theirs, asked of the one gate
    /// ([`gate::width`]) as a later section of a call (no split cost: the problems are
    /// independent). A threshold other than `Derived` (the call's, the pool's or the
    /// environment's) keeps every problem off the team and decides the spread as it decides
    /// a single call.
    pub fn new<T: Scalar>(
        exec: &(impl Executor + ?Sized),
        site: &'static str,
        (family, rate): (Family, Family),
        count: usize,
        units: impl Fn(usize) -> f64,
        call: Option<ParThreshold>,
    ) -> Plan {
        let model = exec.model();
        let total: f64 = (0..count)
            .map(|i| estimate::<T>(model, rate, units(i)))
            .sum();
        let width = exec.width();
        let threshold = call.unwrap_or_else(|| model.threshold(family).0);
        let team_from_ns = if width < 2 || threshold != ParThreshold::Derived {
            f64::INFINITY
        } else {
            smallest_alone::<T>(exec, family, total / width as f64)
        };
        let mut plan = Plan {
            spread_width: 1,
            on_team: 0,
            team_from_ns,
            rate,
        };
        let (mut spread, mut spread_ns, mut spread_units) = (0usize, 0.0, 0.0);
        for i in 0..count {
            let u = units(i).max(0.0);
            let e = estimate::<T>(model, rate, u);
            if e >= team_from_ns {
                plan.on_team += 1;
            } else {
                spread += 1;
                spread_ns += e;
                spread_units += u;
            }
        }
        if spread > 0 {
            // The gate reads `family`'s rate at `call_units` and multiplies it by `units`: the
            // mean problem's size, and the units that make that product the spread problems'
            // summed estimate.
            let mean = spread_units / spread as f64;
            let r = model.rate(family, mean).of::<T>();
            let units = if r > 0.0 { spread_ns / r } else { spread_units };
            plan.spread_width = gate::width::<T>(
                exec,
                Region {
                    site,
                    dims: [count, spread, plan.on_team],
                    units,
                    family,
                    sections: 1,
                    scope: Scope::Section,
                    call_units: mean,
                },
                call,
            );
        }
        plan
    }

    /// Whether a problem of `units` units runs on the whole executor (the same test
    /// [`Plan::new`] counted with).
    pub fn on_team<T: Scalar>(&self, model: &Model, units: f64) -> bool {
        self.team_from_ns.is_finite()
            && estimate::<T>(model, self.rate, units.max(0.0)) >= self.team_from_ns
    }
}

/// A problem's serial time in nanoseconds: its units at the family's rate for its own size.
fn estimate<T: Scalar>(model: &Model, family: Family, units: f64) -> f64 {
    units * model.rate(family, units).of::<T>()
}

/// The smallest estimate, at least `share`, that the rule sends parallel alone at the
/// executor's width (one section, the family's split costs); infinite when none is.
fn smallest_alone<T: Scalar>(exec: &(impl Executor + ?Sized), family: Family, share: f64) -> f64 {
    let split: SplitCurve = exec.model().split(family).for_kind(T::KIND);
    let goes = |ns: f64| {
        let ask = Ask {
            estimate: Duration::from_nanos(ns.clamp(0.0, 1e18) as u64),
            sections: 1,
            budget: exec.width(),
            split,
            threshold: ParThreshold::Derived,
            call_units: 0.0,
            wake: Duration::ZERO,
            late: Duration::ZERO,
        };
        decide(ask, |k| exec.dispatch_cost(k.get())).0 > 1
    };
    let share = share.max(1.0);
    if goes(share) {
        return share;
    }
    // Doubling, then bisection above `share`: for one section the rule goes parallel from
    // some estimate on.
    let mut hi = share;
    while !goes(hi) {
        hi *= 2.0;
        if hi > 1e18 {
            return f64::INFINITY;
        }
    }
    let mut lo = (hi / 2.0).max(share);
    for _ in 0..32 {
        let mid = 0.5 * (lo + hi);
        if goes(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// Problem indices `0..count` handed out in chunks to `width` participants by guided
/// self-scheduling (`left / (2 width)` per claim, at least one): each index exactly once.
#[derive(Debug)]
pub struct Claims(claims::Claims);

impl Claims {
    /// The indices `0..count` for `width` participants.
    pub fn new(count: usize, width: usize) -> Claims {
        Claims(claims::Claims::new(0, count, width, 1))
    }

    /// The next chunk, or `None` when every index is taken. No index is in two chunks.
    pub fn claim(&self) -> Option<Range<usize>> {
        self.0.claim().map(|(a, b)| a..b)
    }
}
