//! What plain-token entries cost: from outside a pool, from a worker, with a pool per call.

use std::time::Duration;

use teamalg::{Exec, Pool};

use super::measure::{busy, time_calls, Stats};

/// `for_ranges` of width `w` (one `share` per participant) from a thread outside the pool.
pub fn outside(pool: &Pool, w: usize, share: Duration, calls: usize) -> Stats {
    time_calls(calls, || {
        Exec::new(pool, w)
            .unwrap()
            .for_ranges(w, 1, |_| busy(share))
    })
}

/// The same from a worker of the pool (entered once with `install`).
pub fn inside(pool: &Pool, w: usize, share: Duration, calls: usize) -> Stats {
    Exec::new(pool, w)
        .unwrap()
        .install(|mut e| time_calls(calls, || e.reborrow().for_ranges(w, 1, |_| busy(share))))
}

/// A pool of width `w` built, used once and dropped per call.
pub fn fresh_pool(w: usize, share: Duration, calls: usize) -> Stats {
    time_calls(calls, || {
        let pool = Pool::builder().threads(w).build().unwrap();
        Exec::new(&pool, w)
            .unwrap()
            .for_ranges(w, 1, |_| busy(share));
        drop(pool);
    })
}

/// The overhead of a call whose critical path is one share of `share`, in microseconds.
pub fn overhead_us(s: &Stats, share: Duration) -> f64 {
    s.median.as_secs_f64() * 1e6 - share.as_secs_f64() * 1e6
}

/// The widths to show: 2 up to the CPUs of the affinity set (powers of two and the top).
pub fn widths() -> Vec<usize> {
    let cpus = teamalg::available_cpus();
    let mut w: Vec<usize> = (1..).map(|k| 1 << k).take_while(|&x| x < cpus).collect();
    if cpus >= 2 {
        w.push(cpus);
    }
    w
}
