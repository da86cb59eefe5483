//! The kernels against faer, side by side in one run.
//!
//! ```text
//! cargo bench --bench kernels -- [--sizes 32,64,...] [--width W] [--kernels gemm,lu,cholesky]
//! ```
//!
//! Arms, per kernel, size and scalar type: faer `Par::Seq`; faer `Par::rayon(W)` called from the
//! main thread; teamalg on a held team of width W; teamalg with a pool and team built per call.
//! Each arm is compared with faer serial call by call, alternating (this host's speed drifts by
//! tens of percent over seconds): a time is the median of the arm's calls, a ratio (to faer
//! serial, below 1: faster) the median of the ratios within a pair of calls.
//! Kernels: GEMM (`n x n x n`), LU with partial pivoting and Cholesky (`n x n`); LU and
//! Cholesky sizes start at 64. The factorizations work in place: each call gets its input
//! back first, outside the timed part.

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

/// Alternates `a` and `b` call by call (each after an untimed `prepare`) until `budget` is
/// spent (at least 5, at most 51 pairs). Returns the median times of `a` and of `b` and the
/// median ratio `b / a` within a pair: the host's speed drifts by tens of percent over seconds,
/// and only a comparison inside a pair is free of it.
fn pairs(
    mut prepare: impl FnMut(),
    mut a: impl FnMut(),
    mut b: impl FnMut(),
    budget: Duration,
) -> (f64, f64, f64) {
    let mut time = |f: &mut dyn FnMut()| {
        prepare();
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64()
    };
    time(&mut a);
    time(&mut b);
    let (mut ta, mut tb, mut r) = (Vec::new(), Vec::new(), Vec::new());
    let start = Instant::now();
    while ta.len() < 5 || (ta.len() < 51 && start.elapsed() < budget) {
        let (x, y) = (time(&mut a), time(&mut b));
        ta.push(x);
        tb.push(y);
        r.push(y / x);
    }
    (mid(ta), mid(tb), mid(r))
}

fn mid(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// One kernel at one size: the faer call and the teamalg call, each after `prepare` (untimed:
/// a factorization gets its input back).
trait Case {
    fn prepare(&mut self) {}
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
    fn prepare(&mut self) {
        self.work.copy_from(&self.a);
    }
}

struct Lu<T>(Factor<T>);

impl<T: ComplexField + Scalar + Send + Sync + Copy> Case for Lu<T> {
    fn prepare(&mut self) {
        self.0.prepare();
    }
    fn faer(&mut self, par: Par) {
        let f = &mut self.0;
        let stack = MemStack::new(&mut f.buf);
        let p = Default::default();
        lu_in_place::<usize, T>(f.work.as_mut(), &mut f.idx, &mut f.idx2, par, stack, p);
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let f = &mut self.0;
        let stack = MemStack::new(&mut f.buf);
        let p = LuParams::default();
        lu::lu_in_place(f.work.as_mut(), &mut f.idx, &exec, p, stack);
    }
}

struct Cholesky<T>(Factor<T>);

impl<T: ComplexField + Scalar + Send + Sync + Copy> Case for Cholesky<T> {
    fn prepare(&mut self) {
        self.0.prepare();
    }
    fn faer(&mut self, par: Par) {
        let f = &mut self.0;
        let stack = MemStack::new(&mut f.buf);
        let p = Default::default();
        cholesky_in_place(f.work.as_mut(), Default::default(), par, stack, p)
            .expect("positive definite");
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let f = &mut self.0;
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
        let c = std::cell::RefCell::new(case(n));
        let prepare = || c.borrow_mut().prepare();
        let seq = || c.borrow_mut().faer(Par::Seq);
        let budget = Duration::from_millis(400);
        // Each comparison starts after a pause, so the threads of the one before (rayon's, a
        // team's member) have stopped spinning and do not take a CPU from it.
        let settle = || std::thread::sleep(Duration::from_millis(50));
        settle();
        let tok = team.exec(w);
        let (t_seq, held, r_held) = pairs(prepare, seq, || c.borrow_mut().teamalg(&tok), budget);
        drop(tok);
        settle();
        // The pool and team are built and dropped inside the timed call.
        let per_call = || {
            let t = Pool::builder()
                .threads(w)
                .build()
                .unwrap()
                .into_team(w)
                .unwrap();
            c.borrow_mut().teamalg(&t);
        };
        let (_, fresh, r_fresh) = pairs(prepare, seq, per_call, budget);
        settle();
        let rayon = || c.borrow_mut().faer(Par::rayon(w));
        let (_, ray, r_ray) = pairs(prepare, seq, rayon, budget);
        let us = |t: f64| t * 1e6;
        println!(
            "{name:<12} {n:>5} {:>12.1} {:>12.1} ({:>4.2}) {:>12.1} ({:>4.2}) {:>12.1} ({:>4.2})",
            us(t_seq),
            us(ray),
            r_ray,
            us(held),
            r_held,
            us(fresh),
            r_fresh
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
