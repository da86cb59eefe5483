//! A fork: the jobs of one `fork` / `for_ranges` call, on its caller's stack.
//!
//! A fork is queued in its pool's [`Queue`](crate::runtime::plain::queue::Queue) so that idle workers can
//! *attach* to it as helpers; the owner (the caller) works on it too. Jobs are claimed one index
//! at a time from `next_job`.
//!
//! Protocol and who wakes whom:
//! - `attach` (a helper, under the queue lock): takes one of `helpers_left`, adds one to
//!   `attached`. Only a linked fork can be attached, and the owner unlinks it under the same lock
//!   before waiting, so after that `attached` only falls.
//! - A participant claims `i = next_job.fetch_add(1)` and runs job `i` when `i < jobs`; a panic is
//!   caught, stored, and `cancelled` stops further claims.
//! - `detach` (a helper, when no job is left to claim): its **final** access to the fork is
//!   `attached.fetch_sub(1)`; the helper that takes it to zero then wakes the owner through the
//!   owner's parker address, copied *before* the decrement (the owner may free the fork as soon as
//!   it sees zero; parkers are never freed, see [`crate::runtime::parker::current`]).
//! - The owner returns once the fork is *settled*: unlinked, no claim left, `attached == 0`.
//!
//! Why no wake is lost: the owner sleeps only after `settled()` was false, and every transition
//! to settled is a helper's last `fetch_sub`, which is followed by `unpark`; the parker keeps the
//! token if the owner has not parked yet. Checked by the loom model `fork_two_claimers` in
//! `tests/executor/loom.rs`.

// `pub` items here are reachable only from the loom models (`loom_api`).
#![allow(unreachable_pub)]

use std::any::Any;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::runtime::parker::Parker;
use crate::runtime::sync::{AtomicBool, AtomicPtr, AtomicUsize, Mutex, Ordering::*, lock};

/// A panic payload caught in a job.
pub(crate) type Panic = Box<dyn Any + Send + 'static>;

/// See the module documentation.
pub struct Fork<'a> {
    /// Queue link, written only under the queue lock.
    pub(crate) next: AtomicPtr<Fork<'static>>,
    /// Whether the fork is in a queue; written only under the queue lock.
    pub(crate) linked: AtomicBool,
    /// Helpers that may still attach; written only under the queue lock.
    pub(crate) helpers_left: AtomicUsize,
    attached: AtomicUsize,
    next_job: AtomicUsize,
    jobs: usize,
    cancelled: AtomicBool,
    owner: *const Parker,
    job: *const (dyn Fn(usize) + Sync + 'a),
    panic: Mutex<Option<Panic>>,
    /// The ledger root of the token that made the fork (0 when not recorded).
    pub(crate) root: usize,
    _job: PhantomData<&'a (dyn Fn(usize) + Sync + 'a)>,
}

// SAFETY: the raw pointers are a parker that lives forever (or, under loom, as long as the
// model) and the job closure, which is `Sync` and outlives the fork; every other field is an
// atomic or a mutex.
unsafe impl Sync for Fork<'_> {}
// SAFETY: as above; a fork is never moved while shared (it stays on its owner's stack).
unsafe impl Send for Fork<'_> {}

impl<'a> Fork<'a> {
    /// A fork of `jobs` jobs that at most `helpers` helpers may join. `owner` is the parker the
    /// owner waits on; it must outlive every helper that can still hold its address.
    pub fn new(
        jobs: usize,
        helpers: usize,
        owner: &Parker,
        job: &'a (dyn Fn(usize) + Sync + 'a),
        root: usize,
    ) -> Self {
        Fork {
            next: AtomicPtr::new(std::ptr::null_mut()),
            linked: AtomicBool::new(false),
            helpers_left: AtomicUsize::new(helpers),
            attached: AtomicUsize::new(0),
            next_job: AtomicUsize::new(0),
            jobs,
            cancelled: AtomicBool::new(false),
            owner,
            job,
            panic: Mutex::new(None),
            root,
            _job: PhantomData,
        }
    }

    /// Whether no job is left to claim.
    #[inline]
    pub(crate) fn exhausted(&self) -> bool {
        self.next_job.load(Acquire) >= self.jobs || self.cancelled.load(Acquire)
    }

    /// Whether some participant has claimed a job (or the fork was cancelled).
    #[inline]
    pub(crate) fn claimed(&self) -> bool {
        self.next_job.load(Acquire) > 0 || self.cancelled.load(Acquire)
    }

    /// Called under the queue lock by a helper that takes a helper place.
    #[inline]
    pub(crate) fn attach_locked(&self) {
        self.attached.fetch_add(1, Relaxed);
    }

    /// Claims and runs jobs until none is left, and returns how many it ran. Panics are
    /// caught and stored.
    pub fn run_jobs(&self) -> usize {
        let mut ran = 0;
        loop {
            if self.cancelled.load(Relaxed) {
                return ran;
            }
            // Release: a claim is ordered after the claimer's attachment (see `settled`).
            let i = self.next_job.fetch_add(1, AcqRel);
            if i >= self.jobs {
                return ran;
            }
            ran += 1;
            // SAFETY: the owner keeps the closure alive until the fork is settled, and this
            // participant is attached (or is the owner), so the fork is not yet settled.
            let job = unsafe { &*self.job };
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| job(i))) {
                self.cancel(p);
            }
        }
    }

    #[cold]
    fn cancel(&self, p: Panic) {
        self.cancelled.store(true, Release);
        let mut slot = lock(&self.panic);
        if slot.is_none() {
            *slot = Some(p);
        }
    }

    /// A helper leaves the fork. After this call the helper must not touch the fork: the
    /// owner may already have returned and freed it.
    ///
    /// # Safety
    /// `this` points to a fork this helper attached to and has not yet detached from.
    pub unsafe fn detach(this: *const Fork<'_>) {
        // SAFETY: still attached, so the owner waits and the fork is alive.
        let owner = unsafe { (*this).owner };
        // SAFETY: as above; this decrement is the helper's last access to the fork.
        let last = unsafe { (*this).attached.fetch_sub(1, AcqRel) } == 1;
        if last {
            // SAFETY: parkers outlive every waker (see `parker::current`); the model keeps its
            // parkers alive for the whole execution.
            unsafe { (*owner).unpark() };
        }
    }

    /// The owner's condition: no claim left and no helper attached.
    ///
    /// Read in this order: once the claims are seen exhausted, every claimer's attachment
    /// (made before its claim) is visible, so `attached == 0` then means they have all left.
    /// The other order could read `attached` before a helper attaches and the claims after it
    /// claims (an owner that claims nothing, as in `install`, would return too early).
    #[inline]
    pub fn settled(&self) -> bool {
        self.exhausted() && self.attached.load(Acquire) == 0
    }

    /// The first panic caught in a job, if any.
    pub fn take_panic(&self) -> Option<Panic> {
        lock(&self.panic).take()
    }
}
