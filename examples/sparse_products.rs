//! Sparse products: a 2D Laplacian applied to a block of vectors (sparse times dense) and
//! squared (sparse times sparse), on a held team.
//!
//! ```text
//! cargo run --release --example sparse_products
//! ```

use faer::sparse::{SparseColMat, Triplet};
use faer::{Accum, Mat};
use teamalg::Pool;
use teamalg::linalg;

/// The 5-point Laplacian of an `s x s` grid, `s^2 x s^2`.
fn laplacian(s: usize) -> SparseColMat<usize, f64> {
    let mut t = Vec::new();
    for y in 0..s {
        for x in 0..s {
            let i = y * s + x;
            t.push(Triplet::new(i, i, 4.0));
            for (nx, ny) in [
                (x + 1, y),
                (x.wrapping_sub(1), y),
                (x, y + 1),
                (x, y.wrapping_sub(1)),
            ] {
                if nx < s && ny < s {
                    t.push(Triplet::new(i, ny * s + nx, -1.0));
                }
            }
        }
    }
    SparseColMat::try_new_from_triplets(s * s, s * s, &t).expect("a valid matrix")
}

/// Runs the example (also from the tests: it checks its own results).
pub fn main() -> Result<(), teamalg::Error> {
    let team = Pool::builder().threads(2).build()?.into_team(2)?;
    let s = 64;
    let a = laplacian(s);

    // Sparse times dense: 16 vectors at once. A constant vector gives each point's count of
    // missing neighbours (the grid's boundary).
    let b = Mat::<f64>::ones(s * s, 16);
    let mut c = Mat::<f64>::zeros(s * s, 16);
    linalg::sparse_dense_matmul(&mut c, Accum::Replace, a.as_ref(), &b, 1.0, &team)?;
    assert_eq!((c[(0, 0)], c[(1, 0)], c[(s + 1, 0)]), (2.0, 1.0, 0.0));
    println!(
        "A 1: corner {}, edge {}, inside {}",
        c[(0, 0)],
        c[(1, 0)],
        c[(s + 1, 0)]
    );

    // Sparse times sparse: A^2, the 13-point stencil, a new sparse matrix.
    let a2 = linalg::sparse_sparse_matmul(a.as_ref(), a.as_ref(), 1.0, &team)?;
    let inside = (s / 2) * s + s / 2;
    assert_eq!(a2.as_ref().get(inside, inside), Some(&20.0));
    println!(
        "A^2: {} entries (A has {}); centre entry {}",
        a2.compute_nnz(),
        a.compute_nnz(),
        a2.as_ref().get(inside, inside).unwrap()
    );
    Ok(())
}
