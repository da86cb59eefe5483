//! Timing helpers shared by the `teamalg` program and the benchmarks.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Busy work of `d` on the calling thread (a share of known length).
pub fn busy(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        black_box(());
    }
}

/// Median, 90th percentile and maximum of a set of timings.
#[derive(Debug, Clone, Copy)]
pub struct Stats {
    /// The median.
    pub median: Duration,
    /// The 90th percentile.
    pub p90: Duration,
    /// The slowest.
    pub max: Duration,
}

impl Stats {
    /// The statistics of `v` (not empty).
    pub fn of(mut v: Vec<Duration>) -> Stats {
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
pub fn time_calls(calls: usize, mut f: impl FnMut()) -> Stats {
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
