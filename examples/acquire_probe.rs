//! The acquire probe: small and large kernels timed in four ways of getting a team, many calls
//! per process, as the probe of faer's pool-per-call issue does.
//!
//! ```text
//! cargo run --release --example acquire_probe
//! PROBE_THREADS=4 PROBE_CALLS=200 PROBE_ARMS=held,with_team PROBE_KERNELS=gemm128 \
//!     cargo run --release --example acquire_probe
//! ```
//!
//! Arms:
//! - `serial`: a serial token (`Exec::serial()`): the facade's checks and faer's serial kernels,
//!   the time every other arm is a speed-up against;
//! - `held`: one team built at the start and passed to every call;
//! - `reserved`: one pool held, a team reserved from it per call (`Exec::team`);
//! - `fresh_pool`: a pool and a team built, used for one call and dropped;
//! - `with_team`: the same through `teamalg::with_team`.
//!
//! Kernels: `gemm128` (C = A B, 128 x 128, f64), `chol2048` (Cholesky of 2048, f64), `lu512`
//! (LU of 512, f64). The arms run one call each in turn, back to back, no pauses.
//!
//! Knobs (environment): `PROBE_THREADS` (width, default: the CPUs), `PROBE_SPIN_POLLS` (the
//! pool's spin budget), `PROBE_ACQUIRE_TIMEOUT_MS` (how long a team waits for members),
//! `PROBE_CALLS` (calls per arm and kernel; default 200 for gemm128, 50 for lu512, 10 for
//! chol2048), `PROBE_ARMS` and `PROBE_KERNELS` (comma lists). `TEAMALG_PROFILE` and
//! `TEAMALG_THRESHOLDS` apply as to any pool.
//!
//! Output: one TSV row per arm and kernel (`arm kernel median_us p90_us max_us calls`), then a
//! summary of each arm: its speed-up over `serial` and its time against `held`. To run it as many processes at once (a shared host, or
//! ranks on one node), start several with `PROBE_THREADS` set to each one's share, for example
//! `for i in 1 2; do PROBE_THREADS=1 cargo run --release --example acquire_probe & done; wait`:
//! the teams of each process take only that many workers.

use std::time::{Duration, Instant};

use faer::{Accum, Mat};
use teamalg::kernels::par::Executor;
use teamalg::{Exec, Pool, PoolBuilder, linalg};

/// What the probe runs, read from the environment.
#[derive(Debug, Clone)]
pub struct Config {
    /// Team width.
    pub threads: usize,
    /// The pool's spin budget, if set.
    pub spin_polls: Option<u32>,
    /// The team's acquire timeout, if set.
    pub acquire_timeout: Option<Duration>,
    /// Calls per arm and kernel, if set (else per kernel).
    pub calls: Option<usize>,
    /// The arms.
    pub arms: Vec<String>,
    /// The kernels.
    pub kernels: Vec<String>,
}

/// Every arm.
pub const ARMS: [&str; 5] = ["serial", "held", "reserved", "fresh_pool", "with_team"];
/// Every kernel.
pub const KERNELS: [&str; 3] = ["gemm128", "lu512", "chol2048"];

fn var<T: std::str::FromStr>(name: &str) -> Option<T> {
    let v = std::env::var(name).ok()?;
    match v.trim().parse() {
        Ok(x) => Some(x),
        Err(_) => {
            eprintln!("acquire_probe: {name}={v:?} is not understood");
            std::process::exit(2);
        }
    }
}

fn list(name: &str, all: &[&str]) -> Vec<String> {
    match std::env::var(name) {
        Err(_) => all.iter().map(|s| s.to_string()).collect(),
        Ok(v) => {
            let items: Vec<String> = v.split(',').map(|s| s.trim().to_string()).collect();
            if let Some(bad) = items.iter().find(|i| !all.contains(&i.as_str())) {
                eprintln!(
                    "acquire_probe: {name}: unknown {bad:?} (one of {})",
                    all.join(", ")
                );
                std::process::exit(2);
            }
            items
        }
    }
}

impl Config {
    /// The configuration the environment describes.
    pub fn from_env() -> Config {
        Config {
            threads: var("PROBE_THREADS").unwrap_or_else(teamalg::available_cpus),
            spin_polls: var("PROBE_SPIN_POLLS"),
            acquire_timeout: var::<u64>("PROBE_ACQUIRE_TIMEOUT_MS").map(Duration::from_millis),
            calls: var("PROBE_CALLS"),
            arms: list("PROBE_ARMS", &ARMS),
            kernels: list("PROBE_KERNELS", &KERNELS),
        }
    }

    fn builder(&self) -> PoolBuilder {
        let mut b = Pool::builder().threads(self.threads);
        if let Some(p) = self.spin_polls {
            b = b.spin_polls(p);
        }
        if let Some(t) = self.acquire_timeout {
            b = b.acquire_timeout(t);
        }
        b
    }
}

/// A kernel's data, and one call of it on an executor.
struct Kernel {
    name: String,
    a: Mat<f64>,
    work: Mat<f64>,
}

impl Kernel {
    fn new(name: &str) -> Kernel {
        let n = match name {
            "gemm128" => 128,
            "lu512" => 512,
            _ => 2048,
        };
        // Diagonally dominant and symmetric: fine for all three.
        let a = Mat::from_fn(n, n, |i, j| {
            if i == j {
                2.0 * n as f64
            } else {
                (((i + j) * 7) % 11) as f64 / 11.0
            }
        });
        Kernel {
            name: name.to_string(),
            work: a.clone(),
            a,
        }
    }

    fn default_calls(&self) -> usize {
        match self.name.as_str() {
            "gemm128" => 200,
            "lu512" => 50,
            _ => 10,
        }
    }

    fn call(&mut self, exec: &(impl Executor + ?Sized)) {
        match self.name.as_str() {
            "gemm128" => linalg::matmul(
                self.work.as_mut(),
                Accum::Replace,
                self.a.as_ref(),
                self.a.as_ref(),
                1.0,
                exec,
            )
            .expect("shapes agree"),
            "lu512" => {
                self.work.copy_from(&self.a);
                let lu = linalg::lu(self.work.as_mut(), exec).expect("finite input");
                std::hint::black_box(lu.zero_pivot());
            }
            _ => {
                self.work.copy_from(&self.a);
                linalg::cholesky(self.work.as_mut(), exec).expect("positive definite");
            }
        }
    }
}

/// One TSV row.
#[derive(Debug, Clone)]
pub struct Row {
    /// The arm.
    pub arm: String,
    /// The kernel.
    pub kernel: String,
    /// Median call time.
    pub median: Duration,
    /// 90th percentile.
    pub p90: Duration,
    /// Slowest call.
    pub max: Duration,
    /// Calls timed.
    pub calls: usize,
}

/// Runs the probe and returns its rows (arms in turn, call by call).
pub fn run(cfg: &Config) -> Result<Vec<Row>, teamalg::Error> {
    let held = cfg.builder().build()?.into_team(cfg.threads)?;
    let pool = cfg.builder().build()?;
    let mut rows = Vec::new();
    for name in &cfg.kernels {
        let mut k = Kernel::new(name);
        let calls = cfg.calls.unwrap_or(k.default_calls());
        let mut times: Vec<Vec<Duration>> = vec![Vec::new(); cfg.arms.len()];
        for _ in 0..calls {
            for (i, arm) in cfg.arms.iter().enumerate() {
                let start = Instant::now();
                match arm.as_str() {
                    "serial" => k.call(&Exec::serial()),
                    "held" => k.call(&held),
                    "reserved" => Exec::new(&pool, cfg.threads)?
                        .team(|t| k.call(&t))
                        .unwrap_or_else(|_| k.call(&Exec::serial())),
                    "fresh_pool" => {
                        let team = cfg.builder().build()?.into_team(cfg.threads)?;
                        k.call(&team);
                    }
                    _ => teamalg::with_team(cfg.threads, |team| k.call(team))?,
                }
                times[i].push(start.elapsed());
            }
        }
        for (arm, mut t) in cfg.arms.iter().zip(times) {
            t.sort();
            rows.push(Row {
                arm: arm.clone(),
                kernel: name.clone(),
                median: t[t.len() / 2],
                p90: t[(t.len() * 9 / 10).min(t.len() - 1)],
                max: t[t.len() - 1],
                calls: t.len(),
            });
        }
    }
    Ok(rows)
}

#[allow(dead_code)] // a test includes this file and calls `run`
fn main() {
    let cfg = Config::from_env();
    println!(
        "# acquire probe: width {}, {} CPUs, {} threads started so far",
        cfg.threads,
        teamalg::available_cpus(),
        teamalg::spawned_workers()
    );
    let rows = match run(&cfg) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("acquire_probe: {e}");
            std::process::exit(1);
        }
    };
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!("arm\tkernel\tmedian_us\tp90_us\tmax_us\tcalls");
    for r in &rows {
        println!(
            "{}\t{}\t{:.1}\t{:.1}\t{:.1}\t{}",
            r.arm,
            r.kernel,
            us(r.median),
            us(r.p90),
            us(r.max),
            r.calls
        );
    }
    println!("\n# summary: median speed-up over serial (above 1: faster), and time against held");
    for k in &cfg.kernels {
        let find = |arm: &str| rows.iter().find(|r| &r.kernel == k && r.arm == arm);
        let (serial, held) = (find("serial"), find("held"));
        for r in rows.iter().filter(|r| &r.kernel == k) {
            let over = |base: Option<&Row>, inv: bool| {
                base.map_or("-".to_string(), |b| {
                    let x = r.median.as_secs_f64() / b.median.as_secs_f64();
                    format!("{:.2}x", if inv { 1.0 / x } else { x })
                })
            };
            println!(
                "# {k:>9} {:>10}: {:.1} us, {} over serial, {} held's time",
                r.arm,
                us(r.median),
                over(serial, true),
                over(held, false)
            );
        }
    }
    println!(
        "# threads started in this process: {}",
        teamalg::spawned_workers()
    );
}
