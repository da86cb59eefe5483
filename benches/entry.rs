//! Entry cost of a parallel region: teamalg's plain tokens against rayon, side by side.
//!
//! ```text
//! cargo bench --bench entry -- [--calls N] [--share-us U]
//! ```
//!
//! Each call runs one share of `U` microseconds (default 10) on every participant; the table
//! shows the median overhead per call (median call time minus the share) and p90, for:
//! teamalg from outside the pool and from one of its workers, rayon `install` + `scope` from
//! outside and `scope` from inside a held `ThreadPool` of the same width, and a pool built and
//! dropped per call (teamalg leases workers from its reserve; rayon spawns threads).

use std::time::Duration;

use teamalg_tools::tour::measure::{busy, time_calls, Stats};
use teamalg_tools::tour::plain::{fresh_pool, inside, outside, overhead_us, widths};

fn rayon_pool(w: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(w)
        .build()
        .unwrap()
}

fn rayon_region(w: usize, share: Duration) {
    rayon::scope(|s| {
        for _ in 1..w {
            s.spawn(|_| busy(share));
        }
        busy(share);
    });
}

fn row(name: &str, w: usize, s: &Stats, share: Duration, base: Option<f64>) {
    let med = overhead_us(s, share);
    let p90 = s.p90.as_secs_f64() * 1e6 - share.as_secs_f64() * 1e6;
    let max = s.max.as_secs_f64() * 1e6 - share.as_secs_f64() * 1e6;
    let ratio = base.map_or(String::new(), |b| format!("{:>8.2}x", med / b));
    println!("{name:<34} {w:>5} {med:>12.2} {p90:>12.2} {max:>12.1} {ratio}");
}

fn main() {
    let mut calls = 4000usize;
    let mut share_us = 10u64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--calls" => calls = args.next().and_then(|v| v.parse().ok()).expect("--calls N"),
            "--share-us" => {
                share_us = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--share-us U")
            }
            "--bench" => {}
            other => panic!("unknown option {other}"),
        }
    }
    let share = Duration::from_micros(share_us);
    println!(
        "entry cost, {} CPUs, {calls} calls of one {share_us} us share per participant",
        teamalg::available_cpus()
    );
    println!(
        "overhead = call time - share; ratio = this arm's median overhead / rayon install's\n"
    );
    println!(
        "{:<34} {:>5} {:>12} {:>12}",
        "arm", "width", "median (us)", "p90 (us)"
    );
    for w in widths() {
        let tpool = teamalg::Pool::builder().threads(w).build().unwrap();
        let rpool = rayon_pool(w);
        let r_out = time_calls(calls, || rpool.install(|| rayon_region(w, share)));
        let r_in = rpool.install(|| time_calls(calls, || rayon_region(w, share)));
        let t_out = outside(&tpool, w, share, calls);
        let t_in = inside(&tpool, w, share, calls);
        let t_held = outside(&tpool, w, share, calls / 4);
        drop(tpool);
        drop(rpool);
        let t_fresh = fresh_pool(w, share, calls / 4);
        let r_fresh = time_calls(calls / 8, || {
            let p = rayon_pool(w);
            p.install(|| rayon_region(w, share));
            drop(p);
        });
        let base = overhead_us(&r_out, share);
        row(
            "rayon install + scope (outside)",
            w,
            &r_out,
            share,
            Some(base),
        );
        row("rayon scope (inside)", w, &r_in, share, Some(base));
        row("teamalg for_ranges (outside)", w, &t_out, share, Some(base));
        row("teamalg for_ranges (in pool)", w, &t_in, share, Some(base));
        row("teamalg held pool (outside)", w, &t_held, share, None);
        row("teamalg pool per call", w, &t_fresh, share, None);
        row("rayon pool per call", w, &r_fresh, share, None);
        let extra = (t_fresh.median.as_secs_f64() - t_held.median.as_secs_f64()) * 1e6;
        println!(
            "{:<34} {w:>5} {extra:>12.2}",
            "teamalg per call - held (us)"
        );
        println!();
    }
}
