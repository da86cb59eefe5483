//! The contention signal: one reading, combined in one place, of how contended the CPUs a
//! region would use are now, taken before the region waits for anyone.
//!
//! Sources, in the order they are believed (design record: `docs/gates.md`, "Contention: one
//! signal, read before waiting"):
//!
//! 1. **Room**: `/proc/loadavg`'s runnable count. Others plus the region fit the CPUs: quiet,
//!    and the live view is cleared (a load that went away).
//! 2. **Measured**: the live view (`live.rs`), what the process's own sections lost lately.
//! 3. **Run queue**: the run-queue delay of the team's own threads, which spinning workers
//!    read from `/proc/thread-self/schedstat` ([`Spin::tick`]) and publish: a fraction `q`
//!    of their time runnable and not running. It tells an equal competitor (about half) from a
//!    niced one (about 1.5 %).
//! 4. **Pressure**: `/proc/pressure/cpu`'s "some" stall, the fraction of the time some task
//!    waited for a CPU: the machine was oversubscribed before we add a member.
//! 5. **Count**: no room and nothing measured: the prior, an equal competitor.
//!
//! A missing source (no procfs, no PSI) is skipped, never an error. Reading procfs costs
//! microseconds: a region reads at entry only when its estimate is [`READ_SHARE`] times the
//! measured cost of a read, and otherwise takes what the last read left (atomics), which
//! spinning workers refresh while they have nothing to do.
//!
//! Every field is an independent relaxed atomic: a reader that sees one field of one reading
//! and another of the next misjudges one decision, nothing more.

use std::sync::atomic::{
    AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use teamalg_gates::{Contention, Signal};

use crate::runtime::live::Live;

/// What a member the OS has descheduled costs a section: a time slice (3 ms and more on the
/// 2-vCPU hosts measured, `docs/gates.md`, "The live view").
pub(crate) const SLICE: Duration = Duration::from_millis(3);

/// A region reads the sources at entry when its estimate is at least this many times the
/// cost of a read: the read then costs at most 1 % of it.
pub(crate) const READ_SHARE: u32 = 100;

/// The least time between two reads of the process-wide sources.
pub(crate) const PROBE_EVERY: Duration = Duration::from_millis(2);

/// How long a reading that found room is believed.
pub(crate) const FRESH: Duration = Duration::from_millis(20);

/// How long a reading that found no room is believed: a load seen is remembered across the
/// short pauses in which the members sleep and nobody reads.
pub(crate) const HELD: Duration = Duration::from_millis(100);

/// How long every read must have found no room before the count alone is believed.
pub(crate) const PERSIST: Duration = Duration::from_millis(20);

/// How often a spinning worker reads its own run-queue delay, and how long the time between
/// two of its reads must be for the fraction to count.
pub(crate) const RUNQ_EVERY: Duration = Duration::from_millis(1);
const RUNQ_SPAN: Duration = Duration::from_micros(300);

/// How long a published run-queue fraction is believed.
pub(crate) const RUNQ_FRESH: Duration = Duration::from_millis(100);

/// Below this run-queue fraction the competitor yields to us (a niced process): quiet.
pub(crate) const Q_MIN: f64 = 0.05;

/// From this stall fraction on, the machine is oversubscribed before we add a member.
pub(crate) const P_MIN: f64 = 0.25;

/// The least window the stall fraction is measured over.
pub(crate) const PSI_WINDOW: Duration = Duration::from_millis(20);

/// The least time between two requests for a run-queue reading (`Executor::probe`).
pub(crate) const PROBE_GAP: Duration = Duration::from_millis(100);

/// Fractions are kept in millionths.
const MILLION: f64 = 1e6;

/// The process's signal (one: how busy the machine is does not depend on which pool asks).
pub(crate) fn signal() -> &'static Readings {
    static READINGS: OnceLock<Readings> = OnceLock::new();
    READINGS.get_or_init(Readings::new)
}

/// Whether the signal is on (`TEAMALG_CONTENTION=off` turns it off for the process).
pub(crate) fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        !std::env::var("TEAMALG_CONTENTION").is_ok_and(|v| v.eq_ignore_ascii_case("off"))
    })
}

/// The sources' last readings.
#[derive(Debug)]
pub(crate) struct Readings {
    epoch: Instant,
    /// When `/proc/loadavg` was last read (ns since `epoch`; 0: never, or it is missing),
    /// stored after the reading it stamps (Release), so a reader that sees the stamp sees
    /// the reading.
    read_at: AtomicU64,
    /// When a thread last took the read on itself (ns; rate-limits the reads, present
    /// sources or not).
    claimed_at: AtomicU64,
    /// Runnable threads at that read beyond this process's awake workers and one leader.
    external: AtomicU64,
    /// Since when every read found no room for a leader and one member (ns; 0: the last
    /// read found room): a count that persists is a competitor, one that flickers is a
    /// thread spinning a moment before it sleeps.
    crowded_at: AtomicU64,
    /// `/proc/pressure/cpu`'s "some" total at the last read (us) and when (ns), and the
    /// stall fraction between the last two reads (millionths; `u64::MAX`: unknown).
    psi_total: AtomicU64,
    psi_at: AtomicU64,
    psi_frac: AtomicU64,
    /// The last run-queue fraction a worker published (millionths) and when (ns; 0: never).
    runq: AtomicU64,
    runq_at: AtomicU64,
    /// What a read of the sources costs (ns, [`next_cost`]; 0: not measured yet).
    cost: AtomicU64,
    /// When a run-queue reading was last asked for (ns).
    probed_at: AtomicU64,
}

impl Readings {
    fn new() -> Readings {
        Readings::since(Instant::now())
    }

    fn since(epoch: Instant) -> Readings {
        Readings {
            epoch,
            read_at: AtomicU64::new(0),
            claimed_at: AtomicU64::new(0),
            external: AtomicU64::new(0),
            crowded_at: AtomicU64::new(0),
            psi_total: AtomicU64::new(0),
            psi_at: AtomicU64::new(0),
            psi_frac: AtomicU64::new(u64::MAX),
            runq: AtomicU64::new(0),
            runq_at: AtomicU64::new(0),
            cost: AtomicU64::new(0),
            probed_at: AtomicU64::new(0),
        }
    }

    /// Nanoseconds since `epoch`, at least 1 (0 marks "never").
    fn now(&self) -> u64 {
        (self.epoch.elapsed().as_nanos().min(u64::MAX as u128) as u64).max(1)
    }

    /// What a read of the sources costs, as measured (10 us until measured).
    pub(crate) fn read_cost(&self) -> Duration {
        match self.cost.load(Relaxed) {
            0 => Duration::from_micros(10),
            ns => Duration::from_nanos(ns),
        }
    }

    /// Reads `/proc/loadavg` and `/proc/pressure/cpu` now, when the last read is older than
    /// [`PROBE_EVERY`]. `ours`: this process's awake workers (the count includes them);
    /// `cpus`: the CPUs of the pool asking.
    pub(crate) fn refresh(&self, ours: usize, cpus: usize) {
        let now = self.now();
        let last = self.claimed_at.load(Relaxed);
        if last != 0 && now.saturating_sub(last) < PROBE_EVERY.as_nanos() as u64 {
            return;
        }
        // Takes the read on itself, so that two threads do not both pay for it.
        if self
            .claimed_at
            .compare_exchange(last, now, Relaxed, Relaxed)
            .is_err()
        {
            return;
        }
        let t = Instant::now();
        // The count includes this process's awake workers and the leader (reader or not). No
        // count here (no procfs): the stamp stays 0, and the sources below it are skipped.
        if let Some(r) = running() {
            let external = r.saturating_sub(ours).saturating_sub(1) as u64;
            self.external.store(external, Relaxed);
            // Room for the leader and one member (the narrowest parallel region).
            if external as usize + 2 <= cpus {
                self.crowded_at.store(0, Relaxed);
            } else if self.crowded_at.load(Relaxed) == 0 {
                self.crowded_at.store(now, Relaxed);
            }
            self.read_at.store(now, Release);
        }
        if let Some(total) = pressure() {
            // Over a window of at least PSI_WINDOW: a burst shorter than that (this process's
            // own threads crowding a moment) averages out.
            let at = self.psi_at.load(Relaxed);
            let span = now.saturating_sub(at);
            if at == 0 || span >= PSI_WINDOW.as_nanos() as u64 {
                let prev = self.psi_total.swap(total, Relaxed);
                self.psi_at.store(now, Relaxed);
                if at != 0 {
                    // Stall of less than half a window in all is a burst, not a load.
                    let stall_ns = total.saturating_sub(prev).saturating_mul(1000);
                    let frac = if stall_ns >= PSI_WINDOW.as_nanos() as u64 / 2 {
                        (stall_ns as f64 / span as f64).min(1.0)
                    } else {
                        0.0
                    };
                    self.psi_frac.store((frac * MILLION) as u64, Relaxed);
                }
            }
        }
        let ns = t.elapsed().as_nanos().min(u64::MAX as u128) as u64;
        self.cost.store(next_cost(self.cost.load(Relaxed), ns), Relaxed);
    }

    /// Publishes a worker's run-queue fraction.
    fn publish_runq(&self, q: f64) {
        self.runq.store((q.clamp(0.0, 1.0) * MILLION) as u64, Relaxed);
        self.runq_at.store(self.now(), Relaxed);
    }

    /// Whether the team's own threads waited for their CPUs lately (a fresh run-queue fraction
    /// of at least [`Q_MIN`]): their waits then sleep between sections rather than spin.
    #[inline]
    pub(crate) fn busy(&self) -> bool {
        let at = self.runq_at.load(Relaxed);
        at != 0
            && self.runq.load(Relaxed) as f64 >= Q_MIN * MILLION
            && self.now().saturating_sub(at) <= RUNQ_FRESH.as_nanos() as u64
    }

    /// Whether a run-queue reading may be asked for now (at most every [`PROBE_GAP`]).
    pub(crate) fn probe_due(&self) -> bool {
        let now = self.now();
        let last = self.probed_at.load(Relaxed);
        now.saturating_sub(last) >= PROBE_GAP.as_nanos() as u64
            && self
                .probed_at
                .compare_exchange(last, now, Relaxed, Relaxed)
                .is_ok()
    }

    /// The reading for a region of serial time `estimate` that would add `members`
    /// participants on `cpus` CPUs, with the live view `live` (`None`: the pool keeps none,
    /// and reads nothing). `ours()`: this process's awake workers.
    pub(crate) fn reading(
        &self,
        live: Option<&Live>,
        estimate: Duration,
        members: usize,
        cpus: usize,
        ours: impl Fn() -> usize,
    ) -> Contention {
        let Some(live) = live.filter(|_| enabled()) else {
            return Contention::NONE;
        };
        let measured = live.expected();
        if estimate >= self.read_cost() * READ_SHARE || !measured.is_zero() {
            self.refresh(ours(), cpus);
        }
        let now = self.now();
        let at = self.read_at.load(Acquire);
        let age = Duration::from_nanos(now.saturating_sub(at));
        let external = self.external.load(Relaxed) as usize;
        let room = external + 1 + members <= cpus;
        if at != 0 && room && age <= FRESH {
            live.clear();
            return Contention {
                late: Duration::ZERO,
                signal: Signal::Room,
            };
        }
        if !measured.is_zero() {
            return Contention {
                late: measured,
                signal: Signal::Measured,
            };
        }
        if at == 0 || room || age > HELD {
            return Contention::NONE;
        }
        let runq_at = self.runq_at.load(Relaxed);
        // A fraction measured before the crowding began describes a quieter machine; one
        // measured during it says whether the others take the members' CPUs.
        if runq_at >= self.crowded_at.load(Relaxed)
            && runq_at != 0
            && now.saturating_sub(runq_at) <= RUNQ_FRESH.as_nanos() as u64
        {
            let q = self.runq.load(Relaxed) as f64 / MILLION;
            return Contention {
                late: if q >= Q_MIN { SLICE.mul_f64(q) } else { Duration::ZERO },
                signal: Signal::RunQueue,
            };
        }
        let p = self.psi_frac.load(Relaxed);
        if p != u64::MAX && p as f64 / MILLION >= P_MIN {
            return Contention {
                late: SLICE.mul_f64(p as f64 / MILLION),
                signal: Signal::Pressure,
            };
        }
        // A count seen only now may be a thread spinning a moment before it sleeps: believed
        // once it has persisted (the probe asks the members meanwhile).
        let crowded_at = self.crowded_at.load(Relaxed);
        let persisted =
            crowded_at != 0 && now.saturating_sub(crowded_at) >= PERSIST.as_nanos() as u64;
        Contention {
            late: if persisted {
                prior(external, members, cpus)
            } else {
                Duration::ZERO
            },
            signal: Signal::Count,
        }
    }
}

/// The read cost after a read that took `ns`, from the estimate `old` (ns; 0: none yet). A
/// read preempted on a busy machine, or the first one of the process (files opened cold),
/// takes many times what a read costs: the estimate rises by at most an eighth per read and
/// falls halfway to a cheaper one. (A moving average kept such a read for many reads, and a
/// high estimate stops the regions' own reads that would have brought it down.)
pub(crate) fn next_cost(old: u64, ns: u64) -> u64 {
    match old {
        0 => ns,
        _ if ns < old => old - (old - ns) / 2,
        _ => old + (ns - old).min(old / 8),
    }
}

/// What a section is expected to lose with `external` other runnable threads, the leader and
/// `members` on `cpus` CPUs, before anything is measured: a member is off its CPU about
/// `excess / (cpus + excess)` of the time, for a time slice.
pub(crate) fn prior(external: usize, members: usize, cpus: usize) -> Duration {
    let excess = (external + 1 + members).saturating_sub(cpus);
    SLICE.mul_f64(excess as f64 / (cpus.max(1) + excess) as f64)
}

/// A spinning worker's run-queue readings: at most every [`RUNQ_EVERY`], it reads its own
/// schedstat and publishes the fraction of the time since its previous read it spent
/// runnable and not running. It costs the worker a few microseconds of its idle time, and the
/// leader nothing.
#[derive(Debug, Default)]
pub(crate) struct Spin {
    /// Calls since the last clock read.
    calls: u32,
    /// The previous reading: when (ns since the signal's epoch) and the wait so far (ns).
    at: u64,
    wait: u64,
}

/// Clock reads are made every this many ticks (a tick is a `crowd` check, about 1.5 us).
const TICKS: u32 = 128;

impl Spin {
    /// One tick of a spinning worker (`ours()`: this process's awake workers).
    #[inline]
    pub(crate) fn tick(&mut self, ours: impl Fn() -> usize, cpus: usize) {
        self.calls += 1;
        if self.calls < TICKS {
            return;
        }
        self.calls = 0;
        self.read(ours, cpus);
    }

    #[cold]
    fn read(&mut self, ours: impl Fn() -> usize, cpus: usize) {
        let s = signal();
        if !enabled() {
            return;
        }
        let now = s.now();
        if self.at != 0 && now.saturating_sub(self.at) < RUNQ_EVERY.as_nanos() as u64 {
            return;
        }
        let Some(wait) = run_queue_wait() else {
            return;
        };
        let span = now.saturating_sub(self.at);
        if self.at != 0 && span >= RUNQ_SPAN.as_nanos() as u64 {
            s.publish_runq(wait.saturating_sub(self.wait) as f64 / span as f64);
        }
        (self.at, self.wait) = (now, wait);
        s.refresh(ours(), cpus);
    }

    /// Forgets the previous reading (the worker slept: its time asleep is no spin).
    pub(crate) fn reset(&mut self) {
        *self = Spin::default();
    }
}

/// What one read of the process-wide sources found: the runnable threads (`/proc/loadavg`)
/// and the cumulative CPU stall (`/proc/pressure/cpu`, microseconds); `None` where a source
/// is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sources {
    /// Runnable threads of the whole system, the reader among them.
    pub running: Option<usize>,
    /// The "some" line's cumulative stall, microseconds.
    pub stall_us: Option<u64>,
}

/// Reads the process-wide sources now, bypassing the signal's rate limit (what a region that
/// reads at entry pays).
pub fn read_sources() -> Sources {
    Sources {
        running: running(),
        stall_us: pressure(),
    }
}

/// Reads the calling thread's time runnable and not running so far (nanoseconds, from
/// `/proc/thread-self/schedstat`; what a spinning worker pays per reading); `None` where the
/// file is missing.
pub fn read_run_queue() -> Option<u64> {
    run_queue_wait()
}

/// Reads a procfs file into a stack buffer (the kernels promise not to allocate:
/// `tests/executor/alloc_free.rs`); `None` when it cannot be read.
fn read_proc<'b>(path: &str, buf: &'b mut [u8]) -> Option<&'b str> {
    use std::io::Read;
    let n = std::fs::File::open(path).ok()?.read(buf).ok()?;
    std::str::from_utf8(&buf[..n]).ok()
}

/// The runnable threads of the whole system, from `/proc/loadavg`.
fn running() -> Option<usize> {
    let mut buf = [0u8; 128];
    parse_running(read_proc("/proc/loadavg", &mut buf)?)
}

/// `/proc/loadavg`'s fourth field (`running/total`): the runnable threads, the reader among
/// them.
pub(crate) fn parse_running(loadavg: &str) -> Option<usize> {
    let field = loadavg.split_whitespace().nth(3)?;
    field.split('/').next()?.parse().ok()
}

/// `/proc/pressure/cpu`'s "some" cumulative stall, in microseconds.
fn pressure() -> Option<u64> {
    let mut buf = [0u8; 256];
    parse_pressure(read_proc("/proc/pressure/cpu", &mut buf)?)
}

/// The `total=` of the `some` line of a PSI file.
pub(crate) fn parse_pressure(psi: &str) -> Option<u64> {
    let some = psi.lines().find(|l| l.starts_with("some "))?;
    some.split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

/// The calling thread's time runnable and not running so far, in nanoseconds, from
/// `/proc/thread-self/schedstat` (`run wait slices`).
fn run_queue_wait() -> Option<u64> {
    let mut buf = [0u8; 96];
    parse_schedstat(read_proc("/proc/thread-self/schedstat", &mut buf)?)
}

/// The second field of a schedstat line.
pub(crate) fn parse_schedstat(line: &str) -> Option<u64> {
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::live::{Sample, WAKE_SLACK};

    #[test]
    fn the_sources_parse() {
        assert_eq!(parse_running("0.32 1.46 1.75 3/81 17268\n"), Some(3));
        assert_eq!(parse_running("0.32 1.46 1.75"), None);
        let psi = "some avg10=0.20 avg60=2.08 avg300=6.68 total=913757778\n\
                   full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(parse_pressure(psi), Some(913_757_778));
        assert_eq!(parse_pressure("full total=3\n"), None);
        assert_eq!(parse_schedstat("1200 345 7\n"), Some(345));
        assert_eq!(parse_schedstat("1200"), None);
    }

    #[test]
    fn a_slow_read_does_not_become_the_cost() {
        // A cold first read, then warm ones: the estimate comes down within a few reads.
        let mut c = next_cost(0, 30_000);
        for _ in 0..4 {
            c = next_cost(c, 10_000);
        }
        assert!(c < 12_000, "{c}");
        // A read preempted for a millisecond moves it by an eighth at most.
        assert_eq!(next_cost(c, 1_000_000), c + c / 8);
        // A machine whose reads really got slower is followed.
        let mut c = 10_000;
        for _ in 0..20 {
            c = next_cost(c, 40_000);
        }
        assert!(c > 35_000, "{c}");
    }

    #[test]
    fn the_prior_is_the_share_of_time_a_member_is_off_its_cpu() {
        // One busy process, a leader and a member on two CPUs: off a third of the time.
        assert_eq!(prior(1, 1, 2), SLICE / 3);
        assert_eq!(prior(0, 1, 2), Duration::ZERO);
        assert_eq!(prior(2, 1, 2), SLICE / 2);
    }

    /// A signal whose last read saw `external` other runnable threads just now.
    fn seen(external: u64) -> Readings {
        let s = Readings::new();
        s.read_at.store(s.now(), Relaxed);
        // A read claimed "in the future": no region reads this host's sources over the test's.
        s.claimed_at.store(u64::MAX / 2, Relaxed);
        s.external.store(external, Relaxed);
        s
    }

    /// [`seen`], with every read since `PERSIST` ago crowded.
    fn crowded(external: u64) -> Readings {
        let epoch = Instant::now().checked_sub(PERSIST * 2).expect("a clock older than 40 ms");
        let s = Readings::since(epoch);
        s.read_at.store(s.now(), Relaxed);
        s.claimed_at.store(u64::MAX / 2, Relaxed);
        s.external.store(external, Relaxed);
        s.crowded_at.store(1, Relaxed);
        s
    }

    #[test]
    fn the_first_source_that_knows_decides() {
        let live = Live::new(WAKE_SLACK);
        let us = Duration::from_micros;
        // A small region (no read of its own) on two CPUs with room: quiet.
        let r = seen(0).reading(Some(&live), us(1), 1, 2, || 0);
        assert_eq!(r.signal, Signal::Room);
        assert!(r.late.is_zero());
        // No room, seen only now: not believed yet (a thread spinning a moment).
        let r = seen(1).reading(Some(&live), us(1), 1, 2, || 0);
        assert_eq!((r.late, r.signal), (Duration::ZERO, Signal::Count));
        // No room for PERSIST, nothing measured: the prior.
        let s = crowded(1);
        let r = s.reading(Some(&live), us(1), 1, 2, || 0);
        assert_eq!((r.late, r.signal), (SLICE / 3, Signal::Count));
        // Pressure, when some task waits anyway.
        s.psi_frac.store(500_000, Relaxed);
        let r = s.reading(Some(&live), us(1), 1, 2, || 0);
        assert_eq!((r.late, r.signal), (SLICE / 2, Signal::Pressure));
        // The team's own threads' run queue: a niced competitor (1 %) is quiet.
        std::thread::sleep(Duration::from_millis(1));
        s.publish_runq(0.01);
        let r = s.reading(Some(&live), us(1), 1, 2, || 0);
        assert_eq!((r.late, r.signal), (Duration::ZERO, Signal::RunQueue));
        s.publish_runq(0.5);
        let r = s.reading(Some(&live), us(1), 1, 2, || 0);
        assert_eq!((r.late, r.signal), (SLICE / 2, Signal::RunQueue));
        // The process's own sections' losses win over every source but room.
        for _ in 0..8 {
            live.record(Sample {
                own: us(40),
                wait: us(3000),
                stole: false,
                woken: false,
                width: 2,
            });
        }
        let r = s.reading(Some(&live), us(1), 1, 2, || 0);
        assert_eq!(r.signal, Signal::Measured);
        assert!(r.late > us(100), "{:?}", r.late);
        // Without a live view nothing is read.
        assert_eq!(s.reading(None, us(1), 1, 2, || 0), Contention::NONE);
    }

    #[test]
    fn a_run_queue_reading_from_before_the_crowding_is_not_believed() {
        let live = Live::new(WAKE_SLACK);
        let s = seen(0);
        s.publish_runq(0.0);
        std::thread::sleep(Duration::from_millis(1));
        // A busy thread appeared since the members last measured their quiet CPUs.
        s.external.store(1, Relaxed);
        s.crowded_at.store(s.now(), Relaxed);
        let r = s.reading(Some(&live), Duration::from_micros(1), 1, 2, || 0);
        assert_eq!(r.signal, Signal::Count);
        // Measured during the crowding: believed (a niced competitor: quiet).
        std::thread::sleep(Duration::from_millis(1));
        s.publish_runq(0.01);
        let r = s.reading(Some(&live), Duration::from_micros(1), 1, 2, || 0);
        assert_eq!((r.signal, r.late), (Signal::RunQueue, Duration::ZERO));
    }

    #[test]
    fn an_old_reading_is_not_believed() {
        let live = Live::new(WAKE_SLACK);
        let Some(epoch) = Instant::now().checked_sub(HELD * 3) else {
            return; // a clock that started less than that ago
        };
        // Read at the epoch, HELD * 3 ago, with no room: too old to believe.
        let s = Readings::since(epoch);
        s.read_at.store(1, Relaxed);
        s.external.store(1, Relaxed);
        let r = s.reading(Some(&live), Duration::from_micros(1), 1, 2, || 0);
        assert_eq!(r, Contention::NONE);
    }
}
