//! A call's watch over its own sections, for the reductions that make one or two sections
//! per step (`docs/svd.md`, "The watch").
//!
//! The gate's model is fixed when a pool is built, but a shared host has spells in which the
//! other participants answer late (a vCPU whose time is taken by the host): there a reduction's
//! hundreds of synchronous sections each wait for them, and the call ran up to 2x slower than
//! serial. The watch compares each parallel section's wall time with what the lead, at the pace
//! it just worked, would have taken for the whole section alone. When most of the recent
//! sections lost, the rest of the call runs its sections on the caller, over the same bands,
//! so the results keep their bits, and the participants are told to sleep rather than spin
//! (`Executor::rest`). A single late section (an interrupt) does not decide.
//!
//! The watch lives on the calling thread only, for one call.

use std::cell::Cell;
use std::time::Duration;

use teamalg_gates::ParThreshold;

use crate::exec::par::Executor;

/// How one reduction runs its passes: on `exec`, at most `width` participants, each pass gated
/// by `threshold` and watched by `watch`. One bundle, since every pass of a step takes all four.
pub(crate) struct Passes<'a, E: Executor + ?Sized> {
    pub(crate) exec: &'a E,
    pub(crate) width: usize,
    pub(crate) threshold: Option<ParThreshold>,
    pub(crate) watch: &'a Watch,
}

// A derive would ask `E: Copy`; the bundle holds only references and plain values.
impl<E: Executor + ?Sized> Clone for Passes<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E: Executor + ?Sized> Copy for Passes<'_, E> {}

/// The sections the decision looks back over.
const WINDOW: u32 = 16;

/// Lost sections among the last [`WINDOW`] that take the call to the caller.
const LOSSES: u32 = 12;

/// One call's record of its parallel sections.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    /// The last [`WINDOW`] sections, newest in bit 0: 1 where the section lost.
    lost: Cell<u16>,
    /// Parallel sections recorded, up to [`WINDOW`].
    seen: Cell<u32>,
    /// Whether the call's sections now run on the caller.
    off: Cell<bool>,
    /// Never decides (for tests that need every section parallel).
    steady: bool,
}

impl Watch {
    /// Whether the call's sections may still run in parallel.
    pub(crate) fn parallel(&self) -> bool {
        !self.off.get()
    }

    /// Records a parallel section that took `wall`, where the lead alone at its pace would
    /// have taken `alone`; whether this record sent the call to the caller (who then lets its
    /// participants sleep, `Executor::rest`).
    pub(crate) fn record(&self, wall: Duration, alone: Duration) -> bool {
        if self.steady || self.off.get() {
            return false;
        }
        let lost = (self.lost.get() << 1) | u16::from(wall > alone);
        self.lost.set(lost);
        let seen = (self.seen.get() + 1).min(WINDOW);
        self.seen.set(seen);
        let decides = seen == WINDOW && lost.count_ones() >= LOSSES;
        if decides {
            self.off.set(true);
        }
        decides
    }

    /// A watch that has already sent the call to the caller (for tests of the fallback).
    #[cfg(test)]
    pub(crate) fn off() -> Self {
        let w = Watch::default();
        w.off.set(true);
        w
    }

    /// A watch that never sends the call to the caller (for tests of the fallback).
    #[cfg(test)]
    pub(crate) fn steady() -> Self {
        Watch {
            steady: true,
            ..Watch::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn most_of_a_window_lost_sends_the_call_to_the_caller() {
        let w = Watch::default();
        // Fewer than a window: no decision, even all lost.
        for _ in 0..WINDOW - 1 {
            w.record(2 * MS, MS);
        }
        assert!(w.parallel());
        assert!(w.record(2 * MS, MS), "the record that decides says so");
        assert!(!w.parallel());
        // Once off, it stays off for the call.
        assert!(!w.record(MS / 2, MS));
        assert!(!w.parallel());
    }

    #[test]
    fn a_few_late_sections_do_not_decide() {
        let w = Watch::default();
        for i in 0..10 * WINDOW {
            // Three of every sixteen late (an interrupt now and then), then exactly at the
            // limit below LOSSES.
            let late = i % 16 < 3 || (i >= 5 * WINDOW && i % 16 < LOSSES - 1);
            w.record(if late { 3 * MS } else { MS / 2 }, MS);
        }
        assert!(w.parallel());
        // Equal times are not a loss.
        let w = Watch::default();
        for _ in 0..2 * WINDOW {
            w.record(MS, MS);
        }
        assert!(w.parallel());
    }

    #[test]
    fn losses_must_be_recent() {
        let w = Watch::default();
        for _ in 0..LOSSES - 1 {
            w.record(2 * MS, MS);
        }
        for _ in 0..WINDOW {
            w.record(MS / 2, MS);
        }
        for _ in 0..LOSSES - 1 {
            w.record(2 * MS, MS);
        }
        assert!(w.parallel());
        w.record(2 * MS, MS);
        assert!(!w.parallel());
    }
}
