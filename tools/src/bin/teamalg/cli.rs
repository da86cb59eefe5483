//! The program's command line: a tour of what the executor and the kernels cost on this host.

use std::time::Duration;

use teamalg::Pool;

use teamalg_tools::tour::measure::Stats;
use teamalg_tools::tour::plain::{fresh_pool, inside, outside, overhead_us, widths};
use teamalg_tools::tour::team::{after_gap, held_team, team_per_call, team_sections};

const SHARE: Duration = Duration::from_micros(10);
const CALLS: usize = 2000;

/// teamalg: linear algebra on low-latency thread teams. Without a command, prints a tour of
/// what parallel entry and the kernels cost on this host.
#[derive(Debug, clap::Parser)]
#[command(
    name = "teamalg",
    version,
    about = "What teamalg costs on this host: parallel entry, waits and kernels (tour); its profile (calibrate)",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Prints what parallel entry and the kernels cost on this host (the default).
    Tour,
    /// Measures this host (dispatch costs, kernel rates, split costs) and writes its profile.
    ///
    /// Load the profile with `PoolBuilder::profile` or `TEAMALG_PROFILE=PATH`. Takes a few
    /// seconds; run it on an otherwise idle machine.
    Calibrate {
        /// Where to write the profile.
        #[arg(long, short, value_name = "PATH", default_value = DEFAULT_PROFILE)]
        out: std::path::PathBuf,
        /// Prints the tables without the progress line.
        #[arg(long, short)]
        quiet: bool,
        /// Also prints every size timed for the split fits.
        #[arg(long, short)]
        verbose: bool,
        /// Writes the profile even when the host was busy while measuring (the profile then
        /// describes that state, and records the load it saw).
        #[arg(long)]
        force: bool,
    },
}

/// Runs the program. Bad arguments exit with code 2 and a message (clap's convention).
pub(crate) fn run() {
    use clap::Parser;
    match Cli::parse().command {
        None | Some(Command::Tour) => tour(),
        Some(Command::Calibrate {
            out,
            quiet,
            verbose,
            force,
        }) => calibrate(&out, quiet, verbose, force),
    }
}

const DEFAULT_PROFILE: &str = "teamalg-profile.toml";

/// `teamalg calibrate`: measures, shows what it kept beside the class rows, writes the profile
/// (not when the host was busy, unless `force`: exit code 3).
fn calibrate(out: &std::path::Path, quiet: bool, verbose: bool, force: bool) {
    use std::io::Write;
    use teamalg::gates::{builtin_rate, builtin_split, CpuVendor, DispatchCosts, HostClass};
    use teamalg::kernels::families::CATALOGUE;
    use teamalg_tools::calibrate::Measure;

    let class = HostClass::detect();
    eprintln!(
        "calibrating this host ({} CPUs, class {})",
        teamalg::available_cpus(),
        class.name()
    );
    let cal = teamalg_tools::calibrate::calibrate(|step| {
        if quiet {
            return;
        }
        let what = match step.what {
            Measure::Dispatch(kind, width) => format!("{} sections at width {width}", kind.name()),
            Measure::Rate(family) => format!("serial rate of {}", family.name()),
            Measure::Split(family, width) => {
                format!("split cost of {} at width {width}", family.name())
            }
        };
        eprint!("\r  [{:>2}/{}] {:<44}", step.done, step.total, what);
        let _ = std::io::stderr().flush();
    });
    if !quiet {
        eprintln!("\r  done in {:.1} s{:40}", cal.took.as_secs_f64(), "");
    }
    let profile = &cal.profile;
    let builtin = DispatchCosts::for_class(class);
    println!("host: {}", profile.fingerprint);
    println!(
        "\n{:<8} {:>5} {:>10} {:>16} {:>9} {:>8} {:>8} {:>7} {:>7} {:>10}",
        "kind",
        "width",
        "cost (us)",
        "p10-p90 (us)",
        "samples",
        "serial",
        "desched",
        "rounds",
        "stable",
        "class (us)"
    );
    for a in &cal.anchors {
        let cost = a
            .cost
            .map_or("none".to_string(), |ns| format!("{:.2}", ns as f64 / 1e3));
        println!(
            "{:<8} {:>5} {:>10} {:>16} {:>9} {:>8} {:>8} {:>7} {:>7} {:>10.2}",
            a.kind.name(),
            a.width,
            cost,
            format!("{:.2}-{:.2}", a.spread.0 / 1e3, a.spread.1 / 1e3),
            a.samples,
            a.serial,
            a.descheduled,
            a.rounds,
            if a.stable { "yes" } else { "no" },
            builtin.cost(a.kind, a.width).as_secs_f64() * 1e6,
        );
    }
    if cal.anchors.iter().any(|a| a.cost.is_none()) {
        println!("(none: too few samples survived; the class row stays for that anchor)");
    }
    println!(
        "\n{:<17} {:>10} {:>9} {:>9} {:>9} {:>9}   {:>9} {:>8}",
        "rate (ns/unit)", "units", "f64", "c64", "f32", "c32", "built-in", "f32/f64"
    );
    for (family, curve) in &profile.rates {
        let builtin = builtin_rate(*family, class, CATALOGUE);
        for (units, rate) in curve.anchors() {
            println!(
                "{:<17} {:>10.3e} {:>9.4} {:>9.4} {:>9.4} {:>9.4}   {:>9.4} {:>8.2}",
                family.name(),
                units,
                rate.real,
                rate.cplx,
                rate.real_single,
                rate.cplx_single,
                builtin.at(units).real,
                rate.real_single / rate.real
            );
        }
    }
    if !cal.fits.is_empty() {
        println!(
            "\n{:<17} {:<8} {:>5} {:>14} {:>11} {:>12} {:>20}",
            "split",
            "scalars",
            "width",
            "overhead (us)",
            "efficiency",
            "worst error",
            "built-in (us, eff)"
        );
    }
    for f in &cal.fits {
        let b = builtin_split(f.family, CpuVendor::detect(), CATALOGUE);
        let b = if f.complex { b.cplx } else { b.real }.at(f.width);
        println!(
            "{:<17} {:<8} {:>5} {:>14.2} {:>11.3} {:>11.0}% {:>20}",
            f.family.name(),
            if f.complex { "complex" } else { "real" },
            f.width,
            f.cost.overhead_ns / 1e3,
            f.cost.efficiency,
            f.worst_error * 100.0,
            format!("{:.2}, {:.3}", b.overhead_ns / 1e3, b.efficiency)
        );
    }
    if verbose {
        println!(
            "\n{:<17} {:<8} {:>5} {:>5} {:>8} {:>12} {:>12} {:>12}",
            "split point",
            "scalars",
            "width",
            "n",
            "sections",
            "serial (us)",
            "wide (us)",
            "model (us)"
        );
        for f in &cal.fits {
            for t in &f.points {
                println!(
                    "{:<17} {:<8} {:>5} {:>5} {:>8} {:>12.1} {:>12.1} {:>12.1}",
                    f.family.name(),
                    if f.complex { "complex" } else { "real" },
                    f.width,
                    t.n,
                    t.sections,
                    t.serial_ns / 1e3,
                    t.parallel_ns / 1e3,
                    t.model_ns / 1e3
                );
            }
        }
    }
    let load = &cal.load;
    println!(
        "\nload seen: {:.2} other runnable threads on average, {:.1}% of dispatch samples \
         descheduled, {} of {} dispatch rows unstable",
        load.others,
        load.rejected * 100.0,
        load.unstable,
        cal.anchors.len()
    );
    let busy = teamalg_tools::seen_load::busy_reasons(load, cal.anchors.len());
    if !busy.is_empty() {
        let why = busy.join("; ");
        if !force {
            eprintln!(
                "teamalg: this host was busy while measuring ({why}): the profile would \
                 describe that passing state, so {} was not written. Run it on an idle \
                 machine, or pass --force to write it anyway (it records the load).",
                out.display()
            );
            std::process::exit(3);
        }
        eprintln!("teamalg: this host was busy while measuring ({why}); writing it (--force)");
    }
    match profile.save(out) {
        Ok(()) => println!(
            "\nwrote {0}; use it with TEAMALG_PROFILE={0} or PoolBuilder::profile",
            out.display()
        ),
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
    println!("plain tokens: for_ranges with one 10 us share per participant, calls back to back");
    println!("overhead = call time - 10 us (the share), in us; \"caller ran a worker's share\":");
    println!("calls in which no worker took a share in time, so the caller ran it (a plain token");
    println!(
        "never waits for a worker): those calls take two shares, and their overhead is ~10 us\n"
    );
    if cpus < 2 {
        println!("(one CPU: every entry runs inline; nothing to measure)");
        return;
    }
    println!(
        "{:>5}  {:<34}  {:>6}  {:>8}  {:>8}  {:>8}  {:>26}",
        "width", "arm", "calls", "median", "p90", "max", "caller ran a worker's share"
    );
    for w in widths() {
        let pool = Pool::builder().threads(w).build().expect("pool");
        let arms = [
            (
                "outside the pool (held pool)",
                outside(&pool, w, SHARE, CALLS),
            ),
            ("from a worker of the pool", inside(&pool, w, SHARE, CALLS)),
            (
                "outside again, after the worker",
                outside(&pool, w, SHARE, CALLS / 4),
            ),
        ];
        drop(pool);
        let fresh = (
            "pool built and dropped per call",
            fresh_pool(w, SHARE, CALLS / 4),
        );
        for (name, e) in arms.iter().chain([&fresh]) {
            let us = |d: Duration| d.as_secs_f64() * 1e6 - SHARE.as_secs_f64() * 1e6;
            println!(
                "{:>5}  {:<34}  {:>6}  {:>8.2}  {:>8.2}  {:>8.1}  {:>17} ({:>5.1} %)",
                w,
                name,
                e.calls,
                overhead_us(&e.stats, SHARE),
                us(e.stats.p90),
                us(e.stats.max),
                e.alone,
                100.0 * e.alone as f64 / e.calls as f64
            );
        }
    }
    println!("\nper call: workers are leased from the process-wide reserve, so no thread starts.");
    println!("\nhot teams: one 10 us share per participant and section");
    println!(
        "{:>5}  {:>22}  {:>22}  {:>22}  {:>22}",
        "width", "held team", "after 1 ms gap", "after 10 ms gap", "per call"
    );
    for w in widths() {
        let team = held_team(w);
        let held = team_sections(&team, w, SHARE, CALLS);
        let gap1 = after_gap(&team, w, SHARE, Duration::from_millis(1), 50);
        let gap10 = after_gap(&team, w, SHARE, Duration::from_millis(10), 30);
        drop(team);
        let fresh = team_per_call(w, SHARE, CALLS / 4);
        let with_p90 = |s: &Stats| {
            let p90 = s.p90.as_secs_f64() * 1e6 - SHARE.as_secs_f64() * 1e6;
            let max = s.max.as_secs_f64() * 1e6 - SHARE.as_secs_f64() * 1e6;
            format!("{:.2} ({:.1}, {:.0})", overhead_us(s, SHARE), p90, max)
        };
        println!(
            "{:>5}  {:>22}  {:>22}  {:>22}  {:>22}",
            w,
            with_p90(&held),
            with_p90(&gap1),
            with_p90(&gap10),
            with_p90(&fresh),
        );
    }
    println!(
        "\nheld team: overhead of a section on a held team; after a gap: overhead of the first"
    );
    println!("section after the leader slept (members park after their spin budget); per call: a");
    println!("pool and team built, used for one section and dropped. Median (p90, max) in us.");
    kernel_table(cpus);
    println!(
        "threads started in this run: {}",
        teamalg::spawned_workers()
    );
}

/// Prints the short kernel table: faer serial against teamalg on a held team of all CPUs.
fn kernel_table(cpus: usize) {
    let team = held_team(cpus);
    println!(
        "\nkernels (f64, n x n): faer serial against teamalg::linalg on a held team of {cpus}"
    );
    println!(
        "{:>9}  {:>5}  {:>16}  {:>16}  {:>8}",
        "kernel", "n", "faer serial (ms)", "teamalg (ms)", "speedup"
    );
    for r in teamalg_tools::tour::kernels::rows(&team, &[256, 1024]) {
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
