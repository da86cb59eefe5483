//! Budget tokens inside user parallelism: four independent products, each given a share of
//! one pool's budget, so the whole program never runs more threads than the pool has.
//!
//! ```text
//! cargo run --release --example nested
//! ```
//!
//! `Exec::fork` runs the jobs on the pool and hands each a child token whose budget is its share
//! of the parent's; a kernel called with a child token goes at most that wide (and serial where
//! the share is one). No job waits for threads another job holds.

use faer::{Accum, Mat};
use teamalg::{Exec, Pool, linalg};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let w = teamalg::available_cpus().max(2);
    let pool = Pool::builder().threads(w).build()?;
    let n = 384;
    let inputs: Vec<Mat<f64>> = (0..4)
        .map(|k| Mat::from_fn(n, n, |i, j| ((i + j + k) % 5) as f64))
        .collect();
    let outputs: Vec<std::sync::Mutex<Mat<f64>>> = (0..4)
        .map(|_| std::sync::Mutex::new(Mat::zeros(n, n)))
        .collect();
    let started = teamalg::spawned_workers();
    Exec::new(&pool, w)?.fork(inputs.len(), |i, child| {
        let a = &inputs[i];
        let mut c = outputs[i].lock().expect("one job per output");
        println!("job {i}: a budget of {} of the pool's {w}", child.budget());
        linalg::matmul(c.as_mut(), Accum::Replace, &a, &a, 1.0, &child).expect("shapes agree");
    });
    let sums: Vec<f64> = outputs
        .iter()
        .map(|c| c.lock().expect("done").sum())
        .collect();
    println!("sums: {sums:?}");
    println!(
        "threads started during the jobs: {} (the pool's {w} workers were leased before)",
        teamalg::spawned_workers() - started
    );
    Ok(())
}
