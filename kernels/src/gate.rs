//! The one gate every region of a kernel asks.
//!
//! The threshold in force is the call's (`*Params::threshold`), else the executor's model's
//! (the pool's builder, then `TEAMALG_THRESHOLDS`), else `Derived`: the rule of
//! `teamalg-gates` with the model's rate, split costs and dispatch costs
//! ([`teamalg_gates::choose`]).

use std::num::NonZeroUsize;
use std::time::Duration;

use teamalg_gates::trace::{self, Decision, Reason};
use teamalg_gates::{choose, Family, Model, ParThreshold, Scalar, Source, Verdict};

use crate::par::Executor;

/// A region about to run: where it is, how big, how many sections it makes.
#[derive(Debug, Clone, Copy)]
pub struct Region {
    /// The kernel and region, for traces (`"gemm"`, `"lu/panel"`).
    pub site: &'static str,
    /// Its dimensions, for traces.
    pub dims: [usize; 3],
    /// Units of work in the family's unit (multiply-adds for the kernels' families).
    pub units: f64,
    /// Of `units`, the part one participant must do alone (a lookahead's next panel), which
    /// bounds the region's parallel time from below; 0 when the work splits freely.
    pub lead: f64,
    /// The family whose rate and split costs apply.
    pub family: Family,
    /// Dispatches the region makes.
    pub sections: usize,
    /// Units of work of the whole call from this region on (this region's for a one-section
    /// kernel; the rest of the factorization for a panel step). `ParThreshold::Fixed` compares
    /// it, and a wake of sleeping participants (`Executor::wake_cost`), paid once per call, is
    /// weighed against it.
    pub call_units: f64,
}

fn duration(ns: f64) -> Duration {
    Duration::from_nanos(ns.clamp(0.0, u64::MAX as f64) as u64)
}

/// The width a region runs at on `exec`: 1 (serial) unless going parallel pays (or the
/// threshold says otherwise). `call` is the call's own threshold for the region's family, if
/// it set one. Recorded in the decision trace ([`teamalg_gates::trace`]).
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
    let rate = model.rate(region.family).of::<T>();
    let split = model.split(region.family).for_kind(T::KIND);
    let estimate = duration(region.units * rate);
    let budget = exec.width();
    let (chosen, reason) = if budget < 2 {
        (1, Reason::Budget1)
    } else {
        match threshold {
            ParThreshold::Never => (1, Reason::Never),
            ParThreshold::Fixed(floor) if region.call_units >= floor as f64 => {
                (budget, Reason::FixedAbove)
            }
            ParThreshold::Fixed(_) => (1, Reason::FixedBelow),
            ParThreshold::Derived => {
                let b = NonZeroUsize::new(budget).unwrap_or(NonZeroUsize::MIN);
                let lead = duration(region.lead * rate);
                let (w, verdict) = choose(estimate, lead, region.sections, b, split, |k| {
                    exec.dispatch_cost(k.get())
                });
                match verdict {
                    Verdict::Paid if !wake_pays(exec, region.call_units * rate) => {
                        (1, Reason::WakeNotPaid)
                    }
                    Verdict::Paid => (w.get(), Reason::Paid),
                    Verdict::NotPaid => (1, Reason::NotPaid),
                    Verdict::NotFaster => (1, Reason::BelowModelledMinimum),
                }
            }
        }
    };
    trace::record(|| Decision {
        site: region.site,
        family: region.family,
        scalar: T::KIND,
        dims: region.dims,
        units: region.units,
        lead: region.lead,
        call_units: region.call_units,
        sections: region.sections,
        estimate,
        dispatch_cost: exec.dispatch_cost(chosen.max(2)),
        overhead: duration(split.overhead_ns),
        efficiency: split.efficiency,
        threshold,
        source,
        reason,
        width: chosen,
    });
    chosen
}

/// Whether the call's work from a region on (`call_ns` of serial time) pays for waking the
/// executor's sleeping participants, by the rule (one dispatch of the wake's cost). True when
/// nothing sleeps.
fn wake_pays(exec: &(impl Executor + ?Sized), call_ns: f64) -> bool {
    let wake = exec.wake_cost();
    wake.is_zero() || teamalg_gates::pays_at(duration(call_ns), 1, wake)
}
