//! The one gate every region of a kernel asks.
//!
//! The threshold in force is the call's (`*Params::threshold`), else the executor's model's
//! (the pool's builder, then `TEAMALG_THRESHOLDS`), else `Derived`: the rule of
//! `teamalg-gates` with the model's rate at the call's size, the family's split costs and the
//! dispatch costs ([`teamalg_gates::choose`]).
//!
//! A kernel asks once for its whole call ([`Scope::Call`]: the split costs, fitted per call,
//! apply); a factorization that went parallel then asks again before each later section
//! ([`Scope::Section`]: only the dispatch is weighed, since the call's split costs were
//! already paid for), so the small sections at its end run on the lead alone.

use std::num::NonZeroUsize;
use std::time::Duration;

use teamalg_gates::trace::{self, Decision, Reason};
use teamalg_gates::{decide, Ask, Family, Model, ParThreshold, Scalar, Source, SplitCurve};

use crate::exec::par::Executor;
use crate::exec::stream;

/// A region about to run: where it is, how big, how many sections it makes.
#[derive(Debug, Clone, Copy)]
pub struct Region {
    /// The kernel and region, for traces (`"gemm"`, `"lu/panel"`).
    pub site: &'static str,
    /// Its dimensions, for traces.
    pub dims: [usize; 3],
    /// Units of work in the family's unit (multiply-adds for the kernels' families).
    pub units: f64,
    /// The family whose rate and split costs apply.
    pub family: Family,
    /// Dispatches the region makes (a whole factorization: one per panel).
    pub sections: usize,
    /// Whether the region is a whole call or a later section of one.
    pub scope: Scope,
    /// Units of work of the whole call the region belongs to. The family's rate is read at
    /// this size and `ParThreshold::Fixed` compares it.
    pub call_units: f64,
}

/// What a region stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The whole call (a GEMM, a solve, a factorization at entry): the family's split costs
    /// apply.
    Call,
    /// A later section of a call that went parallel: only its dispatch is weighed.
    Section,
}

/// The sections of a blocked factorization of `m x n` in panels of `bs`: one per panel that
/// has trailing columns; zero when the matrix is a single panel (it then runs serially).
pub(crate) fn panel_sections(m: usize, n: usize, bs: usize) -> usize {
    let size = m.min(n);
    if size <= bs {
        return 0;
    }
    (0..size)
        .step_by(bs)
        .filter(|&k| (k + bs).min(size) < n)
        .count()
}

fn duration(ns: f64) -> Duration {
    Duration::from_nanos(ns.clamp(0.0, u64::MAX as f64) as u64)
}

/// The width a region runs at on `exec`: 1 (serial) unless going parallel pays (or the
/// threshold says otherwise). `call` is the call's own threshold for the region's family, if
/// it set one. The decision is [`teamalg_gates::decide`], the one every region of teamalg
/// answers through, with the executor's wake and live lateness (`Executor::wake_cost`,
/// `Executor::lateness`). Recorded in the decision trace ([`teamalg_gates::trace`]).
pub fn width<T: Scalar>(
    exec: &(impl Executor + ?Sized),
    region: Region,
    call: Option<ParThreshold>,
) -> usize {
    let model: &Model = exec.model();
    let (threshold, source) = match call {
        Some(t) => (t, Source::Call),
        None => model.threshold(region.family),
    };
    let rate = model.rate(region.family, region.call_units).of::<T>();
    let split = match region.scope {
        Scope::Call => model.split(region.family).for_kind(T::KIND),
        Scope::Section => SplitCurve::FREE,
    };
    let estimate = duration(region.units * rate);
    let budget = exec.width();
    // Neither is asked of a serial executor (a busy team's `width` is 1).
    let (wake, late) = if budget < 2 || threshold != ParThreshold::Derived {
        (Duration::ZERO, Duration::ZERO)
    } else {
        (exec.wake_cost(), exec.lateness())
    };
    let ask = Ask {
        estimate,
        sections: region.sections,
        budget,
        split,
        threshold,
        call_units: region.call_units,
        wake,
        late,
    };
    let (chosen, reason) = decide(ask, |k: NonZeroUsize| exec.dispatch_cost(k.get()));
    if reason == Reason::WakeNotPaid {
        stream::refused_for_wake(exec, ask, |k| exec.dispatch_cost(k.get()));
    } else {
        stream::decided();
    }
    trace::record(|| Decision {
        site: region.site,
        family: region.family,
        scalar: T::KIND,
        dims: region.dims,
        units: region.units,
        call_units: region.call_units,
        sections: region.sections,
        estimate,
        dispatch_cost: exec.dispatch_cost(chosen.max(2)),
        overhead: duration(split.at(chosen.max(2)).overhead_ns),
        efficiency: split.at(chosen.max(2)).efficiency,
        late,
        threshold,
        source,
        reason,
        width: chosen,
    });
    chosen
}
