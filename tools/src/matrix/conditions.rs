//! The load conditions of `--matrix` (`--conditions`): what runs beside one run of the table,
//! as the arguments that start it, and the goal a cell has under it.
//!
//! The goals are those of `docs/perf/busy.md`: on a quiet machine the held team within 3 % of
//! faer serial and the team built per call within 5 %; beside busy processes at nice 0, within
//! 5 %; beside processes at a higher nice level (which yield to the benchmark), no more than
//! 10 % slower relative to serial than the same arm is quiet. A load that comes and goes has
//! no goal of its own here: its ratio over whole cycles is shown, and each run's per-phase
//! report is in its log.

/// One load condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// Nothing beside the run (`quiet`).
    Quiet,
    /// `processes` busy processes at nice `nice` for the whole run (`N:NICE`).
    Busy {
        /// How many.
        processes: usize,
        /// Their nice level.
        nice: i32,
    },
    /// One busy process at nice 0, running 500 ms and stopped 500 ms in turn (`phases`).
    Phases,
}

/// The arms of the matrix: teamalg on a held team, and with a pool and team built per call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Arm {
    /// teamalg on a team held across calls.
    Held,
    /// teamalg with a pool and team built for each call.
    PerCall,
}

impl Arm {
    /// Both, in the table's order.
    pub const BOTH: [Arm; 2] = [Arm::Held, Arm::PerCall];

    /// The arm's name in the CSV rows (`kernels --csv`, `batch --csv`).
    pub fn csv_name(self) -> &'static str {
        match self {
            Arm::Held => "teamalg_team",
            Arm::PerCall => "team_per_call",
        }
    }

    /// The arm's name in the table's header.
    pub fn label(self) -> &'static str {
        match self {
            Arm::Held => "held",
            Arm::PerCall => "per call",
        }
    }
}

/// What a cell's ratio must stay within.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Goal {
    /// At most this ratio to faer serial.
    AtMost(f64),
    /// At most this factor times the same arm's ratio on the quiet machine (the mean of the
    /// quiet runs).
    OfQuiet(f64),
    /// None: the ratio is shown only.
    Shown,
}

impl Condition {
    /// `quiet`, `phases`, or `N:NICE` (N busy processes, nice level NICE).
    pub fn parse(s: &str) -> Result<Condition, String> {
        match s {
            "quiet" => Ok(Condition::Quiet),
            "phases" => Ok(Condition::Phases),
            _ => {
                let (n, nice) = s
                    .split_once(':')
                    .ok_or("quiet, phases or N:NICE (busy processes: nice level)")?;
                Ok(Condition::Busy {
                    processes: n.parse().map_err(|e| format!("N in {s}: {e}"))?,
                    nice: nice.parse().map_err(|e| format!("NICE in {s}: {e}"))?,
                })
            }
        }
    }

    /// The name `--conditions` takes (and the table's header shows).
    pub fn name(self) -> String {
        match self {
            Condition::Quiet => "quiet".into(),
            Condition::Busy { processes, nice } => format!("{processes}:{nice}"),
            Condition::Phases => "phases".into(),
        }
    }

    /// In words.
    pub fn describe(self) -> String {
        match self {
            Condition::Quiet => "nothing beside the run".into(),
            Condition::Busy { processes, nice } => {
                format!("{processes} busy process(es) at nice {nice} for the whole run")
            }
            Condition::Phases => {
                "1 busy process at nice 0, running 500 ms and stopped 500 ms in turn (each cell \
                 runs for six cycles)"
                    .into()
            }
        }
    }

    /// The arguments that start this load beside one run of `kernels` or `batch`.
    pub fn load_args(self) -> Vec<String> {
        let args: &[&str] = match self {
            Condition::Quiet => &[],
            Condition::Busy { .. } => &["--load"],
            Condition::Phases => &["--load", "1:0", "--load-phases", "500:500"],
        };
        let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        if let Condition::Busy { .. } = self {
            args.push(self.name());
        }
        args
    }

    /// The goal of `arm`'s cells under this condition.
    pub fn goal(self, arm: Arm) -> Goal {
        match (self, arm) {
            (Condition::Quiet, Arm::Held) => Goal::AtMost(1.03),
            (Condition::Quiet, Arm::PerCall) => Goal::AtMost(1.05),
            (Condition::Busy { nice, .. }, _) if nice <= 0 => Goal::AtMost(1.05),
            (Condition::Busy { .. }, _) => Goal::OfQuiet(1.10),
            (Condition::Phases, _) => Goal::Shown,
        }
    }
}

impl Goal {
    /// Whether `ratio` misses the goal, given the arm's quiet ratio (`None`: not measured, and
    /// a goal relative to it is then not judged).
    pub fn missed(self, ratio: f64, quiet: Option<f64>) -> bool {
        match self {
            Goal::AtMost(x) => ratio > x,
            Goal::OfQuiet(f) => quiet.is_some_and(|q| ratio > f * q),
            Goal::Shown => false,
        }
    }

    /// In words, for the list of missed cells.
    pub fn describe(self, quiet: Option<f64>) -> String {
        match (self, quiet) {
            (Goal::AtMost(x), _) => format!("at most {x:.2}"),
            (Goal::OfQuiet(f), Some(q)) => {
                format!("at most {:.2}, {f:.2} x quiet {q:.2}", f * q)
            }
            (Goal::OfQuiet(f), None) => format!("at most {f:.2} x quiet"),
            (Goal::Shown, _) => "none".into(),
        }
    }
}
