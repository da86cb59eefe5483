//! The dispatch rows: sections of a 10 us share per participant, rounds spread over time,
//! samples judged (serial, descheduled, kept), and each row's cost from its rounds.

use super::*;

thread_local! {
    static THREAD_MARK: u8 = const { 0 };
}

/// A number that tells this thread from the others.
fn thread_mark() -> usize {
    THREAD_MARK.with(|m| m as *const u8 as usize)
}

/// Involuntary context switches of the calling thread so far.
fn involuntary_switches() -> i64 {
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable `rusage`; RUSAGE_THREAD names the calling thread.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    if rc == 0 {
        u.ru_nivcsw
    } else {
        0
    }
}

/// What one share saw: the thread that ran it and whether its clock jumped.
struct ShareLog {
    thread: AtomicUsize,
    jumped: AtomicBool,
}

impl ShareLog {
    fn new() -> Self {
        ShareLog {
            thread: AtomicUsize::new(0),
            jumped: AtomicBool::new(false),
        }
    }
}

/// Busy for [`SHARE`], noting the thread and any gap of [`GAP`] or more in its clock.
fn share(log: &ShareLog) {
    let start = Instant::now();
    let mut last = start;
    let mut jumped = false;
    loop {
        let now = Instant::now();
        jumped |= now - last >= GAP;
        last = now;
        if now - start >= SHARE {
            break;
        }
        std::hint::spin_loop();
    }
    log.thread.store(thread_mark(), Relaxed);
    log.jumped.store(jumped, Relaxed);
}

/// Why a sample was kept or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleVerdict {
    /// Every share on its own thread, nobody descheduled.
    Kept,
    /// Two shares ran on one thread: a serial section.
    Serial,
    /// A thread was descheduled.
    Descheduled,
}

/// Judges a sample from the threads that ran its shares, whether any share's clock jumped,
/// and whether the caller was switched out.
pub fn judge(threads: &[usize], jumped: bool, caller_switched: bool) -> SampleVerdict {
    for (i, t) in threads.iter().enumerate() {
        if threads[..i].contains(t) {
            return SampleVerdict::Serial;
        }
    }
    if jumped || caller_switched {
        SampleVerdict::Descheduled
    } else {
        SampleVerdict::Kept
    }
}

/// The pause between two rounds of a row when `rows` rows share [`DISPATCH_SPAN`]: each row
/// spans its share of it in [`MIN_ROUNDS`] rounds (5 to 120 ms apart).
pub fn round_gap(rows: usize) -> Duration {
    let per_row = DISPATCH_SPAN / rows.max(1) as u32;
    (per_row / MIN_ROUNDS as u32).clamp(Duration::from_millis(5), Duration::from_millis(120))
}

/// The cost of a row from its rounds: the median of the medians of the rounds that kept at
/// least a quarter of their samples, and whether more than half of those medians are within
/// [`STABLE`] of it (the host's usual state; a minority of rounds in its other state does not
/// make the row unstable). `None` when no round kept enough.
pub fn row_cost(rounds: &[Vec<f64>]) -> Option<(f64, bool)> {
    let meds: Vec<f64> = rounds
        .iter()
        .filter(|r| r.len() >= ROUND / 4)
        .map(|r| median(r))
        .collect();
    if meds.is_empty() {
        return None;
    }
    let n = meds.len();
    let m = median(&meds);
    let agree = meds
        .iter()
        .filter(|&&x| x > 0.0 && m > 0.0 && x.max(m) / x.min(m) <= STABLE)
        .count();
    Some((m, n >= 3 && agree * 2 > n))
}

/// Runs rounds of `section` (which runs one share per log, on as many participants), `gap`
/// apart, at least [`MIN_ROUNDS`] and more while the rounds disagree, and returns the anchor.
fn measure_row(
    kind: DispatchKind,
    width: usize,
    logs: &[ShareLog],
    gap: Duration,
    mut section: impl FnMut(),
) -> Anchor {
    let mut rounds: Vec<Vec<f64>> = Vec::new();
    let (mut samples, mut serial, mut descheduled) = (0, 0, 0);
    let mut stable = false;
    let mut threads = vec![0usize; logs.len()];
    while rounds.len() < MAX_ROUNDS {
        if !rounds.is_empty() {
            std::thread::sleep(gap);
        }
        // Warm-up: the members slept through the gap.
        for _ in 0..ROUND / 4 {
            section();
        }
        let mut kept = Vec::with_capacity(ROUND);
        for _ in 0..ROUND {
            for l in logs {
                l.thread.store(0, Relaxed);
            }
            let before = involuntary_switches();
            let t = Instant::now();
            section();
            let took = t.elapsed();
            let switched = involuntary_switches() != before;
            for (slot, l) in threads.iter_mut().zip(logs) {
                *slot = l.thread.load(Relaxed);
            }
            let jumped = logs.iter().any(|l| l.jumped.load(Relaxed));
            samples += 1;
            match judge(&threads, jumped, switched) {
                SampleVerdict::Kept => kept.push(took.as_nanos() as f64 - SHARE.as_nanos() as f64),
                SampleVerdict::Serial => serial += 1,
                SampleVerdict::Descheduled => descheduled += 1,
            }
        }
        rounds.push(kept);
        if rounds.len() >= MIN_ROUNDS {
            stable = row_cost(&rounds).is_some_and(|(_, s)| s);
            if stable {
                break;
            }
        }
    }
    let mut all: Vec<f64> = rounds.concat();
    all.sort_by(f64::total_cmp);
    let cost = row_cost(&rounds)
        .filter(|_| all.len() >= MIN_KEPT)
        .map(|(m, _)| m.clamp(1.0, u32::MAX as f64) as u32);
    Anchor {
        kind,
        width,
        cost,
        spread: if all.is_empty() {
            (0.0, 0.0)
        } else {
            (percentile(&all, 0.1), percentile(&all, 0.9))
        },
        samples,
        serial,
        descheduled,
        rounds: rounds.len(),
        stable,
    }
}

/// Measures one anchor of a dispatch row on a pool of `width` threads, its rounds `gap` apart
/// ([`round_gap`]).
pub fn measure_anchor(kind: DispatchKind, width: usize, gap: Duration) -> Anchor {
    let pool = Pool::builder()
        .threads(width)
        .build()
        .expect("a pool for calibration");
    let logs: Vec<ShareLog> = (0..width).map(|_| ShareLog::new()).collect();
    let logs = &logs[..];
    match kind {
        DispatchKind::Team => {
            let team = pool.into_team(width).expect("a team for calibration");
            let token = team.exec(width);
            token
                .team(|t| {
                    measure_row(kind, width, logs, gap, || {
                        t.run(|p| share(&logs[p.index()]))
                    })
                })
                .expect("a team token forms its team")
        }
        DispatchKind::InPool => Exec::new(&pool, width).expect("budget").install(|mut e| {
            measure_row(kind, width, logs, gap, || {
                e.reborrow().for_ranges(width, 1, |r| share(&logs[r.start]))
            })
        }),
        DispatchKind::Outside => measure_row(kind, width, logs, gap, || {
            Exec::new(&pool, width)
                .expect("budget")
                .for_ranges(width, 1, |r| share(&logs[r.start]))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(ns: f64) -> Vec<f64> {
        (0..ROUND).map(|i| ns + (i % 7) as f64).collect()
    }

    #[test]
    fn a_row_is_the_state_most_rounds_met() {
        // Two rounds of nine in the fast state: the row is the slow state's, and stable.
        let mut rounds: Vec<Vec<f64>> = (0..7).map(|_| round(600.0)).collect();
        rounds.insert(2, round(150.0));
        rounds.insert(6, round(155.0));
        let (cost, stable) = row_cost(&rounds).unwrap();
        assert!((600.0..610.0).contains(&cost), "{cost}");
        assert!(stable);
        // Half and half: no state to record, and the row says so.
        let rounds: Vec<Vec<f64>> = (0..10)
            .map(|i| round(if i % 2 == 0 { 150.0 } else { 600.0 }))
            .collect();
        assert!(!row_cost(&rounds).unwrap().1);
        // Rounds that kept too few samples do not count.
        assert_eq!(row_cost(&[vec![1.0; ROUND / 4 - 1]]), None);
    }

    #[test]
    fn the_rounds_spread_over_the_span() {
        assert_eq!(round_gap(3), DISPATCH_SPAN / 3 / MIN_ROUNDS as u32);
        assert_eq!(round_gap(1), Duration::from_millis(120));
        assert_eq!(round_gap(1000), Duration::from_millis(5));
    }

    #[test]
    fn a_sample_with_two_shares_on_one_thread_is_serial() {
        assert_eq!(judge(&[1, 2], false, false), SampleVerdict::Kept);
        assert_eq!(judge(&[1, 1], false, false), SampleVerdict::Serial);
        assert_eq!(judge(&[3, 1, 3], true, false), SampleVerdict::Serial);
        assert_eq!(judge(&[1, 2], true, false), SampleVerdict::Descheduled);
        assert_eq!(judge(&[1, 2], false, true), SampleVerdict::Descheduled);
    }
}
