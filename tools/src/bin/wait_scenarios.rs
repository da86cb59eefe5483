//! How teamalg's waits compare with libgomp's and rayon's, in one run.
//!
//! ```text
//! cargo run --release -p teamalg-tools --bin wait_scenarios -- [--scenario sections|gaps|acquire|nested|mixed|all]
//!     [--widths 2,1] [--impl teamalg,rayon,omp] [--calls N] [--load K:P]
//!     [--spin-polls N] [--csv FILE] [--label TEXT]
//! ```
//!
//! Scenarios (a *call* is what one timing covers; median, p90 and max per call):
//! - `sections`: 200 sections of 5 / 20 / 50 us of busy work per participant, team held;
//! - `gaps`: the caller sleeps 0 / 100 us / 1 ms / 10 ms / 50 ms / 200 ms, then 10 sections of
//!   5 us; the first
//!   section and the whole call are reported;
//! - `acquire`: 50 sections of 20 us with the team held (`held_team`), the pool held and the team
//!   reserved per call (`held_pool`), and a pool built per call (`fresh_pool`, whose phases
//!   build, acquire, call, release and drop are reported one by one);
//! - `nested`: 100 splits of the team into pairs, each pair running one 20 us section;
//! - `mixed`: four arms in one process, each first alone (`alone`, its calls back to back),
//!   then all four in turn call by call with no pause (`mixed`): 50 sections of 20 us on a held
//!   team (`held_team`), the same with a pool and team built per call (`team_per_call`), 50
//!   rayon scopes of 20 us on a held rayon pool (`rayon`), and a GEMM of 256 through
//!   `teamalg::linalg` with a pool and team built per call (`gemm_per_call`). Each arm's row
//!   gives its time alone and mixed; the ratio rows divide the mixed median and p90 by alone's.
//!
//! The libgomp arm is `tools/omp/wait_scenarios.c`, built by `tools/omp/build.sh` (run here
//! when its binary is missing) and driven with the same options; its rows join the same table.
//! `--load K:P` starts K child processes that are busy P % of every 10 ms, for a shared host.
//! Under each teamalg row: the wait counters per call (joins slept, barriers slept, member
//! sleeps, wakes).

use std::io::Write;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use teamalg::wait::counters::{self, WaitCounters};
use teamalg::{Exec, Pool, Team};
use teamalg_tools::tour::measure::{busy, time_calls, Stats};

struct Opts {
    scenario: String,
    widths: Vec<usize>,
    impls: Vec<String>,
    calls: usize,
    load: Option<(usize, u32)>,
    spin_polls: Option<u32>,
    csv: Option<String>,
    label: String,
}

fn parse() -> Opts {
    let cpus = teamalg::available_cpus();
    let mut o = Opts {
        scenario: "all".into(),
        widths: {
            let mut w = vec![cpus, (cpus * 3 / 4).max(1)];
            w.dedup();
            w
        },
        impls: vec!["teamalg".into(), "rayon".into(), "omp".into()],
        calls: 50,
        load: None,
        spin_polls: None,
        csv: None,
        label: String::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--scenario" => o.scenario = val(),
            "--widths" => {
                o.widths = val()
                    .split(',')
                    .map(|w| w.parse().expect("width"))
                    .collect()
            }
            "--impl" => o.impls = val().split(',').map(str::to_owned).collect(),
            "--calls" => o.calls = val().parse().expect("--calls N"),
            "--load" => {
                let v = val();
                let (k, p) = v.split_once(':').expect("--load K:P");
                o.load = Some((k.parse().expect("K"), p.parse().expect("P")));
            }
            "--spin-polls" => o.spin_polls = Some(val().parse().expect("--spin-polls N")),
            "--csv" => o.csv = Some(val()),
            "--label" => o.label = val(),
            "--busy-child" => busy_child(val().parse().expect("percent")),
            "--bench" => {}
            other => panic!("unknown option {other}"),
        }
    }
    o.calls = o.calls.max(1);
    o
}

/// A load process: busy `percent` % of every 10 ms, until killed.
fn busy_child(percent: u32) -> ! {
    let period = Duration::from_millis(10);
    loop {
        let on = period * percent.min(100) / 100;
        busy(on);
        std::thread::sleep(period - on);
    }
}

/// One result row.
struct Row {
    imp: String,
    scenario: &'static str,
    case: String,
    width: usize,
    stats: Stats,
    calls: usize,
    counters: Option<WaitCounters>,
}

struct Sink {
    rows: Vec<Row>,
    csv: Option<std::fs::File>,
    label: String,
}

impl Sink {
    fn push(&mut self, row: Row) {
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        let line = format!(
            "{},{},{},{},{},{},{:.3},{:.3},{:.3}",
            self.label,
            row.imp,
            row.scenario,
            row.case,
            row.width,
            row.calls,
            us(row.stats.median),
            us(row.stats.p90),
            us(row.stats.max)
        );
        self.write(&line);
        self.rows.push(row);
    }

    fn write(&mut self, line: &str) {
        if let Some(f) = &mut self.csv {
            writeln!(f, "{line}").expect("write csv");
        }
    }

    fn print(&self) {
        println!(
            "{:<9} {:<8} {:<16} {:>5} {:>12} {:>12} {:>12}",
            "scenario", "impl", "case", "width", "median (us)", "p90 (us)", "max (us)"
        );
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        for r in &self.rows {
            println!(
                "{:<9} {:<8} {:<16} {:>5} {:>12.1} {:>12.1} {:>12.1}",
                r.scenario,
                r.imp,
                r.case,
                r.width,
                us(r.stats.median),
                us(r.stats.p90),
                us(r.stats.max)
            );
            if let Some(c) = r.counters {
                let per = |x: u64| x as f64 / r.calls as f64;
                println!(
                    "{:<36} waits per call: joins slept {:.2}, barriers slept {:.2}, member sleeps {:.2}, wakes {:.2}, moves {:.2}, cedes {:.2}, leaves {:.2}",
                    "",
                    per(c.join_sleeps),
                    per(c.barrier_sleeps),
                    per(c.member_sleeps),
                    per(c.wakes),
                    per(c.moves),
                    per(c.cedes),
                    per(c.leaves)
                );
            }
        }
    }
}

/// Times `calls` calls (after a tenth as many unmeasured), with the wait counters over them.
fn measure(calls: usize, mut f: impl FnMut()) -> (Stats, WaitCounters) {
    for _ in 0..(calls / 10).max(1) {
        f();
    }
    let before = counters::snapshot();
    let mut v = Vec::with_capacity(calls);
    for _ in 0..calls {
        let t = Instant::now();
        f();
        v.push(t.elapsed());
    }
    (Stats::of(v), counters::snapshot() - before)
}

/// The gaps of the `gaps` scenario (name, microseconds): at 50 ms and 200 ms the members have
/// long stopped spinning and sleep.
const GAPS: [(&str, u64); 6] = [
    ("0", 0),
    ("100us", 100),
    ("1ms", 1000),
    ("10ms", 10_000),
    ("50ms", 50_000),
    ("200ms", 200_000),
];

fn us(x: u64) -> Duration {
    Duration::from_micros(x)
}

fn team(w: usize, o: &Opts) -> Team {
    pool(w, o).into_team(w).expect("team")
}

fn pool(w: usize, o: &Opts) -> Pool {
    let mut b = Pool::builder().threads(w);
    if let Some(p) = o.spin_polls {
        b = b.spin_polls(p);
    }
    b.build().expect("pool")
}

fn teamalg_arm(o: &Opts, w: usize, sink: &mut Sink) {
    let want = |s: &str| o.scenario == "all" || o.scenario == s;
    let mut row = |scenario, case: String, (stats, c): (Stats, WaitCounters), calls| {
        sink.push(Row {
            imp: "teamalg".into(),
            scenario,
            case,
            width: w,
            stats,
            calls,
            counters: Some(c),
        })
    };
    if want("sections") {
        let t = team(w, o);
        for share in [5, 20, 50] {
            let r = t
                .exec(w)
                .team(|te| {
                    measure(o.calls, || {
                        (0..200).for_each(|_| te.run(|_| busy(us(share))))
                    })
                })
                .unwrap();
            row("sections", format!("{share}us"), r, o.calls);
        }
    }
    if want("gaps") {
        let t = team(w, o);
        for (name, gap) in GAPS {
            let (mut first, mut whole) = (Vec::new(), Vec::new());
            let r = t
                .exec(w)
                .team(|te| {
                    measure(o.calls, || {
                        std::thread::sleep(us(gap));
                        let start = Instant::now();
                        for k in 0..10 {
                            te.run(|_| busy(us(5)));
                            if k == 0 {
                                first.push(start.elapsed());
                            }
                        }
                        whole.push(start.elapsed());
                    })
                })
                .unwrap();
            let keep = |v: &mut Vec<Duration>| Stats::of(v.split_off(v.len() - o.calls));
            row(
                "gaps",
                format!("{name}/first"),
                (keep(&mut first), r.1),
                o.calls,
            );
            row(
                "gaps",
                format!("{name}/call"),
                (keep(&mut whole), r.1),
                o.calls,
            );
        }
    }
    if want("acquire") {
        let sections = |te: &teamalg::TeamExec<'_>| (0..50).for_each(|_| te.run(|_| busy(us(20))));
        let t = team(w, o);
        let r = t
            .exec(w)
            .team(|te| measure(o.calls, || sections(&te)))
            .unwrap();
        row("acquire", "held_team".into(), r, o.calls);
        drop(t);
        let p = pool(w, o);
        let r = measure(o.calls, || {
            Exec::new(&p, w).unwrap().team(|te| sections(&te)).unwrap()
        });
        row("acquire", "held_pool".into(), r, o.calls);
        drop(p);
        let mut phases: [Vec<Duration>; 5] = Default::default();
        let r = measure(o.calls, || {
            let t0 = Instant::now();
            let p = pool(w, o);
            let t1 = Instant::now();
            let (t2, t3) = Exec::new(&p, w)
                .unwrap()
                .team(|te| {
                    let t2 = Instant::now();
                    sections(&te);
                    (t2, Instant::now())
                })
                .unwrap();
            let t4 = Instant::now();
            drop(p);
            let t5 = Instant::now();
            for (i, d) in [t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4]
                .into_iter()
                .enumerate()
            {
                phases[i].push(d);
            }
        });
        row("acquire", "fresh_pool".into(), r, o.calls);
        for (i, name) in ["build", "acquire", "call", "release", "drop"]
            .iter()
            .enumerate()
        {
            let v = phases[i].split_off(phases[i].len() - o.calls);
            sink.push(Row {
                imp: "teamalg".into(),
                scenario: "acquire",
                case: format!("fresh_pool/{name}"),
                width: w,
                stats: Stats::of(v),
                calls: o.calls,
                counters: None,
            });
        }
    }
    if want("nested") && w >= 4 {
        let t = team(w, o);
        let sizes = vec![2; w / 2];
        let r = t
            .exec(w)
            .team(|te| {
                measure(o.calls, || {
                    for _ in 0..100 {
                        te.split(&sizes, |_, pair| pair.run(|_| busy(us(20))))
                            .unwrap();
                    }
                })
            })
            .unwrap();
        sink.push(Row {
            imp: "teamalg".into(),
            scenario: "nested",
            case: "pairs".into(),
            width: w,
            stats: r.0,
            calls: o.calls,
            counters: Some(r.1),
        });
    }
}

/// An arm of the `mixed` scenario: its name and one call.
type MixedArm<'a> = (&'static str, Box<dyn FnMut() + 'a>);

/// The `mixed` scenario (see the module documentation).
fn mixed(o: &Opts, w: usize, sink: &mut Sink) {
    use faer::{Accum, Mat};
    let sections = |te: &teamalg::TeamExec<'_>| (0..50).for_each(|_| te.run(|_| busy(us(20))));
    let team = team(w, o);
    let rayon = rayon_pool(w);
    let n = 256;
    let a = Mat::<f64>::from_fn(n, n, |i, j| ((i * 7 + j * 3) % 13) as f64 - 6.0);
    let mut c = Mat::<f64>::zeros(n, n);
    let mut arms: Vec<MixedArm<'_>> = vec![
        (
            "held_team",
            Box::new(|| team.exec(w).team(|te| sections(&te)).unwrap()),
        ),
        (
            "team_per_call",
            Box::new(|| {
                let t = pool(w, o).into_team(w).expect("team");
                t.exec(w).team(|te| sections(&te)).unwrap();
            }),
        ),
        (
            "rayon",
            Box::new(|| rayon.install(|| (0..50).for_each(|_| rayon_section(w, us(20))))),
        ),
        (
            "gemm_per_call",
            Box::new(move || {
                let t = pool(w, o).into_team(w).expect("team");
                teamalg::linalg::matmul(
                    c.as_mut(),
                    Accum::Replace,
                    a.as_ref(),
                    a.as_ref(),
                    1.0,
                    &t,
                )
                .unwrap();
            }),
        ),
    ];
    let calls = o.calls;
    let mut alone = Vec::new();
    for (_, arm) in arms.iter_mut() {
        let (s, _) = measure(calls, arm);
        alone.push(s);
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(calls); arms.len()];
    for round in 0..calls + calls / 10 {
        for (k, (_, arm)) in arms.iter_mut().enumerate() {
            let t = Instant::now();
            arm();
            if round >= calls / 10 {
                times[k].push(t.elapsed());
            }
        }
    }
    for (k, (name, _)) in arms.iter().enumerate() {
        let mixed = Stats::of(std::mem::take(&mut times[k]));
        let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
        println!(
            "mixed {name:<14} mixed/alone: median {:.2}, p90 {:.2}",
            ratio(mixed.median, alone[k].median),
            ratio(mixed.p90, alone[k].p90)
        );
        for (case, stats) in [("alone", alone[k]), ("mixed", mixed)] {
            sink.push(Row {
                imp: if *name == "rayon" { "rayon" } else { "teamalg" }.into(),
                scenario: "mixed",
                case: format!("{name}/{case}"),
                width: w,
                stats,
                calls,
                counters: None,
            });
        }
    }
}

fn rayon_pool(w: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(w)
        .build()
        .unwrap()
}

/// One rayon "section": every participant runs `share`.
fn rayon_section(w: usize, share: Duration) {
    rayon::scope(|s| {
        for _ in 1..w {
            s.spawn(move |_| busy(share));
        }
        busy(share);
    });
}

fn rayon_arm(o: &Opts, w: usize, sink: &mut Sink) {
    let want = |s: &str| o.scenario == "all" || o.scenario == s;
    let mut row = |scenario, case: String, stats: Stats| {
        sink.push(Row {
            imp: "rayon".into(),
            scenario,
            case,
            width: w,
            stats,
            calls: o.calls,
            counters: None,
        })
    };
    let p = rayon_pool(w);
    if want("sections") {
        for share in [5, 20, 50] {
            let s = time_calls(o.calls, || {
                p.install(|| (0..200).for_each(|_| rayon_section(w, us(share))))
            });
            row("sections", format!("{share}us"), s);
        }
    }
    if want("gaps") {
        for (name, gap) in GAPS {
            let (mut first, mut whole) = (Vec::new(), Vec::new());
            measure(o.calls, || {
                p.install(|| {
                    std::thread::sleep(us(gap));
                    let start = Instant::now();
                    for k in 0..10 {
                        rayon_section(w, us(5));
                        if k == 0 {
                            first.push(start.elapsed());
                        }
                    }
                    whole.push(start.elapsed());
                })
            });
            let keep = |v: &mut Vec<Duration>| Stats::of(v.split_off(v.len() - o.calls));
            row("gaps", format!("{name}/first"), keep(&mut first));
            row("gaps", format!("{name}/call"), keep(&mut whole));
        }
    }
    if want("acquire") {
        let sections = || (0..50).for_each(|_| rayon_section(w, us(20)));
        let (s, _) = measure(o.calls, || p.install(sections));
        row("acquire", "held_team".into(), s);
        let (s, _) = measure(o.calls, || {
            let fresh = rayon_pool(w);
            fresh.install(sections);
        });
        row("acquire", "fresh_pool".into(), s);
    }
    if want("nested") && w >= 4 {
        let (s, _) = measure(o.calls, || {
            p.install(|| {
                for _ in 0..100 {
                    rayon::scope(|sc| {
                        for _ in 0..w / 2 {
                            sc.spawn(|_| {
                                rayon::join(|| busy(us(20)), || busy(us(20)));
                            });
                        }
                    });
                }
            })
        });
        row("nested", "pairs".into(), s);
    }
}

/// Runs the libgomp arm (building it first if needed) and adds its rows.
fn omp_arm(o: &Opts, sink: &mut Sink) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/omp");
    let exe = format!("{dir}/build/wait_scenarios");
    if !std::path::Path::new(&exe).exists() {
        let ok = Command::new("bash")
            .arg(format!("{dir}/build.sh"))
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("omp arm skipped: tools/omp/build.sh failed (needs gcc with OpenMP)");
            return;
        }
    }
    let widths: Vec<String> = o.widths.iter().map(usize::to_string).collect();
    let out = Command::new(&exe)
        .args(["--scenario", &o.scenario, "--widths", &widths.join(",")])
        .args(["--calls", &o.calls.to_string(), "--label", &sink.label])
        .output()
        .expect("run the omp arm");
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 9 {
            continue;
        }
        sink.write(line);
        let d = |s: &str| Duration::from_secs_f64(s.parse::<f64>().unwrap_or(0.0) / 1e6);
        let scenario = match f[2] {
            "sections" => "sections",
            "gaps" => "gaps",
            "acquire" => "acquire",
            _ => "nested",
        };
        sink.rows.push(Row {
            imp: "omp".into(),
            scenario,
            case: f[3].into(),
            width: f[4].parse().unwrap_or(0),
            calls: f[5].parse().unwrap_or(1),
            stats: Stats {
                median: d(f[6]),
                p90: d(f[7]),
                max: d(f[8]),
            },
            counters: None,
        });
    }
}

struct Load(Vec<Child>);

impl Drop for Load {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn main() {
    let o = parse();
    let _load = Load(match o.load {
        Some((k, p)) => (0..k)
            .map(|_| {
                Command::new(std::env::current_exe().unwrap())
                    .args(["--busy-child", &p.to_string()])
                    .spawn()
                    .expect("load process")
            })
            .collect(),
        None => Vec::new(),
    });
    let csv = o.csv.as_ref().map(|path| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("open csv")
    });
    let mut sink = Sink {
        rows: Vec::new(),
        csv,
        label: o.label.clone(),
    };
    println!(
        "wait scenarios: {} CPUs, widths {:?}, {} calls per cell{}{}",
        teamalg::available_cpus(),
        o.widths,
        o.calls,
        o.load
            .map_or(String::new(), |(k, p)| format!(", load {k} x {p} %")),
        o.spin_polls
            .map_or(String::new(), |p| format!(", spin polls {p}"))
    );
    for &w in &o.widths {
        if o.scenario == "mixed" || o.scenario == "all" {
            mixed(&o, w, &mut sink);
        }
        if o.scenario == "mixed" {
            continue;
        }
        if o.impls.iter().any(|i| i == "teamalg") {
            teamalg_arm(&o, w, &mut sink);
        }
        if o.impls.iter().any(|i| i == "rayon") {
            rayon_arm(&o, w, &mut sink);
        }
    }
    if o.impls.iter().any(|i| i == "omp") {
        omp_arm(&o, &mut sink);
    }
    let order = |s: &str| {
        ["sections", "gaps", "acquire", "nested", "mixed"]
            .iter()
            .position(|x| *x == s)
    };
    sink.rows
        .sort_by_key(|r| (r.width, order(r.scenario), r.case.clone(), r.imp.clone()));
    sink.print();
}
