//! What a gate costs: row lookups, the rate curve, the rule and the width choice, per call.
//!
//! ```text
//! cargo bench --features bench --bench gates
//! ```
//!
//! A plain regression bench, so it uses criterion (the other benches interleave arms call by
//! call inside one timed loop, which criterion's one-function-at-a-time runs cannot do).

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::num::NonZeroUsize;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use teamalg::gates::{
    DispatchCosts, DispatchKind, Family, HostClass, choose, pays_at, width_for_by,
};

fn gates(c: &mut Criterion) {
    let costs = DispatchCosts::for_class(HostClass::X86_64Avx2);
    let row = *costs.row(DispatchKind::Team);
    let model = *teamalg::kernels::families::host_model();
    let split = model.split(Family::LuPartial).real;
    let mut i = 0u64;
    let mut next = move || {
        i = i.wrapping_add(7919);
        i
    };
    c.bench_function("WidthCosts::at (10-anchor row)", |b| {
        b.iter(|| row.at(black_box(2 + (next() % 80) as usize)))
    });
    c.bench_function("DispatchCosts::cost", |b| {
        b.iter(|| costs.cost(DispatchKind::Team, black_box(2 + (next() % 80) as usize)))
    });
    c.bench_function("Model::rate (4-anchor curve)", |b| {
        b.iter(|| {
            model.rate(
                Family::LuPartial,
                black_box((1 + next() % 5_000_000) as f64),
            )
        })
    });
    c.bench_function("pays_at", |b| {
        b.iter(|| {
            pays_at(
                Duration::from_nanos(black_box(next() % 50_000)),
                2,
                costs.cost(DispatchKind::Team, 4),
            )
        })
    });
    for budget in [8, 64] {
        let nz = NonZeroUsize::new(budget).unwrap();
        c.bench_function(&format!("width_for_by, budget {budget}"), |b| {
            b.iter(|| {
                width_for_by(
                    Duration::from_nanos(black_box(next() % 2_000_000)),
                    1,
                    nz,
                    |k| costs.cost(DispatchKind::Team, k.get()),
                )
            })
        });
    }
    for budget in [2, 8] {
        let nz = NonZeroUsize::new(budget).unwrap();
        c.bench_function(&format!("choose, budget {budget}"), |b| {
            b.iter(|| {
                choose(
                    Duration::from_nanos(black_box(next() % 2_000_000)),
                    7,
                    nz,
                    &split,
                    |k| costs.cost(DispatchKind::Team, k.get()),
                )
            })
        });
    }
}

criterion_group!(benches, gates);
criterion_main!(benches);
