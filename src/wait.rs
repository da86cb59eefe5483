//! Staged waits, as in libgomp: spin, then yield, then sleep.
//!
//! Every wait in the executor (an idle worker waiting for work, a caller joining its helpers, a
//! reserved worker waiting for its mail) is one *episode* of three phases:
//!
//! 1. **Spin**: poll the condition with one PAUSE per poll, at most `polls` polls. The budget is
//!    a count, not a time, so a waiter that is descheduled does not spend it while it is off the
//!    CPU. Default [`DEFAULT_SPIN_POLLS`] (libgomp's `GOMP_SPINCOUNT`); when more threads can be
//!    awake than the affinity set has CPUs, [`THROTTLED_SPIN_POLLS`] (libgomp's throttle), so an
//!    oversubscribed pool degrades gracefully instead of burning whole time slices.
//! 2. **Yield**: [`YIELD_POLLS`] polls with a `yield_now` between them.
//! 3. **Sleep**: the waiter's `Waiter::sleep` parks on the waiter's own parker until woken.
//!
//! No waiter spins forever: phase 3 is always reached when the condition stays false. The waker
//! side of each protocol (who unparks whom) lives with the protocol; this file only schedules the
//! polls.

use crate::sync::{spin_pause, yield_now};

/// Spin polls before yielding, by default (libgomp's `GOMP_SPINCOUNT`, about 300 us to 6 ms
/// depending on the cost of PAUSE).
pub const DEFAULT_SPIN_POLLS: u32 = 300_000;
/// Spin polls when the threads that can be awake outnumber the CPUs (libgomp's throttled count).
pub const THROTTLED_SPIN_POLLS: u32 = 100;
/// Polls with a `yield_now` between them, after the spin and before sleeping.
#[cfg(not(loom))]
pub const YIELD_POLLS: u32 = 16;
/// Under the loom models one yield stands for the 16 (each is only a scheduling point there).
#[cfg(loom)]
pub const YIELD_POLLS: u32 = 1;

/// How long a caller that had to wake a sleeping worker for its batch sleeps per round in its
/// join, after its yields (plain-token batches: see `pool::JoinWait`).
pub(crate) const JOIN_NAP: std::time::Duration = std::time::Duration::from_micros(50);

/// Yields of a waiter whose awaited thread is (or may be) queued on its own CPU, before it
/// sleeps. A yield hands the CPU to that thread and, unlike a sleep, keeps this one runnable on
/// its CPU, so the waiter is not moved next to the thread it waits for when that thread wakes
/// it. On the 2-vCPU development VM the first section after a 10 ms gap took 107 to 128 us
/// (median) this way against 155 to 203 us with naps alone (`cargo bench --bench
/// wait_scenarios -- --scenario gaps`, two alternating runs each).
#[cfg(not(loom))]
pub(crate) const STACKED_YIELDS: u32 = 2000;
/// Under the loom models a few yields stand for the 2000 (each is only a scheduling point).
#[cfg(loom)]
pub(crate) const STACKED_YIELDS: u32 = 2;

/// Spin polls between two [`Waiter::crowd`] checks (about 1.5 us of PAUSE on the development
/// VM; a check costs a few nanoseconds per thread it looks at).
pub(crate) const CROWD_CHECK: u32 = 64;

/// The join of a plain-token caller that had to wake a sleeping worker: yield-poll, then nap.
pub(crate) fn join_after_wake(parker: &crate::parker::Parker, mut ready: impl FnMut() -> bool) {
    for _ in 0..STACKED_YIELDS {
        if ready() {
            return;
        }
        yield_now();
    }
    parker.park_timeout(JOIN_NAP);
}

/// What a spinning waiter should do about the threads around it on its CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Crowd {
    /// Nothing it waits for shares its CPU: keep spinning.
    Alone,
    /// A thread it waits for is, or may be, queued on its CPU: yield to it instead of spinning
    /// (at most [`STACKED_YIELDS`] times, then sleep).
    Yield,
    /// Stop spinning and sleep now: its spin would only take the CPU from a thread that needs it.
    Sleep,
}

/// One side of a wait: the condition and how to sleep on it.
pub(crate) trait Waiter {
    /// Polls the condition. Cheap; called once per poll.
    fn ready(&mut self) -> bool;
    /// Sleeps until a waker may have made the condition true. Implementations announce
    /// themselves to their wakers, re-check the condition, then park; a spurious return is fine.
    fn sleep(&mut self);
    /// Looks at the CPU it runs on, every [`CROWD_CHECK`] spin polls and after every yield of
    /// the [`Crowd::Yield`] phase. Waiters that know nothing of the threads they wait for spin.
    fn crowd(&mut self) -> Crowd {
        Crowd::Alone
    }
}

/// Which phase ended an episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// The condition held while spinning.
    Spin,
    /// The condition held while yielding.
    Yield,
    /// The waiter slept at least once.
    Sleep,
}

/// Waits until `w.ready()`, spinning at most `polls` polls, then yielding, then sleeping; a
/// waiter crowded on its CPU ([`Waiter::crowd`]) yields or sleeps early.
#[inline]
pub(crate) fn wait_staged(polls: u32, w: &mut impl Waiter) -> Phase {
    if w.ready() {
        return Phase::Spin;
    }
    wait_slow(polls, w)
}

#[cold]
fn wait_slow(polls: u32, w: &mut impl Waiter) -> Phase {
    let (mut spun, mut yielded) = (0u32, 0u32);
    let mut crowd = w.crowd();
    loop {
        match crowd {
            Crowd::Alone if spun < polls => {
                spin_pause();
                spun += 1;
            }
            Crowd::Yield if yielded < STACKED_YIELDS => {
                yield_now();
                yielded += 1;
            }
            _ => break,
        }
        if w.ready() {
            return if yielded == 0 {
                Phase::Spin
            } else {
                Phase::Yield
            };
        }
        if crowd == Crowd::Yield || spun % CROWD_CHECK == 0 {
            crowd = w.crowd();
        }
    }
    if crowd == Crowd::Alone {
        for _ in 0..YIELD_POLLS {
            yield_now();
            if w.ready() {
                return Phase::Yield;
            }
        }
    }
    loop {
        w.sleep();
        if w.ready() {
            return Phase::Sleep;
        }
    }
}

/// Counters of the wait protocols, process-wide, for benchmarks and tests. Not part of the
/// stable API.
pub mod counters {
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
}
