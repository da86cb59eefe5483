//! The perf front page (`docs/perf/kernels.md`): the current numbers of the kernel benchmark,
//! one table per family, written from its CSV rows (`kernels --csv`), with the run's host, date,
//! commit and command. `scripts/perf-page.sh` runs the benchmark and writes the page; nothing on
//! the page is typed by hand.

use std::collections::BTreeMap;
use std::fmt::Write;

/// Where a run was made: what the page's header names.
#[derive(Debug, Clone)]
pub struct Run {
    /// The host, in words (CPU model, CPUs, memory).
    pub host: String,
    /// The date of the run (`YYYY-MM-DD`).
    pub date: String,
    /// The commit measured.
    pub commit: String,
    /// The command that made the CSV.
    pub command: String,
}

/// The families, in the page's order: a title and the benchmark's kernel names.
const FAMILIES: [(&str, &[&str]); 5] = [
    (
        "Dense: GEMM, triangular solve, LU, Cholesky, LDL^H, Bunch-Kaufman, QR",
        &[
            "gemm",
            "trsm",
            "lu",
            "full_piv_lu",
            "cholesky",
            "ldlt",
            "lblt",
            "qr",
            "col_piv_qr",
        ],
    ),
    ("SVD and its bidiagonalization", &["svd", "bidiag"]),
    (
        "Self-adjoint EVD and its tridiagonalization",
        &["evd", "tridiag"],
    ),
    ("General EVD", &["eigen"]),
    ("Sparse products", &["sparse", "sp*sp"]),
];

/// The rows of one CSV, as [`crate::csv::parse`] reads them.
pub type Rows = Vec<BTreeMap<String, String>>;

/// One cell of the benchmark (a kernel, scalar, size and width): per run, per arm, its row.
type Cells =
    BTreeMap<(usize, String, usize, usize), Vec<BTreeMap<String, BTreeMap<String, String>>>>;

/// The page for the CSV rows of the runs `runs` (the same command run again, in turn), made
/// as `run` says. The ratios show every run, `a / b`, so a cell that moved between runs says
/// so; the times are the first run's. A cell measured more than once in a run keeps its last
/// row.
///
/// # Panics
/// When a row lacks a column of the benchmark's header or a number does not parse.
pub fn page(runs: &[Rows], run: &Run) -> String {
    let mut cells: Cells = BTreeMap::new();
    let order = |k: &str| {
        FAMILIES
            .iter()
            .flat_map(|f| f.1.iter())
            .position(|&x| x == k)
            .unwrap_or(usize::MAX)
    };
    for (i, rows) in runs.iter().enumerate() {
        for r in rows {
            let key = (
                order(&r["kernel"]),
                format!("{} {}", r["kernel"], r["scalar"]),
                r["n"].parse().expect("n"),
                r["width"].parse().expect("width"),
            );
            let per_run = cells.entry(key).or_default();
            per_run.resize_with(runs.len(), BTreeMap::new);
            per_run[i].insert(r["arm"].clone(), r.clone());
        }
    }
    let mut out = String::new();
    let w = |out: &mut String, s: &str| writeln!(out, "{s}").expect("a String takes writes");
    w(&mut out, "# Kernels against faer: the current numbers\n");
    w(
        &mut out,
        "Written by `scripts/perf-page.sh` from the kernel benchmark's CSV; not edited by hand. \
         The runs before this one, with what each changed and why, are in \
         [`runs/kernels-log.md`](runs/kernels-log.md). The facade's owned forms against \
         faer's, with OpenBLAS's LAPACK beside them, quiet and beside a busy process, are \
         [`front.md`](front.md).\n",
    );
    w(&mut out, &format!("- Host: {}", run.host));
    w(&mut out, &format!("- Date: {}", run.date));
    w(&mut out, &format!("- Commit: {}", run.commit));
    w(&mut out, &format!("- Command: `{}`", run.command));
    w(
        &mut out,
        "- Arms, interleaved call by call with no pauses (a round is one call of each): faer \
         serial, faer on rayon, teamalg on a held team, teamalg with a pool and team built per \
         call. A ratio is the median over rounds of the arm's time over faer serial's in the \
         same round (below 1 is faster than serial); times are in microseconds, the arm's own \
         median, p90 and max over its calls.",
    );
    w(
        &mut out,
        &format!(
            "- Runs: {}; a ratio cell lists each run's ratio in turn, the times are the first \
             run's.\n",
            runs.len()
        ),
    );
    for (title, kernels) in FAMILIES {
        let mine: Vec<_> = cells
            .iter()
            .filter(|((_, name, _, _), _)| {
                kernels.contains(&name.split(' ').next().unwrap_or_default())
            })
            .collect();
        if mine.is_empty() {
            continue;
        }
        w(&mut out, &format!("## {title}\n"));
        w(
            &mut out,
            "| kernel | n | width | faer serial us (p90, max) | faer rayon | held team | held team us (p90, max) | team per call | per call us (p90, max) |",
        );
        w(
            &mut out,
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        );
        for ((_, name, n, width), per_run) in mine {
            let times = |arm: &str| {
                per_run[0].get(arm).map_or("-".into(), |r| {
                    format!(
                        "{} ({}, {})",
                        us(&r["median_us"]),
                        us(&r["p90_us"]),
                        us(&r["max_us"])
                    )
                })
            };
            let ratio = |arm: &str| {
                let each: Vec<String> = per_run
                    .iter()
                    .map(|arms| {
                        arms.get(arm).map_or("-".into(), |r| {
                            let x: f64 = r["ratio_to_serial"].parse().expect("ratio");
                            format!("{x:.2}")
                        })
                    })
                    .collect();
                each.join(" / ")
            };
            w(
                &mut out,
                &format!(
                    "| {name} | {n} | {width} | {} | {} | {} | {} | {} | {} |",
                    times("faer_serial"),
                    ratio("faer_rayon"),
                    ratio("teamalg_team"),
                    times("teamalg_team"),
                    ratio("team_per_call"),
                    times("team_per_call"),
                ),
            );
        }
        w(&mut out, "");
    }
    out
}

/// A time in microseconds, to three significant digits (at least a whole microsecond).
fn us(field: &str) -> String {
    let x: f64 = field.parse().expect("a time in us");
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> Run {
        Run {
            host: "h".into(),
            date: "2026-12-03".into(),
            commit: "abc1234".into(),
            command: "kernels --csv x".into(),
        }
    }

    #[test]
    fn one_table_per_family_in_order_with_the_runs_header() {
        let text = "kernel,scalar,n,width,arm,median_us,p90_us,max_us,ratio_to_serial\n\
            evd,f64,256,2,faer_serial,5000,5100,5300,1.0000\n\
            evd,f64,256,2,teamalg_team,3000,3100,3200,0.6000\n\
            lu,c64,512,2,faer_serial,9000,9100,9900,1.0000\n\
            lu,c64,512,2,teamalg_team,4500,4600,5000,0.5012\n\
            lu,c64,512,2,team_per_call,4700,4800,5100,0.5200\n\
            lu,c64,512,2,faer_rayon,6000,6100,7000,0.6667\n";
        let page = page(&[crate::csv::parse(text)], &run());
        let dense = page.find("## Dense").unwrap();
        let evd = page.find("## Self-adjoint EVD").unwrap();
        assert!(dense < evd, "families in order");
        assert!(!page.contains("## Sparse"), "no empty family");
        assert!(page.contains("- Commit: abc1234") && page.contains("`kernels --csv x`"));
        assert!(page.contains("| lu c64 | 512 | 2 | 9000 (9100, 9900) | 0.67 | 0.50 | 4500 (4600, 5000) | 0.52 | 4700 (4800, 5100) |"));
        assert!(page.contains(
            "| evd f64 | 256 | 2 | 5000 (5100, 5300) | - | 0.60 | 3000 (3100, 3200) | - | - |"
        ));
    }

    #[test]
    fn a_cell_measured_twice_keeps_its_last_row() {
        let text = "kernel,scalar,n,width,arm,median_us,p90_us,max_us,ratio_to_serial\n\
            gemm,f64,64,2,teamalg_team,10,11,12,0.9000\n\
            gemm,f64,64,2,teamalg_team,20,21,22,0.8000\n";
        let page = page(&[crate::csv::parse(text)], &run());
        assert!(page.contains("| 0.80 | 20.0 (21.0, 22.0) |"), "{page}");
    }

    #[test]
    fn every_run_shows_its_ratio_and_the_first_runs_times() {
        let header = "kernel,scalar,n,width,arm,median_us,p90_us,max_us,ratio_to_serial\n";
        let one = format!("{header}qr,f64,256,2,teamalg_team,100,110,120,0.7000\n");
        let two = format!("{header}qr,f64,256,2,teamalg_team,90,95,99,0.6400\n");
        let runs = [crate::csv::parse(&one), crate::csv::parse(&two)];
        let page = page(&runs, &run());
        assert!(page.contains("| 0.70 / 0.64 | 100 (110, 120) |"), "{page}");
        assert!(page.contains("- Runs: 2;"));
    }
}
