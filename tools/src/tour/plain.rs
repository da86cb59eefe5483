//! What plain-token entries cost: from outside a pool, from a worker, with a pool per call.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use teamalg::{Exec, Pool};

use super::measure::{busy, Stats};

/// An entry arm's calls: their times, and how many of them ran another participant's share on
/// the caller (no worker took it in time: a plain token never waits for one, so such a call
/// takes two shares or more, and its "overhead" is mostly a share).
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// The call times.
    pub stats: Stats,
    /// Calls timed.
    pub calls: usize,
    /// Of those, calls in which the caller ran a share besides its own.
    pub alone: usize,
}

/// Times `calls` calls of `call` after `calls / 10` unmeasured ones; `call` runs its region
/// with the body it is given (one `share` per range).
fn timed(
    calls: usize,
    share: Duration,
    mut call: impl FnMut(&(dyn Fn(Range<usize>) + Sync)),
) -> Entry {
    let caller = std::thread::current().id();
    let took_other = AtomicBool::new(false);
    let body = |r: Range<usize>| {
        if r.start > 0 && std::thread::current().id() == caller {
            took_other.store(true, Relaxed);
        }
        busy(share);
    };
    for _ in 0..calls / 10 {
        call(&body);
    }
    let (mut v, mut alone) = (Vec::with_capacity(calls), 0);
    for _ in 0..calls {
        took_other.store(false, Relaxed);
        let t = Instant::now();
        call(&body);
        v.push(t.elapsed());
        alone += usize::from(took_other.load(Relaxed));
    }
    Entry {
        stats: Stats::of(v),
        calls,
        alone,
    }
}

/// `for_ranges` of width `w` (one `share` per participant) from a thread outside the pool.
pub fn outside(pool: &Pool, w: usize, share: Duration, calls: usize) -> Entry {
    timed(calls, share, |body| {
        Exec::new(pool, w).unwrap().for_ranges(w, 1, body)
    })
}

/// The same from a worker of the pool (entered once with `install`).
pub fn inside(pool: &Pool, w: usize, share: Duration, calls: usize) -> Entry {
    Exec::new(pool, w)
        .unwrap()
        .install(|mut e| timed(calls, share, |body| e.reborrow().for_ranges(w, 1, body)))
}

/// A pool of width `w` built, used once and dropped per call.
pub fn fresh_pool(w: usize, share: Duration, calls: usize) -> Entry {
    timed(calls, share, |body| {
        let pool = Pool::builder().threads(w).build().unwrap();
        Exec::new(&pool, w).unwrap().for_ranges(w, 1, body);
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
