//! The live view: how much a pool's sections lose now to participants that run late.
//!
//! The gate's model is measured on a quiet machine. When other work wants the CPUs, a
//! participant the OS has descheduled makes every section wait for it, and a kernel of many
//! small sections runs slower than serial. Every kernel section on a team is already timed by
//! its leader (its own share, then its join), so the pool keeps a decaying estimate of the
//! time a section loses to late participants, and the gate adds it to the dispatch cost of
//! every section it weighs (`Executor::lateness`). Design record: `docs/gates.md`,
//! "The live view".
//!
//! - **Sample.** After its own share the leader knows how long it waited for the members (or
//!   how much of their work it ran itself, having found them not started). What exceeds the
//!   section's allowance ([`allowance`]: a quarter of the leader's share, a floor for timer
//!   noise, and [`WAKE_SLACK`] while a member is still waking) is lost time. A
//!   section that needs no wait records an on-time sample without reading the clock.
//! - **Estimate.** Two exponential averages: the share of recent sections that lost time
//!   ([`next_share`]), which also halves with the time since the last late one ([`decayed`],
//!   [`HALF_LIFE`]), and what a late section loses ([`average`]). A section is expected to lose
//!   their product ([`expected`]), and nothing while the share is below [`MIN_SHARE`]: a late
//!   section now and then is an incident, not a busy machine.
//! - **Room.** The contention signal (`contention.rs`), which reads the live view as one of
//!   its sources, clears it when the runnable count shows room for the members again (the
//!   load went away).
//!
//! On a quiet held team the estimate stays zero: the gate reads one atomic, no clock, no
//! system call.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// What a section costs more when its members sleep: until a woken member starts on another
/// CPU, the leader runs alone (and in a kernel's section it runs the late member's share
/// itself). On the 2-vCPU development VM a member woken onto a CPU idle for milliseconds
/// started 75 to 150 us after the wake, and the waker spent 8 to 27 us in the unpark and the
/// move; 100 us is that start, the part the leader cannot overlap. With 20 us (the unpark
/// alone) a held team whose member slept (its leader had led another team meanwhile) still ran
/// an LU of 128 (c64) at 1.26x faer serial: the gate sent its one 73 us section two wide, and
/// the member arrived after it.
pub(crate) const WAKE_COST: Duration = Duration::from_micros(100);

/// What a member still waking may take beyond a section's allowance, and what lost time
/// below counts as noise: shared with the kernels' bail-out (`teamalg_gates::contention`).
pub(crate) use teamalg_gates::contention::{LATE_FLOOR as FLOOR, WAKE_SLACK};

/// The estimate halves every `HALF_LIFE` without a new late sample. Long against the calls it
/// guards (a reduction of 1024 runs 100 ms; calls of other work run between a program's
/// kernels), so a steady load is remembered from one call to the next; a pool that went
/// serial because of a 2 ms loss per section probes again after about 7 half-lives (1.4 s)
/// for a section worth 25 us. A load that goes away is seen sooner by the signal's runnable count.
pub(crate) const HALF_LIFE: Duration = Duration::from_millis(200);


/// A pool's section lost more than this lately: its members sleep between sections instead of
/// spinning (a spinning member takes a third of the CPU from its leader's serial work when a
/// third thread shares two CPUs).
pub(crate) const CONTENDED: Duration = Duration::from_micros(50);

/// An estimate below this is zero.
const CLEAR_NS: u64 = 1_000;

/// One section's timing, as its leader saw it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sample {
    /// The leader's own share, and any member's share it ran itself.
    pub(crate) own: Duration,
    /// How long the leader then waited for the members.
    pub(crate) wait: Duration,
    /// Whether the leader ran a member's share itself because that member had not started.
    pub(crate) stole: bool,
    /// Whether a member was still waking at the publish (the publish or a warm-up woke it).
    pub(crate) woken: bool,
    /// The section's participants.
    pub(crate) width: usize,
}

/// What a section may spend beyond the leader's share before the rest counts as lost: a
/// quarter of the share (members' shares differ a little), [`FLOOR`], and `wake` (the
/// process's [`WAKE_SLACK`]) while a member is still waking.
pub(crate) fn allowance(own: Duration, woken: bool, wake: Duration) -> Duration {
    teamalg_gates::contention::allowance(own, if woken { wake } else { Duration::ZERO })
}

/// The time a section lost to late participants: the wait beyond the allowance; when the
/// leader ran an unstarted member's share itself, the parallel time it gave up
/// (`own * (width - 1) / width`) beyond the allowance.
pub(crate) fn lost(s: Sample, wake: Duration) -> Duration {
    let allow = allowance(s.own, s.woken, wake);
    let given_up = if s.stole {
        s.own * (s.width.max(1) as u32 - 1) / s.width.max(1) as u32
    } else {
        Duration::ZERO
    };
    (s.wait + given_up).saturating_sub(allow)
}

/// A late section's loss averaged in: a quarter of the way from `old` toward `sample_ns`;
/// zero below a microsecond.
pub(crate) fn average(old: u64, sample_ns: u64) -> u64 {
    let v = if sample_ns >= old {
        old + (sample_ns - old) / 4
    } else {
        old - (old - sample_ns) / 4
    };
    if v < CLEAR_NS {
        0
    } else {
        v
    }
}

/// The process's live view.
pub(crate) fn machine() -> &'static Live {
    static MACHINE: std::sync::OnceLock<Live> = std::sync::OnceLock::new();
    MACHINE.get_or_init(|| Live::new(WAKE_SLACK))
}

/// The live view (see the module documentation). One per process ([`machine`]): how busy
/// the machine is does not depend on which pool asks, and a pool built per call starts from
/// what the pools before it saw. Shared by every leader; its fields are independent relaxed
/// atomics: a leader that reads a stamp of one sample and an estimate of another misjudges
/// one decision by one sample's weight, nothing more.
#[derive(Debug)]
pub(crate) struct Live {
    epoch: Instant,
    /// How often a section loses time lately, in [`ONE`]s: moves by 1/[`UP`] toward 1 per
    /// late section and by 1/[`DOWN`] toward 0 per on-time one; halves every [`HALF_LIFE`]
    /// after the last late one.
    share: AtomicU64,
    /// What a late section loses, nanoseconds: [`average`] over late sections.
    loss: AtomicU64,
    /// When `share` last rose, in nanoseconds since `epoch`.
    stamp: AtomicU64,
    /// What a waking member may take ([`WAKE_SLACK`]).
    wake: Duration,
}

/// A share of 1 in `Live::share`.
pub(crate) const ONE: u64 = 1 << 16;
/// A late section moves the share this fraction of the way to 1.
const UP: u64 = 16;
/// An on-time section moves it this fraction of the way to 0.
const DOWN: u64 = 16;
/// Below this share the sections' losses are incidents (an interrupt, the process's own idle
/// workers spinning out their budget beside a held team), not a busy machine: the gate sees no
/// lateness. With the mean loss alone, a held team beside pools built per call lost a late
/// section now and then and sent a GEMM of 128 serial (1.1 to 1.5x faer serial against 0.7x).
pub(crate) const MIN_SHARE: u64 = ONE / 5;
/// A share below this is zero.
const CLEAR_SHARE: u64 = ONE / 64;

/// The share after a section: `late` or on time.
pub(crate) fn next_share(share: u64, late: bool) -> u64 {
    let v = if late {
        share + (ONE - share.min(ONE)) / UP
    } else {
        share - share / DOWN
    };
    if v < CLEAR_SHARE && !late {
        0
    } else {
        v
    }
}

/// The share `share` after `age` without a late section: halved every [`HALF_LIFE`].
pub(crate) fn decayed(share: u64, age: Duration) -> u64 {
    let halves = age.as_secs_f64() / HALF_LIFE.as_secs_f64();
    let v = (share as f64 * (-halves * std::f64::consts::LN_2).exp()) as u64;
    if v < CLEAR_SHARE {
        0
    } else {
        v
    }
}

/// What a section is expected to lose at `share` of sections late, each losing `loss` ns: zero
/// below [`MIN_SHARE`].
pub(crate) fn expected(share: u64, loss: u64) -> Duration {
    if share < MIN_SHARE {
        return Duration::ZERO;
    }
    Duration::from_nanos((share as u128 * loss as u128 / ONE as u128) as u64)
}

impl Live {
    pub(crate) fn new(wake: Duration) -> Self {
        Live {
            epoch: Instant::now(),
            share: AtomicU64::new(0),
            loss: AtomicU64::new(0),
            stamp: AtomicU64::new(0),
            wake,
        }
    }

    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos().min(u64::MAX as u128) as u64
    }

    fn age(&self, now: u64) -> Duration {
        Duration::from_nanos(now.saturating_sub(self.stamp.load(Relaxed)))
    }

    /// A section ended without the leader waiting: on time. No clock is read.
    #[inline]
    pub(crate) fn on_time(&self) {
        let share = self.share.load(Relaxed);
        if share != 0 {
            self.share.store(next_share(share, false), Relaxed);
        }
    }

    /// Records a section the leader had to wait for or took a share of.
    pub(crate) fn record(&self, s: Sample) {
        let lost = lost(s, self.wake).as_nanos().min(u64::MAX as u128) as u64;
        if lost == 0 {
            return self.on_time();
        }
        let now = self.now_ns();
        let share = decayed(self.share.load(Relaxed), self.age(now));
        self.share.store(next_share(share, true), Relaxed);
        let loss = self.loss.load(Relaxed);
        self.loss.store(average(loss, lost), Relaxed);
        self.stamp.store(now, Relaxed);
    }

    /// What a section is expected to lose now: the share of late sections, decayed, times
    /// what a late one loses; zero below [`MIN_SHARE`]. On a quiet machine: one load.
    pub(crate) fn expected(&self) -> Duration {
        let share = self.share.load(Relaxed);
        if share < MIN_SHARE {
            return Duration::ZERO;
        }
        let share = decayed(share, self.age(self.now_ns()));
        expected(share, self.loss.load(Relaxed))
    }

    /// Forgets the lateness: the load went away (the contention signal found room).
    pub(crate) fn clear(&self) {
        if self.share.load(Relaxed) != 0 {
            self.share.store(0, Relaxed);
        }
    }

    /// Whether sections are expected to lose more than [`CONTENDED`] now (decayed):
    /// members then sleep between sections rather than spin.
    #[inline]
    pub(crate) fn contended(&self) -> bool {
        let share = self.share.load(Relaxed);
        share >= MIN_SHARE
            && expected(
                decayed(share, self.age(self.now_ns())),
                self.loss.load(Relaxed),
            ) > CONTENDED
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Duration = Duration::from_micros(1);
    const WAKE: Duration = WAKE_SLACK;

    fn sample(own: Duration, wait: Duration) -> Sample {
        Sample {
            own,
            wait,
            stole: false,
            woken: false,
            width: 2,
        }
    }

    #[test]
    fn waits_within_the_allowance_lose_nothing() {
        // A member a little slower than the leader, or one still waking.
        assert_eq!(lost(sample(400 * US, 110 * US), WAKE), Duration::ZERO);
        let woken = Sample {
            woken: true,
            ..sample(10 * US, 120 * US)
        };
        assert_eq!(lost(woken, WAKE), Duration::ZERO);
        // The same wait without a wake to pay for is late.
        // (allowance: 10 / 4 + 20 = 22.5 us)
        assert_eq!(
            lost(sample(10 * US, 120 * US), WAKE),
            Duration::from_nanos(97_500)
        );
    }

    #[test]
    fn a_descheduled_member_loses_its_time_slice() {
        // 40 us sections, a member off the CPU for 3 ms.
        let l = lost(sample(40 * US, 3000 * US), WAKE);
        assert_eq!(l, 3000 * US - 10 * US - FLOOR);
        // The leader ran the member's share itself: half its time was parallel time lost.
        let stole = Sample {
            stole: true,
            ..sample(800 * US, Duration::ZERO)
        };
        assert_eq!(lost(stole, WAKE), 400 * US - 200 * US - FLOOR);
    }

    #[test]
    fn the_average_moves_a_quarter_and_clears_when_small() {
        assert_eq!(average(0, 4_000_000), 1_000_000);
        assert_eq!(average(1_000_000, 0), 750_000);
        assert_eq!(average(1_200, 0), 0, "below a microsecond is zero");
        let mut v = 2_000_000;
        let mut n = 0;
        while v != 0 {
            v = average(v, 0);
            n += 1;
        }
        assert!(n < 40, "on-time sections clear a 2 ms estimate in {n}");
    }

    #[test]
    fn the_share_halves_every_half_life() {
        let v = decayed(ONE, HALF_LIFE);
        assert!((ONE / 2 - 2..=ONE / 2 + 2).contains(&v), "{v}");
        assert_eq!(decayed(ONE, Duration::ZERO), ONE);
        assert_eq!(decayed(ONE, HALF_LIFE * 7), 0, "below 1/64 is zero");
    }

    #[test]
    fn incidents_are_not_a_busy_machine() {
        // One section in ten late, however much it loses: the share stays below MIN_SHARE.
        let mut share = 0;
        for i in 0..1000 {
            share = next_share(share, i % 10 == 0);
            assert!(share < MIN_SHARE, "section {i}: {share}");
        }
        assert_eq!(expected(share, 3_000_000), Duration::ZERO);
        // One in three (a member off its CPU a third of the time): a busy machine.
        let mut share = 0;
        for i in 0..1000 {
            share = next_share(share, i % 3 == 0);
        }
        assert!(share >= MIN_SHARE, "{share}");
        assert!(expected(share, 3_000_000) > Duration::from_micros(600));
    }

    #[test]
    fn a_late_run_raises_the_estimate_and_on_time_sections_lower_it() {
        let live = Live::new(WAKE);
        assert_eq!(live.expected(), Duration::ZERO);
        assert!(!live.contended());
        for _ in 0..4 {
            live.record(sample(40 * US, 3000 * US));
        }
        assert!(live.share.load(Relaxed) >= MIN_SHARE);
        assert!(live.expected() > Duration::from_micros(300));
        assert!(live.loss.load(Relaxed) > 2_000_000);
        assert!(live.contended());
        // Samples within the allowance are on time.
        for _ in 0..200 {
            live.record(sample(400 * US, 10 * US));
        }
        assert_eq!(live.share.load(Relaxed), 0);
        assert!(!live.contended());
    }
}
