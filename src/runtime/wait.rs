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

use crate::runtime::sync::{spin_pause, yield_now};

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

/// How long a caller that had to wake a sleeping worker for its fork sleeps per round in its
/// join, after its yields (plain-token forks: see `pool::JoinWait`).
pub(crate) const JOIN_NAP: std::time::Duration = std::time::Duration::from_micros(50);

/// Yields of a waiter whose awaited thread is (or may be) queued on its own CPU, before it
/// sleeps. A yield hands the CPU to that thread and, unlike a sleep, keeps this one runnable on
/// its CPU, so the waiter is not moved next to the thread it waits for when that thread wakes
/// it. On the 2-vCPU development VM the first section after a 10 ms gap took 107 to 128 us
/// (median) this way against 155 to 203 us with naps alone (`cargo run --release -p teamalg-tools
/// --bin wait_scenarios -- --scenario gaps`, two alternating runs each).
#[cfg(not(loom))]
pub(crate) const STACKED_YIELDS: u32 = 2000;
/// Under the loom models a few yields stand for the 2000 (each is only a scheduling point).
#[cfg(loom)]
pub(crate) const STACKED_YIELDS: u32 = 2;

/// Spin polls between two [`Waiter::crowd`] checks (about 1.5 us of PAUSE on the development
/// VM; a check costs a few nanoseconds per thread it looks at).
pub(crate) const CROWD_CHECK: u32 = 64;

/// The join of a plain-token caller that had to wake a sleeping worker: yield-poll, then nap.
pub(crate) fn join_after_wake(
    parker: &crate::runtime::parker::Parker,
    mut ready: impl FnMut() -> bool,
) {
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
