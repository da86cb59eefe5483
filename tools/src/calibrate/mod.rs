//! Host calibration: measure what a section costs on this machine, per kind of token and
//! width, the serial rate of each kernel family, and what splitting each family's regions
//! costs beyond the dispatch; keep them in a host profile that pools load
//! (`PoolBuilder::profile`, `TEAMALG_PROFILE`). The design record is `docs/gates.md`.
//!
//! - **Dispatch rows.** Sections whose participants each run a 10 us busy share, back to back,
//!   in rounds of [`ROUND`]; a sample is the section's time minus the share. A sample is
//!   rejected when two shares ran on one thread (a participant came too late and the caller
//!   ran its share: that is a serial section, not a dispatch) or a thread was descheduled (a
//!   gap in a share's clock, or an involuntary switch of the caller). At least [`MIN_ROUNDS`]
//!   rounds, spread over [`DISPATCH_SPAN`] with the other rows (a small virtual machine changes
//!   speed for a few hundred milliseconds at a time); the cost is the median of the rounds'
//!   medians, stable when most of them agree with it within [`STABLE`]. A row with too few
//!   kept samples is not recorded: the class row stays.
//! - **Rates.** Each kernel family's serial path (`f64`, `c64`, `f32`, `c32`) at n = 32, 64,
//!   128 and 256 ([`RATE_SIZES`]; small calls run fewer units per nanosecond), the median of
//!   five runs, repeated until two medians agree within 5 %: a [`RateCurve`].
//! - **Split costs.** At each of [`split_widths`], each gated family's kernel on a held team of
//!   that width, every section forced parallel, against the same call forced serial, in blocks,
//!   at sizes around where the two cross; the least-squares fit of
//!   `parallel - sections * D(k) = sections * overhead + serial / (k * efficiency)` over the
//!   sizes ([`SplitCost`]), one anchor of the family's [`SplitCurve`] per width.
//!
//! One file per part: `dispatch.rs`, `rates.rs`, `splits.rs`; this one holds what they share
//! and the whole calibration.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::traits::ComplexField;
use faer::{c32, c64, Accum, Mat, Par};
use teamalg::gates::trace;
use teamalg::gates::{
    DispatchCosts, DispatchKind, Family, Fingerprint, HostProfile, ParThreshold, Rate, RateCurve,
    Scalar, SeenLoad, SplitCost, SplitCurve, Splits, WidthCosts, MAX_ANCHORS, MAX_SPLIT_WIDTHS,
};
use teamalg::kernels::cholesky::{cholesky_in_place, cholesky_in_place_scratch, CholeskyParams};
use teamalg::kernels::gemm::{matmul, GemmParams};
use teamalg::kernels::lu::{lu_in_place, lu_in_place_scratch, LuParams};
use teamalg::kernels::par::{Executor, Seq};
use teamalg::kernels::triangular::{solve_in_place, Diag, SolveParams, SolveSide, Triangle};

use teamalg::{Exec, Pool};

pub use crate::anchor::Anchor;
use crate::seen_load::LoadSampler;
use crate::stats::{median, percentile};

/// The share each participant runs per section.
pub const SHARE: Duration = Duration::from_micros(10);
/// Sections per round.
pub const ROUND: usize = 100;
/// How close to the row's cost more than half of the rounds' medians must be (larger over
/// smaller).
pub const STABLE: f64 = 1.15;
/// Rounds of a dispatch row at least, spread over time ([`DISPATCH_SPAN`]).
pub const MIN_ROUNDS: usize = 15;
const MAX_ROUNDS: usize = 21;
/// The time all dispatch rows of a calibration are spread over. A small virtual machine hands
/// work across its CPUs at one of two speeds for a few hundred milliseconds at a time (0.15
/// against 0.6 us per team section on the 2-vCPU Xeon guest, `docs/gates.md`): rounds taken
/// back to back measure whichever state the row met, rounds spread over a second measure the
/// host.
pub const DISPATCH_SPAN: Duration = Duration::from_secs(3);
/// A gap this long in a share's clock means its thread was descheduled.
const GAP: Duration = Duration::from_micros(4);
/// The fewest kept samples a row's cost may rest on.
const MIN_KEPT: usize = 60;

/// The widths measured on a machine with `cpus` CPUs: 2, 3, 4, 6, 8, 12, ... up to `cpus`
/// (always included), at most [`MAX_ANCHORS`].
pub fn anchor_widths(cpus: usize) -> Vec<usize> {
    let mut w = vec![];
    let mut k = 2;
    while k < cpus {
        w.push(k);
        // 2, 3, 4, 6, 8, 12, 16, 24, ...: steps of a half then a third of a power of two.
        k = if k.is_power_of_two() {
            k + k / 2
        } else {
            k / 3 * 4
        };
    }
    if cpus >= 2 {
        w.push(cpus);
    }
    while w.len() > MAX_ANCHORS {
        w.remove(w.len() / 2);
    }
    w
}

/// The widths split costs are fitted at on a machine with `cpus` CPUs: 2, 4, 8, ... below
/// `cpus`, and `cpus` itself; none below 2 CPUs. Where that makes more than six, every fourth
/// power of two (2, 8, 32, ...), and so on: a few seconds each. The widths between are read
/// off the curve ([`SplitCurve::at`]).
pub fn split_widths(cpus: usize) -> Vec<usize> {
    let mut factor = 2;
    loop {
        let mut w = vec![];
        let mut k = 2;
        while k < cpus {
            w.push(k);
            k = k.saturating_mul(factor);
        }
        if cpus >= 2 {
            w.push(cpus);
        }
        if w.len() <= SPLIT_WIDTHS_MAX {
            return w;
        }
        factor *= 2;
    }
}

/// The most widths a calibration fits split costs at.
const SPLIT_WIDTHS_MAX: usize = if MAX_SPLIT_WIDTHS < 6 {
    MAX_SPLIT_WIDTHS
} else {
    6
};

/// What a calibration step measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Sections of a kind of token at a width.
    Dispatch(DispatchKind, usize),
    /// The serial rate of a kernel family.
    Rate(Family),
    /// The split costs of a kernel family at a width.
    Split(Family, usize),
}

/// One step of a calibration, for a progress display.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    /// 1-based step number.
    pub done: usize,
    /// Steps in all.
    pub total: usize,
    /// What is measured.
    pub what: Measure,
}

/// The families whose split costs calibration fits: those whose regions a kernel gates.
pub const SPLIT_FAMILIES: [Family; 4] = [
    Family::Gemm,
    Family::TriangularSolve,
    Family::LuPartial,
    Family::Cholesky,
];

/// A fitted split cost and how well it fits.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitFit {
    /// The family.
    pub family: Family,
    /// Whether the scalars were complex (`c64`) or real (`f64`).
    pub complex: bool,
    /// The width of the team.
    pub width: usize,
    /// The fit.
    pub cost: SplitCost,
    /// The largest relative error of the fit over the sizes timed.
    pub worst_error: f64,
    /// The sizes timed.
    pub points: Vec<Timed>,
}

/// One size timed for a split fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timed {
    /// The size (`n x n`).
    pub n: usize,
    /// Sections of the parallel call.
    pub sections: usize,
    /// Serial time, ns (the least median of two blocks).
    pub serial_ns: f64,
    /// The time at the fit's width, every section parallel, ns (likewise).
    pub parallel_ns: f64,
    /// What the fitted model says of that time, ns.
    pub model_ns: f64,
}

/// What a calibration measured, with the profile it makes.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// The load it saw besides itself (also in the profile): see
    /// [`busy_reasons`](crate::seen_load::busy_reasons).
    pub load: SeenLoad,
    /// The profile to save.
    pub profile: HostProfile,
    /// Each dispatch anchor, with its spread and rejections.
    pub anchors: Vec<Anchor>,
    /// Each fitted split.
    pub fits: Vec<SplitFit>,
    /// How long the calibration took.
    pub took: Duration,
}

mod dispatch;
mod rates;
mod splits;
// Unit tests, not an integration test: a test binary of the tools crate would make `cargo test`
// build every benchmark program in full for it.
#[cfg(test)]
mod tests;

pub use dispatch::{judge, measure_anchor, round_gap, row_cost, SampleVerdict};
use rates::Workload;
pub use rates::{measure_rate, Sample, RATE_SIZES};
use splits::fit_split;

// ---- the whole calibration ----

/// Measures this machine's dispatch costs at [`anchor_widths`] of its CPUs, the serial rates
/// of the kernels' families ([`Family::KERNELS`]) and the split costs of
/// [`SPLIT_FAMILIES`], reporting each step to `progress`. A few seconds on an idle machine.
pub fn calibrate(mut progress: impl FnMut(Step)) -> Calibration {
    let start = Instant::now();
    let sampler = LoadSampler::start();
    let cpus = teamalg::available_cpus();
    let widths = anchor_widths(cpus);
    let split_at = split_widths(cpus);
    let total = widths.len() * DispatchKind::ALL.len()
        + Family::KERNELS.len()
        + SPLIT_FAMILIES.len() * split_at.len();
    let mut done = 0;
    let mut step = |what| {
        done += 1;
        progress(Step { done, total, what });
    };
    let defaults = DispatchCosts::host_default();
    let gap = round_gap(widths.len() * DispatchKind::ALL.len());
    let mut anchors = Vec::new();
    let mut costs = defaults;
    for kind in DispatchKind::ALL {
        let mut row = Vec::new();
        for &width in &widths {
            step(Measure::Dispatch(kind, width));
            let a = measure_anchor(kind, width, gap);
            if let Some(ns) = a.cost {
                row.push((width as u16, ns));
            }
            anchors.push(a);
        }
        // A row with no kept anchor (one CPU, or a host too loaded to measure) keeps the
        // class row rather than record a cost this host does not have.
        if let Ok(r) = WidthCosts::new(&row) {
            costs = costs.with(kind, r);
        }
    }
    let mut rates = Vec::new();
    for family in Family::KERNELS {
        step(Measure::Rate(family));
        rates.push((family, measure_rate(family)));
    }
    let mut profile = HostProfile {
        fingerprint: Fingerprint::current(),
        costs,
        rates,
        splits: Vec::new(),
        load: None,
    };
    let mut fits: Vec<SplitFit> = Vec::new();
    for &width in &split_at {
        // A team of this width, with the costs and rates just measured.
        let team = Pool::builder()
            .threads(width)
            .host_profile(profile.clone())
            .build()
            .and_then(|p| p.into_team(width).map_err(|e| e.error))
            .expect("a team for calibration");
        for family in SPLIT_FAMILIES {
            step(Measure::Split(family, width));
            fits.push(fit_split::<f64>(family, &team));
            fits.push(fit_split::<c64>(family, &team));
        }
    }
    for family in SPLIT_FAMILIES {
        let curve = |complex: bool| {
            let anchors: Vec<(usize, SplitCost)> = fits
                .iter()
                .filter(|f| f.family == family && f.complex == complex)
                .map(|f| (f.width, f.cost))
                .collect();
            SplitCurve::new(&anchors, family.decay())
        };
        if let (Ok(real), Ok(cplx)) = (curve(false), curve(true)) {
            profile.splits.push((family, Splits { real, cplx }));
        }
    }
    let load = sampler.finish(&anchors);
    profile.load = Some(load);
    Calibration {
        load,
        profile,
        anchors,
        fits,
        took: start.elapsed(),
    }
}
