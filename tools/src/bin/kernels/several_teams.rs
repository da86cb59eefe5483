//! `--several-teams`: does a process oversubscribe itself when several of its threads each
//! hold a team?
//!
//! Why it exists: a held team of width W keeps W participants, and by default W is every CPU
//! the process may use. A program that runs T threads of its own (a server's request threads,
//! a pipeline's stages), each holding its own team of that width, asks for T x W participants
//! on W CPUs. The table and the load matrix time one caller only, and a busy process beside
//! it is another process; this mode times the case where the crowd is the process itself.
//! It measures whether T threads that each call LU on their own held team finish their
//! work no later than the same T threads calling LU serially (the CPUs are shared out either
//! way): the goal is a ratio teams / serial of at most [`GOAL`].
//!
//! How: per thread count T and size n, T threads are started once; each builds its own held
//! team of width W and keeps an LU input. A round is one arm on all T threads: each thread
//! restores its K inputs from a kept original (LU works in place; outside the timed part),
//! waits at a barrier, and then makes K LU calls (f64, the kernel in scratch it holds) back
//! to back. The round's time runs from the first thread leaving the barrier to the last
//! thread's end. The arms: `teams` (each thread's calls on its held team) and `serial tokens`
//! (the same threads, the same calls, on the serial executor `Seq`, the team held but
//! unused). Rounds alternate the arms (teams, serial, teams, ...), with no pause, so the
//! participants one arm leaves spinning meet the next; K is picked per cell so that the
//! slower arm's round takes about [`ROUND`]. A ratio is the teams round over the serial
//! round of the same pair (the host's speed drifts over seconds, within a pair it does not).

use std::path::PathBuf;
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::Mat;
use teamalg::kernels::lu::{self, LuParams};
use teamalg::kernels::par::{Executor, Seq};
use teamalg_tools::csv::Csv;
use teamalg_tools::stats::{median, median_p90};
use teamalg_tools::tour::team::held_team;

use crate::cases::re;
use crate::table::CSV_HEADER;

/// The goal of the teams arm: its median round ratio to the serial arm's at most this.
pub(crate) const GOAL: f64 = 1.10;
/// The round a cell's K aims at (the slower arm's round; 50 to 100 ms).
const ROUND: Duration = Duration::from_millis(75);
/// The most memory one thread's K inputs may take; K is capped by it.
const INPUTS_BYTES: usize = 64 << 20;
/// The fewest timed rounds per arm.
pub(crate) const MIN_ROUNDS: usize = 7;

/// What `--several-teams` runs.
#[derive(Debug)]
pub(crate) struct Plan {
    /// The thread counts T (`--threads-list`).
    pub(crate) threads: Vec<usize>,
    /// The sizes n (`--sizes`).
    pub(crate) sizes: Vec<usize>,
    /// Each thread's team width W (`--width`).
    pub(crate) width: usize,
    /// Timed rounds per arm (at least [`MIN_ROUNDS`]).
    pub(crate) rounds: usize,
    /// LU's panel widths (`--block`, `--wide`).
    pub(crate) params: LuParams,
    /// Where the CSV rows go (`--csv`).
    pub(crate) csv: Option<PathBuf>,
}

/// The arms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arm {
    Teams,
    Serial,
}

/// What the threads do next.
#[derive(Debug, Clone, Copy)]
enum Order {
    /// One round of `arm`, K calls per thread.
    Round(Arm, usize),
    /// The cell is over: drop the teams and return.
    Stop,
}

/// What the main thread and a cell's T threads share.
struct Shared {
    order: Mutex<Order>,
    /// The main thread and the T threads: the order is set.
    go: Barrier,
    /// The T threads: every input is restored; the round starts as they leave.
    start: Barrier,
    /// The main thread and the T threads: every thread has written its span.
    done: Barrier,
    /// Each thread's (start, end) of the round.
    spans: Mutex<Vec<(Instant, Instant)>>,
}

/// One cell's round times in seconds, per arm, and its K.
struct Cell {
    teams: Vec<f64>,
    serial: Vec<f64>,
    calls: usize,
}

/// `--several-teams`: per T in `plan.threads` and n in `plan.sizes`, the two arms in
/// alternated rounds; prints a line per cell and appends two CSV rows per cell to `--csv`.
pub(crate) fn run(plan: &Plan) {
    let w = plan.width;
    let mut csv = plan.csv.as_ref().map(|path| {
        Csv::append(path, CSV_HEADER).unwrap_or_else(|e| panic!("--csv {}: {e}", path.display()))
    });
    println!(
        "several teams in one process: T threads, each holding its own team of {w} ({} CPUs), each \
         making K LU calls (f64) back to back per round; against the same threads and calls on \
         serial executors; rounds alternated, {} per arm, timed from a barrier to the last \
         thread's end; ratio = teams / serial within a pair of rounds (median, p90, max); goal: \
         median ratio <= {GOAL:.2}\n",
        teamalg::available_cpus(),
        plan.rounds,
    );
    println!(
        "{:>7} {:>5} {:>5} {:>10} {:>10} {:>7} {:>7} {:>7}  goal",
        "threads", "n", "K", "teams ms", "serial ms", "ratio", "p90", "max"
    );
    for &t in &plan.threads {
        for &n in &plan.sizes {
            let cell = cell(plan, t, n);
            let ratios: Vec<f64> = cell
                .teams
                .iter()
                .zip(&cell.serial)
                .map(|(a, b)| a / b)
                .collect();
            let (r, r90) = median_p90(&ratios);
            let rmax = ratios.iter().copied().fold(0.0, f64::max);
            let ms = |v: &[f64]| median(v) * 1e3;
            println!(
                "{t:>7} {n:>5} {:>5} {:>10.2} {:>10.2} {r:>7.3} {r90:>7.3} {rmax:>7.3}  {}",
                cell.calls,
                ms(&cell.teams),
                ms(&cell.serial),
                if r <= GOAL { "met" } else { "MISSED" },
            );
            if let Some(csv) = &mut csv {
                let kernel = format!("lu several-teams {t}");
                let rows = [
                    ("teams", &cell.teams, r),
                    ("serial tokens", &cell.serial, 1.0),
                ];
                for (arm, times, ratio) in rows {
                    // Per call: a round's time over its K calls.
                    let per_call: Vec<f64> = times.iter().map(|x| x / cell.calls as f64).collect();
                    let (med, p90) = median_p90(&per_call);
                    let max = per_call.iter().copied().fold(0.0, f64::max);
                    let us = |x: f64| format!("{:.3}", x * 1e6);
                    csv.row(&[
                        &kernel,
                        "f64",
                        &n.to_string(),
                        &w.to_string(),
                        arm,
                        &us(med),
                        &us(p90),
                        &us(max),
                        &format!("{ratio:.4}"),
                    ]);
                }
            }
        }
    }
}

/// One cell: `t` threads, each with its own held team of `plan.width`, LU of `n`.
fn cell(plan: &Plan, t: usize, n: usize) -> Cell {
    let shared = Shared {
        order: Mutex::new(Order::Stop),
        go: Barrier::new(t + 1),
        start: Barrier::new(t),
        done: Barrier::new(t + 1),
        spans: Mutex::new(Vec::with_capacity(t)),
    };
    std::thread::scope(|scope| {
        for _ in 0..t {
            scope.spawn(|| worker(&shared, n, plan.width, plan.params));
        }
        // One round of `arm` with `k` calls per thread; its time in seconds.
        let round = |arm: Arm, k: usize| {
            *shared.order.lock().unwrap() = Order::Round(arm, k);
            shared.spans.lock().unwrap().clear();
            shared.go.wait();
            shared.done.wait();
            let spans = shared.spans.lock().unwrap();
            let start = spans.iter().map(|s| s.0).min().expect("a thread's span");
            let end = spans.iter().map(|s| s.1).max().expect("a thread's span");
            (end - start).as_secs_f64()
        };
        // K: two untimed rounds of one call per arm, alternated (the warm-up too); the slower
        // arm's faster round sets it.
        let (mut one_teams, mut one_serial) = (f64::MAX, f64::MAX);
        for _ in 0..2 {
            one_teams = one_teams.min(round(Arm::Teams, 1));
            one_serial = one_serial.min(round(Arm::Serial, 1));
        }
        let most = (INPUTS_BYTES / (n * n * size_of::<f64>())).max(1);
        let calls =
            ((ROUND.as_secs_f64() / one_teams.max(one_serial)).round() as usize).clamp(1, most);
        // One untimed pair at K: the threads allocate their K inputs.
        round(Arm::Teams, calls);
        round(Arm::Serial, calls);
        let (mut teams, mut serial) = (Vec::new(), Vec::new());
        for _ in 0..plan.rounds {
            teams.push(round(Arm::Teams, calls));
            serial.push(round(Arm::Serial, calls));
        }
        *shared.order.lock().unwrap() = Order::Stop;
        shared.go.wait();
        Cell {
            teams,
            serial,
            calls,
        }
    })
}

/// One of a cell's threads: holds its team of `w` and its LU inputs of `n` until told to stop.
fn worker(s: &Shared, n: usize, w: usize, params: LuParams) {
    let team = held_team(w);
    let a = Mat::from_fn(n, n, re);
    let mut inputs: Vec<Mat<f64>> = Vec::new();
    let mut swaps = vec![0usize; n];
    let mut buf = MemBuffer::new(lu::lu_in_place_scratch::<f64>(n, n));
    loop {
        s.go.wait();
        let order = *s.order.lock().unwrap();
        let Order::Round(arm, k) = order else { return };
        // Outside the timed part: K fresh inputs.
        inputs.truncate(k);
        inputs.resize_with(k, || a.clone());
        for m in &mut inputs {
            m.copy_from(&a);
        }
        let exec: &dyn Executor = match arm {
            Arm::Teams => &team,
            Arm::Serial => &Seq,
        };
        s.start.wait();
        let began = Instant::now();
        for m in &mut inputs {
            let stack = MemStack::new(&mut buf);
            std::hint::black_box(lu::lu_in_place(m.as_mut(), &mut swaps, exec, params, stack));
        }
        let ended = Instant::now();
        s.spans.lock().unwrap().push((began, ended));
        s.done.wait();
    }
}
