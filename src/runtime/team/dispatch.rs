//! Running one section on reserved members: the leader's claim on a team, publishing the
//! shares to the members' slots, the join, and reserving and releasing the members. `Exec`
//! (broadcast, scoped teams) and `Team`/`TeamExec` (held teams) both dispatch through here.
//! The protocols are `section.rs` (join, barrier, cancellation) and `slot.rs` (publish, wake);
//! the design record is `docs/waiting.md`.

use std::sync::atomic::{AtomicUsize, Ordering::*};
use std::time::{Duration, Instant};

use crate::runtime::live::{FLOOR, Sample, WAKE_SLACK, allowance};
use crate::runtime::parker::{self, Parker};
use crate::runtime::pool_shared::PoolShared;
use crate::runtime::sync::current_cpu;
use crate::runtime::team::section::{Participant, Roster, Section};
use crate::runtime::wait::Crowd;

/// The participants of a section: the leader, then the workers of `slots`.
struct SlotRoster<'a> {
    pool: Option<&'a PoolShared>,
    leader: &'static Parker,
    slots: &'a [usize],
}

impl Roster for SlotRoster<'_> {
    fn parker(&self, i: usize) -> &Parker {
        match (i, self.pool) {
            (0, _) | (_, None) => self.leader,
            (i, Some(pool)) => pool.slot_parker(self.slots[i - 1]),
        }
    }
}

/// Whether the leader may run the share of a member that has not started (`Slot::steal`):
/// only for sections whose participants need not run at once. `TeamExec::run`, `split`,
/// `broadcast` and `fork` promise that every participant runs on its own thread at the same
/// time (their shares may wait for each other by any means), so they never do.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shares {
    /// Every share runs on its own participant's thread.
    AtOnce,
    /// A share whose member was asleep and has not started when the leader is done with its
    /// own may run on the leader (the kernels' sections).
    Independent,
}

/// The team's claim word is held: another thread leads a section on these members now, or
/// the calling thread does, in a section this call is nested in. Nothing was published.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TeamBusy;

/// The right to publish sections to a team's members, held for one section. A team's handles
/// (its `Team`, every `TeamExec` and team token of it) share one claim word: whoever takes it
/// with a CAS from 0 to its thread's parker address leads; the others find it taken and run
/// on their own thread instead (see `TeamExec::run`). So two threads never publish to one
/// member at once, and a member never claims one leader's share and reads another's section.
struct Leading<'a>(&'a AtomicUsize);

impl<'a> Leading<'a> {
    #[inline]
    fn take(word: &'a AtomicUsize, me: &Parker) -> Option<Self> {
        let me = me as *const Parker as usize;
        // Acquire pairs with the previous leader's release: its sections are over.
        word.compare_exchange(0, me, Acquire, Relaxed)
            .ok()
            .map(|_| Leading(word))
    }
}

impl Drop for Leading<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.store(0, std::sync::atomic::Ordering::Release);
    }
}

/// Lets the members of the teams the calling thread led last stop spinning and sleep now: the
/// thread says it leads nothing (`Parker::leading` 0), which their `crowd` check reads as a
/// leader that moved on (`docs/waiting.md`, rule 3). Its next section sets the mark back and
/// its publish wakes them, as after any sleep. Nothing else changes: sleeping is always a
/// member's right, so the protocol and its models are the same.
pub(crate) fn rest() {
    parker::current().set_leading(0);
}

/// A claim word for handles whose sections have no members (never taken).
pub(crate) static NO_MEMBERS: AtomicUsize = AtomicUsize::new(0);

/// A member that has not started its share by the time the leader has worked this long on
/// its own is off its CPU: the leader runs the share itself (see `run_on`).
pub(crate) const STEAL_AFTER: Duration = FLOOR;

/// The least a kernel section's leader waits for late members before it sleeps: coming back
/// from a sleep costs a wake (`WAKE_COST`, 100 us), so a shorter wait is better spun or
/// yielded. With the allowance alone (27 us for a GEMM of 128) the leader slept whenever a
/// member was a little late, and a held team's GEMM of 128 took 1.5x faer serial on a quiet
/// machine (0.7x before).
pub(crate) const SLEEP_AFTER: Duration = Duration::from_micros(250);

/// Runs one section: the calling thread is participant 0, the workers of `slots` are
/// participants `1..=slots.len()`, led under the claim word `lead` (see [`Leading`]). Returns
/// after every participant is done; a panic in any share resumes here. Refuses with
/// [`TeamBusy`], publishing nothing, when the claim is held.
pub(crate) fn run_on(
    pool: Option<&PoolShared>,
    slots: &[usize],
    lead: &AtomicUsize,
    job: &(dyn Fn(Participant<'_>) + Sync),
    shares: Shares,
) -> Result<(), TeamBusy> {
    let leader = parker::current();
    let team = lead as *const AtomicUsize as usize;
    let _leading = match (pool, slots.is_empty()) {
        (Some(_), false) => {
            let leading = Leading::take(lead, leader).ok_or(TeamBusy)?;
            leader.set_leading(team); // members of its other teams stop spinning
            Some(leading)
        }
        _ => None,
    };
    let roster = SlotRoster {
        pool,
        leader,
        slots,
    };
    let polls = pool.map_or(0, PoolShared::polls);
    let section_width = 1 + slots.len();
    let section = Section::new(section_width, job, &roster, leader, polls);
    let here = current_cpu();
    // Members the publish had to wake (the first 64): until they start they may be queued on
    // this CPU, and in a kernel's section their shares may run here.
    let mut asleep = 0u64;
    if let Some(pool) = pool {
        let away = shares == Shares::Independent;
        for (i, &k) in slots.iter().enumerate() {
            if pool.publish(k, &section, i + 1, (leader, team, here), away) && i < 64 {
                asleep |= 1 << i;
            }
        }
    }
    // A kernel's section is timed by its leader for the pool's live view (`live.rs`): one
    // clock read here; the rest only when the section is not over after the leader's share.
    let timed = pool.filter(|_| shares == Shares::Independent);
    let start = timed.map(|_| Instant::now());
    // Members still waking (the publish woke them, or a warm-up did and they have not reported
    // a CPU since): their start is the wake the gate already charged, not lateness.
    let waking = asleep != 0 || timed.is_some_and(|p| slots.iter().any(|&k| p.cpu_unknown(k)));
    section.run_share(0);
    let mut stole = false;
    if let (Some(pool), Some(start)) = (timed, start) {
        // A member that has not started by now has its share run here instead of being
        // waited for when it is known not to be spinning (the publish had to wake it, or it
        // has reported no CPU since a warm-up woke it or a leader moved it: waking costs 50 us
        // to milliseconds on a small host), or when the leader's own share took longer than
        // [`STEAL_AFTER`]: a spinning member on a CPU of its own starts within a microsecond,
        // so it is off its CPU (a busy machine) and waiting for it could cost a time slice.
        // A spinning member is never passed over sooner, so a hot team keeps its parallelism.
        let mut overdue = None;
        for (i, &k) in slots.iter().enumerate() {
            if section.done() || pool.started(k) {
                continue;
            }
            let asleep = i < 64 && asleep & (1 << i) != 0;
            let late = asleep
                || pool.cpu_unknown(k)
                || *overdue.get_or_insert_with(|| start.elapsed() >= STEAL_AFTER);
            if late && pool.steal(k) {
                section.run_stolen(i + 1);
                stole = true;
            }
        }
    }
    let live = timed.and_then(|p| p.live);
    if section.done() {
        match (live, start) {
            (Some(live), Some(start)) if stole => live.record(Sample {
                own: start.elapsed(),
                wait: Duration::ZERO,
                stole,
                woken: waking,
                width: section_width,
            }),
            (Some(live), _) => live.on_time(),
            _ => {}
        }
        section.resume_panic();
        return Ok(());
    }
    let waited = start.map(|s| (s.elapsed(), Instant::now()));
    // Past this the members are late (`live::allowance`, and at least [`SLEEP_AFTER`]): the
    // leader sleeps rather than spin, which frees its CPU for a member the OS has queued
    // behind other work.
    let patience = match waited {
        Some((own, _)) => allowance(own, waking, WAKE_SLACK).max(SLEEP_AFTER),
        None => Duration::MAX,
    };
    // The first look is free: the members' slots are the cache lines they are writing now,
    // and a hot team's join is usually over within the first few polls.
    let mut looked = false;
    section.join_with(leader, &mut || match pool {
        Some(_) if looked && waited.is_some_and(|(_, t)| t.elapsed() > patience) => Crowd::Sleep,
        Some(p) if looked => p.crowd(slots, asleep),
        _ => {
            looked = true;
            if asleep == 0 {
                Crowd::Alone
            } else {
                Crowd::Yield
            }
        }
    });
    if let (Some(live), Some((own, t))) = (live, waited) {
        live.record(Sample {
            own,
            wait: t.elapsed(),
            stole,
            woken: waking,
            width: section_width,
        });
    }
    section.resume_panic();
    Ok(())
}

/// Runs a section on the calling thread alone: participant 0 of width 1.
pub(crate) fn run_alone(job: &(dyn Fn(Participant<'_>) + Sync)) {
    run_on(None, &[], &NO_MEMBERS, job, Shares::AtOnce).expect("a section without members");
}

/// Reserves `n` idle slots as members, retrying until `timeout`. Returns how many it got.
pub(crate) fn acquire_members(
    pool: &PoolShared,
    n: usize,
    out: &mut [usize],
    timeout: Duration,
) -> usize {
    let mut got = pool.reserve_members(n, out);
    let start = Instant::now();
    while got < n && start.elapsed() < timeout {
        std::thread::sleep(Duration::from_micros(20));
        got += pool.reserve_members(n - got, &mut out[got..]);
    }
    got
}

/// Releases a leader's claim on a team when its token is dropped.
pub(crate) struct Lead<'a>(pub(crate) &'a AtomicUsize);

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        self.0.store(0, std::sync::atomic::Ordering::Release);
    }
}

/// Releases reserved slots when dropped.
pub(crate) struct Release<'p>(pub(crate) &'p PoolShared, pub(crate) &'p [usize]);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        self.0.release(self.1);
    }
}

/// A buffer for `n` slot indices: on the stack up to 64, else on the heap.
pub(crate) fn slot_buffer<'b>(
    n: usize,
    stack: &'b mut [usize; 64],
    heap: &'b mut Vec<usize>,
) -> &'b mut [usize] {
    if n <= stack.len() {
        &mut stack[..n]
    } else {
        heap.resize(n, 0);
        heap
    }
}

/// Runs child teams at once on `members` (under the claim word `lead`): child `i` has
/// `sizes[i]` participants, child 0 led by the calling thread with `members[..sizes[0] - 1]`,
/// child `i > 0` led by the first member of its group. `f(i, group, claim)` runs on child
/// `i`'s leader with its other members and a claim word of its own. The caller has checked
/// that `sizes` is non-empty, without zeros, and sums to at most `1 + members.len()`.
pub(crate) fn split_on(
    pool: Option<&PoolShared>,
    members: &[usize],
    lead: &AtomicUsize,
    sizes: &[usize],
    f: &(dyn Fn(usize, &[usize], &AtomicUsize) + Sync),
) -> Result<(), TeamBusy> {
    debug_assert!(!sizes.is_empty() && sizes.iter().sum::<usize>() <= 1 + members.len());
    // Child i's participants are members[start(i) - 1 ..] (its leader first).
    let start = |i: usize| -> usize { sizes[..i].iter().sum() };
    let mut stack = [0usize; 64];
    let mut heap = Vec::new();
    let leaders = slot_buffer(sizes.len() - 1, &mut stack, &mut heap);
    for (i, l) in leaders.iter_mut().enumerate() {
        *l = members[start(i + 1) - 1];
    }
    let job = |p: Participant<'_>| {
        let i = p.index();
        let group = if i == 0 {
            &members[..sizes[0] - 1]
        } else {
            let s = start(i);
            &members[s..s + sizes[i] - 1]
        };
        // Each child team has a claim word of its own, on its leader's stack.
        let claim = AtomicUsize::new(0);
        f(i, group, &claim);
    };
    run_on(pool, leaders, lead, &job, Shares::AtOnce)
}
