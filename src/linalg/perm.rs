//! A factorization's permutation, kept as faer keeps one (forward and inverse index arrays),
//! handed out as faer's `PermRef`, and applied to the rows of a right-hand side.

use faer::perm::PermRef;
use faer::MatMut;

/// A permutation of `0..n`: `fwd[i]` is the source of position `i`, `inv` its inverse, both
/// in one allocation (`fwd` then `inv`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Perm {
    both: Vec<usize>,
}

impl Perm {
    /// The permutation whose position `i` takes `fwd[i]`.
    pub(crate) fn from_forward(mut fwd: Vec<usize>) -> Self {
        let n = fwd.len();
        fwd.resize(2 * n, 0);
        let (f, inv) = fwd.split_at_mut(n);
        for (i, &p) in f.iter().enumerate() {
            inv[p] = i;
        }
        Perm { both: fwd }
    }

    fn halves(&self) -> (&[usize], &[usize]) {
        self.both.split_at(self.both.len() / 2)
    }

    /// The permutation of the row exchanges `swaps` (at step `j`, `j` and `swaps[j]`) on `n`
    /// rows.
    pub(crate) fn from_swaps(swaps: &[usize], n: usize) -> Self {
        let mut fwd = Vec::with_capacity(2 * n);
        fwd.extend(0..n);
        for (j, &s) in swaps.iter().enumerate() {
            fwd.swap(j, s);
        }
        Self::from_forward(fwd)
    }

    /// As faer's permutation.
    pub(crate) fn as_ref(&self) -> PermRef<'_, usize> {
        let (fwd, inv) = self.halves();
        PermRef::new_checked(fwd, inv, fwd.len())
    }

    /// The forward array.
    pub(crate) fn forward(&self) -> &[usize] {
        self.halves().0
    }

    /// Row `i` of `b` becomes row `fwd[i]` of the old `b` (`b <- P b`).
    pub(crate) fn gather_rows<T: Clone>(&self, b: MatMut<'_, T>) {
        permute(b, self.halves().0);
    }

    /// Row `fwd[i]` of `b` becomes row `i` of the old `b` (`b <- P^T b`).
    pub(crate) fn scatter_rows<T: Clone>(&self, b: MatMut<'_, T>) {
        permute(b, self.halves().1);
    }
}

/// `b[i, :] <- old b[from[i], :]`, column by column through one column of scratch.
fn permute<T: Clone>(mut b: MatMut<'_, T>, from: &[usize]) {
    let mut col: Vec<T> = Vec::with_capacity(b.nrows());
    for j in 0..b.ncols() {
        col.clear();
        col.extend(from.iter().map(|&p| b[(p, j)].clone()));
        for (i, x) in col.drain(..).enumerate() {
            b[(i, j)] = x;
        }
    }
}

