//! Batches of independent problems: how one call of many problems goes parallel
//! (`docs/batch.md`). [`Plan`] decides the shape from the model's serial rates: which problems
//! run one at a time on the whole executor, and how wide the rest are spread. [`Claims`] hands
//! the spread problems out in chunks.

use std::marker::PhantomData;
use std::ops::Range;
use std::time::Duration;

use teamalg_gates::{decide, Ask, Family, Model, ParThreshold, Scalar, SplitCurve};

use crate::exec::claims;
use crate::gate::{self, Region, Scope};
use crate::par::Executor;

/// A problem's serial time in nanoseconds from its units, at the rate of family `rate` for
/// its own size. The rate is read once for a run of problems of one size (reading it takes a
/// few logarithms, as long as a problem of order 8 takes to solve).
#[derive(Debug)]
pub struct Estimator<'m, T> {
    model: &'m Model,
    rate: Family,
    last: (f64, f64),
    _scalar: PhantomData<T>,
}

impl<'m, T: Scalar> Estimator<'m, T> {
    /// Estimates at `model`'s rates of family `rate`.
    pub fn new(model: &'m Model, rate: Family) -> Self {
        Estimator {
            model,
            rate,
            last: (f64::NAN, 0.0),
            _scalar: PhantomData,
        }
    }

    /// The serial time of a problem of `units` units, in nanoseconds.
    #[inline]
    pub fn ns(&mut self, units: f64) -> f64 {
        let units = units.max(0.0);
        if units != self.last.0 {
            self.last = (units, self.model.rate(self.rate, units).of::<T>());
        }
        units * self.last.1
    }
}

/// What a pass over some of a batch's problems adds up.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    /// Problems counted.
    pub count: usize,
    /// Their summed serial estimate, in nanoseconds.
    pub ns: f64,
    /// The largest estimate among them.
    pub max_ns: f64,
    /// Their summed units.
    pub units: f64,
}

impl Tally {
    /// Counts a problem of `units` units and serial estimate `ns`.
    #[inline]
    pub fn add(&mut self, units: f64, ns: f64) {
        self.count += 1;
        self.ns += ns;
        self.max_ns = self.max_ns.max(ns);
        self.units += units.max(0.0);
    }
}

/// How a batch runs: which problems go on the whole executor, and how wide the others spread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// The width the spread problems run at (1: on the caller, in order).
    pub spread_width: usize,
    /// What spreading is expected to gain over the caller alone (the watch's gain for the
    /// spread section: `crate::call`).
    pub spread_gain: Duration,
    /// Whether the threshold in force is not `Derived` (the caller's word: `crate::call`).
    pub forced: bool,
    /// Whether the gate read contention for the spread: participants may then be held off
    /// their CPUs, and the problems are claimed one at a time ([`Claims::new`]).
    pub contended: bool,
    /// Problems run one at a time on the whole executor.
    pub on_team: usize,
    /// A problem whose estimate is at least this many nanoseconds runs on the whole executor
    /// (infinite when none may).
    team_from_ns: f64,
}

impl Plan {
    /// The plan of a batch of problems of `family` on `exec`: `all` tallies every problem
    /// (their units in the unit of family `rate`, whose serial rate prices them through an
    /// [`Estimator`]: `family` itself for the kernels' families, GEMM's multiply-adds for a
    /// whole SVD or EVD, which no family rates). `site` names the spread region in the trace
    /// (`"batch/lu"`); `call` is the call's own threshold for `family`, which the trace and the
    /// thresholds name.
    ///
    /// A problem goes on the whole executor when it is at least one participant's share of the
    /// batch (`estimate * width >= total`) and its single call would pay going parallel at the
    /// executor's width (one section, the family's split costs, [`teamalg_gates::decide`]):
    /// [`Plan::on_team`]. When some problem may, `spread` is asked for the tally of the others
    /// (a second pass, which only batches holding a large problem make). The rest are spread:
    /// one section, its estimate the sum of theirs, asked of the one gate ([`gate::width`]) as
    /// a later section of a call (no split cost: the problems are independent). A threshold
    /// other than `Derived` (the call's, the pool's or the environment's) keeps every problem
    /// off the team and decides the spread as it decides a single call.
    pub fn new<T: Scalar>(
        exec: &(impl Executor + ?Sized),
        site: &'static str,
        family: Family,
        all: Tally,
        spread: impl FnOnce(&Plan) -> Tally,
        call: Option<ParThreshold>,
    ) -> Plan {
        let model = exec.model();
        let width = exec.width();
        let threshold = call.unwrap_or_else(|| model.threshold(family).0);
        let share = all.ns / width.max(1) as f64;
        // No problem is a participant's share in a batch of many like-sized ones: the search
        // for the smallest estimate that goes alone is made only for a batch that holds one.
        let team_from_ns = if width < 2
            || threshold != ParThreshold::Derived
            || all.count == 0
            || all.max_ns < share
        {
            f64::INFINITY
        } else {
            smallest_alone::<T>(exec, family, share)
        };
        let mut plan = Plan {
            spread_width: 1,
            spread_gain: Duration::ZERO,
            forced: threshold != ParThreshold::Derived,
            contended: false,
            on_team: 0,
            team_from_ns,
        };
        let rest = if all.max_ns >= team_from_ns {
            let rest = spread(&plan);
            plan.on_team = all.count - rest.count;
            rest
        } else {
            all
        };
        if rest.count > 0 {
            // The gate reads `family`'s rate at `call_units` and multiplies it by `units`: the
            // mean problem's size, and the units that make that product the spread problems'
            // summed estimate.
            let mean = rest.units / rest.count as f64;
            let r = model.rate(family, mean).of::<T>();
            let units = if r > 0.0 { rest.ns / r } else { rest.units };
            let spread = gate::weigh::<T>(
                exec,
                Region {
                    site,
                    dims: [all.count, rest.count, plan.on_team],
                    units,
                    family,
                    sections: 1,
                    scope: Scope::Section,
                    call_units: mean,
                },
                call,
            );
            plan.spread_width = spread.width;
            plan.spread_gain = spread.gain;
            plan.contended = !spread.contention.late.is_zero();
        }
        plan
    }

    /// Whether a problem of serial estimate `ns` runs on the whole executor.
    #[inline]
    pub fn on_team(&self, ns: f64) -> bool {
        ns >= self.team_from_ns
    }
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

    /// The indices `0..count` one at a time: for a spread whose participants may be held off
    /// their CPUs (a busy machine), so that one held off keeps one problem, not a quarter of
    /// the batch, from the others.
    pub fn one_at_a_time(count: usize) -> Claims {
        Claims(claims::Claims::new(0, count, count.max(1), 1))
    }

    /// The next chunk, or `None` when every index is taken. No index is in two chunks.
    pub fn claim(&self) -> Option<Range<usize>> {
        self.0.claim().map(|(a, b)| a..b)
    }
}
