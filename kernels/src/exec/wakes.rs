//! Streams after a pause: the wake is paid once per stream, not once per call.
//!
//! A held team whose members went to sleep charges their wake to the next call
//! (`Executor::wake_cost`), and a small call refuses it (`Reason::WakeNotPaid`) and runs
//! serially. Without more, a stream of small calls after a pause stays serial as long as it
//! lasts, because a serial call wakes nobody. So a refusal that follows another refusal on the
//! same thread and the same executor within [`STREAM_GAP`], with no other decision of this
//! thread between them (a stream, not a lone call, nor calls that alternate between executors:
//! warming a team built per call between the calls of a held team put the held team's member
//! to sleep, its leader having moved on) posts the wake itself
//! (`Executor::warm`) and still runs serially: the members spin through their budget, the
//! calls after it find them awake and go parallel, and when the stream ends the members spin
//! out their budget and sleep again. A lone call after a pause wakes nobody, so nothing spins
//! when no stream comes. Design record: `docs/gates.md`, "Streams after a pause".

use std::cell::Cell;
use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use teamalg_gates::{decide, Ask};

use crate::exec::par::Executor;

/// Two refusals for the wake this close together on one thread make a stream. Longer than
/// the serial time of any call small enough to refuse a wake (a wake is 100 us in the model),
/// far shorter than the pauses between a program's phases.
pub const STREAM_GAP: Duration = Duration::from_millis(2);

thread_local! {
    /// When this thread's last call refused the wake, and on which executor (its address).
    static LAST_REFUSAL: Cell<Option<(Instant, usize)>> = const { Cell::new(None) };
}

/// Whether a refusal at `now` on executor `key`, after the one `last`, is part of a stream.
pub(crate) fn in_stream(last: Option<(Instant, usize)>, now: Instant, key: usize) -> bool {
    last.is_some_and(|(t, k)| k == key && now.saturating_duration_since(t) <= STREAM_GAP)
}

/// Any other decision of this thread ends a stream of refusals (no clock is read).
#[inline]
pub(crate) fn decided() {
    LAST_REFUSAL.with(|l| l.set(None));
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
    let key = exec.identity();
    let last = LAST_REFUSAL.with(|l| l.replace(Some((now, key))));
    if in_stream(last, now, key) {
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
        assert!(!in_stream(None, t, 1), "a first refusal is a lone call");
        assert!(in_stream(Some((t, 1)), t + STREAM_GAP / 2, 1));
        assert!(in_stream(Some((t, 1)), t + STREAM_GAP, 1));
        assert!(
            !in_stream(Some((t, 1)), t + STREAM_GAP * 3 / 2, 1),
            "after a pause"
        );
        assert!(
            !in_stream(Some((t, 2)), t, 1),
            "calls alternating between executors"
        );
    }
}
