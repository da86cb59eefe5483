//! Host calibration: measure what a section costs on this machine, per kind of token and
//! width, and keep it in a host profile that pools load (`PoolBuilder::profile`,
//! `TEAMALG_PROFILE`).
//!
//! Each cost is the overhead of one section whose participants each run a 10 us busy share,
//! sections back to back: the median over rounds of (round time / sections - 10 us).

use std::time::{Duration, Instant};

use teamalg_gates::{
    DispatchCosts, DispatchKind, Fingerprint, HostProfile, WidthCosts, MAX_ANCHORS,
};

use crate::{Exec, Pool};

/// The share each participant runs per section.
pub const SHARE: Duration = Duration::from_micros(10);
const ROUNDS: usize = 7;
const SECTIONS: usize = 150;

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

/// One step of a calibration, for a progress display.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    /// 1-based step number.
    pub done: usize,
    /// Steps in all.
    pub total: usize,
    /// What is measured.
    pub kind: DispatchKind,
    /// At which width.
    pub width: usize,
}

fn busy(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// The median over rounds of the per-section overhead of `section` run `SECTIONS` times.
fn overhead(mut section: impl FnMut()) -> u32 {
    for _ in 0..SECTIONS / 5 {
        section();
    }
    let mut per = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let t = Instant::now();
        for _ in 0..SECTIONS {
            section();
        }
        let each = t.elapsed().as_nanos() as f64 / SECTIONS as f64;
        per.push(each - SHARE.as_nanos() as f64);
    }
    per.sort_by(f64::total_cmp);
    per[ROUNDS / 2].clamp(1.0, u32::MAX as f64) as u32
}

fn measure(kind: DispatchKind, width: usize) -> u32 {
    let pool = Pool::builder()
        .threads(width)
        .build()
        .expect("a pool for calibration");
    match kind {
        DispatchKind::Team => {
            let team = pool.into_team(width).expect("a team for calibration");
            let token = team.exec(width);
            token
                .team(|t| overhead(|| t.run(|_| busy(SHARE))))
                .expect("a team token forms its team")
        }
        DispatchKind::InPool => Exec::new(&pool, width)
            .expect("budget")
            .install(|mut e| overhead(|| e.reborrow().for_ranges(width, 1, |_| busy(SHARE)))),
        DispatchKind::Outside => overhead(|| {
            Exec::new(&pool, width)
                .expect("budget")
                .for_ranges(width, 1, |_| busy(SHARE))
        }),
    }
}

/// Measures this machine's dispatch costs at [`anchor_widths`] of its CPUs, reporting each
/// step to `progress`, and returns them as a host profile (rates are left to their built-in
/// values). Takes about 10 ms per step on an idle machine, more under load.
pub fn calibrate(mut progress: impl FnMut(Step)) -> HostProfile {
    let widths = anchor_widths(crate::available_cpus());
    let total = widths.len() * DispatchKind::ALL.len();
    let mut rows = Vec::new();
    let mut done = 0;
    for kind in DispatchKind::ALL {
        let mut anchors = Vec::new();
        for &width in &widths {
            done += 1;
            progress(Step {
                done,
                total,
                kind,
                width,
            });
            anchors.push((width as u16, measure(kind, width)));
        }
        rows.push(anchors);
    }
    let defaults = DispatchCosts::host_default();
    let row = |i: usize, kind| {
        if rows[i].is_empty() {
            // One CPU: nothing dispatches in parallel; keep the class row.
            *defaults.row(kind)
        } else {
            WidthCosts::new(&rows[i]).expect("anchor widths increase")
        }
    };
    HostProfile {
        fingerprint: Fingerprint::current(),
        costs: DispatchCosts::new(
            row(0, DispatchKind::Team),
            row(1, DispatchKind::InPool),
            row(2, DispatchKind::Outside),
        ),
        rates: Vec::new(),
    }
}
