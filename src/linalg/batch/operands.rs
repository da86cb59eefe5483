//! A batch's operands: a slice of views, one per problem, or one matrix holding equal problems
//! side by side (strided, as MKL's and cuBLAS's strided batches lay them out).

use std::marker::PhantomData;

use faer::{MatMut, MatRef};

use super::Slots;
use crate::linalg::{Dim, LinalgError};

/// The matrices a batch reads, one per problem: a slice of views (`&[MatRef]`, `&Vec<MatRef>`)
/// or [`BatchRef::strided`]. Every batch call takes `impl Into<BatchRef>` where it reads.
#[derive(Debug, Clone, Copy)]
pub struct BatchRef<'s, 'a, T> {
    inner: RefInner<'s, 'a, T>,
}

#[derive(Debug, Clone, Copy)]
enum RefInner<'s, 'a, T> {
    Views(&'s [MatRef<'a, T>]),
    Strided { m: MatRef<'a, T>, cols: usize, count: usize },
}

impl<'s, 'a, T> BatchRef<'s, 'a, T> {
    /// The problems of `cols` columns each stored side by side in `m` (problem `i` in columns
    /// `i * cols .. (i + 1) * cols`). Errors: [`LinalgError::ShapeMismatch`] when `m`'s
    /// columns are not a whole number of problems.
    ///
    /// ```
    /// use faer::{Accum, Mat};
    /// use teamalg::linalg::batch::{self, BatchMut, BatchRef};
    /// use teamalg::Exec;
    ///
    /// // 100 products of order 4, each problem in 4 columns of one matrix.
    /// let a = Mat::<f64>::from_fn(4, 400, |i, j| (i + j % 4) as f64);
    /// let mut c = Mat::<f64>::zeros(4, 400);
    /// let mut status = vec![Ok(()); 100];
    /// let (av, cv) = (BatchRef::strided(a.as_ref(), 4)?, BatchMut::strided(c.as_mut(), 4)?);
    /// batch::matmul(cv, Accum::Replace, av, av, 1.0, &mut status, &Exec::serial())?;
    /// let first = a.get(.., 0..4);
    /// assert_eq!(c.get(.., 396..400), first * first);
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    pub fn strided(m: MatRef<'a, T>, cols: usize) -> Result<Self, LinalgError> {
        let count = whole(m.ncols(), cols)?;
        Ok(BatchRef {
            inner: RefInner::Strided { m, cols, count },
        })
    }

    /// The problems.
    pub fn len(&self) -> usize {
        match self.inner {
            RefInner::Views(v) => v.len(),
            RefInner::Strided { count, .. } => count,
        }
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Problem `i`'s matrix.
    pub(super) fn get(&self, i: usize) -> MatRef<'a, T> {
        match self.inner {
            RefInner::Views(v) => v[i],
            RefInner::Strided { m, cols, .. } => m.subcols(i * cols, cols),
        }
    }
}

impl<'s, 'a, T> From<&'s [MatRef<'a, T>]> for BatchRef<'s, 'a, T> {
    fn from(v: &'s [MatRef<'a, T>]) -> Self {
        BatchRef {
            inner: RefInner::Views(v),
        }
    }
}

impl<'s, 'a, T> From<&'s Vec<MatRef<'a, T>>> for BatchRef<'s, 'a, T> {
    fn from(v: &'s Vec<MatRef<'a, T>>) -> Self {
        BatchRef::from(v.as_slice())
    }
}

/// The matrices a batch writes, one per problem: a slice of views (`&mut [MatMut]`,
/// `&mut Vec<MatMut>`) or [`BatchMut::strided`]. Every batch call takes `impl Into<BatchMut>`
/// where it writes.
#[derive(Debug)]
pub struct BatchMut<'s, 'a, T> {
    inner: MutInner<'s, 'a, T>,
}

#[derive(Debug)]
enum MutInner<'s, 'a, T> {
    Views(&'s mut [MatMut<'a, T>]),
    Strided(MatMut<'a, T>, usize, usize),
}

impl<'s, 'a, T> BatchMut<'s, 'a, T> {
    /// The problems of `cols` columns each stored side by side in `m`, as
    /// [`BatchRef::strided`].
    pub fn strided(m: MatMut<'a, T>, cols: usize) -> Result<Self, LinalgError> {
        let count = whole(m.ncols(), cols)?;
        Ok(BatchMut {
            inner: MutInner::Strided(m, cols, count),
        })
    }

    /// The problems.
    pub fn len(&self) -> usize {
        match &self.inner {
            MutInner::Views(v) => v.len(),
            MutInner::Strided(_, _, count) => *count,
        }
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The problems' matrices, shared between a section's participants.
    pub(super) fn share(self) -> Shared<'s, 'a, T> {
        match self.inner {
            MutInner::Views(v) => Shared::Views(Slots::new(v)),
            MutInner::Strided(m, cols, count) => Shared::Strided(Blocks::new(m, cols, count)),
        }
    }
}

impl<'s, 'a, T> From<&'s mut [MatMut<'a, T>]> for BatchMut<'s, 'a, T> {
    fn from(v: &'s mut [MatMut<'a, T>]) -> Self {
        BatchMut {
            inner: MutInner::Views(v),
        }
    }
}

impl<'s, 'a, T> From<&'s mut Vec<MatMut<'a, T>>> for BatchMut<'s, 'a, T> {
    fn from(v: &'s mut Vec<MatMut<'a, T>>) -> Self {
        BatchMut::from(v.as_mut_slice())
    }
}

/// A [`BatchMut`] reachable from every participant of a batch's section, each problem's matrix
/// by the one participant that claimed its index.
pub(super) enum Shared<'s, 'a, T> {
    Views(Slots<'s, MatMut<'a, T>>),
    Strided(Blocks<'a, T>),
}

impl<T> Shared<'_, '_, T> {
    /// Problem `i`'s matrix (panics when out of bounds).
    ///
    /// # Safety
    ///
    /// No other view of problem `i`'s matrix may be live while the returned one is: the caller
    /// owns index `i` (it claimed it, or runs alone).
    pub(super) unsafe fn get(&self, i: usize) -> MatMut<'_, T> {
        match self {
            // SAFETY: the caller owns `i` (`Slots::get`'s contract).
            Shared::Views(s) => unsafe { s.get(i) }.as_mut(),
            // SAFETY: as above (`Blocks::get`'s contract).
            Shared::Strided(b) => unsafe { b.get(i) },
        }
    }
}

/// Equal problems side by side in one matrix, each block of columns reachable by the one
/// participant that claimed its index.
pub(super) struct Blocks<'a, T> {
    ptr: *mut T,
    rows: usize,
    cols: usize,
    count: usize,
    row_stride: isize,
    col_stride: isize,
    _borrow: PhantomData<MatMut<'a, T>>,
}

// SAFETY:
// 1. `Blocks` holds the exclusive borrow of its matrix for 'a (`_borrow`), so nothing outside
//    reaches the entries while it lives.
// 2. It hands out problem `i`'s columns `i * cols .. (i + 1) * cols` only through `get`, whose
//    callers promise that no two live views of one problem exist; the batch keeps that by
//    claiming each index once (`teamalg_kernels::drive::batch::Claims`), as for `Slots`. Blocks of
//    different problems share no entry: their column ranges are disjoint.
// 3. So sharing a `&Blocks` moves at most one `MatMut` of each block to one thread at a time:
//    sound exactly when `T: Send`, as `MatMut<'a, T>` itself is.
unsafe impl<T: Send> Sync for Blocks<'_, T> {}
// SAFETY: as for `Sync`: the blocks are the matrix's exclusive borrow, which may move to
// another thread when `T: Send`.
unsafe impl<T: Send> Send for Blocks<'_, T> {}

impl<'a, T> Blocks<'a, T> {
    fn new(m: MatMut<'a, T>, cols: usize, count: usize) -> Self {
        Blocks {
            ptr: m.as_ptr_mut(),
            rows: m.nrows(),
            cols,
            count,
            row_stride: m.row_stride(),
            col_stride: m.col_stride(),
            _borrow: PhantomData,
        }
    }

    /// Problem `i`'s block (panics when out of bounds).
    ///
    /// # Safety
    ///
    /// The caller owns index `i`: no other view of block `i` is live while this one is.
    unsafe fn get(&self, i: usize) -> MatMut<'_, T> {
        assert!(i < self.count, "batch index {i} out of {}", self.count);
        // An empty block starts at the matrix's own pointer: faer checks no stride for a
        // matrix with no rows or no columns, so an offset by its column stride may leave the
        // allocation, or wrap to null, and an empty view reads nothing.
        let ptr = if self.rows == 0 || self.cols == 0 {
            self.ptr
        } else {
            // SAFETY: the matrix has rows and columns, so faer checked its strides, and column
            // `i * cols` is one of its columns (`i < count`, `count * cols` its columns): the
            // offset of its first entry stays inside the borrowed matrix.
            unsafe {
                self.ptr
                    .offset((i * self.cols) as isize * self.col_stride)
            }
        };
        // SAFETY: columns `i * cols .. (i + 1) * cols` lie inside the borrowed matrix, so the
        // view of `rows x cols` from their first entry with the matrix's strides stays inside
        // it (point 1 above), or it is empty at the matrix's own non-null pointer; the caller
        // owns block `i`, and no other block shares its entries (point 2).
        unsafe {
            MatMut::from_raw_parts_mut(ptr, self.rows, self.cols, self.row_stride, self.col_stride)
        }
    }
}

/// How many problems of `cols` columns `total` columns hold.
pub(super) fn whole(total: usize, cols: usize) -> Result<usize, LinalgError> {
    match total.checked_rem(cols) {
        Some(0) => Ok(total / cols),
        None if total == 0 => Ok(0),
        _ => Err(LinalgError::ShapeMismatch {
            op: "batch::strided",
            operand: "m",
            dim: Dim::Cols,
            expected: total.checked_div(cols).map_or(0, |n| n * cols),
            found: total,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_problems_are_cut() {
        assert_eq!(whole(12, 3), Ok(4));
        assert_eq!(whole(0, 0), Ok(0));
        assert!(whole(10, 3).is_err());
        assert!(whole(4, 0).is_err());
    }
}
