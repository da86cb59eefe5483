//! `--inside-rayon`: teamalg's plain tokens called from inside other parallel work.

use std::time::Instant;

use faer::{Accum, Mat};
use teamalg::kernels::gemm::{matmul, GemmParams};
use teamalg::kernels::par::Executor;
use teamalg::Pool;

use crate::cases::re;
use crate::rounds::{ratio, stats};

/// Four rayon workers on this host's CPUs each run 8 GEMMs of 256 through plain tokens (budget
/// `w`) of one shared teamalg pool of `w`, against the same loop with serial tokens; rounds of
/// the two loops alternate. Prints each loop's median and p90 time and the median ratio.
pub(crate) fn run(w: usize) {
    use rayon::prelude::*;
    let n = 256;
    let a = Mat::from_fn(n, n, re);
    let b = Mat::from_fn(n, n, |i, j| re(j, i));
    let pool = Pool::builder().threads(w).build().unwrap();
    let outer = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    let products = |tokens: bool| {
        outer.install(|| {
            (0..32).into_par_iter().for_each(|_| {
                let mut c = Mat::<f64>::zeros(n, n);
                let plain;
                let serial = teamalg::Exec::serial();
                let e: &dyn Executor = if tokens {
                    plain = teamalg::Exec::new(&pool, w).unwrap();
                    &plain
                } else {
                    &serial
                };
                let (a, b) = (a.as_ref(), b.as_ref());
                matmul(
                    c.as_mut(),
                    Accum::Replace,
                    a,
                    b,
                    1.0,
                    &e,
                    GemmParams::default(),
                );
            })
        })
    };
    let time = |f: &dyn Fn()| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64()
    };
    let (mut plain, mut serial) = (Vec::new(), Vec::new());
    time(&|| products(true));
    time(&|| products(false));
    for _ in 0..21 {
        plain.push(time(&|| products(true)));
        serial.push(time(&|| products(false)));
    }
    let ms = |t: f64| t * 1e3;
    let (p, s) = (stats(&plain), stats(&serial));
    println!(
        "32 GEMMs of {n} from 4 rayon workers on {} CPUs, teamalg pool of {w}; ms (median / p90)",
        teamalg::available_cpus()
    );
    println!(
        "plain tokens (budget {w}) {:>8.2} / {:>8.2}",
        ms(p.0),
        ms(p.1)
    );
    println!(
        "serial tokens            {:>8.2} / {:>8.2}",
        ms(s.0),
        ms(s.1)
    );
    println!(
        "plain / serial (median of rounds) {:.2}",
        ratio(&plain, &serial)
    );
}
