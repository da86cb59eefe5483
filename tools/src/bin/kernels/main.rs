//! `kernels`: teamalg's kernels against faer, side by side in one run.
//!
//! ```text
//! cargo run --release -p teamalg-tools --bin kernels -- [--kernels gemm,lu,...] [--sizes 64,256]
//!     [--width W] [MODE] [--settled | --blocks PAUSE_MS:CALLS] [--load N[:NICE]]
//!     [--load-phases ON_MS:OFF_MS] [--csv FILE] [--block N] [--wide N] [--svd-auto] [--owned]
//!     [--aspect X] [--dissection] [--only TEXT] [--min-rounds N]
//!     [--matrix [--conditions LIST] [--runs N] [--out FILE] [--batch-cases LIST]]
//!     [--several-teams [--threads-list LIST]]
//! ```
//!
//! Modes: the table (the default, `table.rs`), `--sections` (`sections.rs`), `--audit`
//! (`audit.rs`), `--finite-check` (`finite_check.rs`), `--owned-cost` (`owned_cost.rs`),
//! `--inside-rayon` (`inside_rayon.rs`), `--several-teams` (`several_teams.rs`: whether T
//! threads of one process, each holding its own team of every CPU, oversubscribe it against
//! the same threads calling serially) and `--matrix`, the load matrix: every family of the
//! facade through its owned forms under each load condition, each condition and run a fresh
//! run of this binary's table and of the `batch` binary (`matrix.rs`; the conditions and their
//! goals in the tools library's `matrix::conditions`, the markdown for `docs/perf/busy.md` in its
//! `matrix::page`).
//! The cases, one kernel at one size with its faer call and its teamalg call, are in `cases/`,
//! one file per family; how the arms are timed, and why in interleaved rounds, in `rounds.rs`;
//! the load beside the run in the tools library (`teamalg_tools::load`, which `batch` shares).
//! `--help` describes every option.

use std::cell::RefCell;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, Parser};
use teamalg_tools::csv::Csv;
use teamalg_tools::load;

mod audit;
mod cases;
mod finite_check;
mod inside_rayon;
mod matrix;
mod owned_cost;
mod rounds;
mod sections;
mod several_teams;
mod table;

use cases::Settings;
use table::{Pattern, Table};
use teamalg_tools::matrix::conditions::Condition;

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
/// Kernels (f64 and c64 rows each, but evd_spectra): gemm (n x n x n), lu (partial pivoting), cholesky and qr
/// (n x n, from 64); not in the default list: trsm (n x n lower triangular, n right-hand
/// sides), full_piv_lu (full pivoting, n x n from 64; the owned forms on both sides, teamalg's
/// `FullPivLu::new` against faer's `Mat::full_piv_lu`, whatever --owned says), col_piv_qr (QR
/// with column pivoting, n x n, from 64), ldlt (`LDL^H` of a positive definite matrix) and
/// lblt (Bunch-Kaufman of a symmetric indefinite one), n x n from 64; evd_spectra (the EVD
/// with vectors, f64, on five spectra: random symmetric, G^T G + n I, graded over 10 decades,
/// clustered, the evd rows' own), not in the default list;
/// svd (thin vectors, and values only; teamalg's own path unless --svd-auto), evd
/// (self-adjoint; vectors, and values only), tridiag and bidiag (the reductions alone), from
/// 64; eigen (the general, non-symmetric EVD with vectors, owned forms on both sides,
/// teamalg's `Eigen::new` against faer's `Mat::eigen`), sparse (the 2D Laplacian of an n x n
/// grid times 64 columns) and sparse_sparse (n x n, 10 entries per column, times itself), not
/// in the default list. The factorizations work in place: each call gets its input back
/// first, outside the timed part (with --owned both sides factor a copy they make, inside it).
#[derive(Debug, Parser)]
#[command(name = "kernels", group(ArgGroup::new("mode").args(["sections", "audit", "finite_check", "owned_cost", "inside_rayon", "several_teams", "matrix"])))]
struct Config {
    /// The kernels, comma-separated [default: gemm,lu,cholesky,qr; with --audit:
    /// gemm,trsm,lu,cholesky; with --matrix: every family of the facade,
    /// gemm,trsm,lu,full_piv_lu,cholesky,ldlt,lblt,qr,col_piv_qr,svd,evd,eigen,sparse,sparse_sparse].
    #[arg(long, value_delimiter = ',')]
    kernels: Vec<String>,
    /// The sizes, comma-separated [default: 32,64,128,256,512,1024,2048; with --matrix or
    /// --several-teams: 256,512].
    #[arg(long, value_delimiter = ',')]
    sizes: Vec<usize>,
    /// The width of the parallel arms [default: the CPUs this process may use, at least 2;
    /// with --several-teams, each thread's team: the CPUs this process may use].
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
    /// Mode: does the process oversubscribe itself? For each T of --threads-list and n of
    /// --sizes: T threads, each holding its own team of width W (--width), each make K LU
    /// calls (f64, n x n, back to back; K picked so that a round takes about 75 ms) per round,
    /// against the same T threads making the same calls on serial executors. The two arms'
    /// rounds alternate, at least 7 each (--min-rounds); a round runs from a barrier to the
    /// last thread's end, the inputs restored before it. Prints per T and n each arm's median
    /// round, the ratio teams / serial (median over pairs of rounds; goal: at most 1.10), and
    /// its p90 and max.
    #[arg(long)]
    several_teams: bool,
    /// With --several-teams, the thread counts T, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = parse_threads,
        default_values_t = [2, 4],
        requires = "several_teams"
    )]
    threads_list: Vec<usize>,
    /// Mode: the load matrix, the front table of `docs/perf/busy.md`. For each of --runs runs
    /// and, within it, each of --conditions in turn, runs this binary's table afresh (the
    /// kernels, sizes, width, --only and --min-rounds given here, --owned, the condition's
    /// load, a CSV file) and then the `batch` binary beside this one (--batch-cases, the same
    /// load); then writes --out: per kernel, scalar and size, per condition, the held team's
    /// and the team-per-call arm's ratio of each run, `**` where a run misses the condition's
    /// goal, the held team's p90 and max beside one busy process at nice 0 (first run), and
    /// the missed cells listed. The runs' CSV files and output stay in a temporary directory,
    /// named at the start and in the page. Build `batch` too: `cargo build --release -p
    /// teamalg-tools --bin kernels --bin batch`.
    #[arg(long, conflicts_with_all = ["settled", "blocks", "load", "csv"])]
    matrix: bool,
    /// With --matrix, the load conditions, comma-separated: `quiet` (nothing beside the run),
    /// `N:NICE` (N busy processes at nice NICE; goal at nice 0: at most 1.05, above it: at
    /// most 10 % above the quiet ratio), `phases` (1 busy process at nice 0, on 500 ms and off
    /// 500 ms: `--load 1 --load-phases 500:500`; no goal, the ratio only). Quiet's goal: the
    /// held team at most 1.03, the team per call at most 1.05.
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = Condition::parse,
        default_value = "quiet,1:0,2:0,1:19,phases",
        requires = "matrix"
    )]
    conditions: Vec<Condition>,
    /// With --matrix, the runs per condition.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..), requires = "matrix")]
    runs: u32,
    /// With --matrix, where the markdown goes.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "busy-matrix.md",
        requires = "matrix"
    )]
    out: PathBuf,
    /// With --matrix, the `batch` binary's cases (its --cases; `none`: no batch rows).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "lu32,lu8,svd64,mixed,gemm16",
        requires = "matrix"
    )]
    batch_cases: Vec<String>,

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
    /// perf-page`) and of the plots. With --several-teams, two rows per T and n, kernel `lu
    /// several-teams T`, arms `teams` and `serial tokens`: times per call (a round's time over
    /// its K calls), the ratio teams / serial.
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
    /// Every row times both libraries through their owned, high-level forms, as most users
    /// call them: teamalg through the facade (`teamalg::linalg`: the factorizations' owned
    /// forms `Lu::new`, `Cholesky::new`, ..., `Svd::new_thin`, `singular_values`,
    /// `SelfAdjointEigen::new`, ...: input checked, outputs and scratch allocated per call; the
    /// checked `matmul`, `solve_triangular` and sparse products), faer through its own
    /// (`Mat::partial_piv_lu`, `llt`, `qr`, `col_piv_qr`, `ldlt`, `lblt`, `thin_svd`,
    /// `singular_values`, `self_adjoint_eigen`, `self_adjoint_eigenvalues`: outputs and scratch
    /// allocated per call; `MatRef::solve_lower_triangular_in_place`), its global parallelism
    /// set to the arm's `Par` around each call. The products write into the caller's `C` on
    /// both sides (faer's `matmul` and `sparse_dense_matmul`; `sparse_sparse_matmul` allocates
    /// its result on both sides) either way. Without it both sides call their kernels in
    /// scratch they hold.
    #[arg(long)]
    owned: bool,
    /// The sparse factorizations' rows analyse teamalg's side with METIS's nested dissection
    /// (`SparseOrdering::NestedDissection`; a build with the feature `metis`) instead of AMD
    /// (Cholesky, `LDL^H`) or COLAMD (LU, QR); faer's side keeps its own, the call its users
    /// make today. Every sparse row prints its analyses first (with this option or without):
    /// faer's symbolic call's time, and teamalg's analysis's time, fill, work and the share of
    /// the work above the subtrees a team of two shares, with AMD or COLAMD and, with this
    /// option, with nested dissection.
    #[arg(long)]
    dissection: bool,
    /// The SVD rows factor round(X n) x n matrices (X >= 1: tall).
    #[arg(long, value_name = "X", value_parser = parse_aspect)]
    aspect: Option<f64>,
    /// Only the rows whose name contains TEXT (`--only f64` leaves out the complex rows).
    #[arg(long, value_name = "TEXT")]
    only: Option<String>,
    /// The table's timed rounds per cell at the least (from 2; large sizes take seconds per
    /// call, and the default of 7 then takes minutes per cell); with --several-teams, the
    /// rounds per arm (at least 7).
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u32).range(2..))]
    min_rounds: u32,
}

/// What `--matrix` runs: each table run gets this command's kernels, sizes, width and row
/// options, and `--owned`.
fn matrix_plan(c: &Config, w: usize) -> matrix::Plan {
    let list = |v: &[String]| v.join(",");
    let kernels = match c.kernels.is_empty() {
        true => FACADE.map(String::from).to_vec(),
        false => c.kernels.clone(),
    };
    let sizes: Vec<String> = c.sizes.iter().map(|n| n.to_string()).collect();
    let mut args: Vec<String> = vec![
        "--kernels".into(),
        list(&kernels),
        "--sizes".into(),
        list(&sizes),
        "--width".into(),
        w.to_string(),
        "--owned".into(),
        "--min-rounds".into(),
        c.min_rounds.to_string(),
    ];
    let mut pass = |flag: &str, value: Option<String>| {
        if let Some(v) = value {
            args.extend([flag.to_string(), v]);
        }
    };
    pass("--only", c.only.clone());
    pass("--block", (c.block != 0).then(|| c.block.to_string()));
    pass("--wide", (c.wide != 0).then(|| c.wide.to_string()));
    pass("--aspect", c.aspect.map(|x| x.to_string()));
    if c.svd_auto {
        args.push("--svd-auto".into());
    }
    let batch_cases = match c.batch_cases.as_slice() {
        [none] if none == "none" => Vec::new(),
        cases => cases.to_vec(),
    };
    matrix::Plan {
        conditions: c.conditions.clone(),
        runs: c.runs as usize,
        out: c.out.clone(),
        width: w,
        table_args: args,
        batch_cases,
    }
}

fn parse_blocks(s: &str) -> Result<(Duration, usize), String> {
    let (p, c) = s.split_once(':').ok_or("PAUSE_MS:CALLS")?;
    let pause = p.parse().map_err(|e| format!("PAUSE_MS: {e}"))?;
    let calls = c.parse().map_err(|e| format!("CALLS: {e}"))?;
    Ok((Duration::from_millis(pause), calls))
}

fn parse_threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(t) if t >= 1 => Ok(t),
        _ => Err("a thread count, at least 1".into()),
    }
}

fn parse_aspect(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x >= 1.0 => Ok(x),
        _ => Err("X >= 1 (tall)".into()),
    }
}

/// Every family of the facade, in the matrix's order.
const FACADE: [&str; 17] = [
    "gemm",
    "trsm",
    "lu",
    "full_piv_lu",
    "cholesky",
    "ldlt",
    "lblt",
    "qr",
    "col_piv_qr",
    "svd",
    "evd",
    "eigen",
    "sparse",
    "sparse_sparse",
    "sparse_cholesky",
    "sparse_lu",
    "sparse_qr",
];

fn main() {
    let mut config = Config::parse();
    let w = config
        .width
        .unwrap_or_else(|| teamalg::available_cpus().max(2));
    if config.sizes.is_empty() {
        config.sizes = match config.matrix || config.several_teams {
            true => vec![256, 512],
            false => vec![32, 64, 128, 256, 512, 1024, 2048],
        };
    }
    if config.matrix {
        // Before any load of this process starts: the runs start their own.
        return matrix::run(&matrix_plan(&config, w));
    }
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
    if config.several_teams {
        return several_teams::run(&several_teams::Plan {
            threads: config.threads_list.clone(),
            sizes: config.sizes.clone(),
            width: config.width.unwrap_or_else(teamalg::available_cpus),
            rounds: (config.min_rounds as usize).max(several_teams::MIN_ROUNDS),
            params: teamalg::kernels::lu::LuParams {
                block_size: config.block,
                wide_size: config.wide,
                ..Default::default()
            },
            csv: config.csv.clone(),
        });
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
        dissection: config.dissection,
    };
    if config.dissection && !cfg!(feature = "metis") {
        eprintln!("--dissection needs a build with the feature `metis`");
        std::process::exit(2);
    }
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
