//! A recorder of the factorizations' sections: per section, its wall time and the busy time
//! of the lead (participant 0, which also factors the next panel) and of participant 1, so
//! that "where does the time go" has an answer (idle = wall - busy).
//!
//! [`collect`] runs a closure and returns, with its result, every section the kernels ran on
//! this thread meanwhile (the thread that called the kernel). While no collection is active, a
//! section costs one thread-local read.
//!
//! ```
//! use faer::dyn_stack::{MemBuffer, MemStack};
//! use faer::Mat;
//! use teamalg_gates::ParThreshold;
//! use teamalg_kernels::lu::{lu_in_place, lu_in_place_scratch, LuParams};
//! use teamalg_kernels::par::Seq;
//! use teamalg_kernels::sections;
//!
//! let mut a = Mat::<f64>::from_fn(96, 96, |i, j| if i == j { 96.0 } else { 1.0 });
//! let mut swaps = vec![0; 96];
//! let mut buf = MemBuffer::new(lu_in_place_scratch::<f64>(96, 96));
//! let params = LuParams { block_size: 32, ..LuParams::default() };
//! let (_, seen) = sections::collect(|| {
//!     lu_in_place(a.as_mut(), &mut swaps, &Seq, params, MemStack::new(&mut buf))
//! });
//! // Serial from the start: faer's LU, no sections.
//! assert!(seen.is_empty());
//! ```

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use crate::exec::call;
use crate::exec::par::{Executor, Part};

/// The timing of one section of a factorization, as [`collect`] records it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SectionTiming {
    /// The kernel (`"lu"`, `"cholesky"`, `"qr"`).
    pub site: &'static str,
    /// The first column of the panel the section follows.
    pub k: usize,
    /// Its participants.
    pub width: usize,
    /// From dispatch to the return of the last participant.
    pub wall: Duration,
    /// Participant 0's busy time (its update and the lookahead).
    pub lead: Duration,
    /// Participant 1's busy time (zero when the section ran serially).
    pub other: Duration,
}

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    static SEEN: RefCell<Vec<SectionTiming>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` and returns, with its result, the sections the kernels ran on this thread
/// meanwhile, in order.
pub fn collect<R>(f: impl FnOnce() -> R) -> (R, Vec<SectionTiming>) {
    let start = SEEN.with(|s| s.borrow().len());
    DEPTH.with(|d| d.set(d.get() + 1));
    // Restores the depth and hands back the sections even when `f` panics.
    struct Leave(usize);
    impl Drop for Leave {
        fn drop(&mut self) {
            DEPTH.with(|d| d.set(d.get() - 1));
            if DEPTH.with(Cell::get) == 0 {
                SEEN.with(|s| s.borrow_mut().truncate(self.0));
            }
        }
    }
    let leave = Leave(start);
    let r = f();
    let seen = SEEN.with(|s| s.borrow()[start..].to_vec());
    drop(leave);
    (r, seen)
}

/// Runs one section of a factorization: `body` on `width` participants of `exec`, or on the
/// calling thread alone as participant 0 when `width <= 1`; timed when a collection is active.
pub(crate) fn run(
    exec: &(impl Executor + ?Sized),
    site: &'static str,
    k: usize,
    width: usize,
    busy: &Busy,
    body: &(dyn Fn(Part<'_>) + Sync),
) {
    // A call that gave up runs its sections on the caller (`call.rs`).
    if width <= 1 || call::gave_up() {
        timed(site, k, 1, busy, || body(Part::new(0, 1, None)));
    } else {
        timed(site, k, width, busy, || call::run(exec, width, body));
    }
}

/// Runs one section (`run`), timed when a collection is active.
fn timed(site: &'static str, k: usize, width: usize, busy: &Busy, run: impl FnOnce()) {
    if DEPTH.with(Cell::get) == 0 {
        return run();
    }
    let start = Instant::now();
    run();
    let wall = start.elapsed();
    let (lead, other) = busy.times();
    SEEN.with(|s| {
        s.borrow_mut().push(SectionTiming {
            site,
            k,
            width,
            wall,
            lead,
            other,
        })
    });
}

/// Busy times of a section's lead (participant 0) and participant 1, in nanoseconds.
#[derive(Debug, Default)]
pub(crate) struct Busy {
    lead: AtomicU64,
    other: AtomicU64,
}

impl Busy {
    /// The busy times of the lead and of participant 1.
    pub(crate) fn times(&self) -> (Duration, Duration) {
        let d = |a: &AtomicU64| Duration::from_nanos(a.load(Relaxed));
        (d(&self.lead), d(&self.other))
    }

    /// Times `f` as participant `i`'s work.
    pub(crate) fn time<R>(&self, i: usize, f: impl FnOnce() -> R) -> R {
        let start = Instant::now();
        let r = f();
        let ns = start.elapsed().as_nanos().min(u64::MAX as u128) as u64;
        match i {
            0 => self.lead.store(ns, Relaxed),
            1 => self.other.store(ns, Relaxed),
            _ => {}
        }
        r
    }
}
