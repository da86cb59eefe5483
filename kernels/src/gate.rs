//! The one gate every region of a kernel asks.

use std::num::NonZeroUsize;
use std::time::Duration;

use teamalg_gates::{width_for_by, Family, ParThreshold, Scalar};

use crate::par::Executor;

/// A region about to run: where it is, how big, how many sections it makes.
#[derive(Debug, Clone, Copy)]
pub struct Region {
    /// The kernel and region, for traces (`"gemm"`, `"lu/trailing"`).
    pub site: &'static str,
    /// Its dimensions, for traces.
    pub dims: [usize; 3],
    /// Units of work in the family's unit.
    pub units: f64,
    /// The family whose rate applies.
    pub family: Family,
    /// Dispatches the region makes.
    pub sections: usize,
    /// The least estimated serial time at which the region may go parallel under
    /// `ParThreshold::Derived`: zero for regions whose sections cost one dispatch; a measured
    /// floor for regions whose sections also cost imbalance and cache traffic the rule does
    /// not see (the factorizations' panel steps).
    pub min_estimate: Duration,
}

/// The width a region runs at on `exec`: 1 (serial) unless going parallel pays (or the
/// threshold says otherwise). Recorded when tracing.
pub fn width<T: Scalar>(
    exec: &(impl Executor + ?Sized),
    region: Region,
    threshold: ParThreshold,
) -> usize {
    let budget = exec.width();
    let ns = region.units * region.family.rate().of::<T>();
    let estimate = Duration::from_nanos(ns.min(u64::MAX as f64) as u64);
    let chosen = if budget < 2 {
        1
    } else {
        match threshold {
            ParThreshold::Never => 1,
            ParThreshold::Fixed(floor) if region.units >= floor as f64 => budget,
            ParThreshold::Fixed(_) => 1,
            ParThreshold::Derived if estimate < region.min_estimate => 1,
            ParThreshold::Derived => {
                let b = NonZeroUsize::new(budget).unwrap_or(NonZeroUsize::MIN);
                width_for_by(estimate, region.sections, b, |k| {
                    exec.dispatch_cost(k.get())
                })
                .get()
            }
        }
    };
    #[cfg(feature = "trace")]
    teamalg_gates::trace::record(|| teamalg_gates::trace::Decision {
        site: region.site,
        dims: region.dims,
        units: region.units,
        sections: region.sections,
        estimate,
        dispatch_cost: exec.dispatch_cost(chosen.max(2)),
        width: chosen,
    });
    chosen
}
