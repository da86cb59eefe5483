//! A recorder of gate decisions, so that "why was this serial" has an answer.
//!
//! Two ways to read them:
//! - [`collect`] runs a closure and returns, with its result, every decision the gates made on
//!   this thread while it ran (nested collections each see them);
//! - [`enable`] starts a process-wide log that [`drain`] empties. The log is a ring of the
//!   last [`LOG_CAPACITY`] decisions: a process that enables it and never drains it keeps at
//!   most that many (about 10 MiB), and [`dropped`] says how many older ones it let go.
//!
//! While neither is in use, a decision costs one relaxed load.
//!
//! ```
//! use std::time::Duration;
//! use teamalg_gates::trace::{self, Decision, Reason};
//! use teamalg_gates::{Family, ParThreshold, ScalarKind, Signal, Source};
//!
//! let d = Decision {
//!     site: "gemm",
//!     family: Family::Gemm,
//!     scalar: ScalarKind::F64,
//!     dims: [16, 16, 16],
//!     units: 4096.0,
//!     call_units: 4096.0,
//!     sections: 1,
//!     estimate: Duration::from_nanos(125),
//!     dispatch_cost: Duration::from_nanos(600),
//!     overhead: Duration::ZERO,
//!     efficiency: 1.0,
//!     late: Duration::ZERO,
//!     signal: Signal::None,
//!     threshold: ParThreshold::Derived,
//!     source: Source::Derived,
//!     reason: Reason::NotPaid,
//!     width: 1,
//! };
//! let ((), seen) = trace::collect(|| trace::record(|| d.clone()));
//! assert_eq!(seen.len(), 1);
//! assert!(!seen[0].parallel());
//! println!("{seen}"); // a table
//! ```

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

use crate::contention::Signal;
use crate::family::Family;
use crate::scalar::ScalarKind;
use crate::thresholds::{ParThreshold, Source};

/// Why a region ran at the width it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The rule: going parallel pays and is modelled faster.
    Paid,
    /// The rule: the estimate does not pay `PAYS` times the sections' cost at any width.
    NotPaid,
    /// The rule: the sections are paid for, but with the family's split costs (overhead,
    /// efficiency, the lead's part) the region is not modelled faster than serial.
    BelowModelledMinimum,
    /// The rule: the call's remaining work does not pay for waking sleeping participants.
    WakeNotPaid,
    /// The rule would go parallel on a quiet machine, but the executor's participants have
    /// been late lately (the live view: `Decision::late` per section) and with that loss the
    /// region is not modelled faster than serial.
    Late,
    /// `ParThreshold::Never`.
    Never,
    /// `ParThreshold::Fixed`, at or above the floor: the whole budget.
    FixedAbove,
    /// `ParThreshold::Fixed`, below the floor.
    FixedBelow,
    /// The executor has a budget of one (serial, or a busy team).
    Budget1,
    /// The process's other parallel calls hold the CPUs this region would use (their
    /// occupancy): it runs narrower, down to serial.
    Occupied,
    /// The call's sections already lost more than going parallel was expected to gain: the
    /// rest of the call runs on its caller (the bail-out).
    GaveUp,
}

impl Reason {
    /// The reason in words, for tables.
    pub fn describe(self) -> &'static str {
        match self {
            Reason::Paid => "paid",
            Reason::NotPaid => "not paid",
            Reason::BelowModelledMinimum => "below modelled minimum",
            Reason::WakeNotPaid => "wake not paid",
            Reason::Late => "participants late",
            Reason::Never => "never",
            Reason::FixedAbove => "fixed, above",
            Reason::FixedBelow => "fixed, below",
            Reason::Budget1 => "budget 1",
            Reason::Occupied => "occupied",
            Reason::GaveUp => "gave up",
        }
    }
}

/// One decision of one gated region.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Where: the kernel and region, for example `"lu/panel"`.
    pub site: &'static str,
    /// The family whose rate and split costs applied.
    pub family: Family,
    /// The scalar type.
    pub scalar: ScalarKind,
    /// The region's dimensions (unused ones 0).
    pub dims: [usize; 3],
    /// Units of work of the region (in the family's unit).
    pub units: f64,
    /// Units of work of the call from this region on (what `Fixed` compares).
    pub call_units: f64,
    /// Dispatches the region makes.
    pub sections: usize,
    /// Estimated serial time of the region.
    pub estimate: Duration,
    /// Dispatch cost of one section at the chosen width (at width 2 when serial;
    /// `Duration::MAX` when nothing can be dispatched).
    pub dispatch_cost: Duration,
    /// The split overhead per section at the chosen width (at width 2 when serial; the
    /// family's for a whole call, zero for a later section).
    pub overhead: Duration,
    /// The split efficiency at the chosen width, likewise (1 for a later section).
    pub efficiency: f64,
    /// What each section lost to late participants when the gate asked (the executor's live
    /// view; zero on a quiet machine), added to the dispatch cost.
    pub late: Duration,
    /// Which source set `late` (`Signal::None`: nothing was read or nothing knew).
    pub signal: Signal,
    /// The threshold in force.
    pub threshold: ParThreshold,
    /// Where the threshold came from.
    pub source: Source,
    /// Why the region ran at `width`.
    pub reason: Reason,
    /// The width chosen (1: serial).
    pub width: usize,
}

impl Decision {
    /// Whether the region went parallel.
    pub fn parallel(&self) -> bool {
        self.width > 1
    }
}

/// Decisions, printed as a table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decisions(pub Vec<Decision>);

impl std::ops::Deref for Decisions {
    type Target = Vec<Decision>;
    fn deref(&self) -> &Vec<Decision> {
        &self.0
    }
}

impl IntoIterator for Decisions {
    type Item = Decision;
    type IntoIter = std::vec::IntoIter<Decision>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl fmt::Display for Decisions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let us = |d: Duration| {
            if d == Duration::MAX {
                "-".to_string()
            } else {
                format!("{:.2}", d.as_secs_f64() * 1e6)
            }
        };
        writeln!(
            f,
            "{:<18} {:<16} {:<4} {:>16} {:>10} {:>12} {:>9} {:>9} {:>5} {:>9} {:<9} {:<22} {:<22} {:>5}",
            "site",
            "family",
            "type",
            "dims",
            "units",
            "estimate us",
            "D us",
            "over us",
            "eff",
            "late us",
            "signal",
            "threshold (source)",
            "reason",
            "width"
        )?;
        for d in &self.0 {
            let kind = match d.scalar {
                ScalarKind::F32 => "f32",
                ScalarKind::F64 => "f64",
                ScalarKind::C32 => "c32",
                ScalarKind::C64 => "c64",
            };
            writeln!(
                f,
                "{:<18} {:<16} {:<4} {:>16} {:>10.3e} {:>12} {:>9} {:>9} {:>5.2} {:>9} {:<9} {:<22} {:<22} {:>5}",
                d.site,
                d.family.name(),
                kind,
                format!("{}x{}x{}", d.dims[0], d.dims[1], d.dims[2]),
                d.units,
                us(d.estimate),
                us(d.dispatch_cost),
                us(d.overhead),
                d.efficiency,
                us(d.late),
                d.signal.name(),
                format!("{} ({})", d.threshold, d.source.name()),
                d.reason.describe(),
                d.width
            )?;
        }
        Ok(())
    }
}

/// Process-wide log on, plus one per open [`collect`] on any thread: while zero, [`record`]
/// returns after one load.
static WATCHERS: AtomicUsize = AtomicUsize::new(0);
static LOG_ON: AtomicUsize = AtomicUsize::new(0);
static LOG: Mutex<Log> = Mutex::new(Log {
    ring: VecDeque::new(),
    dropped: 0,
});

/// The most decisions the process-wide log keeps: past it, each new decision drops the oldest.
pub const LOG_CAPACITY: usize = 1 << 16;

struct Log {
    ring: VecDeque<Decision>,
    /// Decisions let go since the last drain.
    dropped: u64,
}

fn log() -> std::sync::MutexGuard<'static, Log> {
    LOG.lock().unwrap_or_else(|e| e.into_inner())
}

thread_local! {
    /// The open collections of this thread, innermost last.
    static SCOPES: RefCell<Vec<Vec<Decision>>> = const { RefCell::new(Vec::new()) };
}

/// Starts the process-wide log.
pub fn enable() {
    if LOG_ON.swap(1, Relaxed) == 0 {
        WATCHERS.fetch_add(1, Relaxed);
    }
}

/// Stops the process-wide log (what it holds is kept until drained).
pub fn disable() {
    if LOG_ON.swap(0, Relaxed) == 1 {
        WATCHERS.fetch_sub(1, Relaxed);
    }
}

/// Whether the process-wide log is on.
pub fn enabled() -> bool {
    LOG_ON.load(Relaxed) == 1
}

/// Records the decision `d` builds when the process-wide log is on or a [`collect`] is open
/// on this thread; otherwise `d` is not called.
#[inline]
pub fn record(d: impl FnOnce() -> Decision) {
    if WATCHERS.load(Relaxed) == 0 {
        return;
    }
    record_slow(d());
}

#[cold]
fn record_slow(d: Decision) {
    SCOPES.with(|s| {
        for scope in s.borrow_mut().iter_mut() {
            scope.push(d.clone());
        }
    });
    if enabled() {
        let mut log = log();
        if log.ring.len() == LOG_CAPACITY {
            log.ring.pop_front();
            log.dropped += 1;
        }
        log.ring.push_back(d);
    }
}

/// Takes every decision of the process-wide log (at most the last [`LOG_CAPACITY`], oldest
/// first) and resets [`dropped`].
pub fn drain() -> Decisions {
    let mut log = log();
    log.dropped = 0;
    Decisions(Vec::from(std::mem::take(&mut log.ring)))
}

/// Decisions the process-wide log let go since the last [`drain`] because it held
/// [`LOG_CAPACITY`] already (the oldest go first).
pub fn dropped() -> u64 {
    log().dropped
}

/// Runs `f` and returns its result with the decisions the gates made on this thread while it
/// ran. Decisions of work `f` hands to other threads (a nested call inside a section runs on a
/// member) are not in it; the process-wide log ([`enable`]) sees those.
pub fn collect<R>(f: impl FnOnce() -> R) -> (R, Decisions) {
    /// Closes the scope even when `f` panics.
    struct Open;
    impl Drop for Open {
        fn drop(&mut self) {
            WATCHERS.fetch_sub(1, Relaxed);
        }
    }
    SCOPES.with(|s| s.borrow_mut().push(Vec::new()));
    WATCHERS.fetch_add(1, Relaxed);
    let open = Open;
    let out = {
        // Pops this scope's decisions on the way out, panic or not.
        struct Pop;
        impl Drop for Pop {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    SCOPES.with(|s| s.borrow_mut().pop());
                }
            }
        }
        let _pop = Pop;
        f()
    };
    drop(open);
    let seen = SCOPES.with(|s| s.borrow_mut().pop().unwrap_or_default());
    (out, Decisions(seen))
}
