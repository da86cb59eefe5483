//! The CPUs a process's own parallel calls hold: no process oversubscribes itself.
//!
//! A kernel call that goes parallel at width `k` holds `k` CPUs until it ends or gives up
//! ([`take`], [`release`]; the call's watch keeps the count, `call.rs`). A region of another call on another thread
//! sees what the others hold and narrows its budget to the CPUs they leave ([`free`]), down
//! to 1: two threads that each hold a team of two on two CPUs run one parallel call at a time,
//! not four threads on two CPUs. Nested calls on one thread hold nothing more (their CPUs are
//! their outer call's). One count for the process, whatever pools the calls run on: two pools
//! pinned to disjoint CPU sets narrow each other too (the count does not know the sets).
//!
//! One relaxed counter, process-wide, and one thread-local: a count read a moment late
//! misjudges one decision, nothing more. Design record: `docs/gates.md`, "Contention".

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::OnceLock;

/// CPUs held by the parallel calls open now, process-wide.
static HELD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// What this thread's own open call holds (inside `HELD`).
    static MINE: Cell<usize> = const { Cell::new(0) };
}

/// The CPUs the process may use (its affinity set), read once.
pub(crate) fn process_cpus() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// What the other threads' parallel calls hold now.
#[inline]
pub(crate) fn others() -> usize {
    HELD.load(Relaxed).saturating_sub(MINE.with(Cell::get))
}

/// The participants a region may have on `cpus` CPUs with a `budget`: the budget, narrowed to
/// the CPUs the other calls leave (at least 1).
#[inline]
pub(crate) fn free(budget: usize, cpus: usize) -> usize {
    narrowed(budget, cpus, others())
}

/// `budget` narrowed to the CPUs of `cpus` that `others` held leave, at least 1; the whole
/// budget when nothing else holds any (how wide a team may be for its CPUs is its own
/// question).
fn narrowed(budget: usize, cpus: usize, others: usize) -> usize {
    if others == 0 {
        return budget;
    }
    budget.min(cpus.saturating_sub(others).max(1))
}

/// Holds `k` CPUs for this thread's call (none when `k < 2`: a serial call takes the CPU it
/// runs on anyway); returns what it holds, for [`release`].
pub(crate) fn take(k: usize) -> usize {
    let k = if k < 2 { 0 } else { k };
    if k > 0 {
        HELD.fetch_add(k, Relaxed);
        MINE.with(|m| m.set(m.get() + k));
    }
    k
}

/// Gives back `k` CPUs this thread's call held ([`take`]'s answer).
pub(crate) fn release(k: usize) {
    if k > 0 {
        HELD.fetch_sub(k, Relaxed);
        MINE.with(|m| m.set(m.get().saturating_sub(k)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_others_hold_narrows_a_budget() {
        assert_eq!(narrowed(2, 2, 0), 2);
        assert_eq!(narrowed(2, 2, 2), 1, "another call holds both CPUs");
        assert_eq!(narrowed(2, 2, 1), 1);
        assert_eq!(narrowed(8, 16, 10), 6);
        assert_eq!(narrowed(4, 2, 9), 1, "never below one");
        assert_eq!(narrowed(2, 1, 0), 2, "nothing else holds a CPU");
    }

    #[test]
    fn a_threads_own_call_is_not_anothers() {
        // Other tests may hold CPUs meanwhile: only what this one holds is asserted.
        let mine = take(2);
        assert_eq!(MINE.with(Cell::get), 2);
        let seen = std::thread::scope(|s| s.spawn(others).join()).expect("ran");
        assert!(seen >= 2, "another thread sees this call's CPUs: {seen}");
        release(mine);
        assert_eq!(MINE.with(Cell::get), 0);
        assert_eq!(take(1), 0, "a serial call holds nothing");
    }
}
