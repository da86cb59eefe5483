//! Host calibration: measure what a section costs on this machine, per kind of token and
//! width, the serial rate of each kernel family, and what splitting each family's regions
//! costs beyond the dispatch; keep them in a host profile that pools load
//! (`PoolBuilder::profile`, `TEAMALG_PROFILE`). The design record is `docs/gates.md`.
//!
//! - **Dispatch rows.** Sections whose participants each run a 10 us busy share, back to back,
//!   in rounds of [`ROUND`]; a sample is the section's time minus the share. A sample is
//!   rejected when two shares ran on one thread (a participant came too late and the caller
//!   ran its share: that is a serial section, not a dispatch) or a thread was descheduled (a
//!   gap in a share's clock, or an involuntary switch of the caller). Rounds repeat until the
//!   medians of the last three agree within [`STABLE`]; the cost is the median of their kept
//!   samples. A row with too few kept samples is not recorded: the class row stays.
//! - **Rates.** Each kernel family's serial path (`f64`, `c64`, `f32`, `c32`) at n = 32, 64,
//!   128 and 256 ([`RATE_SIZES`]; small calls run fewer units per nanosecond), the median of
//!   five runs, repeated until two medians agree within 5 %: a [`RateCurve`].
//! - **Split costs.** Each gated family's kernel on a held team of two, every section forced
//!   parallel, against the same call forced serial, calls interleaved, at sizes around where
//!   the two cross; the least-squares fit of
//!   `parallel - sections * D(2) = sections * overhead + serial / (2 * efficiency)` over the
//!   sizes ([`SplitCost`]).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::traits::ComplexField;
use faer::{c32, c64, Accum, Mat, Par};
use teamalg::gates::trace;
use teamalg::gates::{
    DispatchCosts, DispatchKind, Family, Fingerprint, HostProfile, ParThreshold, Rate, RateCurve,
    Scalar, SeenLoad, SplitCost, Splits, WidthCosts, MAX_ANCHORS,
};
use teamalg::kernels::cholesky::{cholesky_in_place, cholesky_in_place_scratch, CholeskyParams};
use teamalg::kernels::gemm::{matmul, GemmParams};
use teamalg::kernels::lu::{lu_in_place, lu_in_place_scratch, LuParams};
use teamalg::kernels::par::{Executor, Seq};
use teamalg::kernels::triangular::{solve_in_place, Diag, SolveParams, SolveSide, Triangle};

use teamalg::{Exec, Pool};

pub use crate::anchor::Anchor;
use crate::seen_load::LoadWatch;

/// The share each participant runs per section.
pub const SHARE: Duration = Duration::from_micros(10);
/// Sections per round.
pub const ROUND: usize = 100;
/// How close to the row's cost more than half of the rounds' medians must be (larger over
/// smaller).
pub const STABLE: f64 = 1.15;
/// Rounds of a dispatch row at least, spread over time ([`DISPATCH_SPAN`]).
pub const MIN_ROUNDS: usize = 15;
const MAX_ROUNDS: usize = 21;
/// The time all dispatch rows of a calibration are spread over. A small virtual machine hands
/// work across its CPUs at one of two speeds for a few hundred milliseconds at a time (0.15
/// against 0.6 us per team section on the 2-vCPU Xeon guest, `docs/gates.md`): rounds taken
/// back to back measure whichever state the row met, rounds spread over a second measure the
/// host.
pub const DISPATCH_SPAN: Duration = Duration::from_secs(3);
/// A gap this long in a share's clock means its thread was descheduled.
const GAP: Duration = Duration::from_micros(4);
/// The fewest kept samples a row's cost may rest on.
const MIN_KEPT: usize = 60;

/// The widths measured on a machine with `cpus` CPUs: 2, 3, 4, 6, 8, 12, ... up to `cpus`
/// (always included), at most [`MAX_ANCHORS`].
pub fn anchor_widths(cpus: usize) -> Vec<usize> {
    let mut w = vec![];
    let mut k = 2;
    while k < cpus {
        w.push(k);
        // 2, 3, 4, 6, 8, 12, 16, 24, ...: steps of a half then a third of a power of two.
        k = if k.is_power_of_two() {
            k + k / 2
        } else {
            k / 3 * 4
        };
    }
    if cpus >= 2 {
        w.push(cpus);
    }
    while w.len() > MAX_ANCHORS {
        w.remove(w.len() / 2);
    }
    w
}

/// What a calibration step measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Sections of a kind of token at a width.
    Dispatch(DispatchKind, usize),
    /// The serial rate of a kernel family.
    Rate(Family),
    /// The split costs of a kernel family.
    Split(Family),
}

/// One step of a calibration, for a progress display.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    /// 1-based step number.
    pub done: usize,
    /// Steps in all.
    pub total: usize,
    /// What is measured.
    pub what: Measure,
}

/// The families whose split costs calibration fits: those whose regions a kernel gates.
pub const SPLIT_FAMILIES: [Family; 4] = [
    Family::Gemm,
    Family::TriangularSolve,
    Family::LuPartial,
    Family::Cholesky,
];

/// A fitted split cost and how well it fits.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitFit {
    /// The family.
    pub family: Family,
    /// Whether the scalars were complex (`c64`) or real (`f64`).
    pub complex: bool,
    /// The fit.
    pub cost: SplitCost,
    /// The largest relative error of the fit over the sizes timed.
    pub worst_error: f64,
    /// The sizes timed.
    pub points: Vec<Timed>,
}

/// One size timed for a split fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timed {
    /// The size (`n x n`).
    pub n: usize,
    /// Sections of the parallel call.
    pub sections: usize,
    /// Serial time, ns (the least median of two blocks).
    pub serial_ns: f64,
    /// Two-wide time, every section parallel, ns (likewise).
    pub parallel_ns: f64,
    /// What the fitted model says of the two-wide time, ns.
    pub model_ns: f64,
}

/// What a calibration measured, with the profile it makes.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// The load it saw besides itself (also in the profile): see
    /// [`busy_reasons`](crate::seen_load::busy_reasons).
    pub load: SeenLoad,
    /// The profile to save.
    pub profile: HostProfile,
    /// Each dispatch anchor, with its spread and rejections.
    pub anchors: Vec<Anchor>,
    /// Each fitted split.
    pub fits: Vec<SplitFit>,
    /// How long the calibration took.
    pub took: Duration,
}

/// Median of `v` (sorted in place); 0 when empty.
fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

thread_local! {
    static THREAD_MARK: u8 = const { 0 };
}

/// A number that tells this thread from the others.
fn thread_mark() -> usize {
    THREAD_MARK.with(|m| m as *const u8 as usize)
}

/// Involuntary context switches of the calling thread so far.
fn involuntary_switches() -> i64 {
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable `rusage`; RUSAGE_THREAD names the calling thread.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    if rc == 0 {
        u.ru_nivcsw
    } else {
        0
    }
}

/// What one share saw: the thread that ran it and whether its clock jumped.
struct ShareLog {
    thread: AtomicUsize,
    jumped: AtomicBool,
}

impl ShareLog {
    fn new() -> Self {
        ShareLog {
            thread: AtomicUsize::new(0),
            jumped: AtomicBool::new(false),
        }
    }
}

/// Busy for [`SHARE`], noting the thread and any gap of [`GAP`] or more in its clock.
fn share(log: &ShareLog) {
    let start = Instant::now();
    let mut last = start;
    let mut jumped = false;
    loop {
        let now = Instant::now();
        jumped |= now - last >= GAP;
        last = now;
        if now - start >= SHARE {
            break;
        }
        std::hint::spin_loop();
    }
    log.thread.store(thread_mark(), Relaxed);
    log.jumped.store(jumped, Relaxed);
}

/// Why a sample was kept or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleVerdict {
    /// Every share on its own thread, nobody descheduled.
    Kept,
    /// Two shares ran on one thread: a serial section.
    Serial,
    /// A thread was descheduled.
    Descheduled,
}

/// Judges a sample from the threads that ran its shares, whether any share's clock jumped,
/// and whether the caller was switched out.
pub fn judge(threads: &[usize], jumped: bool, caller_switched: bool) -> SampleVerdict {
    for (i, t) in threads.iter().enumerate() {
        if threads[..i].contains(t) {
            return SampleVerdict::Serial;
        }
    }
    if jumped || caller_switched {
        SampleVerdict::Descheduled
    } else {
        SampleVerdict::Kept
    }
}

/// The pause between two rounds of a row when `rows` rows share [`DISPATCH_SPAN`]: each row
/// spans its share of it in [`MIN_ROUNDS`] rounds (5 to 120 ms apart).
pub fn round_gap(rows: usize) -> Duration {
    let per_row = DISPATCH_SPAN / rows.max(1) as u32;
    (per_row / MIN_ROUNDS as u32).clamp(Duration::from_millis(5), Duration::from_millis(120))
}

/// The cost of a row from its rounds: the median of the medians of the rounds that kept at
/// least a quarter of their samples, and whether more than half of those medians are within
/// [`STABLE`] of it (the host's usual state; a minority of rounds in its other state does not
/// make the row unstable). `None` when no round kept enough.
pub fn row_cost(rounds: &[Vec<f64>]) -> Option<(f64, bool)> {
    let mut meds: Vec<f64> = rounds
        .iter()
        .filter(|r| r.len() >= ROUND / 4)
        .map(|r| median(&mut r.clone()))
        .collect();
    if meds.is_empty() {
        return None;
    }
    let n = meds.len();
    let m = median(&mut meds);
    let agree = meds
        .iter()
        .filter(|&&x| x > 0.0 && m > 0.0 && x.max(m) / x.min(m) <= STABLE)
        .count();
    Some((m, n >= 3 && agree * 2 > n))
}

/// Runs rounds of `section` (which runs one share per log, on as many participants), `gap`
/// apart, at least [`MIN_ROUNDS`] and more while the rounds disagree, and returns the anchor.
fn measure_row(
    kind: DispatchKind,
    width: usize,
    logs: &[ShareLog],
    gap: Duration,
    mut section: impl FnMut(),
) -> Anchor {
    let mut rounds: Vec<Vec<f64>> = Vec::new();
    let (mut samples, mut serial, mut descheduled) = (0, 0, 0);
    let mut stable = false;
    let mut threads = vec![0usize; logs.len()];
    while rounds.len() < MAX_ROUNDS {
        if !rounds.is_empty() {
            std::thread::sleep(gap);
        }
        // Warm-up: the members slept through the gap.
        for _ in 0..ROUND / 4 {
            section();
        }
        let mut kept = Vec::with_capacity(ROUND);
        for _ in 0..ROUND {
            for l in logs {
                l.thread.store(0, Relaxed);
            }
            let before = involuntary_switches();
            let t = Instant::now();
            section();
            let took = t.elapsed();
            let switched = involuntary_switches() != before;
            for (slot, l) in threads.iter_mut().zip(logs) {
                *slot = l.thread.load(Relaxed);
            }
            let jumped = logs.iter().any(|l| l.jumped.load(Relaxed));
            samples += 1;
            match judge(&threads, jumped, switched) {
                SampleVerdict::Kept => kept.push(took.as_nanos() as f64 - SHARE.as_nanos() as f64),
                SampleVerdict::Serial => serial += 1,
                SampleVerdict::Descheduled => descheduled += 1,
            }
        }
        rounds.push(kept);
        if rounds.len() >= MIN_ROUNDS {
            stable = row_cost(&rounds).is_some_and(|(_, s)| s);
            if stable {
                break;
            }
        }
    }
    let mut all: Vec<f64> = rounds.concat();
    all.sort_by(f64::total_cmp);
    let cost = row_cost(&rounds)
        .filter(|_| all.len() >= MIN_KEPT)
        .map(|(m, _)| m.clamp(1.0, u32::MAX as f64) as u32);
    Anchor {
        kind,
        width,
        cost,
        spread: if all.is_empty() {
            (0.0, 0.0)
        } else {
            (percentile(&all, 0.1), percentile(&all, 0.9))
        },
        samples,
        serial,
        descheduled,
        rounds: rounds.len(),
        stable,
    }
}

/// Measures one anchor of a dispatch row on a pool of `width` threads, its rounds `gap` apart
/// ([`round_gap`]).
pub fn measure_anchor(kind: DispatchKind, width: usize, gap: Duration) -> Anchor {
    let pool = Pool::builder()
        .threads(width)
        .build()
        .expect("a pool for calibration");
    let logs: Vec<ShareLog> = (0..width).map(|_| ShareLog::new()).collect();
    let logs = &logs[..];
    match kind {
        DispatchKind::Team => {
            let team = pool.into_team(width).expect("a team for calibration");
            let token = team.exec(width);
            token
                .team(|t| {
                    measure_row(kind, width, logs, gap, || {
                        t.run(|p| share(&logs[p.index()]))
                    })
                })
                .expect("a team token forms its team")
        }
        DispatchKind::InPool => Exec::new(&pool, width).expect("budget").install(|mut e| {
            measure_row(kind, width, logs, gap, || {
                e.reborrow().for_ranges(width, 1, |r| share(&logs[r.start]))
            })
        }),
        DispatchKind::Outside => measure_row(kind, width, logs, gap, || {
            Exec::new(&pool, width)
                .expect("budget")
                .for_ranges(width, 1, |r| share(&logs[r.start]))
        }),
    }
}

// ---- rates ----

/// The sizes (n of a square call) at which rates are timed.
pub const RATE_SIZES: [usize; 4] = [32, 64, 128, 256];

/// Median of five timings by `time` (ns), after one unmeasured run; repeated until two
/// medians agree within 5 % (at most four times).
fn stable_ns(mut time: impl FnMut() -> f64) -> f64 {
    time();
    let mut once = || {
        let mut v: Vec<f64> = (0..5).map(|_| time()).collect();
        median(&mut v)
    };
    let mut prev = once();
    for _ in 0..3 {
        let next = once();
        let agree = (next / prev - 1.0).abs() <= 0.05;
        prev = prev.min(next);
        if agree {
            break;
        }
    }
    prev
}

/// A scalar type calibration can make test matrices of.
pub trait Sample: ComplexField + Scalar + Send + Sync + Copy {
    /// A value from two reals.
    fn make(re: f64, im: f64) -> Self;
}

impl Sample for f64 {
    fn make(re: f64, _: f64) -> Self {
        re
    }
}
impl Sample for f32 {
    fn make(re: f64, _: f64) -> Self {
        re as f32
    }
}
impl Sample for c64 {
    fn make(re: f64, im: f64) -> Self {
        c64::new(re, im)
    }
}
impl Sample for c32 {
    fn make(re: f64, im: f64) -> Self {
        c32::new(re as f32, im as f32)
    }
}

/// An `n x n` matrix with pseudo-random entries in (-1, 1) (full rank: QR stops at the rank)
/// and `diag` added on the diagonal.
fn matrix<T: Sample>(n: usize, seed: f64, diag: f64) -> Mat<T> {
    let mut state = seed.to_bits() | 1;
    let mut next = move || {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let x = state.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (x >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    };
    let mut m = Mat::zeros(n, n);
    for j in 0..n {
        for i in 0..n {
            let (re, im) = (next(), next());
            m[(i, j)] = T::make(re + if i == j { diag } else { 0.0 }, im);
        }
    }
    m
}

/// A Hermitian positive definite `n x n` matrix (lower triangle read).
fn spd<T: Sample>(n: usize) -> Mat<T> {
    let a = matrix::<T>(n, 0.37, 0.0);
    Mat::from_fn(n, n, |i, j| {
        let (r, c) = (i.max(j), i.min(j));
        let v = a[(r, c)];
        if i == j {
            T::make(2.0 * n as f64, 0.0)
        } else if i > j {
            v
        } else {
            faer::traits::math_utils::conj(&v)
        }
    })
}

/// One call of `family`'s kernel on `n x n` data, on `exec`, with the call threshold `t`.
/// Returns the work in the family's unit.
struct Workload<T: Sample> {
    family: Family,
    n: usize,
    a: Mat<T>,
    b: Mat<T>,
    c: Mat<T>,
    swaps: Vec<usize>,
    /// QR's Householder factors (allocated once, outside the timed call).
    householder: Mat<T>,
    buf: MemBuffer,
}

impl<T: Sample> Workload<T> {
    fn new(family: Family, n: usize) -> Self {
        let a = match family {
            Family::Cholesky => spd::<T>(n),
            Family::TriangularSolve | Family::LuPartial => matrix::<T>(n, 0.31, n as f64),
            _ => matrix::<T>(n, 0.31, 0.0),
        };
        let stack = match family {
            Family::LuPartial => lu_in_place_scratch::<T>(n, n),
            Family::Cholesky => cholesky_in_place_scratch::<T>(n),
            Family::Qr => {
                let bs = faer::linalg::qr::no_pivoting::factor::recommended_block_size::<T>(n, n);
                faer::linalg::qr::no_pivoting::factor::qr_in_place_scratch::<T>(
                    n,
                    n,
                    bs,
                    Par::Seq,
                    Default::default(),
                )
            }
            _ => faer::dyn_stack::StackReq::EMPTY,
        };
        Workload {
            family,
            n,
            b: matrix::<T>(n, 0.57, 0.0),
            c: Mat::zeros(n, n),
            a,
            swaps: vec![0; n],
            householder: Mat::zeros(
                faer::linalg::qr::no_pivoting::factor::recommended_block_size::<T>(n, n),
                n,
            ),
            buf: MemBuffer::new(stack),
        }
    }

    /// Multiply-adds of one call.
    fn units(&self) -> f64 {
        let n = self.n as f64;
        match self.family {
            Family::Gemm => n * n * n,
            Family::TriangularSolve => n * n * n / 2.0,
            Family::LuPartial => n * n * n / 3.0,
            Family::Cholesky => n * n * n / 6.0,
            Family::Qr => n * n * n * 2.0 / 3.0,
            other => unreachable!("no workload for {}", other.name()),
        }
    }

    /// Restores the input a call overwrites (not timed: the copy is no part of the kernel).
    fn prepare(&mut self) {
        match self.family {
            Family::Gemm => {}
            Family::TriangularSolve => self.c.copy_from(&self.b),
            _ => self.c.copy_from(&self.a),
        }
    }

    /// One call, after [`Workload::prepare`], in ns.
    fn time(&mut self, exec: &(impl Executor + ?Sized), t: Option<ParThreshold>) -> f64 {
        self.prepare();
        let start = Instant::now();
        self.call(exec, t);
        start.elapsed().as_nanos() as f64
    }

    /// One call on the prepared input.
    fn call(&mut self, exec: &(impl Executor + ?Sized), t: Option<ParThreshold>) {
        match self.family {
            Family::Gemm => matmul(
                self.c.as_mut(),
                Accum::Replace,
                self.a.as_ref(),
                self.b.as_ref(),
                T::make(1.0, 0.0),
                exec,
                GemmParams { threshold: t },
            ),
            Family::TriangularSolve => {
                solve_in_place(
                    self.a.as_ref(),
                    self.c.as_mut(),
                    SolveSide::Left,
                    Triangle::Lower,
                    Diag::NonUnit,
                    exec,
                    SolveParams { threshold: t },
                );
            }
            Family::LuPartial => {
                let params = LuParams {
                    threshold: t,
                    ..LuParams::default()
                };
                let stack = MemStack::new(&mut self.buf);
                lu_in_place(self.c.as_mut(), &mut self.swaps, exec, params, stack);
            }
            Family::Cholesky => {
                let params = CholeskyParams {
                    threshold: t,
                    ..CholeskyParams::default()
                };
                let stack = MemStack::new(&mut self.buf);
                let _ = cholesky_in_place(self.c.as_mut(), exec, params, stack);
            }
            Family::Qr => {
                use faer::linalg::qr::no_pivoting::factor::qr_in_place;
                let stack = MemStack::new(&mut self.buf);
                qr_in_place(
                    self.c.as_mut(),
                    self.householder.as_mut(),
                    Par::Seq,
                    stack,
                    Default::default(),
                );
            }
            other => unreachable!("no workload for {}", other.name()),
        }
        std::hint::black_box(&self.c);
    }
}

/// ns per unit of `family`'s serial path at size `n` for scalar `T`, one thread, and the
/// units of that call.
fn rate_of<T: Sample>(family: Family, n: usize) -> (f64, f64) {
    let mut w = Workload::<T>::new(family, n);
    let units = w.units();
    (stable_ns(|| w.time(&Seq, None)) / units, units)
}

/// The serial rate curve of `family` for `f64`, `c64`, `f32` and `c32` on this machine, one
/// thread, anchored at [`RATE_SIZES`].
pub fn measure_rate(family: Family) -> RateCurve {
    let anchors: Vec<(f64, Rate)> = RATE_SIZES
        .iter()
        .map(|&n| {
            let (real, units) = rate_of::<f64>(family, n);
            let rate = Rate {
                real,
                cplx: rate_of::<c64>(family, n).0,
                real_single: rate_of::<f32>(family, n).0,
                cplx_single: rate_of::<c32>(family, n).0,
            };
            (units, rate)
        })
        .collect();
    RateCurve::new(&anchors).expect("units grow with n and rates are positive")
}

// ---- split costs ----

/// The sizes at which `family`'s split is fitted: around where its decision turns.
fn split_sizes(family: Family) -> &'static [usize] {
    match family {
        Family::Gemm | Family::TriangularSolve => &[32, 48, 64, 96, 128, 192],
        _ => &[64, 96, 128, 192, 256, 384],
    }
}

/// One timed size: serial and forced-parallel medians and the parallel run's regions.
struct Point {
    n: usize,
    serial: f64,
    parallel: f64,
    /// Sections dispatched.
    sections: f64,
    /// Their dispatch costs, summed, ns.
    dispatch: f64,
    /// The serial time split two ways, ns.
    work: f64,
}

/// Times `family` at each size on `team` (two wide), serial and forced parallel, calls
/// interleaved, and fits its split cost.
fn fit_split<T: Sample>(family: Family, team: &teamalg::Team) -> SplitFit {
    let mut points = Vec::new();
    for &n in split_sizes(family) {
        let mut w = Workload::<T>::new(family, n);
        let forced = Some(ParThreshold::Fixed(0));
        let never = Some(ParThreshold::Never);
        w.time(team, forced);
        w.time(team, never);
        // Each arm in a block of back-to-back calls, as a caller repeating one call runs it:
        // interleaved, every serial call would first pull the matrix back from the member's
        // cache, which a serial caller does not pay (and the rates were not timed with).
        let reps = if n <= 128 { 15 } else { 7 };
        let mut block = |t: Option<ParThreshold>| {
            let mut v: Vec<f64> = (0..reps).map(|_| w.time(team, t)).collect();
            median(&mut v)
        };
        let mut s = Vec::new();
        let mut p = Vec::new();
        for _ in 0..2 {
            s.push(block(never));
            p.push(block(forced));
        }
        // The call's own decision comes first: how many sections it makes, at what cost.
        w.prepare();
        let ((), seen) = trace::collect(|| w.call(team, forced));
        let Some(call) = seen.first().filter(|d| d.parallel()) else {
            continue;
        };
        let serial = s.iter().copied().fold(f64::MAX, f64::min);
        points.push(Point {
            n,
            serial,
            parallel: p.iter().copied().fold(f64::MAX, f64::min),
            sections: call.sections as f64,
            dispatch: call.sections as f64 * call.dispatch_cost.as_nanos() as f64,
            work: serial / 2.0,
        });
    }
    let cost = fit(&points);
    let timed = points
        .iter()
        .map(|q| Timed {
            n: q.n,
            sections: q.sections as usize,
            serial_ns: q.serial,
            parallel_ns: q.parallel,
            model_ns: q.dispatch + q.sections * cost.overhead_ns + q.work / cost.efficiency,
        })
        .collect();
    let worst_error = points
        .iter()
        .map(|q| {
            let model = q.dispatch + q.sections * cost.overhead_ns + q.work / cost.efficiency;
            (model / q.parallel - 1.0).abs()
        })
        .fold(0.0, f64::max);
    SplitFit {
        family,
        complex: matches!(T::KIND, teamalg::gates::ScalarKind::C64),
        cost,
        worst_error,
        points: timed,
    }
}

/// Least squares of `parallel - dispatch = sections * c + work * a` (each point weighted by
/// its serial time, so small sizes count as much as large ones), `c >= 0`, efficiency `1 / a`
/// in `[0.05, 1]`.
fn fit(points: &[Point]) -> SplitCost {
    let rows: Vec<(f64, f64, f64)> = points
        .iter()
        .filter(|q| q.sections > 0.0 && q.serial > 0.0)
        .map(|q| {
            let w = 1.0 / q.serial;
            (q.sections * w, q.work * w, (q.parallel - q.dispatch) * w)
        })
        .collect();
    if rows.is_empty() {
        return SplitCost::FREE;
    }
    let (mut sxx, mut sxy, mut syy, mut sxz, mut syz) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(x, y, z) in &rows {
        sxx += x * x;
        sxy += x * y;
        syy += y * y;
        sxz += x * z;
        syz += y * z;
    }
    let det = sxx * syy - sxy * sxy;
    let (mut c, mut a) = if det.abs() > 1e-12 * sxx * syy {
        ((sxz * syy - syz * sxy) / det, (sxx * syz - sxy * sxz) / det)
    } else {
        (0.0, syz / syy)
    };
    if c < 0.0 {
        c = 0.0;
        a = syz / syy;
    }
    let a = a.max(1.0);
    if a > 20.0 {
        return SplitCost {
            overhead_ns: c,
            efficiency: 0.05,
        };
    }
    SplitCost {
        overhead_ns: c,
        efficiency: 1.0 / a,
    }
}

// ---- the whole calibration ----

/// Measures this machine's dispatch costs at [`anchor_widths`] of its CPUs, the serial rates
/// of the kernels' families ([`Family::KERNELS`]) and the split costs of
/// [`SPLIT_FAMILIES`], reporting each step to `progress`. A few seconds on an idle machine.
pub fn calibrate(mut progress: impl FnMut(Step)) -> Calibration {
    let start = Instant::now();
    let watch = LoadWatch::start();
    let cpus = teamalg::available_cpus();
    let widths = anchor_widths(cpus);
    let splits_on = cpus >= 2;
    let total = widths.len() * DispatchKind::ALL.len()
        + Family::KERNELS.len()
        + if splits_on { SPLIT_FAMILIES.len() } else { 0 };
    let mut done = 0;
    let mut step = |what| {
        done += 1;
        progress(Step { done, total, what });
    };
    let defaults = DispatchCosts::host_default();
    let gap = round_gap(widths.len() * DispatchKind::ALL.len());
    let mut anchors = Vec::new();
    let mut costs = defaults;
    for kind in DispatchKind::ALL {
        let mut row = Vec::new();
        for &width in &widths {
            step(Measure::Dispatch(kind, width));
            let a = measure_anchor(kind, width, gap);
            if let Some(ns) = a.cost {
                row.push((width as u16, ns));
            }
            anchors.push(a);
        }
        // A row with no kept anchor (one CPU, or a host too loaded to measure) keeps the
        // class row rather than record a cost this host does not have.
        if let Ok(r) = WidthCosts::new(&row) {
            costs = costs.with(kind, r);
        }
    }
    let mut rates = Vec::new();
    for family in Family::KERNELS {
        step(Measure::Rate(family));
        rates.push((family, measure_rate(family)));
    }
    let mut profile = HostProfile {
        fingerprint: Fingerprint::current(),
        costs,
        rates,
        splits: Vec::new(),
        load: None,
    };
    let mut fits = Vec::new();
    if splits_on {
        // The team the kernels use, with the costs and rates just measured.
        let team = Pool::builder()
            .threads(2)
            .host_profile(profile.clone())
            .build()
            .and_then(|p| p.into_team(2).map_err(|e| e.error))
            .expect("a team of two for calibration");
        for family in SPLIT_FAMILIES {
            step(Measure::Split(family));
            let real = fit_split::<f64>(family, &team);
            let cplx = fit_split::<c64>(family, &team);
            profile.splits.push((
                family,
                Splits {
                    real: real.cost,
                    cplx: cplx.cost,
                },
            ));
            fits.push(real);
            fits.push(cplx);
        }
    }
    let load = watch.finish(&anchors);
    profile.load = Some(load);
    Calibration {
        load,
        profile,
        anchors,
        fits,
        took: start.elapsed(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(ns: f64) -> Vec<f64> {
        (0..ROUND).map(|i| ns + (i % 7) as f64).collect()
    }

    #[test]
    fn a_row_is_the_state_most_rounds_met() {
        // Two rounds of nine in the fast state: the row is the slow state's, and stable.
        let mut rounds: Vec<Vec<f64>> = (0..7).map(|_| round(600.0)).collect();
        rounds.insert(2, round(150.0));
        rounds.insert(6, round(155.0));
        let (cost, stable) = row_cost(&rounds).unwrap();
        assert!((600.0..610.0).contains(&cost), "{cost}");
        assert!(stable);
        // Half and half: no state to record, and the row says so.
        let rounds: Vec<Vec<f64>> = (0..10)
            .map(|i| round(if i % 2 == 0 { 150.0 } else { 600.0 }))
            .collect();
        assert!(!row_cost(&rounds).unwrap().1);
        // Rounds that kept too few samples do not count.
        assert_eq!(row_cost(&[vec![1.0; ROUND / 4 - 1]]), None);
    }

    #[test]
    fn the_rounds_spread_over_the_span() {
        assert_eq!(round_gap(3), DISPATCH_SPAN / 3 / MIN_ROUNDS as u32);
        assert_eq!(round_gap(1), Duration::from_millis(120));
        assert_eq!(round_gap(1000), Duration::from_millis(5));
    }

    #[test]
    fn a_sample_with_two_shares_on_one_thread_is_serial() {
        assert_eq!(judge(&[1, 2], false, false), SampleVerdict::Kept);
        assert_eq!(judge(&[1, 1], false, false), SampleVerdict::Serial);
        assert_eq!(judge(&[3, 1, 3], true, false), SampleVerdict::Serial);
        assert_eq!(judge(&[1, 2], true, false), SampleVerdict::Descheduled);
        assert_eq!(judge(&[1, 2], false, true), SampleVerdict::Descheduled);
    }

    #[test]
    fn the_fit_recovers_a_known_split() {
        // parallel = dispatch + sections * 3000 + work / 0.8
        let points: Vec<Point> = [(1.0, 20_000.0), (2.0, 50_000.0), (4.0, 300_000.0)]
            .iter()
            .map(|&(s, work)| Point {
                n: 0,
                serial: 2.0 * work,
                parallel: 500.0 * s + s * 3000.0 + work / 0.8,
                sections: s,
                dispatch: 500.0 * s,
                work,
            })
            .collect();
        let f = fit(&points);
        assert!((f.overhead_ns - 3000.0).abs() < 1.0, "{f:?}");
        assert!((f.efficiency - 0.8).abs() < 1e-6, "{f:?}");
    }
}
