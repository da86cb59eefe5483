//! Entry cost of a parallel region: teamalg's plain tokens against rayon, side by side.
//!
//! ```text
//! cargo run --release -p teamalg-tools --bin entry -- [--calls N] [--share-us U]
//! ```
//!
//! Each call runs one share of `U` microseconds (default 10) on every participant; the table
//! shows the median overhead per call (median call time minus the share) and p90, for:
//! teamalg from outside the pool and from one of its workers, rayon `install` + `scope` from
//! outside and `scope` from inside a held `ThreadPool` of the same width, and a pool built and
//! dropped per call (teamalg leases workers from its reserve; rayon spawns threads).
//!
//! Why not criterion: the arms are compared side by side in one process with their threads
//! still warm from the arm before (what users meet), and the table needs p90, max and how many
//! calls ran alone; criterion times one function at a time after a warm-up of its own. The
//! plain regression benches of the root package (`benches/`) use criterion.

use std::time::Duration;

use teamalg_tools::tour::measure::{busy, time_calls, Stats};
use teamalg_tools::tour::plain::{fresh_pool, inside, outside, overhead_us, widths, Entry};

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

/// One arm's row: overhead median, p90 and max, its ratio to rayon install's median, and
/// (teamalg's plain tokens) the calls whose caller ran a worker's share.
fn row(name: &str, w: usize, s: &Stats, share: Duration, base: Option<f64>, alone: Option<&Entry>) {
    let med = overhead_us(s, share);
    let p90 = s.p90.as_secs_f64() * 1e6 - share.as_secs_f64() * 1e6;
    let max = s.max.as_secs_f64() * 1e6 - share.as_secs_f64() * 1e6;
    let ratio = base.map_or("-".to_string(), |b| format!("{:.2}x", med / b));
    let alone = alone.map_or("-".to_string(), |e| format!("{} of {}", e.alone, e.calls));
    println!("{name:<34} {w:>5} {med:>12.2} {p90:>12.2} {max:>12.1} {ratio:>9} {alone:>14}");
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
    println!("overhead = call time - share, in us; ratio = this arm's median overhead / rayon");
    println!("install's; ran alone = calls whose caller ran a worker's share (no worker came in");
    println!("time; a plain token never waits for one, so such a call takes two shares)\n");
    println!(
        "{:<34} {:>5} {:>12} {:>12} {:>12} {:>9} {:>14}",
        "arm", "width", "median", "p90", "max", "ratio", "ran alone"
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
        let b = Some(base);
        row("rayon install + scope (outside)", w, &r_out, share, b, None);
        row("rayon scope (inside)", w, &r_in, share, b, None);
        row(
            "teamalg for_ranges (outside)",
            w,
            &t_out.stats,
            share,
            b,
            Some(&t_out),
        );
        row(
            "teamalg for_ranges (in pool)",
            w,
            &t_in.stats,
            share,
            b,
            Some(&t_in),
        );
        row(
            "teamalg held pool (outside)",
            w,
            &t_held.stats,
            share,
            None,
            Some(&t_held),
        );
        row(
            "teamalg pool per call",
            w,
            &t_fresh.stats,
            share,
            None,
            Some(&t_fresh),
        );
        row("rayon pool per call", w, &r_fresh, share, None, None);
        let extra = (t_fresh.stats.median.as_secs_f64() - t_held.stats.median.as_secs_f64()) * 1e6;
        println!(
            "{:<34} {w:>5} {extra:>12.2}",
            "teamalg per call - held (us)"
        );
        println!();
    }
}
