//! Thousands of small least-squares fits in one call: a cubic fitted to each of 5 000 noisy
//! series of 40 samples, on a held team, beside the same fits one by one; then the same with
//! one broken series (a NaN sample) and one that cannot be fitted (all samples at one `x`).
//!
//! ```text
//! cargo run --release --example batch
//! ```
//!
//! `linalg::batch::lstsq` takes the problems as slices of views. Each problem gets its own
//! outcome in `status`: the broken series fail alone, and the other 4 998 fits are the same
//! numbers as the loop's. How the batch went parallel is in the report it returns.

use std::time::Instant;

use faer::{Mat, MatMut};
use teamalg::linalg::{self, batch};
use teamalg::{Exec, Pool};

/// The design matrix of a cubic at `x` (`samples x 4`) and the samples of series `k`.
fn series(k: usize, samples: usize) -> (Mat<f64>, Mat<f64>) {
    let x = |i: usize| i as f64 / samples as f64;
    let coef = [1.0 + k as f64 * 1e-3, -2.0, 0.5, 3.0];
    let a = Mat::from_fn(samples, 4, |i, j| x(i).powi(j as i32));
    let b = Mat::from_fn(samples, 1, |i, _| {
        let noise = ((i * 7919 + k * 104_729) % 1000) as f64 * 1e-6;
        (0..4).map(|j| coef[j] * x(i).powi(j as i32)).sum::<f64>() + noise
    });
    (a, b)
}

fn views(v: &mut [Mat<f64>]) -> Vec<MatMut<'_, f64>> {
    v.iter_mut().map(|m| m.as_mut()).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (count, samples) = (5000, 40);
    let w = teamalg::available_cpus().max(2);
    let team = Pool::builder().threads(w).build()?.into_team(w)?;
    let (a0, b0): (Vec<_>, Vec<_>) = (0..count).map(|k| series(k, samples)).unzip();

    // One by one, through the single-call facade.
    let t = Instant::now();
    let mut one_by_one = Vec::with_capacity(count);
    for (a, b) in a0.iter().zip(&b0) {
        let qr = linalg::Qr::new(a, &Exec::serial())?;
        one_by_one.push(qr.lstsq(b, &Exec::serial())?);
    }
    let serial = t.elapsed();

    // In one batch on the team.
    let (mut a, mut b) = (a0.clone(), b0.clone());
    let mut status = vec![Ok(()); count];
    let t = Instant::now();
    let run = batch::lstsq(&mut views(&mut a), &mut views(&mut b), &mut status, &team)?;
    let batched = t.elapsed();
    println!(
        "{count} cubic fits of {samples} samples: one by one {:.1} ms, batched {:.1} ms on {w} \
         threads ({} on the team, the rest spread {} wide)",
        serial.as_secs_f64() * 1e3,
        batched.as_secs_f64() * 1e3,
        run.on_team,
        run.spread_width
    );
    let worst = (0..count)
        .map(|k| (b[k].get(..4, ..) - &one_by_one[k]).norm_max())
        .fold(0.0, f64::max);
    println!("largest difference from the one-by-one fits: {worst:.1e}");
    println!(
        "series 0: y = {:.4} + {:.4} x + {:.4} x^2 + {:.4} x^3",
        b[0][(0, 0)],
        b[0][(1, 0)],
        b[0][(2, 0)],
        b[0][(3, 0)]
    );

    // Two broken series among them: each gets its own error.
    let (mut a, mut b) = (a0.clone(), b0.clone());
    b[10][(5, 0)] = f64::NAN;
    a[20] = Mat::from_fn(samples, 4, |_, j| 0.5f64.powi(j as i32));
    let run = batch::lstsq(&mut views(&mut a), &mut views(&mut b), &mut status, &team)?;
    println!("with two broken series: {} failed", run.failed);
    for (k, s) in status.iter().enumerate().filter(|(_, s)| s.is_err()) {
        println!("  series {k}: {}", s.unwrap_err());
    }
    assert_eq!(run.failed, 2);
    Ok(())
}
