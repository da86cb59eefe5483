//! Disjoint tiles of one matrix, written by the participants of a section.

use faer::{MatMut, MatRef};

/// A matrix's raw parts, shared by the participants, each of which writes only its own tile.
pub(crate) struct Tiles<T> {
    ptr: *mut T,
    nrows: usize,
    ncols: usize,
    rs: isize,
    cs: isize,
}

// SAFETY: participants build disjoint tiles from it (see `tile`), and T is Send.
unsafe impl<T: Send> Sync for Tiles<T> {}

impl<T> Tiles<T> {
    pub(crate) fn new(c: MatMut<'_, T>) -> Self {
        Tiles {
            ptr: c.as_ptr_mut(),
            nrows: c.nrows(),
            ncols: c.ncols(),
            rs: c.row_stride(),
            cs: c.col_stride(),
        }
    }

    /// The matrix's row count.
    pub(crate) fn nrows(&self) -> usize {
        self.nrows
    }

    /// Rows `r0..r1` and columns `c0..c1`.
    ///
    /// # Safety
    /// The ranges lie in the matrix, and no two live tiles overlap.
    pub(crate) unsafe fn tile(&self, r0: usize, r1: usize, c0: usize, c1: usize) -> MatMut<'_, T> {
        debug_assert!(r0 <= r1 && r1 <= self.nrows && c0 <= c1 && c1 <= self.ncols);
        // SAFETY: in bounds (the caller's contract), so the offset stays inside the matrix's allocation.
        let ptr = unsafe {
            self.ptr
                .offset(r0 as isize * self.rs + c0 as isize * self.cs)
        };
        // SAFETY: a sub-view with the matrix's strides; disjoint from every other live tile.
        unsafe { MatMut::from_raw_parts_mut(ptr, r1 - r0, c1 - c0, self.rs, self.cs) }
    }

    /// Rows `r0..r1` and columns `c0..c1`, read only.
    ///
    /// # Safety
    /// The ranges lie in the matrix, and no live tile overlaps them while the view lives.
    pub(crate) unsafe fn view(&self, r0: usize, r1: usize, c0: usize, c1: usize) -> MatRef<'_, T> {
        debug_assert!(r0 <= r1 && r1 <= self.nrows && c0 <= c1 && c1 <= self.ncols);
        // SAFETY: in bounds (the caller's contract), so the offset stays inside the matrix's allocation.
        let ptr = unsafe {
            self.ptr
                .offset(r0 as isize * self.rs + c0 as isize * self.cs)
        };
        // SAFETY: a sub-view with the matrix's strides that nobody writes while it lives.
        unsafe { MatRef::from_raw_parts(ptr, r1 - r0, c1 - c0, self.rs, self.cs) }
    }
}
