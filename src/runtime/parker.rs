//! A parker: one thread sleeps on it, any thread wakes it; a wake is never lost.
//!
//! States (in `state`):
//! - `EMPTY`: no token, nobody asleep.
//! - `PARKED`: the owner is asleep (or about to be) on the condition variable.
//! - `NOTIFIED`: a wake token is waiting; the next `park` consumes it and returns at once.
//!
//! Protocol. `unpark` swaps in `NOTIFIED` (Release) and only when it replaced `PARKED` takes the
//! lock and signals. `park` consumes a token with a CAS `NOTIFIED -> EMPTY` (Acquire); otherwise it
//! takes the lock and moves `EMPTY -> PARKED` *under the lock* before waiting. Why no wake is lost:
//! an `unpark` that saw `PARKED` must take the same lock to signal, and the sleeper holds it from
//! its CAS to the moment `wait` releases it atomically, so the signal comes after the sleeper is
//! waiting; an `unpark` that saw `EMPTY` leaves `NOTIFIED`, which makes the CAS to `PARKED` fail
//! and the sleeper returns without waiting. The Release/Acquire pair on `state` also orders every
//! write the waker made before `unpark` before the sleeper's reads after `park`.
//!
//! Checked by the loom model `parker_no_lost_wakeup` in `tests/executor/loom.rs`.

// `pub` items here are reachable only from the loom models (`loom_api`).
#![allow(unreachable_pub)]

use std::time::Duration;

use crate::runtime::counters;
use crate::runtime::sync::AtomicUsize;
use crate::runtime::sync::{Condvar, Mutex, Ordering::*, lock};

const EMPTY: usize = 0;
const PARKED: usize = 1;
const NOTIFIED: usize = 2;

/// How a `park_timeout` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parked {
    /// A wake token was consumed.
    Woken,
    /// The time ran out with no token.
    TimedOut,
}

/// See the module documentation.
#[derive(Debug)]
pub struct Parker {
    state: AtomicUsize,
    lock: Mutex<()>,
    cvar: Condvar,
    /// The team whose section the owning thread led last (the address of the team's claim
    /// word), or 0. A parker is a thread's `'static` identity, so team members read it to see
    /// whether their leader has moved on to another team (`pool::IdleWait::crowd`).
    leading: AtomicUsize,
}

impl Default for Parker {
    fn default() -> Self {
        Self::new()
    }
}

impl Parker {
    /// A parker with no token.
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        Parker {
            state: AtomicUsize::new(EMPTY),
            lock: Mutex::new(()),
            cvar: Condvar::new(),
            leading: AtomicUsize::new(0),
        }
    }

    /// A parker with no token.
    #[cfg(loom)]
    pub fn new() -> Self {
        Parker {
            state: AtomicUsize::new(EMPTY),
            lock: Mutex::new(()),
            cvar: Condvar::new(),
            leading: AtomicUsize::new(0),
        }
    }

    /// Records that the owning thread leads a section of team `team` (see the field).
    #[inline]
    pub(crate) fn set_leading(&self, team: usize) {
        if self.leading.load(Relaxed) != team {
            self.leading.store(team, Relaxed);
        }
    }

    /// The team whose section the owning thread led last, or 0.
    #[inline]
    pub(crate) fn leading(&self) -> usize {
        self.leading.load(Relaxed)
    }

    /// Sleeps until a wake token is available, then consumes it. May also return spuriously
    /// (callers re-check their condition in a loop).
    pub fn park(&self) {
        self.park_inner(None);
    }

    /// Like `park`, but gives up after `timeout`.
    pub(crate) fn park_timeout(&self, timeout: Duration) -> Parked {
        self.park_inner(Some(timeout))
    }

    #[inline]
    fn take_token(&self) -> bool {
        self.state
            .compare_exchange(NOTIFIED, EMPTY, Acquire, Relaxed)
            .is_ok()
    }

    fn park_inner(&self, timeout: Option<Duration>) -> Parked {
        if self.take_token() {
            return Parked::Woken;
        }
        let mut guard = lock(&self.lock);
        if let Err(actual) = self.state.compare_exchange(EMPTY, PARKED, Relaxed, Relaxed) {
            debug_assert_eq!(actual, NOTIFIED, "only the owner parks");
            // A token arrived between the fast path and the lock: consume it.
            self.state.swap(EMPTY, Acquire);
            return Parked::Woken;
        }
        counters::record_park();
        loop {
            let timed_out;
            (guard, timed_out) = wait(&self.cvar, guard, timeout);
            if self.take_token() {
                return Parked::Woken;
            }
            if timed_out {
                // Leave PARKED; a token that raced the timeout is consumed, not lost.
                return match self.state.swap(EMPTY, Acquire) {
                    NOTIFIED => Parked::Woken,
                    _ => Parked::TimedOut,
                };
            }
            // Spurious wake-up: still PARKED, wait again.
        }
    }

    /// Makes a token available and wakes the owner if it sleeps. Returns whether it did wake
    /// a sleeping owner.
    pub fn unpark(&self) -> bool {
        match self.state.swap(NOTIFIED, Release) {
            EMPTY | NOTIFIED => false,
            _ => {
                // The sleeper holds the lock from its PARKED CAS until it waits: taking the
                // lock here orders the signal after the sleeper is really waiting.
                drop(lock(&self.lock));
                self.cvar.notify_one();
                counters::record_wake();
                true
            }
        }
    }
}

#[cfg(not(loom))]
fn wait<'a>(
    cvar: &Condvar,
    guard: crate::runtime::sync::MutexGuard<'a, ()>,
    timeout: Option<Duration>,
) -> (crate::runtime::sync::MutexGuard<'a, ()>, bool) {
    match timeout {
        None => (cvar.wait(guard).unwrap_or_else(|e| e.into_inner()), false),
        Some(t) => {
            let (g, r) = cvar
                .wait_timeout(guard, t)
                .unwrap_or_else(|e| e.into_inner());
            (g, r.timed_out())
        }
    }
}

#[cfg(loom)]
fn wait<'a>(
    cvar: &Condvar,
    guard: crate::runtime::sync::MutexGuard<'a, ()>,
    timeout: Option<Duration>,
) -> (crate::runtime::sync::MutexGuard<'a, ()>, bool) {
    // Under the model a timed park is a park: every timed park in the executor is also
    // ended by an unpark, and a model must not spin on a timeout.
    let _ = timeout;
    (cvar.wait(guard).unwrap(), false)
}

/// The calling thread's parker, with a `'static` address.
///
/// Wakers copy this address and use it after the waiter may have returned from the wait that
/// asked for the wake (a fork's last helper wakes its owner after its final decrement), so a
/// parker must outlive every thread that can still hold its address. Parkers are never freed: a
/// thread that exits hands its parker back to a free list and the next new thread takes it. A
/// late wake then reaches the parker's next owner as a spurious wake-up, which every wait
/// tolerates because it re-checks its condition.
///
/// The parker stays the same for the thread's whole life, also while its thread-locals are
/// destroyed (a team or pool dropped by another thread-local's destructor parks here and must
/// be woken on the parker it announced): the address lives in a thread-local without a
/// destructor, and once the lease has given the parker back, a parker leaked for the rest of
/// the thread takes its place.
#[cfg(not(loom))]
pub(crate) fn current() -> &'static Parker {
    use std::cell::Cell;

    /// Hands the thread's parker back to the free list when the thread exits.
    struct Lease;
    impl Drop for Lease {
        fn drop(&mut self) {
            if let Some(p) = CURRENT.with(Cell::take) {
                lock(&FREE).push(p);
            }
        }
    }
    static FREE: Mutex<Vec<&'static Parker>> = Mutex::new(Vec::new());
    thread_local! {
        // No destructor: readable until the thread is gone.
        static CURRENT: Cell<Option<&'static Parker>> = const { Cell::new(None) };
        static LEASE: Lease = const { Lease };
    }

    if let Some(p) = CURRENT.with(Cell::get) {
        return p;
    }
    let p = if LEASE.try_with(|_| ()).is_ok() {
        // First use on this thread: the lease will give it back.
        lock(&FREE)
            .pop()
            .unwrap_or_else(|| Box::leak(Box::new(Parker::new())))
    } else {
        // The lease is gone (thread-local destruction): keep this one to the end.
        Box::leak(Box::new(Parker::new()))
    };
    CURRENT.with(|c| c.set(Some(p)));
    p
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::current;
    use std::cell::RefCell;
    use std::sync::mpsc::{Sender, channel};

    /// A pool or team dropped by a thread-local's destructor announces `current()` to its
    /// wakers and then parks on `current()`: both must be the same parker, also after the
    /// parker's own lease was destroyed (destructors run last-registered first, and the lease
    /// registers after the thread-local that first uses it).
    #[test]
    fn the_parker_stays_the_same_while_thread_locals_are_destroyed() {
        struct Probe(Sender<bool>);
        impl Drop for Probe {
            fn drop(&mut self) {
                let (a, b) = (current() as *const _, current() as *const _);
                self.0.send(a == b).unwrap();
            }
        }
        thread_local! {
            static PROBE: RefCell<Option<Probe>> = const { RefCell::new(None) };
        }
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            PROBE.with(|p| *p.borrow_mut() = Some(Probe(tx)));
            current(); // the lease registers after PROBE, so it is destroyed before it
        })
        .join()
        .unwrap();
        assert!(
            rx.recv().unwrap(),
            "two parkers during thread-local destruction"
        );
    }
}
