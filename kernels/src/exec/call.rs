//! One call's watch and the bail-out: a call whose sections have lost more than going
//! parallel was expected to gain runs the rest of itself at width 1.
//!
//! The gate's decision for a whole call ([`crate::gate::call`]) opens the watch on the calling
//! thread with the gain the rule expected (`teamalg_gates::gain`) and holds the call's CPUs
//! (`occupancy`). Every parallel section of the kernels runs through [`run`] or
//! [`chunks_of`]: while a watch is open, the leader times every participant's work (every
//! chunk's, for [`chunks_of`]) and the section's wall time, and what the wall time exceeds an
//! even share of the work by, beyond an allowance (`teamalg_gates::contention::allowance`), is
//! the section's **loss**. (Participant 0's own time is no measure: with claims it grows by
//! the work it took over from a participant held off its CPU. A section whose lead does more
//! by design, a panel, counts that excess as a loss; it is small against the call's gain.) When the call's losses
//! exceed its gain, it **gives up**: the gate answers 1 for every later region of the call
//! ([`gave_up`], reason `gave up`), and [`run`] and [`chunks_of`] run whatever they are handed
//! on the caller alone (a body must run correctly at any width from 1: rule 1 of
//! [`Executor`]), and the executor lets its participants sleep ([`Executor::rest`]).
//!
//! A call inside a call on the same thread (a GEMM inside an SVD) joins the outer watch and
//! adds its gain. The watch lives on the calling thread, for one call: nothing is shared.
//! Design record: `docs/gates.md`, "The bail-out".

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use teamalg_gates::contention::{allowance, WAKE_SLACK};

use crate::exec::occupancy;
use crate::exec::par::{Executor, Part};

#[derive(Debug, Clone, Copy)]
struct Watch {
    /// Open calls on this thread (0: none).
    depth: u32,
    /// What going parallel was expected to gain, nanoseconds.
    gain: u64,
    /// What the sections lost so far, nanoseconds.
    lost: u64,
    /// What the parallel sections so far would have saved on time, nanoseconds.
    saved: u64,
    /// How much longer than an even share of their work they took, allowance not deducted.
    over: u64,
    /// Parallel sections that lost time.
    losing: u32,
    /// CPUs the call holds against the process's other calls (`occupancy`).
    held: usize,
    /// Whether the call's width was the caller's word (a threshold other than `Derived`):
    /// its gain was not the rule's, so only its sections' savings are weighed.
    forced: bool,
    /// Whether the call gave up.
    off: bool,
}

const CLOSED: Watch = Watch {
    depth: 0,
    gain: 0,
    lost: 0,
    saved: 0,
    over: 0,
    losing: 0,
    held: 0,
    forced: false,
    off: false,
};

/// Sections that lost time before their losses can decide: one late section is an incident
/// (an interrupt, a kernel thread), not a busy machine.
pub(crate) const LOSING: u32 = 3;

/// [`LOSING`] for a call whose width was the caller's word (a forced threshold: audits, tests,
/// a user who measured): it gives up only when most of a window's worth of its sections lost.
pub(crate) const LOSING_FORCED: u32 = 12;

thread_local! {
    static WATCH: Cell<Watch> = const { Cell::new(CLOSED) };
}

fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

/// A call's place in its watch, from [`crate::gate::call`] until dropped: its width. It
/// belongs to the thread that opened it (the watch is that thread's), so it is not `Send`:
/// dropping it on another thread would close that thread's watch instead.
///
/// ```compile_fail,E0277
/// use std::time::Duration;
/// use teamalg_kernels::call::Call;
/// use teamalg_kernels::par::Seq;
///
/// let call = Call::open(&Seq, 1, Duration::ZERO, false);
/// std::thread::spawn(move || drop(call));
/// ```
#[derive(Debug)]
#[must_use = "the call's watch closes when this is dropped"]
pub struct Call {
    width: usize,
    _thread: PhantomData<*const ()>,
}

impl Call {
    /// Opens the watch (or joins the one open on this thread) for a call that runs at
    /// `width`, expecting to gain `gain` by it: for a call whose decision was not one region's
    /// (a batch's spread, [`crate::gate::weigh`]); a kernel's call opens it through
    /// [`crate::gate::call`]. `forced`: the width was the caller's word, not the rule's.
    pub fn open(
        exec: &(impl Executor + ?Sized),
        width: usize,
        gain: Duration,
        forced: bool,
    ) -> Call {
        let held = if exec.cpus().is_some() { width } else { 1 };
        Call::holding(width, held, gain, forced)
    }

    /// [`Call::open`], holding `held` CPUs against the process's other calls (1: none).
    pub(crate) fn holding(width: usize, held: usize, gain: Duration, forced: bool) -> Call {
        let mut l = WATCH.with(Cell::get);
        if l.depth == 0 {
            l = CLOSED;
            l.forced = forced;
        }
        l.depth += 1;
        l.gain = l.gain.saturating_add(ns(gain));
        // A nested call's CPUs are its outer call's, unless the outer one holds none; a call
        // that gave up holds none.
        if l.held == 0 && !l.off {
            l.held = occupancy::take(held);
        }
        WATCH.with(|c| c.set(l));
        Call {
            width,
            _thread: PhantomData,
        }
    }

    /// The width the gate chose for the call (1: serial).
    pub fn width(&self) -> usize {
        self.width
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        WATCH.with(|c| {
            let mut l = c.get();
            l.depth = l.depth.saturating_sub(1);
            if l.depth == 0 {
                occupancy::release(l.held);
                l = CLOSED;
            }
            c.set(l);
        });
    }
}

/// Whether the call open on this thread gave up (its later regions run at width 1).
#[inline]
pub fn gave_up() -> bool {
    WATCH.with(|c| c.get().off)
}

/// Whether a watch is open on this thread.
#[inline]
fn open() -> bool {
    WATCH.with(|c| c.get().depth > 0)
}

/// Adds a section to the open watch: what it lost (beyond its allowance), how much longer
/// than an even share it took (`over`, the allowance not deducted), and what it would have
/// saved on time; whether this section made the call give up. A call gives up when its
/// sections lost more than the whole call was expected to gain (not for a forced width, whose
/// gain is not the rule's), or, once [`LOSING`] of them lost time ([`LOSING_FORCED`] for a
/// forced width), when they took more than half of what they would have saved: parallel
/// sections that late run no faster than the caller alone would. (The allowance, a quarter of
/// a share, is for deciding that a section lost at all; deducted here, it would hide most of
/// a small section's loss.)
fn settle_section(lost: Duration, over: Duration, saved: Duration) -> bool {
    WATCH.with(|c| {
        let mut l = c.get();
        if l.depth == 0 || l.off {
            return false;
        }
        l.saved = l.saved.saturating_add(ns(saved));
        l.over = l.over.saturating_add(ns(over));
        if !lost.is_zero() {
            l.lost = l.lost.saturating_add(ns(lost));
            l.losing += 1;
        }
        let losing = if l.forced { LOSING_FORCED } else { LOSING };
        l.off = (!l.forced && l.lost > l.gain) || (l.losing >= losing && l.over > l.saved / 2);
        if l.off {
            // The rest runs on the caller: its CPUs are free for the process's other calls.
            occupancy::release(l.held);
            l.held = 0;
        }
        c.set(l);
        l.off
    })
}

/// A section that lost `lost` and would have saved nothing (for tests).
#[cfg(test)]
fn lose(lost: Duration) -> bool {
    settle_section(lost, lost, Duration::ZERO)
}

/// A section's loss: its wall time beyond `share` (an even share of the work: what the
/// section would take with every participant on time) and the allowance; `wake` while
/// participants were asleep at its start.
pub(crate) fn loss(wall: Duration, share: Duration, wake: Duration) -> Duration {
    wall.saturating_sub(share + allowance(share, wake))
}

/// The time every participant of one section worked, summed.
#[derive(Default)]
struct Work {
    total: AtomicU64,
}

impl Work {
    fn time(&self, f: impl FnOnce()) {
        let t = Instant::now();
        f();
        self.total.fetch_add(ns(t.elapsed()), Relaxed);
    }
}

/// What a section starting now on `exec` may take for waking its participants.
fn wake(exec: &(impl Executor + ?Sized)) -> Duration {
    if exec.wake_cost().is_zero() {
        Duration::ZERO
    } else {
        WAKE_SLACK
    }
}

/// Records a section of `width` that took `wall` for `work`; rests `exec` when it gave up.
fn settle(
    exec: &(impl Executor + ?Sized),
    width: usize,
    wall: Duration,
    work: &Work,
    wake: Duration,
) {
    // A participant held off its CPU either makes the others wait or leaves its claims to
    // them: either way the wall time exceeds an even share of the work. (Participant 0's own
    // time is no measure: with claims it grows by the work it took over.)
    let total = Duration::from_nanos(work.total.load(Relaxed));
    let share = total / width.max(1) as u32;
    if settle_section(
        loss(wall, share, wake),
        wall.saturating_sub(share),
        total - share,
    ) {
        exec.rest();
    }
}

/// Runs one section: `body` on `width` participants of `exec` (`Executor::run`), or on the
/// caller alone as participant 0 of 1 when `width <= 1` or the call gave up. Timed for the
/// watch while one is open.
pub fn run(exec: &(impl Executor + ?Sized), width: usize, body: &(dyn Fn(Part<'_>) + Sync)) {
    if width <= 1 || gave_up() {
        return body(Part::new(0, 1, None));
    }
    if !open() {
        return exec.run(width, body);
    }
    let work = Work::default();
    let wake = wake(exec);
    let start = Instant::now();
    exec.run(width, &|p: Part<'_>| work.time(|| body(p)));
    settle(exec, width, start.elapsed(), &work, wake);
}

/// Runs `f(c, n)` for every chunk `c` of `0..n` on at most `width` participants of `exec`
/// (`Executor::run_chunks_of`), or on the caller alone, in order, when `width <= 1` or the
/// call gave up. Timed for the watch while one is open.
pub fn chunks_of(
    exec: &(impl Executor + ?Sized),
    width: usize,
    n: usize,
    f: &(dyn Fn(usize, usize) + Sync),
) {
    if width <= 1 || gave_up() {
        return (0..n).for_each(|c| f(c, n));
    }
    if !open() {
        return exec.run_chunks_of(width, n, f);
    }
    let work = Work::default();
    let wake = wake(exec);
    let start = Instant::now();
    exec.run_chunks_of(width, n, &|c, n| work.time(|| f(c, n)));
    settle(exec, width, start.elapsed(), &work, wake);
}

/// [`chunks_of`] with the executor's own chunk count for `width` (`Executor::chunks`; one
/// chunk on the caller alone).
pub fn chunks(exec: &(impl Executor + ?Sized), width: usize, f: &(dyn Fn(usize, usize) + Sync)) {
    if width <= 1 || gave_up() {
        return f(0, 1);
    }
    chunks_of(exec, width, exec.chunks(width), f);
}

/// A call that has given up, open until dropped (for tests of the fallback).
#[cfg(test)]
pub(crate) fn given_up() -> Call {
    let call = Call::holding(1, 1, Duration::ZERO, false);
    lose(Duration::from_nanos(1));
    call
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Duration = Duration::from_micros(1);

    #[test]
    fn losses_beyond_the_gain_give_the_call_up() {
        assert!(!gave_up());
        {
            let _call = Call::holding(2, 2, 100 * US, false);
            assert!(!lose(60 * US));
            assert!(!gave_up());
            {
                // A nested call joins the watch and adds its gain.
                let _inner = Call::holding(2, 2, 50 * US, false);
                assert!(!lose(60 * US), "120 us lost of 150 us gained");
                assert!(lose(40 * US), "160 us lost of 150 us gained");
            }
            assert!(gave_up(), "the outer call gave up with the inner one");
            assert!(!lose(10 * US), "a call gives up once");
        }
        assert!(!gave_up(), "the next call starts afresh");
        assert!(!lose(10 * US), "no watch, nothing to lose");
    }

    #[test]
    fn sections_that_lose_half_their_savings_give_the_call_up() {
        let _call = Call::holding(2, 2, 100_000 * US, false);
        // One late section is an incident, whatever it lost of its savings.
        assert!(!settle_section(300 * US, 330 * US, 100 * US));
        assert!(!settle_section(Duration::ZERO, 10 * US, 100 * US));
        assert!(
            !settle_section(10 * US, 40 * US, 100 * US),
            "over by 380 of 300 saved, 2 late"
        );
        assert!(
            settle_section(10 * US, 40 * US, 100 * US),
            "over by 420 of 400 saved, 3 late"
        );
        assert!(gave_up());
    }

    #[test]
    fn a_section_loses_what_exceeds_its_share_and_the_allowance() {
        let wall = 3000 * US;
        // A 40 us share: 3000 - 40 - (10 + 20).
        assert_eq!(loss(wall, 40 * US, Duration::ZERO), 2930 * US);
        // On time: a quarter over the share and the floor are allowed.
        assert_eq!(loss(140 * US, 100 * US, Duration::ZERO), Duration::ZERO);
        // Waking members may take WAKE_SLACK more.
        assert_eq!(loss(400 * US, 40 * US, WAKE_SLACK), Duration::ZERO);
    }

    #[test]
    fn a_call_that_gave_up_runs_sections_on_the_caller() {
        use crate::exec::par::Seq;
        let _call = Call::holding(2, 2, Duration::ZERO, false);
        assert!(lose(US));
        let seen = std::sync::Mutex::new(Vec::new());
        run(&Seq, 2, &|p| {
            seen.lock().unwrap().push((p.index(), p.width()))
        });
        chunks_of(&Seq, 2, 3, &|c, n| seen.lock().unwrap().push((c, n)));
        assert_eq!(*seen.lock().unwrap(), [(0, 1), (0, 3), (1, 3), (2, 3)]);
    }
}
