//! The slot ledger: live tasks per root token, for the slot-conservation tests.
//!
//! With the `ledger` feature, every root token gets an id; the root caller counts as live while
//! one of its entries runs, a helper counts while it is attached to a fork of that root, and a
//! caller that serves other work while it waits for its helpers stops counting meanwhile (a
//! parent waiting for its children holds no slot). Without the feature every call is a no-op.

#[cfg(feature = "ledger")]
mod imp {
    use std::sync::atomic::{AtomicUsize, Ordering::*};

    const SLOTS: usize = 4096;
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    static LIVE: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
    static MAX: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];

    pub(crate) fn register() -> usize {
        let id = NEXT.fetch_add(1, Relaxed);
        LIVE[id % SLOTS].store(0, SeqCst);
        MAX[id % SLOTS].store(0, SeqCst);
        id
    }
    pub(crate) fn enter(id: usize) {
        if id != 0 {
            let now = LIVE[id % SLOTS].fetch_add(1, SeqCst) + 1;
            MAX[id % SLOTS].fetch_max(now, SeqCst);
        }
    }
    pub(crate) fn exit(id: usize) {
        if id != 0 {
            LIVE[id % SLOTS].fetch_sub(1, SeqCst);
        }
    }
    /// The most tasks of root `id` that were live at once.
    pub fn max_live(id: usize) -> usize {
        MAX[id % SLOTS].load(SeqCst)
    }
    /// Tasks of root `id` live now.
    pub fn live(id: usize) -> usize {
        LIVE[id % SLOTS].load(SeqCst)
    }
}

#[cfg(not(feature = "ledger"))]
mod imp {
    #[inline(always)]
    pub(crate) fn register() -> usize {
        0
    }
    #[inline(always)]
    pub(crate) fn enter(_: usize) {}
    #[inline(always)]
    pub(crate) fn exit(_: usize) {}
}

pub(crate) use imp::{enter, exit, register};
#[cfg(feature = "ledger")]
pub use imp::{live, max_live};
