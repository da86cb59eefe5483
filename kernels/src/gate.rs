//! The one gate every region of a kernel asks.

use std::num::NonZeroUsize;
use std::time::Duration;

use teamalg_gates::{width_for_by, Family, ParThreshold, Scalar};

use crate::par::Executor;

/// The least estimated work of a GEMM (or triangular solve) section that goes parallel. On the
/// 2-vCPU development VM a c64 GEMM of 32 (5.4 us estimated) two wide took 1.18x its serial
/// time, while f64 of 64 (9.7 us) took 0.72 to 0.77x: below this, halving a tiny product costs
/// more (in the product's own efficiency and in the member's cache) than the dispatch shows.
pub(crate) const MIN_PRODUCT_SECTION: Duration = Duration::from_micros(8);

/// The least estimated work of an LU or Cholesky panel section that goes parallel. On the 2-vCPU development VM, LU
/// of 128 and 192 (f64) with their sections two wide (16 to 40 us each) took 1.06 to 1.17x faer's
/// serial time: such sections lose to the lead's panel work and to cache traffic, which a
/// dispatch cost of under a microsecond does not show. With this floor every size up to 384 was
/// within 1.005x of serial, and 256 to 384 already gain where their first sections pay.
pub(crate) const MIN_PANEL_SECTION: Duration = Duration::from_micros(60);

/// The work the gate weighs for a lookahead section (LU, Cholesky) whose lead alone does `lead` units and whose other
/// `shared` units any participant may do: going two wide saves `shared` when that is smaller
/// than `lead`, half of all otherwise, the saving the gate's rule assumes of `min(all, 2 x
/// shared)` units.
pub(crate) fn lookahead_units(lead: f64, shared: f64) -> f64 {
    (lead + shared).min(2.0 * shared)
}

/// Whether the call's work from `region` on pays for waking the executor's sleeping
/// participants, by the rule (one dispatch of the wake's cost). True when nothing sleeps.
fn wake_pays<T: Scalar>(exec: &(impl Executor + ?Sized), region: Region) -> bool {
    let wake = exec.wake_cost();
    if wake.is_zero() {
        return true;
    }
    let ns = region.call_units * region.family.rate().of::<T>();
    let call = Duration::from_nanos(ns.min(u64::MAX as f64) as u64);
    teamalg_gates::pays_at(call, 1, wake)
}

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
    /// Units of work of the whole call from this region on (this region's for a one-section
    /// kernel; the rest of the factorization for a panel step), against which a wake of
    /// sleeping participants (`Executor::wake_cost`) is weighed: it is paid once per call.
    pub call_units: f64,
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
            ParThreshold::Derived if !wake_pays::<T>(exec, region) => 1,
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
