//! The sparse problems the benchmark programs generate (no downloads): the Laplacian of a grid,
//! a convection-diffusion operator for the LU, a smoothing least-squares matrix for the QR.
//! The kernel program (`kernels`) and the memory program (`sparse_memory`) share them.

use faer::traits::ComplexField;

/// The least-squares matrix of smoothing data on a grid of side `n` in `dim` dimensions: a
/// data row per node (weight 1 on its unknown, varying a little) and, for each edge, a
/// difference row `2 (u_j - u_i)`. Tall (`(1 + dim) n^dim` rows less the boundary's) and of
/// full rank; `A^T A` is the grid's Laplacian plus a diagonal.
pub fn smoothing<T: ComplexField>(n: usize, dim: u32) -> faer::sparse::SparseColMat<usize, T> {
    use faer::sparse::Triplet;
    use faer::traits::math_utils::from_f64;
    let size = n.pow(dim);
    let mut t = Vec::with_capacity((2 * dim as usize + 1) * size);
    let mut row = 0;
    for i in 0..size {
        t.push(Triplet::new(
            row,
            i,
            from_f64::<T>(1.0 + (i % 7) as f64 / 10.0),
        ));
        row += 1;
        let mut stride = 1;
        for _ in 0..dim {
            if (i / stride) % n + 1 < n {
                t.push(Triplet::new(row, i, from_f64::<T>(-2.0)));
                t.push(Triplet::new(row, i + stride, from_f64::<T>(2.0)));
                row += 1;
            }
            stride *= n;
        }
    }
    faer::sparse::SparseColMat::try_new_from_triplets(row, size, &t).expect("a valid matrix")
}

/// The convection-diffusion operator of a grid of side `n` in `dim` dimensions: the
/// `2 dim + 1`-point Laplacian plus central differences of a wind `(0.4, 0.3, 0.2)` along the
/// axes, unsymmetric and weakly diagonally dominant (`2 dim` on the diagonal plus a small
/// shift).
pub fn convection<T: ComplexField>(n: usize, dim: u32) -> faer::sparse::SparseColMat<usize, T> {
    use faer::traits::math_utils::from_f64;
    let size = n.pow(dim);
    let wind = [0.4, 0.3, 0.2];
    let mut t = Vec::with_capacity((2 * dim as usize + 1) * size);
    for i in 0..size {
        t.push(faer::sparse::Triplet::new(
            i,
            i,
            from_f64::<T>(2.0 * dim as f64 + 0.01),
        ));
        let mut stride = 1;
        for w in wind.iter().take(dim as usize) {
            if (i / stride) % n + 1 < n {
                // Row i + stride reads i upwind, row i reads i + stride downwind.
                t.push(faer::sparse::Triplet::new(
                    i + stride,
                    i,
                    from_f64::<T>(-1.0 - w),
                ));
                t.push(faer::sparse::Triplet::new(
                    i,
                    i + stride,
                    from_f64::<T>(-1.0 + w),
                ));
            }
            stride *= n;
        }
    }
    faer::sparse::SparseColMat::try_new_from_triplets(size, size, &t).expect("a valid matrix")
}

/// The lower triangle of the `dim`-dimensional Laplacian of a grid of side `n` (the
/// 5-point or 7-point stencil, `2 dim` on the diagonal plus a small shift).
pub fn laplacian<T: ComplexField>(n: usize, dim: u32) -> faer::sparse::SparseColMat<usize, T> {
    let size = n.pow(dim);
    let diag = faer::traits::math_utils::from_f64::<T>(2.0 * dim as f64 + 0.01);
    let minus = faer::traits::math_utils::from_f64::<T>(-1.0);
    let mut t = Vec::with_capacity((dim as usize + 1) * size);
    for i in 0..size {
        t.push(faer::sparse::Triplet::new(i, i, diag.clone()));
        let mut stride = 1;
        for _ in 0..dim {
            // The neighbour one step along this axis, when it is inside the grid.
            if (i / stride) % n + 1 < n {
                t.push(faer::sparse::Triplet::new(i + stride, i, minus.clone()));
            }
            stride *= n;
        }
    }
    faer::sparse::SparseColMat::try_new_from_triplets(size, size, &t).expect("a valid matrix")
}
