//! The intrusive queue of a pool: a FIFO list of forks that live on their owners' stacks.
//!
//! The list is guarded by a mutex; `queued` mirrors its length so that idle workers poll one
//! atomic, not the lock. Pushing and attaching allocate nothing: the links are fields of the
//! forks. A fork leaves the list when its last helper place is taken, when a helper finds
//! it exhausted, or when its owner unlinks it before waiting; after that no new helper can
//! attach (see [`crate::runtime::plain::fork`]).

// `pub` items here are reachable only from the loom models (`loom_api`).
#![allow(unreachable_pub)]

use std::ptr;

use crate::runtime::plain::fork::Fork;
use crate::runtime::sync::{AtomicUsize, Mutex, Ordering::*, lock};

struct List {
    head: *const Fork<'static>,
    tail: *const Fork<'static>,
}

// SAFETY: the pointers are only followed under the queue lock, and every linked fork is alive
// (its owner unlinks it before returning).
unsafe impl Send for List {}

/// See the module documentation.
pub struct Queue {
    list: Mutex<List>,
    queued: AtomicUsize,
}

impl Default for Queue {
    fn default() -> Self {
        Self::new()
    }
}

impl Queue {
    /// An empty queue.
    pub fn new() -> Self {
        Queue {
            list: Mutex::new(List {
                head: ptr::null(),
                tail: ptr::null(),
            }),
            queued: AtomicUsize::new(0),
        }
    }

    /// Whether a fork is queued (one atomic load; SeqCst pairs with an idle worker's
    /// announcement of sleep, see `pool`).
    #[inline]
    pub fn has_work(&self) -> bool {
        self.queued.load(SeqCst) != 0
    }

    /// Appends `b`.
    ///
    /// # Safety
    /// `b` must stay alive and unmoved until [`Queue::unlink`] has been called for it.
    pub unsafe fn push(&self, b: &Fork<'_>) {
        let b = (b as *const Fork<'_>).cast::<Fork<'static>>();
        let mut list = lock(&self.list);
        // SAFETY: `b` is alive (caller's contract); its link fields are ours under the lock.
        unsafe {
            (*b).next.store(ptr::null_mut(), Relaxed);
            (*b).linked.store(true, Relaxed);
        }
        if list.tail.is_null() {
            list.head = b;
        } else {
            // SAFETY: linked forks are alive.
            unsafe { (*list.tail).next.store(b as *mut _, Relaxed) };
        }
        list.tail = b;
        self.queued.fetch_add(1, SeqCst);
    }

    /// Attaches the caller as a helper of the first fork that wants one, and returns it.
    /// Exhausted forks met on the way are unlinked.
    pub fn attach(&self) -> Option<*const Fork<'static>> {
        if !self.has_work() {
            return None;
        }
        let mut list = lock(&self.list);
        while !list.head.is_null() {
            let cur = list.head;
            // SAFETY: linked forks are alive; we hold the lock.
            let b = unsafe { &*cur };
            if b.exhausted() {
                self.unlink_locked(&mut list, ptr::null(), cur);
                continue;
            }
            let left = b.helpers_left.load(Relaxed);
            debug_assert!(left > 0, "forks with no helper place are unlinked");
            b.helpers_left.store(left - 1, Relaxed);
            b.attach_locked();
            if left == 1 {
                self.unlink_locked(&mut list, ptr::null(), cur);
            }
            return Some(cur);
        }
        None
    }

    /// Removes `b` if it is still linked. After this, no helper can attach to it.
    pub fn unlink(&self, b: &Fork<'_>) {
        // Only the owner links a fork, and only once: `false` is final, no lock needed. The
        // Acquire pairs with the Release in `unlink_locked`, so the attachments made before the
        // unlink are visible to the owner's wait.
        if !b.linked.load(Acquire) {
            return;
        }
        let target = (b as *const Fork<'_>).cast::<Fork<'static>>();
        let mut list = lock(&self.list);
        if !b.linked.load(Relaxed) {
            return;
        }
        let mut prev: *const Fork<'static> = ptr::null();
        let mut cur = list.head;
        while !cur.is_null() {
            if cur == target {
                self.unlink_locked(&mut list, prev, cur);
                return;
            }
            prev = cur;
            // SAFETY: linked forks are alive; we hold the lock.
            cur = unsafe { (*cur).next.load(Relaxed) };
        }
        unreachable!("a linked fork is in the list");
    }

    fn unlink_locked(
        &self,
        list: &mut List,
        prev: *const Fork<'static>,
        cur: *const Fork<'static>,
    ) {
        // SAFETY: `cur` (and `prev`, when not null) are linked and alive; we hold the lock.
        unsafe {
            let next = (*cur).next.load(Relaxed);
            if prev.is_null() {
                list.head = next;
            } else {
                (*prev).next.store(next, Relaxed);
            }
            if list.tail == cur {
                list.tail = prev;
            }
            (*cur).linked.store(false, Release);
        }
        self.queued.fetch_sub(1, SeqCst);
    }
}
