//! Streams after a pause: the wake is paid once per stream, not once per call.
//!
//! A held team whose members went to sleep charges their wake to the next call
//! (`Executor::wake_cost`), and a small call refuses it (`Reason::WakeNotPaid`) and runs
//! serially. Without more, a stream of small calls after a pause stays serial as long as it
//! lasts, because a serial call wakes nobody. So a refusal that follows another refusal on the
//! same thread within [`STREAM_GAP`] (a stream, not a lone call) posts the wake itself
//! (`Executor::warm`) and still runs serially: the members spin through their budget, the
//! calls after it find them awake and go parallel, and when the stream ends the members spin
//! out their budget and sleep again. A lone call after a pause wakes nobody, so nothing spins
//! when no stream comes. Design record: `docs/gates.md`, "Streams after a pause".

use std::cell::Cell;
use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use teamalg_gates::{decide, Ask};

use crate::par::Executor;

/// Two refusals for the wake this close together on one thread make a stream. Longer than
/// the serial time of any call small enough to refuse a wake (a wake is 100 us in the model),
/// far shorter than the pauses between a program's phases.
pub const STREAM_GAP: Duration = Duration::from_millis(2);

thread_local! {
    /// When this thread's last call refused the wake.
    static LAST_REFUSAL: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Whether a refusal at `now`, after one at `last`, is part of a stream.
pub(crate) fn in_stream(last: Option<Instant>, now: Instant) -> bool {
    last.is_some_and(|t| now.saturating_duration_since(t) <= STREAM_GAP)
}

/// A region was refused for the wake of sleeping participants (`ask` as it was decided):
/// when it is part of a stream, wakes the participants the region would have used with
/// them awake, so the next call finds them spinning.
pub(crate) fn refused_for_wake(
    exec: &(impl Executor + ?Sized),
    ask: Ask,
    cost: impl Fn(NonZeroUsize) -> Duration,
) {
    let now = Instant::now();
    let last = LAST_REFUSAL.with(|l| l.replace(Some(now)));
    if in_stream(last, now) {
        let (w, _) = decide(
            Ask {
                wake: Duration::ZERO,
                ..ask
            },
            cost,
        );
        if w > 1 {
            exec.warm(w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_refusals_close_together_make_a_stream() {
        let t = Instant::now();
        assert!(!in_stream(None, t), "a first refusal is a lone call");
        assert!(in_stream(Some(t), t + STREAM_GAP / 2));
        assert!(in_stream(Some(t), t + STREAM_GAP));
        assert!(!in_stream(Some(t), t + STREAM_GAP * 3 / 2), "after a pause");
    }
}
