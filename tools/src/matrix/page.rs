//! The load matrix's markdown (`--matrix --out FILE`): the front table of `docs/perf/busy.md`,
//! written from the CSV rows of every condition and run, so nothing in it is typed by hand.
//!
//! One row per kernel, scalar and size (batch rows too), in the order the runs measured them;
//! per condition a "held" and a "per call" column, each cell the ratio of every run in turn
//! (`r1 / r2`: a cell that moved between runs says so), marked `**` when a run misses the
//! condition's goal ([`super::conditions`]); then the held team's p90 and max under one busy process
//! at nice 0, first run; below the table, the marked cells in words.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::matrix::conditions::{Arm, Condition};

/// The rows of one CSV, as [`crate::csv::parse`] reads them.
pub type Rows = Vec<BTreeMap<String, String>>;

/// Where and how the matrix ran: what the header names.
#[derive(Debug, Clone)]
pub struct Header {
    /// The CPU model and count.
    pub host: String,
    /// `date -u` when the matrix began.
    pub date: String,
    /// The commit measured.
    pub commit: String,
    /// The command line, as typed.
    pub command: String,
    /// The width of the parallel arms.
    pub width: usize,
    /// Where the runs' CSV files and logs are.
    pub files: String,
}

/// A row of the table: kernel, scalar and size, as the CSV names them.
type Key = (String, String, String);

/// The measured ratios: per row, condition (its index) and arm, one entry per run.
type Ratios = BTreeMap<(Key, usize, Arm), Vec<Option<f64>>>;

/// The page for `rows[c][r]`, the CSV rows of run `r` under `conditions[c]`.
///
/// # Panics
/// When a row lacks a column of the benchmarks' header or a ratio does not parse.
pub fn page(conditions: &[Condition], rows: &[Vec<Rows>], h: &Header) -> String {
    let mut order: Vec<Key> = Vec::new();
    let mut ratios: Ratios = BTreeMap::new();
    for (c, runs) in rows.iter().enumerate() {
        for (r, run) in runs.iter().enumerate() {
            for row in run {
                let key = key(row);
                if !order.contains(&key) {
                    order.push(key.clone());
                }
                let Some(arm) = Arm::BOTH.into_iter().find(|a| a.csv_name() == row["arm"]) else {
                    continue;
                };
                let ratio: f64 = row["ratio_to_serial"].parse().expect("a ratio");
                let per_run = ratios.entry((key, c, arm)).or_default();
                per_run.resize(runs.len(), None);
                per_run[r] = Some(ratio);
            }
        }
    }
    let busy_1_0 = conditions.iter().position(|&c| {
        c == Condition::Busy {
            processes: 1,
            nice: 0,
        }
    });
    let quiet = conditions.iter().position(|&c| c == Condition::Quiet);

    let mut out = String::new();
    let w = |out: &mut String, s: &str| writeln!(out, "{s}").expect("a String takes writes");
    w(&mut out, "# The load matrix\n");
    w(&mut out, &header_text(conditions, rows, h));
    let mut head = String::from("| cell |");
    let mut rule = String::from("| --- |");
    for c in conditions {
        for arm in Arm::BOTH {
            write!(head, " {} {} |", c.name(), arm.label()).expect("a String takes writes");
            rule.push_str(" --- |");
        }
    }
    if busy_1_0.is_some() {
        head.push_str(" held p90 / max (us), 1:0 run 1 |");
        rule.push_str(" ---: |");
    }
    w(&mut out, &head);
    w(&mut out, &rule);
    let mut missed = Vec::new();
    for key in &order {
        let mut line = format!("| {} |", label(key));
        for (c, &condition) in conditions.iter().enumerate() {
            for arm in Arm::BOTH {
                let each = ratios.get(&(key.clone(), c, arm));
                let quiet_mean = quiet.and_then(|q| mean(ratios.get(&(key.clone(), q, arm))));
                let goal = condition.goal(arm);
                let cell = cell(each);
                let miss = each
                    .into_iter()
                    .flatten()
                    .flatten()
                    .any(|&r| goal.missed(r, quiet_mean));
                if miss {
                    missed.push(format!(
                        "- {}, {} {}: {cell} (goal {})",
                        label(key),
                        condition.name(),
                        arm.label(),
                        goal.describe(quiet_mean)
                    ));
                    write!(line, " {cell} ** |").expect("a String takes writes");
                } else {
                    write!(line, " {cell} |").expect("a String takes writes");
                }
            }
        }
        if let Some(c) = busy_1_0 {
            line.push_str(&format!(" {} |", held_tails(key, rows[c].first())));
        }
        w(&mut out, &line);
    }
    w(&mut out, "");
    if missed.is_empty() {
        w(&mut out, "No cell misses its goal.");
    } else {
        w(
            &mut out,
            &format!("Cells that miss their goal (`**`, {}):\n", missed.len()),
        );
        for m in missed {
            w(&mut out, &m);
        }
    }
    out
}

/// The header: the run, the conditions, the arms and the goals.
fn header_text(conditions: &[Condition], rows: &[Vec<Rows>], h: &Header) -> String {
    let runs = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut s = String::new();
    let mut w = |t: String| writeln!(s, "{t}").expect("a String takes writes");
    w("Written by `kernels --matrix` from the CSV rows of its runs; not edited by hand.\n".into());
    w(format!("- Host: {}", h.host));
    w(format!("- Date: {}", h.date));
    w(format!("- Commit: {}", h.commit));
    w(format!("- Command: `{}`", h.command));
    w(format!(
        "- Width {}; each condition and run is one fresh run of `kernels` (every family \
         through the facade's owned forms, `--owned`) and of `batch`, with the load beside \
         it; {runs} run(s) per condition, the conditions in turn within each run. Rows, \
         output and per-phase reports: `{}`.",
        h.width, h.files
    ));
    w("- Conditions:".into());
    for c in conditions {
        w(format!("  - `{}`: {}", c.name(), c.describe()));
    }
    w(
        "- A cell is the median over rounds of the arm's time over faer serial's in the same \
         round (below 1 is faster than serial), one per run, `r1 / r2`: \"held\" is teamalg on \
         a held team, \"per call\" with a pool and team built in each call. Batch rows \
         (`batch ...`) compare against a serial loop of faer's calls; their size is the number \
         of problems in the batch."
            .into(),
    );
    w(
        "- `**`: a run misses its goal. Quiet: held at most 1.03, per call at most 1.05; \
         busy processes at nice 0: at most 1.05; at a higher nice level: at most 10 % above \
         the mean of the same arm's quiet runs; `phases`: no goal (the ratio over whole on and \
         off cycles; the runs' logs have the per-phase report)."
            .into(),
    );
    s
}

fn key(row: &BTreeMap<String, String>) -> Key {
    (
        row["kernel"].clone(),
        row["scalar"].clone(),
        row["n"].clone(),
    )
}

/// The row's name in markdown (`sp*sp` with its star escaped).
fn label((kernel, scalar, n): &Key) -> String {
    format!("{kernel} {scalar} {n}").replace('*', "\\*")
}

/// The runs' ratios, `r1 / r2`, `-` for a run without the cell.
fn cell(each: Option<&Vec<Option<f64>>>) -> String {
    match each {
        None => "-".into(),
        Some(each) => each
            .iter()
            .map(|r| r.map_or("-".into(), |r| format!("{r:.2}")))
            .collect::<Vec<_>>()
            .join(" / "),
    }
}

/// The mean of the runs' ratios; `None` without any.
fn mean(each: Option<&Vec<Option<f64>>>) -> Option<f64> {
    let v: Vec<f64> = each?.iter().flatten().copied().collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The held team's p90 and max in `run`, `-` without the cell.
fn held_tails(key: &Key, run: Option<&Rows>) -> String {
    let row = run
        .into_iter()
        .flatten()
        .find(|r| &self::key(r) == key && r["arm"] == Arm::Held.csv_name());
    row.map_or("-".into(), |r| {
        format!("{} / {}", us(&r["p90_us"]), us(&r["max_us"]))
    })
}

/// A time in microseconds: whole from 100 us, one decimal below.
fn us(field: &str) -> String {
    let x: f64 = field.parse().expect("a time in us");
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// The goal's check is the one part with a rule of its own; the rest is layout.
#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "kernel,scalar,n,width,arm,median_us,p90_us,max_us,ratio_to_serial\n";

    fn rows(lines: &str) -> Rows {
        crate::csv::parse(&format!("{HEADER}{lines}"))
    }

    #[test]
    fn cells_list_every_run_and_mark_the_misses_of_their_condition() {
        let conditions = [
            Condition::Quiet,
            Condition::Busy {
                processes: 1,
                nice: 0,
            },
            Condition::Busy {
                processes: 1,
                nice: 19,
            },
            Condition::Phases,
        ];
        let quiet = |held: &str, per: &str| {
            rows(&format!(
                "lu,f64,256,2,teamalg_team,1,2,3,{held}\nlu,f64,256,2,team_per_call,1,2,3,{per}\n"
            ))
        };
        let all = vec![
            // Quiet: held 1.04 misses 1.03; per call 1.04 is within 1.05.
            vec![quiet("1.04", "1.04"), quiet("0.80", "0.80")],
            vec![
                rows("lu,f64,256,2,teamalg_team,900,1234.4,2000,1.06\n"),
                rows("lu,f64,256,2,teamalg_team,900,5,6,1.00\n"),
            ],
            // Both arms' quiet mean is 0.92, 10 % above it 1.012: the held team's 1.01 is
            // within it, the per call arm's 1.02 is not.
            vec![
                rows(
                    "lu,f64,256,2,teamalg_team,1,2,3,1.01\nlu,f64,256,2,team_per_call,1,2,3,1.02\n",
                ),
                rows("lu,f64,256,2,teamalg_team,1,2,3,1.01\n"),
            ],
            vec![rows("lu,f64,256,2,teamalg_team,1,2,3,9.00\n"), Vec::new()],
        ];
        let h = Header {
            host: "h".into(),
            date: "d".into(),
            commit: "c".into(),
            command: "kernels --matrix".into(),
            width: 2,
            files: "/tmp/x".into(),
        };
        let page = page(&conditions, &all, &h);
        let line = page
            .lines()
            .find(|l| l.starts_with("| lu f64 256"))
            .unwrap();
        assert_eq!(
            line,
            "| lu f64 256 | 1.04 / 0.80 ** | 1.04 / 0.80 | 1.06 / 1.00 ** | - \
             | 1.01 / 1.01 | 1.02 / - ** | 9.00 / - | - | 1234 / 2000 |"
        );
        assert!(page.contains("Cells that miss their goal (`**`, 3)"));
        assert!(page.contains(
            "- lu f64 256, 1:19 per call: 1.02 / - (goal at most 1.01, 1.10 x quiet 0.92)"
        ));
    }
}
