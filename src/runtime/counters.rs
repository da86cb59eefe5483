//! Counters of the wait protocols, process-wide, for benchmarks and tests. Not part of the
//! stable API.
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

static PARKS: AtomicU64 = AtomicU64::new(0);
static WAKES: AtomicU64 = AtomicU64::new(0);
static JOIN_SLEEPS: AtomicU64 = AtomicU64::new(0);
static IDLE_SLEEPS: AtomicU64 = AtomicU64::new(0);
static BARRIER_SLEEPS: AtomicU64 = AtomicU64::new(0);
static MEMBER_SLEEPS: AtomicU64 = AtomicU64::new(0);
static MOVES: AtomicU64 = AtomicU64::new(0);
static CEDES: AtomicU64 = AtomicU64::new(0);
static LEAVES: AtomicU64 = AtomicU64::new(0);

/// A snapshot of the counters; subtract two snapshots to count an interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WaitCounters {
    /// Times a thread really blocked in a parker.
    pub parks: u64,
    /// Wakes that found a blocked thread and signalled it.
    pub wakes: u64,
    /// Joins (a caller waiting for its helpers, a leader for its members) that slept.
    pub join_sleeps: u64,
    /// Idle workers that reached the sleep phase.
    pub idle_sleeps: u64,
    /// Barrier waits that slept.
    pub barrier_sleeps: u64,
    /// Team members that slept while waiting for the next section.
    pub member_sleeps: u64,
    /// Team members that a leader found queued on its CPU and moved off it.
    pub moves: u64,
    /// Team members that stopped spinning because they found themselves on their leader's
    /// CPU.
    pub cedes: u64,
    /// Team members that stopped spinning because their leader led another team.
    pub leaves: u64,
}

impl std::ops::Sub for WaitCounters {
    type Output = WaitCounters;
    fn sub(self, o: Self) -> Self {
        WaitCounters {
            parks: self.parks - o.parks,
            wakes: self.wakes - o.wakes,
            join_sleeps: self.join_sleeps - o.join_sleeps,
            idle_sleeps: self.idle_sleeps - o.idle_sleeps,
            barrier_sleeps: self.barrier_sleeps - o.barrier_sleeps,
            member_sleeps: self.member_sleeps - o.member_sleeps,
            moves: self.moves - o.moves,
            cedes: self.cedes - o.cedes,
            leaves: self.leaves - o.leaves,
        }
    }
}

/// Reads the counters.
pub fn snapshot() -> WaitCounters {
    WaitCounters {
        parks: PARKS.load(Relaxed),
        wakes: WAKES.load(Relaxed),
        join_sleeps: JOIN_SLEEPS.load(Relaxed),
        idle_sleeps: IDLE_SLEEPS.load(Relaxed),
        barrier_sleeps: BARRIER_SLEEPS.load(Relaxed),
        member_sleeps: MEMBER_SLEEPS.load(Relaxed),
        moves: MOVES.load(Relaxed),
        cedes: CEDES.load(Relaxed),
        leaves: LEAVES.load(Relaxed),
    }
}

pub(crate) fn record_park() {
    PARKS.fetch_add(1, Relaxed);
}
pub(crate) fn record_wake() {
    WAKES.fetch_add(1, Relaxed);
}
pub(crate) fn record_join_sleep() {
    JOIN_SLEEPS.fetch_add(1, Relaxed);
}
pub(crate) fn record_barrier_sleep() {
    BARRIER_SLEEPS.fetch_add(1, Relaxed);
}
#[cfg_attr(loom, allow(dead_code))]
pub(crate) fn record_member_sleep() {
    MEMBER_SLEEPS.fetch_add(1, Relaxed);
}
#[cfg_attr(loom, allow(dead_code))]
pub(crate) fn record_move() {
    MOVES.fetch_add(1, Relaxed);
}
#[cfg_attr(loom, allow(dead_code))]
pub(crate) fn record_cede() {
    CEDES.fetch_add(1, Relaxed);
}
#[cfg_attr(loom, allow(dead_code))]
pub(crate) fn record_leave() {
    LEAVES.fetch_add(1, Relaxed);
}
#[cfg_attr(loom, allow(dead_code))]
pub(crate) fn record_idle_sleep() {
    IDLE_SLEEPS.fetch_add(1, Relaxed);
}
