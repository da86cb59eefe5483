//! What entering an empty parallel region costs, per entry kind: a plain regression bench for
//! catching a change in the executor's fixed costs, so it uses criterion.
//!
//! ```text
//! cargo bench --features bench --bench entry_regression
//! ```
//!
//! Each region has width 2 and no work (a `black_box` per participant), so the time is the
//! entry, the dispatch and the join. `cargo run --release -p teamalg-tools --bin entry` is the side-by-side comparison
//! with rayon (with a share of work, p90, max and how many calls ran alone); this one tracks
//! the same entries over commits. On a host with one CPU every entry runs inline.

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use teamalg::{Exec, Pool};

fn entries(c: &mut Criterion) {
    let w = 2;
    let pool = Pool::builder().threads(w).build().expect("pool");
    c.bench_function("plain token, outside the pool (for_ranges)", |b| {
        b.iter(|| {
            Exec::new(&pool, w).expect("token").for_ranges(w, 1, |r| {
                black_box(r);
            })
        })
    });
    c.bench_function("plain token, from a worker (for_ranges)", |b| {
        Exec::new(&pool, w).expect("token").install(|mut e| {
            b.iter(|| {
                e.reborrow().for_ranges(w, 1, |r| {
                    black_box(r);
                })
            })
        })
    });
    drop(pool);
    let team = Pool::builder()
        .threads(w)
        .build()
        .expect("pool")
        .into_team(w)
        .expect("team");
    c.bench_function("held team, one section", |b| {
        team.exec(w)
            .team(|t| {
                b.iter(|| {
                    t.run(|p| {
                        black_box(p.index());
                    })
                })
            })
            .expect("a team token forms its team")
    });
    drop(team);
    c.bench_function("pool built, entered and dropped per call", |b| {
        b.iter(|| {
            let pool = Pool::builder().threads(w).build().expect("pool");
            Exec::new(&pool, w).expect("token").for_ranges(w, 1, |r| {
                black_box(r);
            });
        })
    });
    c.bench_function("with_team per call, one section", |b| {
        b.iter(|| {
            teamalg::with_team(w, |t| {
                t.exec(w)
                    .team(|t| {
                        t.run(|p| {
                            black_box(p.index());
                        })
                    })
                    .expect("a team token forms its team")
            })
            .expect("team")
        })
    });
}

criterion_group!(benches, entries);
criterion_main!(benches);
