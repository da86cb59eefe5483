//! The table (the default mode): per kernel, size and scalar type, four arms side by side
//! (faer serial, faer on rayon, teamalg on a held team, teamalg with a pool and team per call),
//! their medians and ratios to faer serial, and `--csv` rows.

use std::cell::RefCell;
use std::time::Duration;

use faer::Par;
use teamalg_tools::csv::Csv;
use teamalg_tools::tour::team::held_team;

use crate::cases::Row;
use crate::rounds::{block_rounds, pairs, phase_report, ratio, rounds, stats, Times};

/// The columns of the `--csv` rows.
pub(crate) const CSV_HEADER: &str = teamalg_tools::csv::ARM_COLUMNS;

/// The arms, in the order of the table's columns and of the CSV rows.
pub(crate) const ARMS: [&str; 4] = ["faer_serial", "faer_rayon", "teamalg_team", "team_per_call"];

/// How a table's cells are timed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Pattern {
    /// Arms interleaved call by call, no pauses (what users meet); with the on and off phases
    /// of a load that comes and goes (`--load-phases`), for whole cycles of them.
    Interleaved(Option<(Duration, Duration)>),
    /// `--settled`: each arm alone against faer serial after a 50 ms pause.
    Settled,
    /// `--blocks`: each arm in turn pauses, then makes this many calls back to back.
    Blocks(Duration, usize),
}

/// One table: its width, how it times, and where its CSV rows go.
pub(crate) struct Table {
    pub(crate) width: usize,
    pub(crate) pattern: Pattern,
    pub(crate) csv: Option<RefCell<Csv>>,
    /// Timed rounds per cell at the least (`--min-rounds`).
    pub(crate) min_rounds: usize,
}

impl Table {
    /// Prints the table's title and column header.
    pub(crate) fn header(&self) {
        let w = self.width;
        let pattern = match self.pattern {
            Pattern::Settled => {
                "; each arm alone against faer serial after a 50 ms pause (settled)".to_string()
            }
            Pattern::Blocks(pause, calls) => format!(
                "; blocks: each arm {calls} calls back to back after a {} ms pause, in turn",
                pause.as_millis()
            ),
            Pattern::Interleaved(_) => "; arms interleaved call by call, no pauses".to_string(),
        };
        println!(
            "kernels at width {w}, {} CPUs; times in us, medians (ratio to faer serial){pattern}\n",
            teamalg::available_cpus(),
        );
        if matches!(self.pattern, Pattern::Settled) {
            println!(
                "{:<12} {:>5} {:>10} {:>17} {:>17} {:>17}",
                "kernel", "n", "faer seq", "faer rayon", "teamalg team", "team per call"
            );
        } else {
            println!(
                "{:<12} {:>5} {:>10} {:>17} {:>17} {:>17} {:>10} {:>8}",
                "kernel",
                "n",
                "faer seq",
                "faer rayon",
                "teamalg team",
                "team per call",
                "p90",
                "per/team"
            );
        }
    }

    /// Times one row at each of its sizes and prints a line per size (and, with load phases,
    /// the held team's and the team-per-call arm's ratios per phase).
    pub(crate) fn row(&self, row: &Row<'_>) {
        let (name, w) = (row.name, self.width);
        let team = held_team(w);
        let us = |t: f64| t * 1e6;
        for &n in &row.sizes {
            let c = RefCell::new((row.case)(n));
            let prepare = || c.borrow_mut().prepare();
            let budget = Duration::from_millis(600);
            let mut seq = || c.borrow_mut().faer(Par::Seq);
            let mut rayon = || c.borrow_mut().faer(Par::rayon(w));
            let mut held = || c.borrow_mut().teamalg(&team);
            // The pool and team are built and dropped inside the timed call.
            let mut per_call = || {
                let t = held_team(w);
                c.borrow_mut().teamalg(&t);
            };
            let arms: &mut [&mut dyn FnMut()] =
                &mut [&mut seq, &mut rayon, &mut held, &mut per_call];
            let t = match self.pattern {
                Pattern::Settled => {
                    settled(name, n, prepare, arms, budget);
                    continue;
                }
                Pattern::Blocks(pause, calls) => Times {
                    arms: block_rounds(prepare, arms, (pause, calls), budget * 4),
                    starts: Vec::new(),
                },
                Pattern::Interleaved(phases) => {
                    rounds(prepare, arms, budget, phases, self.min_rounds)
                }
            };
            self.csv_rows(name, n, &t.arms);
            let a = &t.arms;
            let (s, _) = stats(&a[0]);
            let (ray, held_t, fresh) = (stats(&a[1]).0, stats(&a[2]), stats(&a[3]));
            println!(
                "{name:<12} {n:>5} {:>10.1} {:>10.1} ({:>4.2}) {:>10.1} ({:>4.2}) {:>10.1} ({:>4.2}) {:>10.1} {:>8.2}",
                us(s),
                us(ray),
                ratio(&a[1], &a[0]),
                us(held_t.0),
                ratio(&a[2], &a[0]),
                us(fresh.0),
                ratio(&a[3], &a[0]),
                us(fresh.1),
                ratio(&a[3], &a[2]),
            );
            if matches!(self.pattern, Pattern::Interleaved(Some(_))) {
                println!("{:<18} phases, held team: {}", "", phase_report(&t, 2));
                println!("{:<18} phases, per call:  {}", "", phase_report(&t, 3));
            }
        }
    }

    /// Appends the arms of one cell to the `--csv` file, if any.
    fn csv_rows(&self, name: &str, n: usize, times: &[Vec<f64>]) {
        let Some(csv) = &self.csv else { return };
        let (kernel, scalar) = name.split_once(' ').unwrap_or((name, ""));
        let mut csv = csv.borrow_mut();
        for (arm, t) in ARMS.iter().zip(times) {
            let (med, p90) = stats(t);
            let max = t.iter().copied().fold(0.0, f64::max);
            let r = ratio(t, &times[0]);
            let us = |x: f64| format!("{:.3}", x * 1e6);
            csv.row(&[
                kernel,
                scalar,
                &n.to_string(),
                &self.width.to_string(),
                arm,
                &us(med),
                &us(p90),
                &us(max),
                &format!("{r:.4}"),
            ]);
        }
    }
}

/// `--settled`: each parallel arm alone against faer serial (`arms[0]`) after a 50 ms pause;
/// prints one line.
fn settled(
    name: &str,
    n: usize,
    mut prepare: impl FnMut(),
    arms: &mut [&mut dyn FnMut()],
    budget: Duration,
) {
    let us = |t: f64| t * 1e6;
    let (seq, rest) = arms.split_first_mut().expect("faer serial's arm");
    let mut row = Vec::new();
    let mut t_seq = 0.0;
    for arm in rest {
        std::thread::sleep(Duration::from_millis(50));
        let (tseq, tarm, r) = pairs(&mut prepare, &mut **seq, &mut **arm, budget);
        t_seq = tseq;
        row.push((tarm, r));
    }
    println!(
        "{name:<12} {n:>5} {:>10.1} {:>10.1} ({:>4.2}) {:>10.1} ({:>4.2}) {:>10.1} ({:>4.2})  settled",
        us(t_seq),
        us(row[0].0),
        row[0].1,
        us(row[1].0),
        row[1].1,
        us(row[2].0),
        row[2].1,
    );
}
