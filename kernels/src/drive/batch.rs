//! Batches of independent problems: how one call of many problems goes parallel
//! (`docs/batch.md`). [`Plan`] decides the shape from the model's serial rates: which problems
//! run one at a time on the whole executor, and how wide the rest are spread. [`Claims`] hands
//! the spread problems out in chunks.

use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Mutex;
use std::time::Duration;

use faer::dyn_stack::{MemStack, StackReq};

use teamalg_gates::{decide, Ask, Family, Model, ParThreshold, Scalar, SplitCurve};

use crate::drive::slots::Slots;
use crate::exec::call::{self, Call};
use crate::exec::claims;
use crate::gate::{self, Region, Scope};
use crate::par::{Executor, Part};

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
/// What a batch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchRun {
    /// Problems in the batch.
    pub problems: usize,
    /// Problems whose `status` is an error.
    pub failed: usize,
    /// Problems run one at a time on the whole executor.
    pub on_team: usize,
    /// The width the other problems were spread over (1: on the caller, in order).
    pub spread_width: usize,
}

/// What a family gives the batch driver about its problems. The facade implements it for
/// each batch of `teamalg::linalg::batch`, over its checked single calls.
pub trait Problems<T: Scalar>: Sync {
    /// A problem's error.
    type Error: Send;
    /// The operation, for errors (`"batch::lu_solve"`).
    const OP: &'static str;
    /// The spread region's site in the trace.
    const SITE: &'static str;
    /// The family whose threshold and gate apply.
    const FAMILY: Family;
    /// The family whose serial rate prices [`Problems::units`].
    const RATE: Family = Self::FAMILY;

    /// How many problems.
    fn count(&self) -> usize;
    /// What problem `i`'s units and scratch depend on (its operands' dimensions, `usize::MAX`
    /// for an operand not given, zeros after the last): problems of one key
    /// have the same [`Problems::units`] and [`Problems::scratch`], which the batch then reads
    /// once per run of equal keys.
    ///
    /// # Safety
    ///
    /// As [`Problems::serial`]: it reads problem `i`'s operands, which may be views the
    /// batch holds mutably, so the caller owns index `i` (it runs alone, or claimed `i`).
    unsafe fn key(&self, i: usize) -> [usize; 8];
    /// Problem `i`'s units of work, as its single call counts them (0 for one whose shapes
    /// are wrong: it fails at once).
    ///
    /// # Safety
    ///
    /// As [`Problems::key`].
    unsafe fn units(&self, i: usize) -> f64;
    /// The scratch problem `i` needs when solved serially.
    ///
    /// # Safety
    ///
    /// As [`Problems::key`].
    unsafe fn scratch(&self, i: usize) -> StackReq;
    /// Solves problem `i` serially with `stack` (at least [`Problems::scratch`]).
    ///
    /// # Safety
    ///
    /// The caller owns index `i`: no other call for `i` runs at the same time.
    unsafe fn serial(&self, i: usize, stack: &mut MemStack) -> Result<(), Self::Error>;
    /// Solves problem `i` on the whole of `exec`.
    ///
    /// # Safety
    ///
    /// As [`Problems::serial`].
    unsafe fn on_team(&self, i: usize, exec: &(impl Executor + ?Sized)) -> Result<(), Self::Error>;
}

/// Runs a batch: the plan, the problems that go on the whole executor one at a time, then one
/// section in which the participants claim the others, each with one buffer of scratch from
/// `scratch` (which hands `f` a stack of at least `req`, or fails). `status` holds one entry
/// per problem; `threshold` is the caller's for the family. The error is `scratch`'s, when the
/// caller's buffer cannot be had: then nothing was spread.
pub fn run<T: Scalar, P: Problems<T>>(
    problems: &P,
    status: &mut [Result<(), P::Error>],
    exec: &(impl Executor + ?Sized),
    threshold: Option<ParThreshold>,
    scratch: impl Fn(StackReq, &mut dyn FnMut(&mut MemStack)) -> Result<(), P::Error> + Sync,
) -> Result<BatchRun, P::Error> {
    let count = problems.count();
    assert_eq!(status.len(), count, "one status per problem");
    let model = exec.model();
    // One pass for the plan and the scratch; a second only when a problem may go on the team.
    // A run of problems of one shape reads their units, estimate and scratch once.
    let mut estimate = Estimator::<T>::new(model, P::RATE);
    let (mut all, mut req, mut last) = (Tally::default(), StackReq::EMPTY, None);
    for i in 0..count {
        // SAFETY: the sizing passes run on the caller before the section and before any
        // problem is solved: the caller owns every index.
        let (units, ns, r, new) = unsafe { size(problems, &mut estimate, i, &mut last) };
        all.add(units, ns);
        if new {
            req = req.or(r);
        }
    }
    let plan = Plan::new::<T>(
        exec,
        P::SITE,
        P::FAMILY,
        all,
        |plan| {
            let (mut rest, mut spread_req, mut last) = (Tally::default(), StackReq::EMPTY, None);
            for i in 0..count {
                // SAFETY: as the first sizing pass: on the caller, before the section.
                let (units, ns, r, _) = unsafe { size(problems, &mut estimate, i, &mut last) };
                if !plan.on_team(ns) {
                    rest.add(units, ns);
                    spread_req = spread_req.or(r);
                }
            }
            req = spread_req;
            rest
        },
        threshold,
    );
    let slots = Slots::new(status);
    // One watch for the whole batch ([`crate::exec::call`]): the problems on the whole
    // executor and the spread add their gains and losses, and once they lost more than they
    // were to gain, the rest of the batch runs on the caller.
    let _batch = Call::open(exec, 1, Duration::ZERO, plan.forced);
    if plan.on_team > 0 {
        for i in 0..count {
            // SAFETY: one problem at a time, before the section: the caller owns every index.
            unsafe {
                if goes_on_team(problems, &plan, model, i) {
                    *slots.get(i) = problems.on_team(i, exec);
                }
            }
        }
    }
    let width = plan.spread_width;
    // The caller's buffer is taken before the section: when it cannot be had, nothing was
    // spread yet; a member that cannot have one claims nothing, and the others take its share.
    scratch(req, &mut |lead: &mut MemStack| {
        let work = |stack: &mut MemStack, claims: &Claims| {
            while let Some(range) = claims.claim() {
                for i in range {
                    // SAFETY: index `i` was claimed by this participant alone (`Claims`).
                    unsafe {
                        if !goes_on_team(problems, &plan, model, i) {
                            *slots.get(i) = problems.serial(i, stack);
                        }
                    }
                }
            }
        };
        let claims = if plan.contended {
            Claims::one_at_a_time(count)
        } else {
            Claims::new(count, width)
        };
        if width < 2 {
            work(lead, &claims);
            return;
        }
        let lead = Mutex::new(lead);
        // The spread is one section of the kernel execution layer: timed for the watch, and
        // on the caller alone once the batch gave up.
        let _call = Call::open(exec, width, plan.spread_gain, plan.forced);
        call::run(exec, width, &|part: Part<'_>| {
            if part.index() == 0 {
                // Only participant 0 takes it; a panic elsewhere cannot poison it.
                let mut lead = lead.lock().unwrap_or_else(|e| e.into_inner());
                work(&mut lead, &claims);
            } else {
                let _ = scratch(req, &mut |stack: &mut MemStack| work(stack, &claims));
            }
        });
    })?;
    Ok(BatchRun {
        problems: count,
        failed: status.iter().filter(|s| s.is_err()).count(),
        on_team: plan.on_team,
        spread_width: width,
    })
}

/// What the plan reads of a key's first problem: its units, estimate and scratch.
type Size = (f64, f64, StackReq);

/// Problem `i`'s units, estimated nanoseconds and scratch, and whether it starts a run of
/// problems of one key (whose scratch then counts once): a run of equal keys is read once,
/// through `last`.
///
/// # Safety
///
/// The caller owns index `i` (as [`Problems::key`]).
unsafe fn size<T: Scalar, P: Problems<T>>(
    problems: &P,
    estimate: &mut Estimator<'_, T>,
    i: usize,
    last: &mut Option<([usize; 8], Size)>,
) -> (f64, f64, StackReq, bool) {
    // SAFETY: the caller owns `i`.
    let key = unsafe { problems.key(i) };
    match *last {
        Some((k, (units, ns, req))) if k == key => (units, ns, req, false),
        _ => {
            // SAFETY: as above.
            let (units, req) = unsafe { (problems.units(i), problems.scratch(i)) };
            let ns = estimate.ns(units);
            *last = Some((key, (units, ns, req)));
            (units, ns, req, true)
        }
    }
}

/// Whether problem `i` goes on the whole executor.
///
/// # Safety
///
/// The caller owns index `i` (as [`Problems::units`]).
unsafe fn goes_on_team<T: Scalar, P: Problems<T>>(
    problems: &P,
    plan: &Plan,
    model: &Model,
    i: usize,
) -> bool {
    plan.on_team > 0 && {
        // SAFETY: the caller owns `i`.
        let units = unsafe { problems.units(i) };
        plan.on_team(Estimator::<T>::new(model, P::RATE).ns(units))
    }
}
