//! Measurements of the executor on this host, shared by the `teamalg` program and the
//! `entry` benchmark.

use std::hint::black_box;
use std::time::{Duration, Instant};

use teamalg::{Exec, Pool};

/// Busy work of `d` on the calling thread (a share of known length).
pub(crate) fn busy(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        black_box(());
    }
}

/// Median, 90th percentile and maximum of a set of timings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stats {
    pub(crate) median: Duration,
    pub(crate) p90: Duration,
    #[allow(dead_code)] // read by the `entry` benchmark
    pub(crate) max: Duration,
}

impl Stats {
    pub(crate) fn of(mut v: Vec<Duration>) -> Stats {
        v.sort();
        let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
        Stats {
            median: at(0.5),
            p90: at(0.9),
            max: *v.last().unwrap(),
        }
    }
}

/// Times `calls` calls of `f` after `calls / 10` unmeasured ones.
pub(crate) fn time_calls(calls: usize, mut f: impl FnMut()) -> Stats {
    for _ in 0..calls / 10 {
        f();
    }
    let mut v = Vec::with_capacity(calls);
    for _ in 0..calls {
        let t = Instant::now();
        f();
        v.push(t.elapsed());
    }
    Stats::of(v)
}

/// The overhead of a call whose critical path is one share of `share`, in microseconds.
pub(crate) fn overhead_us(s: &Stats, share: Duration) -> f64 {
    s.median.as_secs_f64() * 1e6 - share.as_secs_f64() * 1e6
}

/// `for_ranges` of width `w` (one `share` per participant) from a thread outside the pool.
pub(crate) fn outside(pool: &Pool, w: usize, share: Duration, calls: usize) -> Stats {
    time_calls(calls, || {
        Exec::new(pool, w)
            .unwrap()
            .for_ranges(w, 1, |_| busy(share))
    })
}

/// The same from a worker of the pool (entered once with `install`).
pub(crate) fn inside(pool: &Pool, w: usize, share: Duration, calls: usize) -> Stats {
    Exec::new(pool, w)
        .unwrap()
        .install(|mut e| time_calls(calls, || e.reborrow().for_ranges(w, 1, |_| busy(share))))
}

/// A pool of width `w` built, used once and dropped per call.
pub(crate) fn fresh_pool(w: usize, share: Duration, calls: usize) -> Stats {
    time_calls(calls, || {
        let pool = Pool::builder().threads(w).build().unwrap();
        Exec::new(&pool, w)
            .unwrap()
            .for_ranges(w, 1, |_| busy(share));
        drop(pool);
    })
}

/// The widths to show: 2 up to the CPUs of the affinity set (powers of two and the top).
pub(crate) fn widths() -> Vec<usize> {
    let cpus = teamalg::available_cpus();
    let mut w: Vec<usize> = (1..).map(|k| 1 << k).take_while(|&x| x < cpus).collect();
    if cpus >= 2 {
        w.push(cpus);
    }
    w
}
