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
use teamalg_gates::{
    decide, gain, Ask, Contention, Family, Model, ParThreshold, Scalar, Signal, Source, SplitCurve,
};

use crate::exec::call::{self, Call};
use crate::exec::occupancy;
use crate::exec::par::Executor;
use crate::exec::wakes;

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
/// answers through, with the executor's wake and contention (`Executor::wake_cost`,
/// `Executor::contention`), within the CPUs the process's other parallel calls leave
/// (`occupancy`), and serial once the call open on this thread gave up ([`crate::call`]).
/// Recorded in the decision trace ([`teamalg_gates::trace`]).
///
/// A whole call asks through [`call()`] instead, which keeps its watch open while it runs.
pub fn width<T: Scalar>(
    exec: &(impl Executor + ?Sized),
    region: Region,
    call: Option<ParThreshold>,
) -> usize {
    weigh::<T>(exec, region, call).width
}

/// What the gate weighed for one region: the width, what going parallel at it is expected to
/// gain (`teamalg_gates::gain`), and the contention it read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weighed {
    /// The width chosen (1: serial).
    pub width: usize,
    /// The expected gain of that width over serial (zero when serial).
    pub gain: Duration,
    /// The contention read for the decision ([`Contention::NONE`] when none was read).
    pub contention: Contention,
    /// The threshold in force: the call's, else the model's for the region's family.
    pub threshold: ParThreshold,
}

/// The gate's decision for a whole call ([`Scope::Call`]): its width, and the call's watch,
/// open until the returned [`Call`] is dropped, which weighs its sections' losses against the
/// gain expected here (the bail-out, [`crate::call`]) and holds its CPUs against the
/// process's other calls. A call inside a call on the same thread joins the outer watch.
#[must_use = "the call's watch closes when its `Call` is dropped"]
pub fn call<T: Scalar>(
    exec: &(impl Executor + ?Sized),
    region: Region,
    threshold: Option<ParThreshold>,
) -> Call {
    let w = weigh::<T>(exec, region, threshold);
    Call::open(exec, w.width, w.gain, w.threshold != ParThreshold::Derived)
}

/// The gate's decision for `region`, with what it weighed ([`width`] answers its width).
pub fn weigh<T: Scalar>(
    exec: &(impl Executor + ?Sized),
    region: Region,
    call: Option<ParThreshold>,
) -> Weighed {
    // One question to the executor: everything the rule weighs but the dispatch row.
    let weighed = |model: &Model| {
        let threshold = call.unwrap_or_else(|| model.threshold(region.family).0);
        let rate = model.rate(region.family, region.call_units).of::<T>();
        (
            duration(region.units * rate),
            threshold == ParThreshold::Derived,
        )
    };
    // A call that gave up runs the rest of itself on the caller, whatever its threshold: the
    // threshold decided how it started.
    let gave_up = call::gave_up();
    // The caller's own threshold is its word; the derived rule weighs the machine: the CPUs
    // the process's other calls leave, the contention now, and this call's losses so far.
    let answer = exec.question(&weighed, gave_up, &occupancy::free);
    let model: &Model = answer.model;
    let (threshold, source) = match call {
        Some(t) => (t, Source::Call),
        None => model.threshold(region.family),
    };
    let split = match region.scope {
        Scope::Call => model.split(region.family).for_kind(T::KIND),
        Scope::Section => SplitCurve::FREE,
    };
    let (estimate, full, budget) = (answer.estimate, answer.width, answer.budget);
    let (wake, contention) = (answer.wake, answer.contention);
    let ask = Ask {
        estimate,
        sections: region.sections,
        budget,
        split,
        threshold,
        call_units: region.call_units,
        wake,
        late: contention.late,
    };
    let cost = |k: NonZeroUsize| exec.dispatch_cost(k.get());
    let (chosen, reason) = if gave_up {
        (1, Reason::GaveUp)
    } else {
        match decide(ask, cost) {
            (1, Reason::Budget1) if full >= 2 => (1, Reason::Occupied),
            d => d,
        }
    };
    if reason == Reason::WakeNotPaid {
        wakes::refused_for_wake(exec, ask, cost);
    } else {
        wakes::decided();
    }
    if chosen == 1 && contention.signal == Signal::Count {
        exec.probe();
    }
    if reason == Reason::Occupied {
        // Other calls hold the CPUs: this executor's members, spinning for a section that
        // does not come, would take them from those calls' participants.
        exec.rest();
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
        late: contention.late,
        signal: contention.signal,
        threshold,
        source,
        reason,
        width: chosen,
    });
    Weighed {
        width: chosen,
        gain: gain(ask, chosen, cost),
        contention,
        threshold,
    }
}
