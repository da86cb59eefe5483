//! Disjoint tiles of one matrix, written by the participants of a section.

use std::marker::PhantomData;

use faer::{MatMut, MatRef};

/// A matrix's raw parts, shared by the participants, each of which writes only its own tile.
/// It holds the matrix's exclusive borrow for `'a`, so the borrow checker keeps the matrix
/// out of reach while tiles of it may live.
pub(crate) struct Tiles<'a, T> {
    ptr: *mut T,
    nrows: usize,
    ncols: usize,
    rs: isize,
    cs: isize,
    _borrow: PhantomData<&'a mut T>,
}

// SAFETY:
// 1. `Tiles` holds the matrix's exclusive borrow for 'a (`_borrow`): nothing outside reaches
//    its entries while it lives.
// 2. It hands out entries only through `tile` and `view`, whose callers promise that no two
//    live tiles overlap and that no live tile overlaps a view.
// 3. So sharing a `&Tiles` moves at most one writer of each entry to one thread at a time:
//    sound when `T: Send`, as for `MatMut<'a, T>`.
unsafe impl<T: Send> Sync for Tiles<'_, T> {}

impl<'a, T> Tiles<'a, T> {
    pub(crate) fn new(c: MatMut<'a, T>) -> Self {
        Tiles {
            ptr: c.as_ptr_mut(),
            nrows: c.nrows(),
            ncols: c.ncols(),
            rs: c.row_stride(),
            cs: c.col_stride(),
            _borrow: PhantomData,
        }
    }

    /// The matrix's row count.
    pub(crate) fn nrows(&self) -> usize {
        self.nrows
    }

    /// Where rows `r0..r1` and columns `c0..c1` start. An empty range gets the matrix's own
    /// pointer: faer checks no stride for a matrix with no rows or no columns, so an offset
    /// by such a stride may leave the allocation (or wrap to null), and an empty view reads
    /// nothing.
    fn start(&self, r0: usize, r1: usize, c0: usize, c1: usize) -> *mut T {
        assert!(
            r0 <= r1 && r1 <= self.nrows && c0 <= c1 && c1 <= self.ncols,
            "tile {r0}..{r1} x {c0}..{c1} of a {} x {} matrix",
            self.nrows,
            self.ncols
        );
        if r0 == r1 || c0 == c1 {
            return self.ptr;
        }
        // SAFETY: the tile is non-empty and lies in the matrix (asserted above), so entry
        // (r0, c0) is an entry of the matrix: the offset stays inside its allocation, and the
        // strides are those faer checked for a matrix with rows and columns.
        unsafe {
            self.ptr
                .offset(r0 as isize * self.rs + c0 as isize * self.cs)
        }
    }

    /// Rows `r0..r1` and columns `c0..c1` (panics when they leave the matrix).
    ///
    /// # Safety
    /// No two live tiles overlap, and no live view overlaps a tile.
    pub(crate) unsafe fn tile(&self, r0: usize, r1: usize, c0: usize, c1: usize) -> MatMut<'_, T> {
        let ptr = self.start(r0, r1, c0, c1);
        // SAFETY: a sub-view inside the borrowed matrix (`start`) with its strides, or an empty
        // view at its own non-null pointer; disjoint from every other live tile and view (the
        // caller's contract).
        unsafe { MatMut::from_raw_parts_mut(ptr, r1 - r0, c1 - c0, self.rs, self.cs) }
    }

    /// Rows `r0..r1` and columns `c0..c1`, read only (panics when they leave the matrix).
    ///
    /// # Safety
    /// No live tile overlaps them while the view lives.
    pub(crate) unsafe fn view(&self, r0: usize, r1: usize, c0: usize, c1: usize) -> MatRef<'_, T> {
        let ptr = self.start(r0, r1, c0, c1);
        // SAFETY: as in `tile`; nobody writes the view's entries while it lives.
        unsafe { MatRef::from_raw_parts(ptr, r1 - r0, c1 - c0, self.rs, self.cs) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_tile_is_never_offset() {
        let mut x = [1.0f64; 4];
        let base = x.as_mut_ptr();
        // SAFETY: a 0 x 3 view reads nothing; faer accepts any column stride for it, here one
        // whose offsets wrap the address round to null (column 1 is at `base - base`).
        let m = unsafe { MatMut::from_raw_parts_mut(base, 0, 3, 1, -(base as usize as isize / 8)) };
        let tiles = Tiles::new(m);
        for c in 0..=3 {
            // SAFETY: empty tiles, each used alone.
            let t = unsafe { tiles.tile(0, 0, c, 3) };
            assert_eq!((t.nrows(), t.ncols()), (0, 3 - c));
            assert_eq!(t.as_ptr(), base.cast_const());
            // SAFETY: as above.
            let v = unsafe { tiles.view(0, 0, 0, c) };
            assert_eq!(v.as_ptr(), base.cast_const());
        }
    }

    #[test]
    #[should_panic(expected = "tile 0..3 x 0..1 of a 2 x 2 matrix")]
    fn a_tile_outside_the_matrix_is_refused() {
        let mut x = [0.0f64; 4];
        let tiles = Tiles::new(MatMut::from_column_major_slice_mut(&mut x, 2, 2));
        // SAFETY: the only tile; refused before it is made.
        let _ = unsafe { tiles.tile(0, 3, 0, 1) };
    }
}
