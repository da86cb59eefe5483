//! How the arms are timed: interleaved rounds (one call of each arm in turn), pairs, blocks
//! after a pause, and the statistics over them.
//!
//! Why rounds: the host's speed drifts by tens of percent over seconds, so the arms are
//! compared inside a round (one call of each, back to back), never across a run. criterion
//! times one function at a time, so its ratios would carry the drift, and it pauses between
//! benchmarks, which hides what one arm's spinning threads do to the next.

use std::time::{Duration, Instant};

use teamalg_tools::stats::median;
pub(crate) use teamalg_tools::stats::median_p90 as stats;

use teamalg_tools::load;

/// Alternates `a` and `b` call by call (each after an untimed `prepare`) until `budget` is
/// spent (at least 5, at most 51 pairs). Returns the median times of `a` and of `b` and the
/// median ratio `b / a` within a pair: the host's speed drifts by tens of percent over seconds,
/// and only a comparison inside a pair is free of it.
pub(crate) fn pairs(
    mut prepare: impl FnMut(),
    mut a: impl FnMut(),
    mut b: impl FnMut(),
    budget: Duration,
) -> (f64, f64, f64) {
    let mut time = |f: &mut dyn FnMut()| {
        prepare();
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64()
    };
    time(&mut a);
    time(&mut b);
    let (mut ta, mut tb, mut r) = (Vec::new(), Vec::new(), Vec::new());
    let start = Instant::now();
    while ta.len() < 5 || (ta.len() < 51 && start.elapsed() < budget) {
        let (x, y) = (time(&mut a), time(&mut b));
        ta.push(x);
        tb.push(y);
        r.push(y / x);
    }
    (median(&ta), median(&tb), median(&r))
}

/// `--load-phases`: a cell's rounds run for this many on and off cycles.
pub(crate) const PHASE_CYCLES: u32 = 6;
/// How soon after the load stops a cell must be back.
const RECOVERY: Duration = Duration::from_millis(50);

/// The times of one cell: per arm, one per timed call, and when each round began.
#[derive(Debug, Default)]
pub(crate) struct Times {
    pub(crate) arms: Vec<Vec<f64>>,
    pub(crate) starts: Vec<Instant>,
}

/// Rounds of one call of each arm in turn, after an untimed `prepare` each, until `budget`
/// is spent (at least `min`, at most 61 rounds, after one untimed round); with `phases` (on,
/// off), for [`PHASE_CYCLES`] cycles of them instead.
pub(crate) fn rounds(
    mut prepare: impl FnMut(),
    arms: &mut [&mut dyn FnMut()],
    budget: Duration,
    phases: Option<(Duration, Duration)>,
    min: usize,
) -> Times {
    let mut times = vec![Vec::new(); arms.len()];
    let start = Instant::now();
    let (budget, most) = match phases {
        Some((on, off)) => ((on + off) * PHASE_CYCLES, 100_000),
        None => (budget, 62),
    };
    let mut starts = Vec::new();
    let mut round = 0;
    while round < min + 1 || (round < most && start.elapsed() < budget) {
        let began = Instant::now();
        for (k, arm) in arms.iter_mut().enumerate() {
            prepare();
            let t = Instant::now();
            arm();
            if round > 0 {
                times[k].push(t.elapsed().as_secs_f64());
            }
        }
        if round > 0 {
            starts.push(began);
        }
        round += 1;
    }
    Times {
        arms: times,
        starts,
    }
}

/// With phases: the ratio of `arm` to faer serial (`times[0]`) over the rounds of on phases,
/// of the first [`RECOVERY`] of off phases, and of the rest of off phases, and the worst off
/// phase's rest (its median over at least 3 rounds), each with its count of rounds.
pub(crate) fn phase_report(times: &Times, arm: usize) -> String {
    let (starts, times) = (&times.starts, &times.arms);
    let (mut on, mut early, mut late) = (Vec::new(), Vec::new(), Vec::new());
    let mut per_off: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
    for (i, &t) in starts.iter().enumerate() {
        let r = times[arm][i] / times[0][i];
        match load::phase_at(t) {
            Some((_, true, _)) => on.push(r),
            Some((_, false, d)) if d < RECOVERY => early.push(r),
            Some((p, false, _)) => {
                late.push(r);
                per_off.entry(p).or_default().push(r);
            }
            None => {}
        }
    }
    let worst = per_off
        .values()
        .filter(|v| v.len() >= 3)
        .map(|v| median(v))
        .fold(None, |w: Option<f64>, m| Some(w.map_or(m, |w| w.max(m))));
    let cell = |v: &Vec<f64>| {
        if v.is_empty() {
            "-".to_string()
        } else {
            format!("{:.2} ({})", median(v), v.len())
        }
    };
    format!(
        "on {}  off <50ms {}  off >=50ms {}  worst off phase {}",
        cell(&on),
        cell(&early),
        cell(&late),
        worst.map_or("-".into(), |w| format!("{w:.2}"))
    )
}

/// `--blocks PAUSE_MS:CALLS`: rounds of blocks instead of interleaved calls. In a round each
/// arm in turn sleeps `PAUSE_MS` (its threads and the arm's before it settle, as between a
/// program's phases) and then makes `CALLS` calls back to back; each call is timed. Call `i` of
/// an arm's block is compared with call `i` of faer serial's block in the same round.
pub(crate) fn block_rounds(
    mut prepare: impl FnMut(),
    arms: &mut [&mut dyn FnMut()],
    (pause, calls): (Duration, usize),
    budget: Duration,
) -> Vec<Vec<f64>> {
    let mut times = vec![Vec::new(); arms.len()];
    let start = Instant::now();
    let mut round = 0;
    while round < 4 || (round < 20 && start.elapsed() < budget) {
        for (k, arm) in arms.iter_mut().enumerate() {
            std::thread::sleep(pause);
            for _ in 0..calls {
                prepare();
                let t = Instant::now();
                arm();
                times[k].push(t.elapsed().as_secs_f64());
            }
        }
        round += 1;
    }
    times
}

/// The median over rounds of `num / den`.
pub(crate) fn ratio(num: &[f64], den: &[f64]) -> f64 {
    let r: Vec<f64> = num.iter().zip(den).map(|(a, b)| a / b).collect();
    median(&r)
}
