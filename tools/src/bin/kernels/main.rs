//! `kernels`: teamalg's kernels against faer, side by side in one run.
//!
//! ```text
//! cargo run --release -p teamalg-tools --bin kernels -- [--kernels gemm,lu,...] [--sizes 64,256]
//!     [--width W] [MODE] [--settled | --blocks PAUSE_MS:CALLS] [--load N[:NICE]]
//!     [--load-phases ON_MS:OFF_MS] [--csv FILE] [--block N] [--wide N] [--svd-auto] [--owned]
//!     [--aspect X] [--only TEXT] [--min-rounds N]
//! ```
//!
//! Modes: the table (the default, `table.rs`), `--sections` (`sections.rs`), `--audit`
//! (`audit.rs`), `--finite-check` (`finite_check.rs`), `--owned-cost` (`owned_cost.rs`) and
//! `--inside-rayon` (`inside_rayon.rs`).
//! The cases, one kernel at one size with its faer call and its teamalg call, are in `cases/`,
//! one file per family; how the arms are timed, and why in interleaved rounds, in `rounds.rs`;
//! the load beside the run in `load.rs`. `--help` describes every option.

use std::cell::RefCell;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, Parser};
use teamalg_tools::csv::Csv;

mod audit;
mod cases;
mod finite_check;
mod inside_rayon;
mod load;
mod owned_cost;
mod rounds;
mod sections;
mod table;

use cases::Settings;
use table::{Pattern, Table};

/// The kernels against faer, side by side in one run.
///
/// Arms, per kernel, size and scalar type: faer `Par::Seq`; faer `Par::rayon(W)` called from the
/// main thread; teamalg on a held team of width W; teamalg with a pool and team built per call.
/// The arms run the way users call: back to back, interleaved call by call (a round is one call
/// of each arm in turn), with no pause anywhere, so the threads one arm leaves spinning meet the
/// next. A ratio is the median over rounds of the arm's time divided by faer serial's in the
/// same round (the host's speed drifts over seconds; within a round it does not); p90 is the
/// arm's own 90th percentile time.
///
/// Kernels: gemm (n x n x n), lu (partial pivoting), cholesky and qr (n x n, from 64); col_piv_qr (QR with column pivoting, n x n, from 64; not in the default list);
/// ldlt (`LDL^H` of a positive definite matrix) and lblt (Bunch-Kaufman of a symmetric
/// indefinite one), n x n from 64, not in the default list; evd_spectra (the EVD with vectors,
/// f64, on five spectra: random symmetric, G^T G + n I, graded over 10 decades, clustered,
/// the evd rows' own), not in the default list;
/// svd (thin vectors, values only, c64; teamalg's own path unless --svd-auto), evd (vectors,
/// values only, c64), tridiag and bidiag (the reductions alone), from 64; sparse (the 2D
/// Laplacian of an n x n grid times 64 columns) and sparse_sparse (n x n, 10 entries per
/// column, times itself), not in the default list. The factorizations work in place: each call
/// gets its input back first, outside the timed part.
#[derive(Debug, Parser)]
#[command(name = "kernels", group(ArgGroup::new("mode").args(["sections", "audit", "finite_check", "owned_cost", "inside_rayon"])))]
struct Config {
    /// The kernels, comma-separated [default: gemm,lu,cholesky,qr; with --audit:
    /// gemm,trsm,lu,cholesky].
    #[arg(long, value_delimiter = ',')]
    kernels: Vec<String>,
    /// The sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [32, 64, 128, 256, 512, 1024, 2048])]
    sizes: Vec<usize>,
    /// The width of the parallel arms [default: the CPUs this process may use, at least 2].
    #[arg(long)]
    width: Option<usize>,

    /// Mode: where a factorization's time goes on a held team (lu, cholesky, qr, svd, bidiag;
    /// f64): per call, the serial time outside sections and each section's wall time against
    /// the busy time of its lead and of participant 1, in all, per site and per third.
    #[arg(long)]
    sections: bool,
    /// Mode: the gate audit: per cell, forced serial, forced parallel and the gate's choice,
    /// interleaved; a cell misses when the gate is 5 % slower than the better arm.
    #[arg(long)]
    audit: bool,
    /// Mode: what the facade's finiteness check costs (GEMM, LU, Cholesky; checked against
    /// unchecked, alternated).
    #[arg(long)]
    finite_check: bool,
    /// Mode: what the owned facade forms cost beside the scratch forms (LU, Cholesky, QR,
    /// pivoted QR, SVD and EVD with vectors and values only; f64; owned against scratch,
    /// alternated).
    #[arg(long)]
    owned_cost: bool,
    /// Mode: four rayon workers each call GEMM 256 through plain tokens of one shared pool,
    /// against the same loop with serial tokens.
    #[arg(long)]
    inside_rayon: bool,

    /// Each arm alone against faer serial after a 50 ms pause (the threads of the arm before
    /// have stopped spinning): for comparison only.
    #[arg(long, conflicts_with = "blocks")]
    settled: bool,
    /// Blocks instead of interleaved calls: in each round every arm in turn pauses PAUSE_MS,
    /// then makes CALLS calls back to back; call i of a block against call i of faer serial's
    /// block in the same round.
    #[arg(long, value_name = "PAUSE_MS:CALLS", value_parser = parse_blocks)]
    blocks: Option<(Duration, usize)>,
    /// N busy processes (nice NICE, 0 by default) beside the whole run.
    #[arg(long, value_name = "N[:NICE]")]
    load: Option<String>,
    /// The load comes and goes: stopped and continued in turn. Each cell then runs for six
    /// cycles, and two lines under it give the held team's and the team-per-call arm's ratios
    /// over on phases, the first 50 ms of off phases and the rest of off phases.
    #[arg(long, value_name = "ON_MS:OFF_MS", requires = "load")]
    load_phases: Option<String>,
    /// Append one row per kernel, size and arm of the table to FILE (the header when the file
    /// is new): the data of `docs/perf/kernels.md` (`cargo run -p teamalg-tools --bin
    /// perf-page`) and of the plots.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,

    /// LU's and Cholesky's panel width (0: picked from the size).
    #[arg(long, default_value_t = 0)]
    block: usize,
    /// LU's and Cholesky's wide panel width, the second blocking level (0: picked from the size).
    #[arg(long, default_value_t = 0)]
    wide: usize,
    /// The SVD rows run the default path (teamalg's own path where it measured faster, faer's
    /// serial SVD elsewhere) instead of teamalg's own path at every size.
    #[arg(long)]
    svd_auto: bool,
    /// The SVD and EVD rows time teamalg through the owned facade forms (input checked,
    /// outputs and scratch allocated per call), as most users call them.
    #[arg(long)]
    owned: bool,
    /// The SVD rows factor round(X n) x n matrices (X >= 1: tall).
    #[arg(long, value_name = "X", value_parser = parse_aspect)]
    aspect: Option<f64>,
    /// Only the rows whose name contains TEXT (`--only f64` leaves out the complex rows).
    #[arg(long, value_name = "TEXT")]
    only: Option<String>,
    /// The table's timed rounds per cell at the least (from 2; large sizes take seconds per
    /// call, and the default of 7 then takes minutes per cell).
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u32).range(2..))]
    min_rounds: u32,
}

fn parse_blocks(s: &str) -> Result<(Duration, usize), String> {
    let (p, c) = s.split_once(':').ok_or("PAUSE_MS:CALLS")?;
    let pause = p.parse().map_err(|e| format!("PAUSE_MS: {e}"))?;
    let calls = c.parse().map_err(|e| format!("CALLS: {e}"))?;
    Ok((Duration::from_millis(pause), calls))
}

fn parse_aspect(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x >= 1.0 => Ok(x),
        _ => Err("X >= 1 (tall)".into()),
    }
}

fn main() {
    let config = Config::parse();
    let w = config
        .width
        .unwrap_or_else(|| teamalg::available_cpus().max(2));
    let mut spec = load::LoadSpec::default();
    if let Some(l) = &config.load {
        spec.parse_load(l);
    }
    if let Some(p) = &config.load_phases {
        spec.parse_phases(p);
    }
    // The load runs for every mode below, until `main` returns.
    let _load = spec.start();
    if spec.processes > 0 {
        println!("load: {}", spec.describe());
    }
    let named = |default: &[&str]| match config.kernels.is_empty() {
        true => default.iter().map(|k| k.to_string()).collect(),
        false => config.kernels.clone(),
    };
    if config.inside_rayon {
        return inside_rayon::run(w);
    }
    if config.finite_check {
        return finite_check::run(w, &config.sizes);
    }
    if config.owned_cost {
        return owned_cost::run(w, &config.sizes);
    }
    if config.audit {
        return audit::run(
            &named(&["gemm", "trsm", "lu", "cholesky"]),
            &config.sizes,
            w,
        );
    }
    let settings = Settings {
        width: w,
        sizes: config.sizes.clone(),
        block: config.block,
        wide: config.wide,
        svd_auto: config.svd_auto,
        owned: config.owned,
        aspect: config.aspect,
    };
    let kernels = named(&["gemm", "lu", "cholesky", "qr"]);
    if config.sections {
        println!("where the time goes, held team of {w}, f64 (median call of 7)\n");
        for k in kernels
            .iter()
            .filter(|k| sections::TRACED.contains(&k.as_str()))
        {
            let rows = cases::rows(k, &settings);
            let f64_row = rows.iter().find(|r| r.name == format!("{k} f64"));
            sections::trace(f64_row.expect("an f64 row"), w);
        }
        return;
    }
    let pattern = match (config.settled, config.blocks) {
        (true, _) => Pattern::Settled,
        (false, Some((pause, calls))) => Pattern::Blocks(pause, calls),
        (false, None) => Pattern::Interleaved(spec.phases),
    };
    let csv = config.csv.as_ref().map(|path| {
        let csv = Csv::append(path, table::CSV_HEADER)
            .unwrap_or_else(|e| panic!("--csv {}: {e}", path.display()));
        RefCell::new(csv)
    });
    let table = Table {
        width: w,
        pattern,
        csv,
        min_rounds: config.min_rounds as usize,
    };
    table.header();
    let wanted = |name: &str| {
        config
            .only
            .as_ref()
            .map_or(true, |t| name.contains(t.as_str()))
    };
    for k in &kernels {
        for row in cases::rows(k, &settings) {
            if wanted(row.name) {
                table.row(&row);
            }
        }
    }
}
