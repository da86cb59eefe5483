//! Problems stored side by side in one matrix: the views a batch takes.

use faer::{MatMut, MatRef};

use crate::linalg::{Dim, LinalgError};

/// The problems of `cols` columns each stored side by side in `m` (`rows x (count * cols)`,
/// problem `i` in columns `i * cols .. (i + 1) * cols`), as views for a batch: one buffer
/// holding many equal problems, as strided batch interfaces lay them out.
///
/// Errors: [`LinalgError::ShapeMismatch`] when `m`'s columns are not a whole number of
/// problems (or `cols` is 0 and `m` has columns).
///
/// ```
/// use faer::Mat;
/// use teamalg::linalg::batch;
///
/// let m = Mat::<f64>::from_fn(3, 12, |i, j| (i + j) as f64);
/// let a: Vec<_> = batch::blocks(m.as_ref(), 3)?.collect();
/// assert_eq!((a.len(), a[2].ncols(), a[2][(0, 0)]), (4, 3, 6.0));
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
pub fn blocks<T>(
    m: MatRef<'_, T>,
    cols: usize,
) -> Result<impl ExactSizeIterator<Item = MatRef<'_, T>>, LinalgError> {
    let count = whole(m.ncols(), cols)?;
    Ok((0..count).map(move |i| m.subcols(i * cols, cols)))
}

/// [`blocks`] for problems written in place.
///
/// ```
/// use faer::Mat;
/// use teamalg::linalg::batch;
///
/// let mut m = Mat::<f64>::zeros(2, 6);
/// for (i, mut b) in batch::blocks_mut(m.as_mut(), 2)?.enumerate() {
///     b.fill(i as f64);
/// }
/// assert_eq!(m[(1, 5)], 2.0);
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
pub fn blocks_mut<T>(
    m: MatMut<'_, T>,
    cols: usize,
) -> Result<impl ExactSizeIterator<Item = MatMut<'_, T>>, LinalgError> {
    let count = whole(m.ncols(), cols)?;
    let mut rest = Some(m);
    Ok((0..count).map(move |_| {
        let m = rest.take().expect("one block per problem");
        let (block, after) = m.split_at_col_mut(cols);
        rest = Some(after);
        block
    }))
}

/// How many problems of `cols` columns `total` columns hold.
fn whole(total: usize, cols: usize) -> Result<usize, LinalgError> {
    match total.checked_rem(cols) {
        Some(0) => Ok(total / cols),
        None if total == 0 => Ok(0),
        _ => Err(LinalgError::ShapeMismatch {
            op: "batch::blocks",
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
