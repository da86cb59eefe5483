//! The kernels against faer, side by side in one run.
//!
//! ```text
//! cargo bench --bench kernels -- [--sizes 32,64,...] [--width W] [--kernels gemm,lu,cholesky]
//! ```
//!
//! Arms, per kernel, size and scalar type: faer `Par::Seq`; faer `Par::rayon(W)` called from the
//! main thread; teamalg on a held team of width W; teamalg with a pool and team built per call.
//! Time is the median of several calls; the ratio is to faer serial (below 1: faster).
//! Kernels: GEMM (`n x n x n`), LU with partial pivoting and Cholesky (`n x n`); LU and
//! Cholesky sizes start at 64. The factorizations work in place, so every arm of them copies
//! its input back first (the same copy in every arm).

use std::time::{Duration, Instant};

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::linalg::lu::partial_pivoting::factor::{lu_in_place, lu_in_place_scratch};
use faer::linalg::matmul::matmul as faer_matmul;
use faer::traits::ComplexField;
use faer::{c64, Accum, Mat, Par};
use teamalg::gates::Scalar;
use teamalg::kernels::cholesky::{self, CholeskyParams};
use teamalg::kernels::gemm::{matmul, GemmParams};
use teamalg::kernels::lu::{self, LuParams};
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

/// One kernel at one size: the faer call and the teamalg call.
trait Case {
    fn faer(&mut self, par: Par);
    fn teamalg(&mut self, exec: &dyn Executor);
}

struct Gemm<T> {
    a: Mat<T>,
    b: Mat<T>,
    c: Mat<T>,
    one: T,
}

impl<T: ComplexField + Scalar + Send + Sync + Copy> Case for Gemm<T> {
    fn faer(&mut self, par: Par) {
        let (a, b) = (self.a.as_ref(), self.b.as_ref());
        faer_matmul(self.c.as_mut(), Accum::Replace, a, b, self.one, par);
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let (a, b) = (self.a.as_ref(), self.b.as_ref());
        let p = GemmParams::default();
        matmul(self.c.as_mut(), Accum::Replace, a, b, self.one, &exec, p);
    }
}

/// A factorization's input, its working copy, and scratch for both implementations.
struct Factor<T> {
    a: Mat<T>,
    work: Mat<T>,
    idx: Vec<usize>,
    idx2: Vec<usize>,
    buf: MemBuffer,
}

impl<T: ComplexField + Copy> Factor<T> {
    fn new(a: Mat<T>, scratch: faer::dyn_stack::StackReq) -> Self {
        let n = a.nrows();
        Factor {
            work: a.clone(),
            a,
            idx: vec![0; n],
            idx2: vec![0; n],
            buf: MemBuffer::new(scratch),
        }
    }
    fn reset(&mut self) {
        self.work.copy_from(&self.a);
    }
}

struct Lu<T>(Factor<T>);

impl<T: ComplexField + Scalar + Send + Sync + Copy> Case for Lu<T> {
    fn faer(&mut self, par: Par) {
        let f = &mut self.0;
        f.reset();
        let stack = MemStack::new(&mut f.buf);
        let p = Default::default();
        lu_in_place::<usize, T>(f.work.as_mut(), &mut f.idx, &mut f.idx2, par, stack, p);
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let f = &mut self.0;
        f.reset();
        let stack = MemStack::new(&mut f.buf);
        let p = LuParams::default();
        lu::lu_in_place(f.work.as_mut(), &mut f.idx, &exec, p, stack);
    }
}

struct Cholesky<T>(Factor<T>);

impl<T: ComplexField + Scalar + Send + Sync + Copy> Case for Cholesky<T> {
    fn faer(&mut self, par: Par) {
        let f = &mut self.0;
        f.reset();
        let stack = MemStack::new(&mut f.buf);
        let p = Default::default();
        cholesky_in_place(f.work.as_mut(), Default::default(), par, stack, p)
            .expect("positive definite");
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let f = &mut self.0;
        f.reset();
        let stack = MemStack::new(&mut f.buf);
        let p = CholeskyParams::default();
        cholesky::cholesky_in_place(f.work.as_mut(), &exec, p, stack).expect("positive definite");
    }
}

fn rows(name: &str, sizes: &[usize], w: usize, mut case: impl FnMut(usize) -> Box<dyn Case>) {
    let team = Pool::builder()
        .threads(w)
        .build()
        .unwrap()
        .into_team(w)
        .unwrap();
    for &n in sizes {
        let mut c = case(n);
        let budget = Duration::from_millis(300);
        let seq = median(|| c.faer(Par::Seq), budget);
        let ray = median(|| c.faer(Par::rayon(w)), budget);
        let held = {
            let tok = team.exec(w);
            median(|| c.teamalg(&tok), budget)
        };
        let fresh = median(
            || {
                let t = Pool::builder()
                    .threads(w)
                    .build()
                    .unwrap()
                    .into_team(w)
                    .unwrap();
                c.teamalg(&t);
            },
            budget,
        );
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        let r = |d: Duration| d.as_secs_f64() / seq.as_secs_f64();
        println!(
            "{name:<12} {n:>5} {:>12.1} {:>12.1} ({:>4.2}) {:>12.1} ({:>4.2}) {:>12.1} ({:>4.2})",
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

/// A reproducible, well-conditioned entry (a slowly varying smooth part plus a hash).
fn re(i: usize, j: usize) -> f64 {
    let h = (i as u64 * 0x9e37_79b9 + j as u64 * 0x85eb_ca6b) % 1000;
    ((i * 7 + j * 3) as f64 * 0.01).sin() + h as f64 / 1000.0 - 0.5
}

fn cx(i: usize, j: usize) -> c64 {
    c64::new(re(i, j), re(j, i))
}

/// `B B^H + n I`: positive definite.
fn spd<T: ComplexField + Copy>(n: usize, f: impl Fn(usize, usize) -> T) -> Mat<T> {
    let b = Mat::<T>::from_fn(n, n, f);
    let mut a = Mat::<T>::zeros(n, n);
    faer_matmul(
        a.as_mut(),
        Accum::Replace,
        b.as_ref(),
        b.adjoint(),
        faer::traits::math_utils::one(),
        Par::Seq,
    );
    for i in 0..n {
        a[(i, i)] += faer::traits::math_utils::from_f64::<T>(n as f64);
    }
    a
}

fn main() {
    let mut sizes = vec![32, 64, 128, 256, 512, 1024, 2048];
    let mut kernels = vec!["gemm".to_string(), "lu".into(), "cholesky".into()];
    let mut w = teamalg::available_cpus().max(2);
    let mut args = std::env::args().skip(1);
    let list = |s: String| s.split(',').map(str::to_string).collect::<Vec<_>>();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--sizes" => {
                sizes = list(args.next().expect("--sizes"))
                    .iter()
                    .map(|s| s.parse().unwrap())
                    .collect()
            }
            "--kernels" => kernels = list(args.next().expect("--kernels")),
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
        "{:<12} {:>5} {:>12} {:>19} {:>19} {:>19}",
        "kernel", "n", "faer seq", "faer rayon", "teamalg team", "team per call"
    );
    let factor_sizes: Vec<usize> = sizes.iter().copied().filter(|&n| n >= 64).collect();
    let lu_scratch = |n| {
        faer::dyn_stack::StackReq::any_of(&[
            lu_in_place_scratch::<usize, f64>(n, n, Par::rayon(w), Default::default()),
            lu::lu_in_place_scratch::<c64>(n, n),
        ])
    };
    for k in &kernels {
        match k.as_str() {
            "gemm" => {
                rows("gemm f64", &sizes, w, |n| {
                    let (a, b) = (Mat::from_fn(n, n, re), Mat::from_fn(n, n, |i, j| re(j, i)));
                    let c = Mat::zeros(n, n);
                    Box::new(Gemm { a, b, c, one: 1.0 })
                });
                rows("gemm c64", &sizes, w, |n| {
                    let (a, b) = (Mat::from_fn(n, n, cx), Mat::from_fn(n, n, |i, j| cx(j, i)));
                    let c = Mat::zeros(n, n);
                    let one = c64::new(1.0, 0.0);
                    Box::new(Gemm { a, b, c, one })
                });
            }
            "lu" => {
                rows("lu f64", &factor_sizes, w, |n| {
                    Box::new(Lu(Factor::new(Mat::from_fn(n, n, re), lu_scratch(n))))
                });
                rows("lu c64", &factor_sizes, w, |n| {
                    Box::new(Lu(Factor::new(Mat::from_fn(n, n, cx), lu_scratch(n))))
                });
            }
            "cholesky" => {
                let scratch =
                    |n| cholesky_in_place_scratch::<c64>(n, Par::rayon(w), Default::default());
                rows("cholesky f64", &factor_sizes, w, |n| {
                    Box::new(Cholesky(Factor::new(spd(n, re), scratch(n))))
                });
                rows("cholesky c64", &factor_sizes, w, |n| {
                    Box::new(Cholesky(Factor::new(spd(n, cx), scratch(n))))
                });
            }
            other => panic!("unknown kernel {other}"),
        }
    }
}
