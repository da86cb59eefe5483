//! The gate audit (`--audit`): for every cell of the kernel
//! benchmark, is the gate's choice as fast as the better of serial and parallel?
//!
//! Per kernel (GEMM, triangular solve, LU, Cholesky; `LDL^H` and Bunch-Kaufman when named), size and scalar type (`f64`, `c64`), three
//! arms through the facade on one held team: forced serial (`ParThreshold::Never`), forced
//! parallel (`ParThreshold::Fixed(0)`) and the gate's choice (no threshold), one call of each
//! in turn per round (the six orders in turn), no pauses. The host's speed drifts over seconds, so
//! the gate is compared within rounds: `gate/best` is the larger of the medians over rounds of
//! `gate / serial` and `gate / parallel` (the better arm's). A cell misses when it is above 1.05. The pool reads `TEAMALG_PROFILE` when set
//! (after `teamalg calibrate`), else the built-in class rows; the table says which.

use std::time::Instant;

use faer::{c64, Accum, Mat};
use teamalg::gates::trace;
use teamalg::gates::{Family, ParThreshold};
use teamalg::linalg::{self, Options};
use teamalg::{Pool, Team};
use teamalg_tools::stats::{median, median_p90};

/// One kernel call on prepared data.
trait Call {
    /// Restores the input (untimed).
    fn prepare(&mut self) {}
    /// The call under `options` on `team`.
    fn run(&mut self, team: &Team, options: &Options);
}

struct Gemm<T> {
    a: Mat<T>,
    c: Mat<T>,
}

impl<T: teamalg::linalg::Field + Copy> Call for Gemm<T> {
    fn run(&mut self, team: &Team, options: &Options) {
        let one = faer::traits::math_utils::one::<T>();
        linalg::matmul_with(
            self.c.as_mut(),
            Accum::Replace,
            self.a.as_ref(),
            self.a.transpose(),
            one,
            team,
            options,
        )
        .expect("shapes agree");
    }
}

/// An input matrix and the working copy a call overwrites.
struct InPlace<T> {
    input: Mat<T>,
    work: Mat<T>,
    rhs: Mat<T>,
}

impl<T: faer::traits::ComplexField + Copy> InPlace<T> {
    fn new(input: Mat<T>) -> Self {
        let n = input.nrows();
        InPlace {
            work: input.clone(),
            rhs: Mat::from_fn(n, n, |i, j| input[((i + j) % n, j)]),
            input,
        }
    }
}

struct Trsm<T>(InPlace<T>);
struct Lu<T>(InPlace<T>);
struct Chol<T>(InPlace<T>);
/// `LDL^H` and Bunch-Kaufman through their owned forms (both arms pay the copy alike).
struct Ldlt<T>(Mat<T>);
struct Lblt<T>(Mat<T>);

impl<T: teamalg::linalg::Field + Copy> Call for Ldlt<T> {
    fn run(&mut self, team: &Team, options: &Options) {
        linalg::Ldlt::new_with(&self.0, team, options).expect("nonzero pivots");
    }
}

impl<T: teamalg::linalg::Field + Copy> Call for Lblt<T> {
    fn run(&mut self, team: &Team, options: &Options) {
        linalg::Lblt::new_with(&self.0, team, options).expect("square and finite");
    }
}

impl<T: teamalg::linalg::Field + Copy> Call for Trsm<T> {
    fn prepare(&mut self) {
        self.0.work.copy_from(&self.0.rhs);
    }
    fn run(&mut self, team: &Team, options: &Options) {
        linalg::solve_triangular_with(
            self.0.input.as_ref(),
            self.0.work.as_mut(),
            linalg::SolveSide::Left,
            linalg::Triangle::Lower,
            linalg::Diag::NonUnit,
            team,
            options,
        )
        .expect("shapes agree");
    }
}

impl<T: teamalg::linalg::Field + Copy> Call for Lu<T> {
    fn prepare(&mut self) {
        self.0.work.copy_from(&self.0.input);
    }
    fn run(&mut self, team: &Team, options: &Options) {
        let lu = linalg::lu_with(self.0.work.as_mut(), team, options).expect("finite input");
        std::hint::black_box(lu.zero_pivot());
    }
}

impl<T: teamalg::linalg::Field + Copy> Call for Chol<T> {
    fn prepare(&mut self) {
        self.0.work.copy_from(&self.0.input);
    }
    fn run(&mut self, team: &Team, options: &Options) {
        linalg::cholesky_with(self.0.work.as_mut(), team, options).expect("positive definite");
    }
}

fn re(i: usize, j: usize) -> f64 {
    ((i * 31 + j * 17) % 101) as f64 / 101.0 - 0.5
}

fn cx(i: usize, j: usize) -> c64 {
    c64::new(re(i, j), re(j + 3, i))
}

/// A well-conditioned matrix (dominant diagonal), Hermitian when `hermitian`.
fn dominant<T: faer::traits::ComplexField + Copy>(
    n: usize,
    f: impl Fn(usize, usize) -> T,
    diag: T,
    hermitian: bool,
) -> Mat<T> {
    Mat::from_fn(n, n, |i, j| {
        if i == j {
            diag
        } else if hermitian && i < j {
            faer::traits::math_utils::conj(&f(j, i))
        } else {
            f(i, j)
        }
    })
}

/// One audited cell.
struct Cell {
    kernel: &'static str,
    scalar: &'static str,
    n: usize,
    serial: f64,
    parallel: f64,
    gate: f64,
    gate_p90: f64,
    /// Medians over rounds of gate / serial and gate / parallel.
    paired: (f64, f64),
    /// Sections the gate ran parallel, of those it decided.
    parallel_sections: (usize, usize),
}

impl Cell {
    /// The gate's time over the better arm's, within rounds (the better arm gives the larger
    /// ratio).
    fn ratio(&self) -> f64 {
        self.paired.0.max(self.paired.1)
    }
    fn loss(&self) -> f64 {
        self.ratio() - 1.0
    }
}

/// Times the three arms of one cell.
fn cell(
    kernel: &'static str,
    family: Family,
    scalar: &'static str,
    n: usize,
    team: &Team,
    call: &mut dyn Call,
) -> Cell {
    let arms = [
        Options::new().threshold(family, ParThreshold::Never),
        Options::new().threshold(family, ParThreshold::Fixed(0)),
        Options::new(),
    ];
    // Warm up each arm, and time one serial call to size the rounds.
    let mut once = 0.0;
    for o in &arms {
        call.prepare();
        let t = Instant::now();
        call.run(team, o);
        once = t.elapsed().as_secs_f64();
    }
    // Whole cycles of the six orders, so that each arm follows each other arm (and itself,
    // across rounds) equally often: the arm before decides whether a member sleeps and whose
    // cache holds the matrix.
    const ORDERS: [[usize; 3]; 6] = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    let rounds = ((2.0 / once.max(1e-7)) as usize).clamp(6, 300) / 6 * 6;
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    for r in 0..rounds {
        for &arm in &ORDERS[r % 6] {
            call.prepare();
            let t = Instant::now();
            call.run(team, &arms[arm]);
            times[arm].push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    call.prepare();
    let ((), seen) = trace::collect(|| call.run(team, &arms[2]));
    let par = seen.iter().filter(|d| d.parallel()).count();
    let ratios = |arm: &[f64]| {
        let r: Vec<f64> = times[2].iter().zip(arm).map(|(g, a)| g / a).collect();
        median(&r)
    };
    let paired = (ratios(&times[0]), ratios(&times[1]));
    let [s, p, g] = times;
    Cell {
        kernel,
        scalar,
        n,
        serial: median(&s),
        parallel: median(&p),
        gate: median(&g),
        gate_p90: median_p90(&g).1,
        paired,
        parallel_sections: (par, seen.len()),
    }
}

/// Runs the audit over `kernels` and `sizes` at width `w` and prints the table and summary.
pub(crate) fn run(kernels: &[String], sizes: &[usize], w: usize) {
    let profile = std::env::var(teamalg::PROFILE_VAR).ok();
    let pool = Pool::builder().threads(w).build().expect("a pool");
    let team = pool.into_team(w).map_err(|e| e.error).expect("a team");
    println!(
        "gate audit at width {w}, {} CPUs, {}; times in us, medians of interleaved rounds",
        teamalg::available_cpus(),
        match &profile {
            Some(p) => format!("profile {p}"),
            None => "built-in class rows (no profile)".to_string(),
        }
    );
    println!(
        "{:<10} {:<4} {:>5} {:>12} {:>12} {:>12} {:>10} {:>9} {:>8}",
        "kernel", "type", "n", "serial", "parallel", "gate", "gate p90", "sections", "gate/best",
    );
    let mut cells = Vec::new();
    for k in kernels {
        for &n in sizes {
            for scalar in ["f64", "c64"] {
                let (kernel, family): (&'static str, Family) = match k.as_str() {
                    "gemm" => ("gemm", Family::Gemm),
                    "trsm" => ("trsm", Family::TriangularSolve),
                    "lu" => ("lu", Family::LuPartial),
                    "cholesky" => ("cholesky", Family::Cholesky),
                    "ldlt" => ("ldlt", Family::Ldlt),
                    "lblt" => ("lblt", Family::Lblt),
                    other => panic!("unknown kernel {other}"),
                };
                let fdiag = n as f64;
                let mut call: Box<dyn Call> = match (kernel, scalar) {
                    ("gemm", "f64") => Box::new(Gemm {
                        a: Mat::from_fn(n, n, re),
                        c: Mat::zeros(n, n),
                    }),
                    ("gemm", _) => Box::new(Gemm {
                        a: Mat::from_fn(n, n, cx),
                        c: Mat::zeros(n, n),
                    }),
                    ("trsm", "f64") => Box::new(Trsm(InPlace::new(dominant(n, re, fdiag, false)))),
                    ("trsm", _) => Box::new(Trsm(InPlace::new(dominant(
                        n,
                        cx,
                        c64::new(fdiag, 0.0),
                        false,
                    )))),
                    ("lu", "f64") => Box::new(Lu(InPlace::new(dominant(n, re, fdiag, false)))),
                    ("lu", _) => Box::new(Lu(InPlace::new(dominant(
                        n,
                        cx,
                        c64::new(fdiag, 0.0),
                        false,
                    )))),
                    ("ldlt", "f64") => Box::new(Ldlt(dominant(n, re, fdiag, true))),
                    ("ldlt", _) => Box::new(Ldlt(dominant(n, cx, c64::new(fdiag, 0.0), true))),
                    ("lblt", "f64") => {
                        Box::new(Lblt(Mat::from_fn(n, n, |i, j| re(i, j) + re(j, i))))
                    }
                    ("lblt", _) => {
                        Box::new(Lblt(Mat::from_fn(n, n, |i, j| cx(i, j) + cx(j, i).conj())))
                    }
                    ("cholesky", "f64") => {
                        Box::new(Chol(InPlace::new(dominant(n, re, fdiag, true))))
                    }
                    _ => Box::new(Chol(InPlace::new(dominant(
                        n,
                        cx,
                        c64::new(fdiag, 0.0),
                        true,
                    )))),
                };
                let c = cell(kernel, family, scalar, n, &team, call.as_mut());
                let flag = if c.loss() > 0.05 { "MISS" } else { "" };
                println!(
                    "{:<10} {:<4} {:>5} {:>12.1} {:>12.1} {:>12.1} {:>10.1} {:>9} {:>8.3}  {}",
                    c.kernel,
                    c.scalar,
                    c.n,
                    c.serial,
                    c.parallel,
                    c.gate,
                    c.gate_p90,
                    format!("{}/{}", c.parallel_sections.0, c.parallel_sections.1),
                    c.ratio(),
                    flag
                );
                cells.push(c);
            }
        }
    }
    let over = |x: f64| cells.iter().filter(|c| c.loss() > x).count();
    let worst = cells
        .iter()
        .max_by(|a, b| a.loss().total_cmp(&b.loss()))
        .expect("at least one cell");
    println!(
        "\n{} cells; gate within 5 % of the better arm in {}, within 10 % in {}; worst: {} {} {} \
         at {:.3}x the better arm",
        cells.len(),
        cells.len() - over(0.05),
        cells.len() - over(0.10),
        worst.kernel,
        worst.scalar,
        worst.n,
        worst.ratio()
    );
}
