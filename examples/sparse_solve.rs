//! A 3D Poisson problem solved with the sparse Cholesky: the 7-point Laplacian of a grid with
//! a few hundred thousand unknowns at most (a side of 24 by default, `--side N` for another),
//! its pattern analysed once, then factored for two time steps (the same pattern, other
//! values) on a held team and solved for several right-hand sides, each checked by its
//! residual; faer's serial factorization with the same analysis beside it, timed.
//!
//! ```text
//! cargo run --release --example sparse_solve -- --side 32
//! ```

use std::time::Instant;

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::matmul::sparse_dense_matmul;
use faer::sparse::{SparseColMat, Triplet};
use faer::{Accum, Mat, Par, Side};
use teamalg::Pool;
use teamalg::linalg::{SparseCholesky, SymbolicCholesky};

/// The lower triangle and the whole of `shift I + L`, `L` the 7-point Laplacian of a grid of
/// side `n` (an implicit time step of the heat equation, with `shift` the inverse step).
fn poisson(n: usize, shift: f64) -> (SparseColMat<usize, f64>, SparseColMat<usize, f64>) {
    let at = |x: usize, y: usize, z: usize| (x * n + y) * n + z;
    let (mut lower, mut full) = (Vec::new(), Vec::new());
    for x in 0..n {
        for y in 0..n {
            for z in 0..n {
                let i = at(x, y, z);
                lower.push(Triplet::new(i, i, 6.0 + shift));
                full.push(Triplet::new(i, i, 6.0 + shift));
                for j in [
                    (x + 1 < n).then(|| at(x + 1, y, z)),
                    (y + 1 < n).then(|| at(x, y + 1, z)),
                    (z + 1 < n).then(|| at(x, y, z + 1)),
                ]
                .into_iter()
                .flatten()
                {
                    lower.push(Triplet::new(j, i, -1.0));
                    full.push(Triplet::new(j, i, -1.0));
                    full.push(Triplet::new(i, j, -1.0));
                }
            }
        }
    }
    let size = n * n * n;
    let make = |t: &[Triplet<usize, usize, f64>]| {
        SparseColMat::try_new_from_triplets(size, size, t).expect("a valid matrix")
    };
    (make(&lower), make(&full))
}

/// `max_j ||A x_j - b_j|| / (||A||_F ||x_j||)`.
fn backward_error(full: &SparseColMat<usize, f64>, x: &Mat<f64>, b: &Mat<f64>) -> f64 {
    let mut r = b.clone();
    sparse_dense_matmul(
        r.as_mut(),
        Accum::Add,
        full.as_ref(),
        x.as_ref(),
        -1.0,
        Par::Seq,
    );
    let norm_a = full.val().iter().map(|v| v * v).sum::<f64>().sqrt();
    (0..x.ncols())
        .map(|j| r.col(j).norm_l2() / (norm_a * x.col(j).norm_l2()))
        .fold(0.0, f64::max)
}

/// Runs the example on a grid of side `n` (also from the tests: it checks its own results).
pub fn run(n: usize) -> Result<(), teamalg::Error> {
    let team = Pool::builder().threads(2).build()?.into_team(2)?;
    let (lower, _) = poisson(n, 1.0);
    let t = Instant::now();
    let symbolic = SymbolicCholesky::new(lower.symbolic(), Side::Lower)?;
    println!(
        "{} unknowns: analysed in {:.1} ms, {} supernodes, {} entries in L",
        n * n * n,
        t.elapsed().as_secs_f64() * 1e3,
        symbolic.supernodes(),
        symbolic.len_values()
    );
    let b = Mat::<f64>::from_fn(n * n * n, 4, |i, j| ((i * (j + 1)) % 17) as f64 - 8.0);
    for (step, shift) in [1.0, 0.1].into_iter().enumerate() {
        let (lower, full) = poisson(n, shift);
        let t = Instant::now();
        let chol = SparseCholesky::new_with_symbolic(&symbolic, lower.as_ref(), &team)?;
        let ours = t.elapsed();
        let x = chol.solve(&b, &team)?;
        let err = backward_error(&full, &x, &b);
        assert!(err < 1e-13, "backward error {err:e}");

        // faer's serial numeric factorization with the same analysis, its values and scratch
        // allocated in the timed part as the owned `SparseCholesky` allocates its own.
        let sym = symbolic.as_faer();
        let t = Instant::now();
        let mut values = vec![0.0; sym.len_val()];
        let req = sym.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default());
        let mut mem = MemBuffer::new(req);
        sym.factorize_numeric_llt(
            &mut values,
            lower.as_ref(),
            Side::Lower,
            Default::default(),
            Par::Seq,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .expect("positive definite");
        let faer = t.elapsed();
        println!(
            "step {step}: factored in {:.1} ms on a team of 2 (faer serial {:.1} ms), 4 solves, backward error {err:.1e}",
            ours.as_secs_f64() * 1e3,
            faer.as_secs_f64() * 1e3
        );
    }
    Ok(())
}

/// The example's entry: `--side N` picks the grid.
pub fn main() -> Result<(), teamalg::Error> {
    let mut args = std::env::args().skip(1);
    let mut side = 24;
    while let Some(a) = args.next() {
        if a == "--side" {
            side = args.next().and_then(|s| s.parse().ok()).expect("--side N");
        }
    }
    run(side)
}
