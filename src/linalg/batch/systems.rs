//! What the batches of systems `A_i X_i = B_i` share (LU, Cholesky, least squares): two written
//! operands, checked against each other and read by the participant that claimed a problem.

use faer::reborrow::IntoConst;
use faer::{MatMut, MatRef};

use super::operands::{BatchMut, Shared};
use super::length;
use crate::linalg::check::{self, Stored};
use crate::linalg::{LinalgError, Options};

/// The `A` and `B` of a batch of systems, and the call's options.
pub(super) struct Systems<'s, 'a, 'b, 'o, T> {
    count: usize,
    a: Shared<'s, 'a, T>,
    b: Shared<'s, 'b, T>,
    pub(super) options: &'o Options,
}

impl<'s, 'a, 'b, 'o, T> Systems<'s, 'a, 'b, 'o, T> {
    /// The operands of `op`, refused with [`LinalgError::BatchLength`] unless `b` holds one
    /// entry per problem of `a` (the batch's driver checks `status`).
    pub(super) fn new(
        op: &'static str,
        a: BatchMut<'s, 'a, T>,
        b: BatchMut<'s, 'b, T>,
        options: &'o Options,
    ) -> Result<Self, LinalgError> {
        length(op, "b", a.len(), b.len())?;
        Ok(Systems {
            count: a.len(),
            a: a.share(),
            b: b.share(),
            options,
        })
    }

    /// How many systems.
    pub(super) fn count(&self) -> usize {
        self.count
    }

    /// System `i`'s `A` and `B`, to read.
    ///
    /// # Safety
    ///
    /// The caller owns index `i`.
    pub(super) unsafe fn read(&self, i: usize) -> (MatRef<'_, T>, MatRef<'_, T>) {
        // SAFETY: the caller owns `i`.
        unsafe { (self.a.get(i).into_const(), self.b.get(i).into_const()) }
    }

    /// System `i`'s `A` and `B`, to write.
    ///
    /// # Safety
    ///
    /// The caller owns index `i`, and holds no other view of it.
    pub(super) unsafe fn write(&self, i: usize) -> (MatMut<'_, T>, MatMut<'_, T>) {
        // SAFETY: the caller owns `i`.
        unsafe { (self.a.get(i), self.b.get(i)) }
    }

    /// The dimensions system `i`'s units and scratch depend on.
    ///
    /// # Safety
    ///
    /// The caller owns index `i`.
    pub(super) unsafe fn key(&self, i: usize) -> [usize; 8] {
        // SAFETY: the caller owns `i`.
        let (a, b) = unsafe { self.read(i) };
        [a.nrows(), a.ncols(), b.nrows(), b.ncols(), 0, 0, 0, 0]
    }
}

impl<T: crate::linalg::Field> Systems<'_, '_, '_, '_, T> {
    /// When the options ask, that all of system `i`'s `A` and `B` are finite.
    ///
    /// # Safety
    ///
    /// The caller owns index `i`.
    pub(super) unsafe fn finite(&self, op: &'static str, i: usize) -> Result<(), LinalgError> {
        if self.options.checks_finite() {
            // SAFETY: the caller owns `i`.
            let (a, b) = unsafe { self.read(i) };
            check::finite(op, "A", a, Stored::All)?;
            check::finite(op, "B", b, Stored::All)?;
        }
        Ok(())
    }
}
