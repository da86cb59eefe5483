//! The caller's slices, written by whichever participant claimed a problem.

use std::marker::PhantomData;

/// The entries of a `&mut [E]`, reachable from every participant of a batch's section, each
/// entry by the one participant that claimed its index.
pub struct Slots<'s, E> {
    ptr: *mut E,
    len: usize,
    _borrow: PhantomData<&'s mut [E]>,
}

// SAFETY:
// 1. A `Slots` holds the exclusive borrow of its slice for 's (`_borrow`), so nothing outside
//    reaches the entries while it lives.
// 2. It hands out an entry only through `get`, whose callers promise that no two live
//    references to one entry exist. The batch keeps that by claiming each index exactly once
//    ([`super::batch::Claims`]: a compare-exchange on one counter makes the claimed
//    ranges disjoint), and by running the problems that go on the team one at a time before
//    the section starts.
// 3. So sharing a `&Slots` with other threads moves at most one `&mut E` per entry to one
//    thread at a time: sound exactly when `E: Send`.
unsafe impl<E: Send> Sync for Slots<'_, E> {}
// SAFETY: as for `Sync`: the slots are the slice's exclusive borrow, which may move to another
// thread when `E: Send`.
unsafe impl<E: Send> Send for Slots<'_, E> {}

impl<E> std::fmt::Debug for Slots<'_, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slots").field("len", &self.len).finish()
    }
}

impl<'s, E> Slots<'s, E> {
    /// The entries of `slice`.
    pub fn new(slice: &'s mut [E]) -> Self {
        Slots {
            ptr: slice.as_mut_ptr(),
            len: slice.len(),
            _borrow: PhantomData,
        }
    }

    /// Entry `i` (panics when out of bounds).
    ///
    /// # Safety
    ///
    /// No other reference to entry `i` may be live while the returned one is: the caller
    /// owns index `i` (it claimed it, or runs alone).
    #[allow(clippy::mut_from_ref)] // Disjoint entries through a shared handle, argued above.
    pub unsafe fn get(&self, i: usize) -> &mut E {
        assert!(i < self.len, "batch index {i} out of {}", self.len);
        // SAFETY: `i < len`, so `ptr + i` is an entry of the borrowed slice, valid for 's
        // (point 1 above); the caller promises it is not aliased (point 2).
        unsafe { &mut *self.ptr.add(i) }
    }
}
