//! `--matrix`: the load matrix. Every family of the facade through its owned forms, f64 and
//! c64, on a held team and with a team per call, under each load condition (`conditions.rs`),
//! `--runs` times, and the batch families beside them; then the markdown front table of
//! `docs/perf/busy.md` (the tools library's `matrix::page`).
//!
//! Each condition and run is a fresh process: this binary again, as the ordinary table with
//! `--load`/`--load-phases` and `--csv`, then the `batch` binary beside it with the same load.
//! Why: the load starts before the first timed call and ends with the run; no pool, team,
//! gate state, live view or scratch keep of one condition carries into the next; and each run
//! measures exactly what the same command typed by hand measures. The rows come back through
//! the CSV files, which stay on disk with each run's output (the per-phase reports of
//! `phases` are there). The runs go condition by condition within a run, so the drift of the
//! host over the whole matrix falls on every condition alike.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use teamalg_tools::matrix::conditions::Condition;
use teamalg_tools::matrix::page::{self as matrix_page, Header};

/// What `--matrix` runs.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The load conditions, in turn.
    pub(crate) conditions: Vec<Condition>,
    /// Runs per condition.
    pub(crate) runs: usize,
    /// The markdown's path.
    pub(crate) out: PathBuf,
    /// The width of the parallel arms (passed on, so every run has the same).
    pub(crate) width: usize,
    /// The arguments of each table run but the load and the CSV file (`--kernels ... --owned`).
    pub(crate) table_args: Vec<String>,
    /// The `batch` binary's cases (`--cases`); none: no batch rows.
    pub(crate) batch_cases: Vec<String>,
}

/// Runs the matrix and writes its page.
///
/// # Panics
/// When a run fails (its log names why), the `batch` binary is missing while batch cases are
/// asked for, or a file cannot be written or read.
pub(crate) fn run(plan: &Plan) {
    let date = output_of("date", &["-u"]).unwrap_or_else(|| "unknown".into());
    let command = shell_words(std::env::args());
    let me = std::env::current_exe().expect("the path of this binary");
    let batch = me.with_file_name(format!("batch{}", std::env::consts::EXE_SUFFIX));
    assert!(
        plan.batch_cases.is_empty() || batch.exists(),
        "--matrix runs {} beside this binary for the batch rows: build it \
         (cargo build --release -p teamalg-tools --bin kernels --bin batch) or pass --batch-cases none",
        batch.display()
    );
    let dir = std::env::temp_dir().join(format!("teamalg-matrix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    println!(
        "load matrix: {} condition(s) x {} run(s); rows and logs in {}",
        plan.conditions.len(),
        plan.runs,
        dir.display()
    );
    let mut csvs = vec![Vec::new(); plan.conditions.len()];
    for run in 1..=plan.runs {
        for (c, &condition) in plan.conditions.iter().enumerate() {
            let stem = format!("{}-run{run}", condition.name().replace(':', "-"));
            let (csv, log) = (
                dir.join(format!("{stem}.csv")),
                dir.join(format!("{stem}.log")),
            );
            for stale in [&csv, &log] {
                let _ = std::fs::remove_file(stale);
            }
            let tail = |mut args: Vec<String>| {
                args.extend(condition.load_args());
                args.extend(["--csv".into(), csv.display().to_string()]);
                args
            };
            println!(
                "\n== run {run} of {}, {}: {}",
                plan.runs,
                condition.name(),
                condition.describe()
            );
            run_logged(&me, &tail(plan.table_args.clone()), &log);
            if !plan.batch_cases.is_empty() {
                let args = vec![
                    "--cases".into(),
                    plan.batch_cases.join(","),
                    "--width".into(),
                    plan.width.to_string(),
                ];
                run_logged(&batch, &tail(args), &log);
            }
            csvs[c].push(csv);
        }
    }
    let rows: Vec<Vec<matrix_page::Rows>> = csvs
        .iter()
        .map(|runs| {
            runs.iter()
                // No file: the run had no row (`--only` left every row out).
                .map(|p| match p.exists() {
                    true => teamalg_tools::csv::read(p)
                        .unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display())),
                    false => Vec::new(),
                })
                .collect()
        })
        .collect();
    let header = Header {
        host: host(),
        date,
        commit: commit(),
        command,
        width: plan.width,
        files: dir.display().to_string(),
    };
    let page = matrix_page::page(&plan.conditions, &rows, &header);
    std::fs::write(&plan.out, page)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", plan.out.display()));
    println!("\nwrote {}", plan.out.display());
}

/// Runs `program` with `args`, its output shown and appended to `log`.
///
/// # Panics
/// When it cannot start or fails.
fn run_logged(program: &Path, args: &[String], log: &Path) {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let shown = shell_words(std::iter::once(program.display().to_string()).chain(args.to_vec()));
    println!("$ {shown}");
    let log_line = |file: &mut File, line: &str| {
        writeln!(file, "{line}").unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    };
    log_line(&mut file, &format!("$ {shown}"));
    let mut child = Command::new(program)
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
    let out = child.stdout.take().expect("a piped stdout");
    for line in BufReader::new(out).lines() {
        let line = line.expect("the run's output");
        println!("{line}");
        log_line(&mut file, &line);
    }
    let status = child.wait().expect("the run's status");
    assert!(
        status.success(),
        "{shown} failed ({status}); its output is in {}",
        log.display()
    );
}

/// The CPU model and count, from `/proc/cpuinfo`.
fn host() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split_once(':'))
        .map_or("unknown CPU".into(), |(_, m)| m.trim().to_string());
    let cpus = info.lines().filter(|l| l.starts_with("processor")).count();
    format!("{model}, {cpus} CPUs")
}

/// The short commit of the checkout this binary was built from, "unknown" when git cannot
/// say; noted when the checkout has changes outside `docs/` (as `scripts/perf-page.sh` does).
fn commit() -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    let Some(short) = output_of("git", &["-C", root, "rev-parse", "--short", "HEAD"]) else {
        return "unknown".into();
    };
    let clean = Command::new("git")
        .args([
            "-C",
            root,
            "diff",
            "--quiet",
            "HEAD",
            "--",
            ":(top)",
            ":(top,exclude)docs",
        ])
        .status()
        .is_ok_and(|s| s.success());
    if clean {
        short
    } else {
        format!("{short} (with uncommitted changes)")
    }
}

/// The trimmed standard output of a command that succeeded.
fn output_of(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

/// Words joined as a shell reads them back: a word with anything but plain characters is
/// single-quoted.
fn shell_words(words: impl IntoIterator<Item = String>) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:,=+@%".contains(c);
    words
        .into_iter()
        .map(|w| {
            if !w.is_empty() && w.chars().all(plain) {
                w
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
