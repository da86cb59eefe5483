//! `perf-page`: writes the perf front page from the kernel benchmark's CSV
//! (`teamalg_tools::perf_page`). `scripts/perf-page.sh` runs it after the benchmark.

use std::path::PathBuf;

use clap::Parser;
use teamalg_tools::perf_page::{page, Run};

/// Writes `docs/perf/kernels.md` from the kernel benchmark's CSV rows.
#[derive(Debug, Parser)]
#[command(name = "perf-page")]
struct Config {
    /// The CSV of one run of the benchmark (`kernels --csv FILE`); once per run, in turn.
    #[arg(long, required = true)]
    csv: Vec<PathBuf>,
    /// Where the page goes.
    #[arg(long, default_value = "docs/perf/kernels.md")]
    out: PathBuf,
    /// The host, in words.
    #[arg(long)]
    host: String,
    /// The date of the run.
    #[arg(long)]
    date: String,
    /// The commit measured.
    #[arg(long)]
    commit: String,
    /// The command that made the CSV.
    #[arg(long)]
    command: String,
}

fn main() {
    let c = Config::parse();
    let runs: Vec<_> = c
        .csv
        .iter()
        .map(|p| {
            teamalg_tools::csv::read(p)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
        })
        .collect();
    let run = Run {
        host: c.host,
        date: c.date,
        commit: c.commit,
        command: c.command,
    };
    std::fs::write(&c.out, page(&runs, &run))
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", c.out.display()));
    println!("wrote {}", c.out.display());
}
