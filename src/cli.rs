//! The program's command line: a tour of what the executor costs on this host.

use std::time::Duration;

use teamalg::Pool;

use crate::tour::{fresh_pool, inside, outside, overhead_us, widths};

const SHARE: Duration = Duration::from_micros(10);
const CALLS: usize = 2000;

/// Prints the tour table.
pub(crate) fn run() {
    let cpus = teamalg::available_cpus();
    println!("teamalg executor tour: {cpus} CPUs in the affinity set");
    println!("for_ranges with one 10 us share per participant, back to back, {CALLS} calls");
    println!("overhead per call = median call time - 10 us\n");
    if cpus < 2 {
        println!("(one CPU: every entry runs inline; nothing to measure)");
        return;
    }
    println!(
        "{:>5}  {:>14}  {:>14}  {:>14}  {:>14}  {:>14}",
        "width", "outside (us)", "outside p90", "in pool (us)", "held (us)", "per-call (us)"
    );
    for w in widths() {
        let pool = Pool::builder().threads(w).build().expect("pool");
        let out = outside(&pool, w, SHARE, CALLS);
        let ins = inside(&pool, w, SHARE, CALLS);
        let held = outside(&pool, w, SHARE, CALLS / 4);
        drop(pool);
        let fresh = fresh_pool(w, SHARE, CALLS / 4);
        let p90 = out.p90.as_secs_f64() * 1e6 - SHARE.as_secs_f64() * 1e6;
        println!(
            "{:>5}  {:>14.2}  {:>14.2}  {:>14.2}  {:>14.2}  {:>14.2}",
            w,
            overhead_us(&out, SHARE),
            p90,
            overhead_us(&ins, SHARE),
            overhead_us(&held, SHARE),
            overhead_us(&fresh, SHARE),
        );
    }
    println!("\nheld: a pool held across calls, entered from outside; per-call: a pool built,");
    println!("used once and dropped per call (workers leased from the reserve).");
    println!(
        "threads started in this run: {}",
        teamalg::spawned_workers()
    );
}
