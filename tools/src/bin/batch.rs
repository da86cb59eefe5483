//! Batches of small problems, side by side in one run: a serial loop of faer's calls, rayon's
//! `par_iter` over the same serial calls (as users write it: `for_each_init` for the scratch,
//! rayon's own split), and `teamalg::linalg::batch` on a held team (with its finiteness
//! checks, as by default, and without them, as the serial loop and rayon run) and on a pool
//! and team built per call, and, where the problems are of one shape, on the held team with
//! the operands strided (one matrix of equal problems side by side, `BatchMut::strided`).
//!
//! ```text
//! cargo run --release -p teamalg-tools --bin batch -- [--cases lu32,lu8,svd64,mixed,gemm16]
//!     [--width W] [--rounds R] [--pause-ms P] [--load N[:NICE]] [--load-phases ON_MS:OFF_MS]
//!     [--csv FILE]
//! ```
//!
//! The teamalg arms make their slices of views in the timed part, as a caller holding its
//! matrices in a `Vec<Mat>` makes them for each call, and reuse one `status` slice.
//!
//! A round runs each arm once, in turn, back to back (with `--pause-ms`, each arm's call comes
//! after a pause of that length, so its threads have gone to sleep). The inputs are restored
//! before each call, outside the timed part. A ratio is the arm's time over the serial loop's
//! in the same round; the table gives the median, p90 and max of each arm's ratios and its
//! median time. The cases are those of `docs/batch.md`'s goals.
//!
//! `--load` runs busy processes beside the whole run (`teamalg_tools::load`, as `kernels
//! --load`); `--csv` appends one row per case and arm in the kernel benchmark's columns, which
//! is how `kernels --matrix` runs this program under each of its load conditions and reads
//! the batch rows back.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Parser;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::{factor, solve};
use faer::linalg::svd::ComputeSvdVectors;
use faer::{Accum, Conj, Mat, MatMut, Par};
use rayon::prelude::*;
use teamalg::linalg::batch::{self, BatchMut, BatchRef, Status};
use teamalg::linalg::Options;
use teamalg::{Pool, Team};
use teamalg_tools::csv::{Csv, ARM_COLUMNS};
use teamalg_tools::load::LoadSpec;
use teamalg_tools::stats::percentile;

#[derive(Parser)]
#[command(
    name = "batch",
    about = "Batches against a serial faer loop and rayon, in one run"
)]
struct Args {
    /// The cases, comma-separated: lu32 (10 000 LU + solve of 32), lu8 (100 000 of 8), svd64
    /// (1 000 SVDs of 64 with vectors), mixed (2 000 LU + solve of orders 8 to 256,
    /// log-uniform), gemm16 (10 000 products of 16).
    #[arg(
        long,
        default_value = "lu32,lu8,svd64,mixed,gemm16",
        value_delimiter = ','
    )]
    cases: Vec<String>,
    /// The width of the parallel arms [default: the CPUs this process may use, at least 2].
    #[arg(long)]
    width: Option<usize>,
    /// Rounds per case.
    #[arg(long, default_value_t = 15)]
    rounds: usize,
    /// A pause before each arm's call, in milliseconds.
    #[arg(long, default_value_t = 0)]
    pause_ms: u64,
    /// N busy processes (nice NICE, 0 by default) beside the whole run.
    #[arg(long, value_name = "N[:NICE]")]
    load: Option<String>,
    /// The load comes and goes: stopped and continued in turn (the ratios are over the whole
    /// run; no per-phase report here).
    #[arg(long, value_name = "ON_MS:OFF_MS", requires = "load")]
    load_phases: Option<String>,
    /// Append one row per case and arm to FILE (the header when the file is new), in the
    /// kernel benchmark's columns: kernel `batch CASE`, scalar f64, n the number of problems,
    /// the arms `serial_loop`, `rayon_par_iter`, `teamalg_team`, `team_unchecked`,
    /// `team_per_call` and `team_strided`, ratio to the serial loop.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
}

/// The arms' names in the `--csv` rows, by index (the order of the table's columns but the
/// serial loop first).
const ARMS: [&str; 6] = [
    "serial_loop",
    "rayon_par_iter",
    "teamalg_team",
    "team_unchecked",
    "team_per_call",
    "team_strided",
];

/// One case: its data, restored before every call, and its four arms.
trait Case {
    fn name(&self) -> String;
    /// The number of problems in the batch.
    fn problems(&self) -> usize;
    fn reset(&mut self);
    fn serial(&mut self);
    fn rayon(&mut self, pool: &rayon::ThreadPool);
    /// Returns the batch's report.
    fn teamalg(&mut self, team: &Team, options: &Options) -> batch::BatchRun;
    /// The batch on a held team with its operands strided (one matrix of equal problems side
    /// by side, no slice of views), where the case's problems are all of one shape.
    fn strided(&mut self, _team: &Team, _options: &Options) -> Option<batch::BatchRun> {
        None
    }
    /// That every arm computed the same thing: the sum of the results' entries.
    fn checksum(&self) -> f64;
    /// The same sum for the strided arm's results.
    fn strided_checksum(&self) -> f64 {
        0.0
    }
    /// Restores the strided arm's inputs and touches its outputs, as `reset` does the others'
    /// (which the arms before leave in the caches).
    fn strided_reset(&mut self) {}
}

/// A reproducible pseudo-random stream.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A well-conditioned matrix of order `n`.
fn system(n: usize, rng: &mut Lcg) -> Mat<f64> {
    Mat::from_fn(n, n, |i, j| {
        rng.next() - 0.5 + if i == j { n as f64 } else { 0.0 }
    })
}

fn views(v: &mut [Mat<f64>]) -> Vec<MatMut<'_, f64>> {
    v.iter_mut().map(|m| m.as_mut()).collect()
}

/// LU + solve of systems of the given orders, one right-hand side each.
struct LuSolve {
    label: String,
    a0: Vec<Mat<f64>>,
    b0: Vec<Mat<f64>>,
    a: Vec<Mat<f64>>,
    b: Vec<Mat<f64>>,
    buf: MemBuffer,
    perm: Vec<usize>,
    perm_inv: Vec<usize>,
    req: StackReq,
    nmax: usize,
    status: Vec<Status>,
    /// The same systems side by side, when they are of one order: `(A0, B0, A, B)`.
    strided: Option<[Mat<f64>; 4]>,
}

impl LuSolve {
    fn new(label: &str, orders: &[usize]) -> LuSolve {
        let mut rng = Lcg(7);
        let a0: Vec<Mat<f64>> = orders.iter().map(|&n| system(n, &mut rng)).collect();
        let b0: Vec<Mat<f64>> = orders
            .iter()
            .map(|&n| Mat::from_fn(n, 1, |_, _| rng.next()))
            .collect();
        let nmax = orders.iter().copied().max().unwrap_or(0);
        let req =
            factor::lu_in_place_scratch::<usize, f64>(nmax, nmax, Par::Seq, Default::default()).or(
                solve::solve_in_place_scratch::<usize, f64>(nmax, 1, Par::Seq),
            );
        LuSolve {
            label: label.into(),
            a: a0.clone(),
            b: b0.clone(),
            a0,
            b0,
            buf: MemBuffer::new(req),
            perm: vec![0; nmax],
            perm_inv: vec![0; nmax],
            req,
            nmax,
            status: vec![Ok(()); orders.len()],
            strided: None,
        }
        .with_strided()
    }

    fn with_strided(mut self) -> LuSolve {
        let n = self.nmax;
        if self.a0.iter().any(|a| a.nrows() != n) {
            return self;
        }
        let count = self.a0.len();
        let sa = Mat::from_fn(n, n * count, |i, j| self.a0[j / n][(i, j % n)]);
        let sb = Mat::from_fn(n, count, |i, j| self.b0[j][(i, 0)]);
        self.strided = Some([sa.clone(), sb.clone(), sa, sb]);
        self
    }
}

/// faer's serial LU and solve of one system, as a serial loop calls it.
fn lu_one(
    a: &mut Mat<f64>,
    b: &mut Mat<f64>,
    perm: &mut [usize],
    perm_inv: &mut [usize],
    stack: &mut MemStack,
) {
    let n = a.nrows();
    let (_, p) = factor::lu_in_place(
        a.as_mut(),
        &mut perm[..n],
        &mut perm_inv[..n],
        Par::Seq,
        stack,
        Default::default(),
    );
    solve::solve_in_place_with_conj(
        a.as_ref(),
        a.as_ref(),
        p,
        Conj::No,
        b.as_mut(),
        Par::Seq,
        stack,
    );
}

impl Case for LuSolve {
    fn name(&self) -> String {
        self.label.clone()
    }
    fn problems(&self) -> usize {
        self.a0.len()
    }
    fn reset(&mut self) {
        for (x, y) in self.a.iter_mut().zip(&self.a0) {
            x.copy_from(y);
        }
        for (x, y) in self.b.iter_mut().zip(&self.b0) {
            x.copy_from(y);
        }
    }
    fn serial(&mut self) {
        let stack = MemStack::new(&mut self.buf);
        for (a, b) in self.a.iter_mut().zip(&mut self.b) {
            lu_one(a, b, &mut self.perm, &mut self.perm_inv, stack);
        }
    }
    fn rayon(&mut self, pool: &rayon::ThreadPool) {
        let (req, nmax) = (self.req, self.nmax);
        pool.install(|| {
            self.a
                .par_iter_mut()
                .zip(self.b.par_iter_mut())
                .for_each_init(
                    || (MemBuffer::new(req), vec![0; nmax], vec![0; nmax]),
                    |(buf, p, pi), (a, b)| lu_one(a, b, p, pi, MemStack::new(buf)),
                )
        });
    }
    fn teamalg(&mut self, team: &Team, options: &Options) -> batch::BatchRun {
        let (mut av, mut bv) = (views(&mut self.a), views(&mut self.b));
        batch::lu_solve_with(&mut av, &mut bv, &mut self.status, team, options)
            .expect("one entry per problem")
    }
    fn strided_reset(&mut self) {
        if let Some([a0, b0, a, b]) = self.strided.as_mut() {
            a.copy_from(&*a0);
            b.copy_from(&*b0);
        }
    }
    fn strided(&mut self, team: &Team, options: &Options) -> Option<batch::BatchRun> {
        let n = self.nmax;
        let [_, _, a, b] = self.strided.as_mut()?;
        let av = BatchMut::strided(a.as_mut(), n).expect("whole problems");
        let bv = BatchMut::strided(b.as_mut(), 1).expect("whole problems");
        Some(
            batch::lu_solve_with(av, bv, &mut self.status, team, options)
                .expect("one entry per problem"),
        )
    }
    fn checksum(&self) -> f64 {
        self.b.iter().map(|m| m.sum()).sum()
    }
    fn strided_checksum(&self) -> f64 {
        self.strided.as_ref().map_or(0.0, |[.., b]| b.sum())
    }
}

/// Thin SVDs with vectors.
struct Svds {
    a: Vec<Mat<f64>>,
    s: Vec<Vec<f64>>,
    u: Vec<Mat<f64>>,
    v: Vec<Mat<f64>>,
    d: Mat<f64>,
    buf: MemBuffer,
    req: StackReq,
    status: Vec<Status>,
}

impl Svds {
    fn new(count: usize, n: usize) -> Svds {
        let mut rng = Lcg(11);
        let req = faer::linalg::svd::svd_scratch::<f64>(
            n,
            n,
            ComputeSvdVectors::Thin,
            ComputeSvdVectors::Thin,
            Par::Seq,
            Default::default(),
        );
        Svds {
            a: (0..count)
                .map(|_| Mat::from_fn(n, n, |_, _| rng.next() - 0.5))
                .collect(),
            s: vec![vec![0.0; n]; count],
            u: vec![Mat::zeros(n, n); count],
            v: vec![Mat::zeros(n, n); count],
            d: Mat::zeros(n, 1),
            buf: MemBuffer::new(req),
            req,
            status: vec![Ok(()); count],
        }
    }
}

fn svd_one(
    a: &Mat<f64>,
    d: &mut Mat<f64>,
    s: &mut [f64],
    u: &mut Mat<f64>,
    v: &mut Mat<f64>,
    stack: &mut MemStack,
) {
    faer::linalg::svd::svd(
        a.as_ref(),
        d.as_mut().col_mut(0).as_diagonal_mut(),
        Some(u.as_mut()),
        Some(v.as_mut()),
        Par::Seq,
        stack,
        Default::default(),
    )
    .expect("converges");
    for (j, x) in s.iter_mut().enumerate() {
        *x = d[(j, 0)];
    }
}

impl Case for Svds {
    fn name(&self) -> String {
        format!("svd {} x {}", self.a.len(), self.a[0].nrows())
    }
    fn problems(&self) -> usize {
        self.a.len()
    }
    fn reset(&mut self) {}
    fn serial(&mut self) {
        let stack = MemStack::new(&mut self.buf);
        for (((a, s), u), v) in self
            .a
            .iter()
            .zip(&mut self.s)
            .zip(&mut self.u)
            .zip(&mut self.v)
        {
            svd_one(a, &mut self.d, s, u, v, stack);
        }
    }
    fn rayon(&mut self, pool: &rayon::ThreadPool) {
        let (req, n) = (self.req, self.d.nrows());
        pool.install(|| {
            self.a
                .par_iter()
                .zip(self.s.par_iter_mut())
                .zip(self.u.par_iter_mut())
                .zip(self.v.par_iter_mut())
                .for_each_init(
                    || (MemBuffer::new(req), Mat::<f64>::zeros(n, 1)),
                    |(buf, d), (((a, s), u), v)| svd_one(a, d, s, u, v, MemStack::new(buf)),
                )
        });
    }
    fn teamalg(&mut self, team: &Team, options: &Options) -> batch::BatchRun {
        let av: Vec<_> = self.a.iter().map(|m| m.as_ref()).collect();
        let mut sv: Vec<&mut [f64]> = self.s.iter_mut().map(|x| &mut x[..]).collect();
        let (mut uv, mut vv) = (views(&mut self.u), views(&mut self.v));
        batch::svd_with(
            &av,
            &mut sv,
            Some((&mut uv).into()),
            Some((&mut vv).into()),
            &mut self.status,
            team,
            options,
        )
        .expect("one entry per problem")
    }
    fn checksum(&self) -> f64 {
        self.s.iter().map(|s| s.iter().sum::<f64>()).sum()
    }
}

/// Products `C = A B` of order `n`.
struct Products {
    a: Vec<Mat<f64>>,
    c: Vec<Mat<f64>>,
    status: Vec<Status>,
    /// The same products side by side: `(A, C)`.
    strided: [Mat<f64>; 2],
}

impl Case for Products {
    fn name(&self) -> String {
        format!("gemm {} x {}", self.a.len(), self.a[0].nrows())
    }
    fn problems(&self) -> usize {
        self.a.len()
    }
    fn reset(&mut self) {}
    fn serial(&mut self) {
        for (a, c) in self.a.iter().zip(&mut self.c) {
            faer::linalg::matmul::matmul(
                c.as_mut(),
                Accum::Replace,
                a.as_ref(),
                a.as_ref(),
                1.0,
                Par::Seq,
            );
        }
    }
    fn rayon(&mut self, pool: &rayon::ThreadPool) {
        pool.install(|| {
            self.a
                .par_iter()
                .zip(self.c.par_iter_mut())
                .for_each(|(a, c)| {
                    faer::linalg::matmul::matmul(
                        c.as_mut(),
                        Accum::Replace,
                        a.as_ref(),
                        a.as_ref(),
                        1.0,
                        Par::Seq,
                    )
                })
        });
    }
    fn teamalg(&mut self, team: &Team, options: &Options) -> batch::BatchRun {
        let av: Vec<_> = self.a.iter().map(|m| m.as_ref()).collect();
        let mut cv = views(&mut self.c);
        batch::matmul_with(
            &mut cv,
            Accum::Replace,
            &av,
            &av,
            1.0,
            &mut self.status,
            team,
            options,
        )
        .expect("one entry per problem")
    }
    fn strided_reset(&mut self) {
        let [a, c] = &mut self.strided;
        let warm: f64 = a.sum();
        c.fill(warm * 0.0);
    }
    fn strided(&mut self, team: &Team, options: &Options) -> Option<batch::BatchRun> {
        let n = self.a[0].nrows();
        let [a, c] = &mut self.strided;
        let av = BatchRef::strided(a.as_ref(), n).expect("whole problems");
        let cv = BatchMut::strided(c.as_mut(), n).expect("whole problems");
        Some(
            batch::matmul_with(
                cv,
                Accum::Replace,
                av,
                av,
                1.0,
                &mut self.status,
                team,
                options,
            )
            .expect("one entry per problem"),
        )
    }
    fn checksum(&self) -> f64 {
        self.c.iter().map(|m| m.sum()).sum()
    }
    fn strided_checksum(&self) -> f64 {
        self.strided[1].sum()
    }
}

fn case(name: &str) -> Box<dyn Case> {
    match name {
        "lu32" => Box::new(LuSolve::new("lu+solve 10000 x 32", &[32; 10_000])),
        "lu8" => Box::new(LuSolve::new("lu+solve 100000 x 8", &[8; 100_000])),
        "svd64" => Box::new(Svds::new(1000, 64)),
        "mixed" => {
            let mut rng = Lcg(3);
            let orders: Vec<usize> = (0..2000)
                .map(|_| (8.0 * 32f64.powf(rng.next())).round() as usize)
                .collect();
            Box::new(LuSolve::new("lu+solve 2000 x 8..256", &orders))
        }
        "gemm16" => {
            let mut rng = Lcg(5);
            let a: Vec<Mat<f64>> = (0..10_000)
                .map(|_| Mat::from_fn(16, 16, |_, _| rng.next()))
                .collect();
            let sa = Mat::from_fn(16, 16 * a.len(), |i, j| a[j / 16][(i, j % 16)]);
            Box::new(Products {
                c: vec![Mat::zeros(16, 16); a.len()],
                status: vec![Ok(()); a.len()],
                strided: [sa, Mat::zeros(16, 16 * a.len())],
                a,
            })
        }
        other => panic!("unknown case {other:?}: lu32, lu8, svd64, mixed, gemm16"),
    }
}

fn main() {
    let args = Args::parse();
    let width = args
        .width
        .unwrap_or_else(|| teamalg::available_cpus().max(2));
    let team = Pool::builder()
        .threads(width)
        .build()
        .and_then(|p| p.into_team(width).map_err(|e| e.error))
        .expect("a held team");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(width)
        .build()
        .expect("a rayon pool");
    let pause = Duration::from_millis(args.pause_ms);
    let mut csv = args.csv.as_ref().map(|path| {
        Csv::append(path, ARM_COLUMNS).unwrap_or_else(|e| panic!("--csv {}: {e}", path.display()))
    });
    let mut spec = LoadSpec::default();
    if let Some(l) = &args.load {
        spec.parse_load(l);
    }
    if let Some(p) = &args.load_phases {
        spec.parse_phases(p);
    }
    // The load runs until `main` returns.
    let _load = spec.start();
    if spec.processes > 0 {
        println!("load: {}", spec.describe());
    }
    println!(
        "batches at width {width}, {} CPUs, {} rounds{}; ratio = arm / serial loop in the same round: median, p90, max; time: the arm's median",
        teamalg::available_cpus(),
        args.rounds,
        if args.pause_ms > 0 {
            format!(", a pause of {} ms before each call", args.pause_ms)
        } else {
            ", back to back".into()
        }
    );
    println!(
        "\n{:<26} {:>12} {:>26} {:>26} {:>26} {:>26} {:>26}  shape",
        "case",
        "serial (ms)",
        "rayon par_iter",
        "teamalg team",
        "team, unchecked",
        "teamalg per call",
        "team, strided"
    );
    for name in &args.cases {
        let mut c = case(name);
        let mut times: [Vec<f64>; 6] = Default::default();
        let mut shape = None;
        let mut sums = [0.0f64; 6];
        let (checked, unchecked) = (Options::new(), Options::new().check_finite(false));
        for round in 0..=args.rounds {
            // The arm built per call last: its pool's workers, given back to the reserve, spin
            // a while beside whatever runs next.
            for arm in [0, 1, 2, 3, 5, 4] {
                if arm == 5 {
                    c.strided_reset();
                } else {
                    c.reset();
                }
                if !pause.is_zero() {
                    std::thread::sleep(pause);
                }
                let t = Instant::now();
                match arm {
                    0 => c.serial(),
                    1 => c.rayon(&pool),
                    2 => shape = Some(c.teamalg(&team, &checked)),
                    3 => {
                        c.teamalg(&team, &unchecked);
                    }
                    5 => {
                        if c.strided(&team, &checked).is_none() {
                            continue;
                        }
                    }
                    _ => {
                        let per_call = Pool::builder()
                            .threads(width)
                            .build()
                            .and_then(|p| p.into_team(width).map_err(|e| e.error))
                            .expect("a team per call");
                        c.teamalg(&per_call, &checked);
                    }
                }
                let dt = t.elapsed().as_secs_f64() * 1e3;
                sums[arm] = if arm == 5 {
                    c.strided_checksum()
                } else {
                    c.checksum()
                };
                // The first round warms every arm and is not counted.
                if round > 0 {
                    times[arm].push(dt);
                }
            }
        }
        let close = |x: f64| (x - sums[0]).abs() <= 1e-6 * sums[0].abs().max(1.0);
        assert!(
            (0..sums.len()).all(|arm| times[arm].is_empty() || close(sums[arm])),
            "{name}: the arms disagree: {sums:?}"
        );
        let cell = |arm: usize| {
            if times[arm].is_empty() {
                return "-".to_string();
            }
            let mut r: Vec<f64> = times[arm]
                .iter()
                .zip(&times[0])
                .map(|(t, s)| t / s)
                .collect();
            r.sort_by(f64::total_cmp);
            let mut t = times[arm].clone();
            t.sort_by(f64::total_cmp);
            format!(
                "{:.2} {:.2} {:.2} ({:.1})",
                percentile(&r, 0.5),
                percentile(&r, 0.9),
                r.last().copied().unwrap_or(0.0),
                percentile(&t, 0.5)
            )
        };
        if let Some(csv) = csv.as_mut() {
            csv_rows(csv, name, c.problems(), width, &times);
        }
        let mut serial = times[0].clone();
        serial.sort_by(f64::total_cmp);
        let shape = shape.map_or(String::new(), |s| {
            format!("{} on the team, spread {} wide", s.on_team, s.spread_width)
        });
        println!(
            "{:<26} {:>12.1} {:>26} {:>26} {:>26} {:>26} {:>26}  {shape}",
            c.name(),
            percentile(&serial, 0.5),
            cell(1),
            cell(2),
            cell(3),
            cell(4),
            cell(5)
        );
    }
}

/// Appends one case's arms (those that ran) to the `--csv` file: times in us, the ratio the
/// median over rounds of the arm's time over the serial loop's in the same round, as the
/// table's.
fn csv_rows(csv: &mut Csv, case: &str, problems: usize, width: usize, times: &[Vec<f64>; 6]) {
    let us = |ms: f64| format!("{:.3}", ms * 1e3);
    for (arm, t) in ARMS.iter().zip(times).filter(|(_, t)| !t.is_empty()) {
        let mut r: Vec<f64> = t.iter().zip(&times[0]).map(|(a, s)| a / s).collect();
        r.sort_by(f64::total_cmp);
        let mut sorted = t.clone();
        sorted.sort_by(f64::total_cmp);
        csv.row(&[
            &format!("batch {case}"),
            "f64",
            &problems.to_string(),
            &width.to_string(),
            arm,
            &us(percentile(&sorted, 0.5)),
            &us(percentile(&sorted, 0.9)),
            &us(sorted.last().copied().unwrap_or(0.0)),
            &format!("{:.4}", percentile(&r, 0.5)),
        ]);
    }
}
