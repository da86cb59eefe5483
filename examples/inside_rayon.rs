//! Calling the facade from inside a rayon `par_iter`, without oversubscription.
//!
//! ```text
//! cargo run --release --example inside_rayon
//! ```
//!
//! Rayon already keeps every CPU busy here, so each product gets a plain token of one shared
//! teamalg pool (budget 2). A plain token only borrows idle workers of that pool: while they are
//! busy with another product, or the CPUs are taken, its sections run their parts on the
//! calling rayon thread, so the process never runs more than rayon's threads plus the pool's.
//! `Exec::serial()` is the other choice, when the outer loop alone fills the machine. Both
//! arms are timed below; `docs/perf/runs/kernels-log.md` ("inside rayon") has the measured ratios.

use std::time::Instant;

use faer::{Accum, Mat};
use rayon::prelude::*;
use teamalg::{Exec, Pool, linalg};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 256;
    let a = Mat::<f64>::from_fn(n, n, |i, j| ((i * 7 + j) % 13) as f64);
    let pool = Pool::builder().threads(2).build()?;
    let outer = rayon::ThreadPoolBuilder::new().num_threads(4).build()?;
    let run = |tokens: bool| {
        outer.install(|| {
            (0..32).into_par_iter().for_each(|_| {
                let mut c = Mat::<f64>::zeros(n, n);
                let (x, y) = (a.as_ref(), a.as_ref());
                if tokens {
                    let token = Exec::new(&pool, 2).expect("a budget of 2");
                    linalg::matmul(c.as_mut(), Accum::Replace, x, y, 1.0, &token)
                } else {
                    linalg::matmul(c.as_mut(), Accum::Replace, x, y, 1.0, &Exec::serial())
                }
                .expect("shapes agree");
            })
        })
    };
    for (name, tokens) in [
        ("plain tokens", true),
        ("serial", false),
        ("plain tokens", true),
    ] {
        let t = Instant::now();
        run(tokens);
        println!(
            "32 products of {n} from 4 rayon threads, {name}: {:.2} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
    }
    println!(
        "threads teamalg started: {} (the pool's 2 workers, from the reserve)",
        teamalg::spawned_workers()
    );
    Ok(())
}
