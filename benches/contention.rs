//! What the contention signal and the bail-out cost on a quiet machine, per call: a read of
//! the process-wide sources (what a region that reads at entry pays), a spinning worker's
//! run-queue read (paid in its idle time), a region's reading of what the last read left, and
//! the watch's bookkeeping of a section (`docs/gates.md`, "What the signal costs").
//!
//! ```text
//! cargo bench --features bench --bench contention
//! ```

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use teamalg::kernels::call::{self, Call};
use teamalg::kernels::par::Seq;
use teamalg::{Executor, Pool, signal};

fn contention(c: &mut Criterion) {
    c.bench_function("read the sources (loadavg + pressure)", |b| {
        b.iter(signal::read_sources)
    });
    c.bench_function("read the run queue (schedstat)", |b| {
        b.iter(signal::read_run_queue)
    });
    let team = Pool::builder()
        .threads(2)
        .build()
        .expect("pool")
        .into_team(2)
        .expect("team");
    c.bench_function("reading for a small region (no read)", |b| {
        b.iter(|| team.contention(black_box(Duration::from_micros(10))))
    });
    // The watch's share of a section: the same empty section with and without a watch open
    // (timed per participant).
    let body = |p: teamalg::kernels::par::Part<'_>| {
        black_box(p.index());
    };
    c.bench_function("section on Seq, no watch", |b| {
        b.iter(|| call::run(&Seq, 1, &body))
    });
    c.bench_function("section on a team of 2, no watch", |b| {
        b.iter(|| call::run(&team, 2, &body))
    });
    // A watch per call, as a kernel opens one (a watch kept open over millions of empty
    // sections would give up after a few incidents: they save nothing).
    c.bench_function(
        "call of one section on a team of 2 (watch opened and closed)",
        |b| {
            b.iter(|| {
                let _call = Call::open(&team, 2, Duration::from_secs(3600), false);
                call::run(&team, 2, &body);
            })
        },
    );
    c.bench_function("open and close a call's watch", |b| {
        b.iter(|| {
            drop(Call::open(
                &Seq,
                1,
                black_box(Duration::from_micros(5)),
                false,
            ))
        })
    });
}

criterion_group!(benches, contention);
criterion_main!(benches);
