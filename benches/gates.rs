//! What a gate costs: row lookups, the rule and the width choice, in nanoseconds per call.
//!
//! ```text
//! cargo bench --bench gates
//! ```

use std::hint::black_box;
use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use teamalg::gates::{
    choose, pays_at, width_for_by, DispatchCosts, DispatchKind, Family, HostClass, Model,
};

/// Median over 7 rounds of the time per call of `f`, in ns.
fn ns_per_call(calls: u32, mut f: impl FnMut(u32) -> u64) -> f64 {
    let mut v = Vec::new();
    let mut sink = 0u64;
    for _ in 0..7 {
        let t = Instant::now();
        for i in 0..calls {
            sink = sink.wrapping_add(f(black_box(i)));
        }
        v.push(t.elapsed().as_nanos() as f64 / calls as f64);
    }
    black_box(sink);
    v.sort_by(f64::total_cmp);
    v[3]
}

fn main() {
    let costs = DispatchCosts::for_class(HostClass::X86_64Avx2);
    let row = *costs.row(DispatchKind::Team);
    let n = 2_000_000;
    println!("gate costs on this host, ns per call (median of 7 rounds of {n} calls)\n");
    let at = ns_per_call(n, |i| row.at(2 + (i % 80) as usize).as_nanos() as u64);
    let cost = ns_per_call(n, |i| {
        costs
            .cost(DispatchKind::Team, 2 + (i % 80) as usize)
            .as_nanos() as u64
    });
    let pays = ns_per_call(n, |i| {
        u64::from(pays_at(
            Duration::from_nanos(u64::from(i % 50_000)),
            2,
            costs.cost(DispatchKind::Team, 4),
        ))
    });
    let width = |budget: usize| {
        let b = NonZeroUsize::new(budget).unwrap();
        ns_per_call(n / 10, move |i| {
            width_for_by(
                Duration::from_nanos(u64::from(i % 200_000) * 10),
                1,
                b,
                |k| costs.cost(DispatchKind::Team, k.get()),
            )
            .get() as u64
        })
    };
    let model = *Model::host_default();
    let curve = ns_per_call(n, |i| {
        model
            .rate(Family::LuPartial, (1 + i % 5_000_000) as f64)
            .real as u64
    });
    let split = model.split(Family::LuPartial).real;
    let chosen = |budget: usize| {
        let b = NonZeroUsize::new(budget).unwrap();
        ns_per_call(n / 10, move |i| {
            choose(
                Duration::from_nanos(u64::from(i % 200_000) * 10),
                7,
                b,
                split,
                |k| costs.cost(DispatchKind::Team, k.get()),
            )
            .0
            .get() as u64
        })
    };
    println!("{:<34} {:>10.2}", "WidthCosts::at (10-anchor row)", at);
    println!("{:<34} {:>10.2}", "Model::rate (4-anchor curve)", curve);
    println!("{:<34} {:>10.2}", "DispatchCosts::cost", cost);
    println!("{:<34} {:>10.2}", "pays_at", pays);
    println!("{:<34} {:>10.2}", "width_for_by, budget 8", width(8));
    println!("{:<34} {:>10.2}", "width_for_by, budget 64", width(64));
    println!("{:<34} {:>10.2}", "choose, budget 2", chosen(2));
    println!("{:<34} {:>10.2}", "choose, budget 8", chosen(8));
}
