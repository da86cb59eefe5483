//! The program's command line: a tour of what the executor and the kernels cost on this host.

use std::time::Duration;

use teamalg::Pool;

use crate::tour::measure::Stats;
use crate::tour::plain::{fresh_pool, inside, outside, overhead_us, widths};
use crate::tour::team::{after_gap, team_per_call, team_sections};

const SHARE: Duration = Duration::from_micros(10);
const CALLS: usize = 2000;

/// Runs the program: the tour, or `calibrate [--out PATH]`.
pub(crate) fn run() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => tour(),
        Some("calibrate") => {
            let out = match args.get(1).map(String::as_str) {
                None => DEFAULT_PROFILE.to_string(),
                Some("--out") => match args.get(2) {
                    Some(p) => p.clone(),
                    None => usage("--out needs a path"),
                },
                Some(other) => usage(&format!("unknown option {other}")),
            };
            calibrate(&out);
        }
        Some("--help" | "-h" | "help") => {
            println!("{USAGE}");
        }
        Some(other) => usage(&format!("unknown command {other}")),
    }
}

const USAGE: &str =
    "usage: teamalg                 a tour of what parallel entry costs on this host
       teamalg calibrate [--out PATH]
                               measure this host and write its profile (default
                               teamalg-profile.toml); load it with PoolBuilder::profile
                               or TEAMALG_PROFILE=PATH";
const DEFAULT_PROFILE: &str = "teamalg-profile.toml";

fn usage(problem: &str) -> ! {
    eprintln!("teamalg: {problem}\n{USAGE}");
    std::process::exit(2);
}

/// `teamalg calibrate`: measures, shows the rows beside the class row, writes the profile.
fn calibrate(out: &str) {
    use std::io::Write;
    use teamalg::calibrate::Measure;
    use teamalg::gates::{DispatchCosts, DispatchKind, HostClass};

    let class = HostClass::detect();
    eprintln!(
        "calibrating this host ({} CPUs, class {})",
        teamalg::available_cpus(),
        class.name()
    );
    let profile = teamalg::calibrate::calibrate(|step| {
        let what = match step.what {
            Measure::Dispatch(kind, width) => format!("{} sections at width {width}", kind.name()),
            Measure::Rate(family) => format!("serial rate of {}", family.name()),
        };
        eprint!("\r  [{:>2}/{}] {:<40}", step.done, step.total, what);
        let _ = std::io::stderr().flush();
    });
    eprintln!("\r  done{:40}", "");
    let builtin = DispatchCosts::for_class(class);
    println!("host: {}", profile.fingerprint);
    println!(
        "{:<8} {:>5} {:>14} {:>18} {:>10}",
        "kind", "width", "measured (us)", "class row (us)", "ratio"
    );
    for kind in DispatchKind::ALL {
        for (w, ns) in profile.costs.row(kind).anchors() {
            let b = builtin.cost(kind, w as usize).as_nanos() as f64;
            println!(
                "{:<8} {:>5} {:>14.2} {:>18.2} {:>10.2}",
                kind.name(),
                w,
                ns as f64 / 1e3,
                b / 1e3,
                ns as f64 / b
            );
        }
    }
    println!(
        "\n{:<14} {:>16} {:>16} {:>16} {:>16}",
        "family", "f64 (ns/unit)", "built-in", "c64 (ns/unit)", "built-in"
    );
    for (family, rate) in &profile.rates {
        let b = family.rate();
        println!(
            "{:<14} {:>16.4} {:>16.4} {:>16.4} {:>16.4}",
            family.name(),
            rate.real,
            b.real,
            rate.cplx,
            b.cplx
        );
    }
    let (single, csingle) = teamalg::calibrate::gemm_single_ratio();
    println!(
        "\nGEMM f32 / f64 time: {single:.2}, c32 / c64: {csingle:.2} (the rates take 0.5 for both)"
    );
    match profile.save(out) {
        Ok(()) => {
            println!("\nwrote {out}; use it with TEAMALG_PROFILE={out} or PoolBuilder::profile")
        }
        Err(e) => {
            eprintln!("teamalg: {e}");
            std::process::exit(1);
        }
    }
}

/// Prints the tour table.
fn tour() {
    let cpus = teamalg::available_cpus();
    println!("teamalg executor tour: {cpus} CPUs in the affinity set");
    println!("for_ranges with one 10 us share per participant, back to back, {CALLS} calls");
    println!("overhead per call = median call time - 10 us\n");
    if cpus < 2 {
        println!("(one CPU: every entry runs inline; nothing to measure)");
        return;
    }
    println!(
        "{:>5}  {:>14}  {:>14}  {:>14}  {:>14}  {:>14}",
        "width", "outside (us)", "outside p90", "in pool (us)", "held (us)", "per-call (us)"
    );
    for w in widths() {
        let pool = Pool::builder().threads(w).build().expect("pool");
        let out = outside(&pool, w, SHARE, CALLS);
        let ins = inside(&pool, w, SHARE, CALLS);
        let held = outside(&pool, w, SHARE, CALLS / 4);
        drop(pool);
        let fresh = fresh_pool(w, SHARE, CALLS / 4);
        let p90 = out.p90.as_secs_f64() * 1e6 - SHARE.as_secs_f64() * 1e6;
        println!(
            "{:>5}  {:>14.2}  {:>14.2}  {:>14.2}  {:>14.2}  {:>14.2}",
            w,
            overhead_us(&out, SHARE),
            p90,
            overhead_us(&ins, SHARE),
            overhead_us(&held, SHARE),
            overhead_us(&fresh, SHARE),
        );
    }
    println!("\nheld: a pool held across calls, entered from outside; per-call: a pool built,");
    println!("used once and dropped per call (workers leased from the reserve).");
    println!("\nhot teams: one 10 us share per participant and section");
    println!(
        "{:>5}  {:>16}  {:>22}  {:>22}  {:>16}",
        "width", "held team (us)", "after 1 ms gap", "after 10 ms gap", "per call (us)"
    );
    for w in widths() {
        let team = Pool::builder()
            .threads(w)
            .build()
            .expect("pool")
            .into_team(w)
            .expect("team");
        let held = team_sections(&team, w, SHARE, CALLS);
        let gap1 = after_gap(&team, w, SHARE, Duration::from_millis(1), 50);
        let gap10 = after_gap(&team, w, SHARE, Duration::from_millis(10), 30);
        drop(team);
        let fresh = team_per_call(w, SHARE, CALLS / 4);
        let with_p90 = |s: &Stats| {
            let p90 = s.p90.as_secs_f64() * 1e6 - SHARE.as_secs_f64() * 1e6;
            let max = s.max.as_secs_f64() * 1e6 - SHARE.as_secs_f64() * 1e6;
            format!("{:.1} ({:.0}, {:.0})", overhead_us(s, SHARE), p90, max)
        };
        println!(
            "{:>5}  {:>16.2}  {:>22}  {:>22}  {:>16.2}",
            w,
            overhead_us(&held, SHARE),
            with_p90(&gap1),
            with_p90(&gap10),
            overhead_us(&fresh, SHARE),
        );
    }
    println!(
        "\nheld team: overhead of a section on a held team; after a gap: overhead of the first"
    );
    println!("section after the leader slept (members park after their spin budget), median (p90,");
    println!("max) in us; per call: a pool and team built, used for one section and dropped.");
    kernel_table(cpus);
    println!(
        "threads started in this run: {}",
        teamalg::spawned_workers()
    );
}

/// Prints the short kernel table: faer serial against teamalg on a held team of all CPUs.
fn kernel_table(cpus: usize) {
    let team = Pool::builder()
        .threads(cpus)
        .build()
        .expect("pool")
        .into_team(cpus)
        .expect("team");
    println!(
        "\nkernels (f64, n x n): faer serial against teamalg::linalg on a held team of {cpus}"
    );
    println!(
        "{:>9}  {:>5}  {:>16}  {:>16}  {:>8}",
        "kernel", "n", "faer serial (ms)", "teamalg (ms)", "speedup"
    );
    for r in crate::tour::kernels::rows(&team, &[256, 1024]) {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "{:>9}  {:>5}  {:>16.3}  {:>16.3}  {:>7.2}x",
            r.kernel,
            r.n,
            ms(r.serial),
            ms(r.team),
            r.serial.as_secs_f64() / r.team.as_secs_f64()
        );
    }
    println!("medians of calls alternating with faer's; speedup = faer time / teamalg time.");
}
