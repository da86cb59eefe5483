//! The kernels against faer, side by side in one run.
//!
//! ```text
//! cargo bench --bench kernels -- [--sizes 32,64,...] [--width W]
//! ```
//!
//! Arms, per kernel, size and scalar type: faer `Par::Seq`; faer `Par::rayon(W)` called from the
//! main thread; teamalg on a held team of width W; teamalg with a pool and team built per call.
//! Time is the median of several calls; the ratio is to faer serial (below 1: faster).
//! Kernels: GEMM (`n x n x n`); LU and Cholesky join when they land.

use std::time::{Duration, Instant};

use faer::linalg::matmul::matmul as faer_matmul;
use faer::traits::ComplexField;
use faer::{c64, Accum, Mat, Par};
use teamalg::gates::Scalar;
use teamalg::kernels::gemm::{matmul, GemmParams};
use teamalg::kernels::par::Executor;
use teamalg::Pool;

fn median(mut f: impl FnMut(), budget: Duration) -> Duration {
    f();
    let mut v = Vec::new();
    let start = Instant::now();
    while v.len() < 3 || (v.len() < 51 && start.elapsed() < budget) {
        let t = Instant::now();
        f();
        v.push(t.elapsed());
    }
    v.sort();
    v[v.len() / 2]
}

fn gemm_rows<T>(name: &str, sizes: &[usize], w: usize, make: impl Fn(usize, usize) -> T, one: T)
where
    T: ComplexField + Scalar + Send + Sync + Copy,
{
    let team = Pool::builder()
        .threads(w)
        .build()
        .unwrap()
        .into_team(w)
        .unwrap();
    for &n in sizes {
        let a = Mat::<T>::from_fn(n, n, &make);
        let b = Mat::<T>::from_fn(n, n, |i, j| make(j, i));
        let mut c = Mat::<T>::zeros(n, n);
        let budget = Duration::from_millis(300);
        // One timed call of faer at `par`, and of the teamalg kernel on `exec`.
        let mut faer_arm = |par: Par| {
            median(
                || faer_matmul(c.as_mut(), Accum::Replace, a.as_ref(), b.as_ref(), one, par),
                budget,
            )
        };
        let (seq, ray) = (faer_arm(Par::Seq), faer_arm(Par::rayon(w)));
        let held = {
            let tok = team.exec(w);
            let e: &dyn Executor = &tok;
            median(
                || {
                    matmul(
                        c.as_mut(),
                        Accum::Replace,
                        a.as_ref(),
                        b.as_ref(),
                        one,
                        &e,
                        GemmParams::default(),
                    )
                },
                budget,
            )
        };
        let fresh = median(
            || {
                let t = Pool::builder()
                    .threads(w)
                    .build()
                    .unwrap()
                    .into_team(w)
                    .unwrap();
                let p = GemmParams::default();
                matmul(
                    c.as_mut(),
                    Accum::Replace,
                    a.as_ref(),
                    b.as_ref(),
                    one,
                    &t,
                    p,
                );
            },
            budget,
        );
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        let r = |d: Duration| d.as_secs_f64() / seq.as_secs_f64();
        println!(
            "{name:<8} {n:>5} {:>12.1} {:>12.1} ({:>4.2}) {:>12.1} ({:>4.2}) {:>12.1} ({:>4.2})",
            us(seq),
            us(ray),
            r(ray),
            us(held),
            r(held),
            us(fresh),
            r(fresh)
        );
    }
}

fn main() {
    let mut sizes = vec![32, 64, 128, 256, 512, 1024, 2048];
    let mut w = teamalg::available_cpus().max(2);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--sizes" => {
                sizes = args
                    .next()
                    .expect("--sizes")
                    .split(',')
                    .map(|s| s.parse().unwrap())
                    .collect()
            }
            "--width" => w = args.next().expect("--width").parse().unwrap(),
            "--bench" => {}
            other => panic!("unknown option {other}"),
        }
    }
    println!(
        "kernels at width {w}, {} CPUs; times in us (ratio to faer serial)\n",
        teamalg::available_cpus()
    );
    println!(
        "{:<8} {:>5} {:>12} {:>19} {:>19} {:>19}",
        "kernel", "n", "faer seq", "faer rayon", "teamalg team", "team per call"
    );
    let re = |i: usize, j: usize| ((i * 7 + j * 3) as f64 * 0.01).sin();
    gemm_rows("gemm f64", &sizes, w, re, 1.0);
    gemm_rows(
        "gemm c64",
        &sizes,
        w,
        |i, j| c64::new(re(i, j), re(j, i)),
        c64::new(1.0, 0.0),
    );
}
