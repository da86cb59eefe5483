//! A recorder of gate decisions (feature `trace`), so that "why was this serial" has an answer.
//!
//! Recording is off until [`enable`]; while on, every [`record`] appends one [`Decision`] to a
//! process-wide log that [`drain`] empties. Off, a record costs one relaxed load.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

/// One decision of one gated region.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Where: the kernel and region, for example `"lu/trailing"`.
    pub site: &'static str,
    /// The region's dimensions (unused ones 0).
    pub dims: [usize; 3],
    /// Units of work (in the family's unit).
    pub units: f64,
    /// Dispatches the region makes.
    pub sections: usize,
    /// Estimated serial time.
    pub estimate: Duration,
    /// Dispatch cost of one section at the chosen width (or at width 2 when serial).
    pub dispatch_cost: Duration,
    /// The width chosen (1: serial).
    pub width: usize,
}

impl Decision {
    /// Whether the region went parallel.
    pub fn parallel(&self) -> bool {
        self.width > 1
    }
}

static ON: AtomicBool = AtomicBool::new(false);
static LOG: Mutex<Vec<Decision>> = Mutex::new(Vec::new());

/// Starts recording.
pub fn enable() {
    ON.store(true, Relaxed);
}

/// Stops recording (the log is kept until drained).
pub fn disable() {
    ON.store(false, Relaxed);
}

/// Whether recording is on.
#[inline]
pub fn enabled() -> bool {
    ON.load(Relaxed)
}

/// Records `d` when recording is on.
#[inline]
pub fn record(d: impl FnOnce() -> Decision) {
    if enabled() {
        let d = d();
        LOG.lock().unwrap_or_else(|e| e.into_inner()).push(d);
    }
}

/// Takes every decision recorded so far.
pub fn drain() -> Vec<Decision> {
    std::mem::take(&mut *LOG.lock().unwrap_or_else(|e| e.into_inner()))
}
