//! Lookups and the rule allocate nothing (a counting global allocator).

use std::alloc::{GlobalAlloc, Layout, System};
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use teamalg_gates::{
    choose, pays_at, width_for_by, AppleRate, DispatchCosts, DispatchKind, Family, HostClass,
    Model, Rate, Rows, SplitCost,
};

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(p, l) }
    }
}

/// Rows for the model: one flat rate and one split for every family.
fn rows(_: Family) -> Rows {
    Rows::new(
        None,
        AppleRate::Measured(Rate::halved(0.5, 1.5)),
        Some((SplitCost::new(700.0, 0.9), SplitCost::new(900.0, 0.85))),
    )
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn lookups_allocate_nothing() {
    let costs = DispatchCosts::for_class(HostClass::X86_64Avx2);
    let model = &Model::for_class(HostClass::detect(), rows);
    let before = ALLOCS.load(Relaxed);
    let mut sink = 0u128;
    for w in 0..200 {
        for kind in DispatchKind::ALL {
            sink += costs.cost(kind, w).as_nanos() % 7;
        }
        sink += u128::from(pays_at(
            Duration::from_micros(w as u64),
            2,
            costs.cost(DispatchKind::Team, 4),
        ));
        let b = NonZeroUsize::new(1 + w % 64).unwrap();
        sink += width_for_by(Duration::from_micros(50 * w as u64), 1, b, |k| {
            costs.cost(DispatchKind::Team, k.get())
        })
        .get() as u128;
        // The model's lookups and the rule with split costs, as a kernel's gate asks them.
        let units = 1e3 * (1 + w) as f64;
        let rate = model.rate(Family::LuPartial, units).real;
        let split = model.split(Family::LuPartial).real;
        let est = Duration::from_nanos((units * rate) as u64);
        sink += choose(est, 3, b, &split, |k| {
            costs.cost(DispatchKind::Team, k.get())
        })
        .0
        .get() as u128;
        sink += u128::from(model.threshold(Family::Gemm).1 as u8);
        teamalg_gates::trace::record(|| unreachable!("nobody watches"));
    }
    assert_eq!(ALLOCS.load(Relaxed) - before, 0);
    assert!(sink > 0);
}
