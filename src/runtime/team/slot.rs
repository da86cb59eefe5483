//! A worker slot of a pool: its state, its sleep flag, and the section mailbox.
//!
//! The slot's `word` holds the section generation (upper bits) and the worker's SLEEPING flag
//! (bit 0), so that the publish/sleep race is decided by read-modify-writes on one location
//! (their modification order is total), with no store/load pair across two locations:
//! - **Sleep** ([`Slot::sleep`]): the worker sets SLEEPING with a `fetch_or` that also returns
//!   the generation; if the generation moved past `seen`, it withdraws and does not park.
//! - **Publish** ([`Slot::publish`]): the leader stores the section and the share index, then
//!   bumps the generation with a `fetch_add` that returns the flag as it was just before; if it
//!   was set, the leader claims it ([`Slot::take_sleeper`], a `fetch_and`, so each sleep is
//!   ended by at most one waker) and unparks. Either the `fetch_add` comes first (the sleeper's
//!   `fetch_or` sees the new generation), or the `fetch_or` does (the publisher sees the flag).
//!   The parker keeps an unpark that comes between the flag and the park. Only addressed slots
//!   are touched, so a narrow section on a wide team wakes nobody else.
//!
//! Work queued for idle workers lives elsewhere (the pool's queue), so that pair is ordered by
//! `fence(SeqCst)` on both sides: the sleeper's after it raised the flag, the waker's after it
//! queued (see `PoolShared::wake_idle`).
//!
//! A warm-up wake ([`Slot::wake`]) claims the flag the same way, without publishing.
//!
//! **Claim.** Each published share is run by exactly one thread: the worker and the leader
//! race for it with a CAS on `claimed` (the last generation claimed) from `g - 1` to `g`. The
//! leader tries only after its own share, only for a member it had to wake, and only in
//! sections whose shares need not run at once ([`Slot::steal`]); the loser leaves the section
//! alone.
//!
//! Checked by the loom models `slot_publish_races_member_sleep`,
//! `slot_publish_wakes_only_its_slot`, `slot_wake_ends_member_sleep` and
//! `slot_leader_steals_a_share_once` in `tests/executor/loom.rs`.

// `pub` items here are reachable only from the loom models (`loom_api`).
#![allow(unreachable_pub)]

use crate::runtime::parker::Parker;
use crate::runtime::sync::{
    AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicUsize, NO_CPU, Ordering::*, fence,
};
use crate::runtime::team::section::Section;

/// The SLEEPING flag in `word`; the generation counts in units of `GENERATION`.
const SLEEPING: usize = 1;
const GENERATION: usize = 2;

/// Slot states.
pub(crate) const IDLE: u8 = 0;
/// Attached to a queued fork.
pub(crate) const BUSY: u8 = 1;
/// Held by `broadcast` or `external`.
pub(crate) const RESERVED: u8 = 2;
/// A team member.
pub(crate) const TEAM: u8 = 3;

/// How a worker's [`Slot::sleep`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slept {
    /// It did not park: something had changed.
    Not,
    /// It parked and a waker claimed its flag: a publish, a warm-up, queued work or shutdown.
    Woken,
    /// It parked and returned with its flag still raised (a token left by an earlier wake).
    Spurious,
}

impl Slept {
    /// Whether the worker parked.
    pub fn parked(self) -> bool {
        self != Slept::Not
    }
}

/// See the module documentation.
pub struct Slot {
    /// The serving worker's parker (null before a worker has arrived).
    parker: AtomicPtr<Parker>,
    /// IDLE, BUSY, RESERVED or TEAM.
    pub(crate) state: AtomicU8,
    section: AtomicPtr<Section<'static>>,
    index: AtomicUsize,
    /// `generation * GENERATION | SLEEPING`.
    word: AtomicUsize,
    /// The last generation whose share was claimed, by the worker or by the leader.
    claimed: AtomicUsize,
    /// The CPU the slot's worker last reported (when it claimed a share, and now and then
    /// while it waits), or `NO_CPU`. Read by waiters that must not spin on its CPU.
    cpu: AtomicU32,
    /// The CPU of the thread that last reserved or published to the slot (its leader), or
    /// `NO_CPU`. A member that finds itself there yields to it.
    leader_cpu: AtomicU32,
    /// The parker of the thread that last published to the slot (null before), and the team
    /// it published for (its claim word's address): a member whose leader now leads another
    /// team stops spinning.
    leader: AtomicPtr<Parker>,
    team: AtomicUsize,
    /// The thread id of the slot's worker when a leader may move it off its own CPU (its
    /// affinity is its pool's CPU set), else 0.
    tid: AtomicU32,
    /// A leader narrowed the worker's affinity; the worker widens it again when it stops
    /// being a team member.
    narrowed: AtomicBool,
    /// The worker went to sleep to leave its CPU to its leader (not because its spin ran out):
    /// the leader moves it off that CPU before it wakes it.
    ceded: AtomicBool,
}

impl Default for Slot {
    fn default() -> Self {
        Self::new()
    }
}

impl Slot {
    /// An idle slot with no worker yet.
    pub fn new() -> Self {
        Slot {
            parker: AtomicPtr::new(std::ptr::null_mut()),
            state: AtomicU8::new(IDLE),
            section: AtomicPtr::new(std::ptr::null_mut()),
            index: AtomicUsize::new(0),
            word: AtomicUsize::new(0),
            claimed: AtomicUsize::new(0),
            cpu: AtomicU32::new(NO_CPU),
            leader_cpu: AtomicU32::new(NO_CPU),
            leader: AtomicPtr::new(std::ptr::null_mut()),
            team: AtomicUsize::new(0),
            tid: AtomicU32::new(0),
            narrowed: AtomicBool::new(false),
            ceded: AtomicBool::new(false),
        }
    }

    /// Records whether the worker sleeps to leave its CPU to its leader.
    pub fn set_ceded(&self, ceded: bool) {
        if self.ceded.load(Relaxed) != ceded {
            self.ceded.store(ceded, Relaxed);
        }
    }

    /// Whether the worker sleeps to leave its CPU to its leader.
    pub fn ceded(&self) -> bool {
        self.ceded.load(Relaxed)
    }

    /// Whether the worker has announced a sleep (a publish would have to wake it).
    #[inline]
    pub fn announced_sleep(&self) -> bool {
        self.word.load(Relaxed) & SLEEPING != 0
    }

    /// Records the worker's thread id for leaders that may move it (0: they may not).
    pub fn set_tid(&self, tid: u32) {
        self.tid.store(tid, Relaxed);
    }

    /// The worker's thread id, when a leader may move it.
    pub fn tid(&self) -> u32 {
        self.tid.load(Relaxed)
    }

    /// Records that a leader narrowed the worker's affinity (or, with `false`, that the worker
    /// widened it again). Returns whether it was narrowed before.
    pub fn set_narrowed(&self, narrowed: bool) -> bool {
        if !narrowed && !self.narrowed.load(Relaxed) {
            return false;
        }
        self.narrowed.swap(narrowed, Relaxed)
    }

    /// Records the CPU the slot's worker runs on (written only when it changed, so a worker
    /// that reports often does not keep pulling the slot's cache line away from its leader).
    #[inline]
    pub fn note_cpu(&self, cpu: u32) {
        if self.cpu.load(Relaxed) != cpu {
            self.cpu.store(cpu, Relaxed);
        }
    }

    /// The CPU the slot's worker last reported, or `NO_CPU`.
    #[inline]
    pub fn cpu(&self) -> u32 {
        self.cpu.load(Relaxed)
    }

    /// Records the CPU of the thread about to lead the slot's worker.
    #[inline]
    pub fn note_leader_cpu(&self, cpu: u32) {
        if self.leader_cpu.load(Relaxed) != cpu {
            self.leader_cpu.store(cpu, Relaxed);
        }
    }

    /// Records the thread about to publish to the slot (its parker) and the team it leads.
    #[inline]
    pub fn note_leader(&self, leader: &Parker, team: usize) {
        let p = leader as *const Parker as *mut Parker;
        if self.leader.load(Relaxed) != p {
            self.leader.store(p, Relaxed);
        }
        if self.team.load(Relaxed) != team {
            self.team.store(team, Relaxed);
        }
    }

    /// Whether the thread that last published to the slot has since led a section of another
    /// team (so it will not publish here soon).
    #[inline]
    pub fn leader_moved_on(&self) -> bool {
        let leader = self.leader.load(Relaxed);
        // SAFETY: parkers are never freed (see `parker::current`).
        !leader.is_null() && unsafe { (*leader).leading() } != self.team.load(Relaxed)
    }

    /// The CPU of the worker's leader, or `NO_CPU`.
    #[inline]
    pub fn leader_cpu(&self) -> u32 {
        self.leader_cpu.load(Relaxed)
    }

    /// Whether the worker, now on `cpu`, shares it with its leader (false when either CPU is
    /// unknown).
    #[inline]
    pub fn on_leader_cpu(&self, cpu: u32) -> bool {
        cpu != NO_CPU && self.leader_cpu.load(Relaxed) == cpu
    }

    /// Whether the share published last has been claimed (by the worker or by the leader).
    #[inline]
    pub fn started(&self) -> bool {
        self.claimed.load(Relaxed) == self.word.load(Relaxed) / GENERATION
    }

    /// Records the parker the slot's worker sleeps on. It must outlive every waker.
    pub fn set_parker(&self, parker: &Parker) {
        self.parker
            .store(parker as *const Parker as *mut Parker, Release);
    }

    /// Forgets the parker of a worker that will never serve the slot.
    pub fn clear_parker(&self) {
        self.parker.store(std::ptr::null_mut(), Release);
    }

    /// The parker of the slot's worker, if one has arrived.
    pub fn parker(&self) -> Option<&Parker> {
        // SAFETY: parkers outlive every waker (never freed; under loom, kept by the model).
        unsafe { self.parker.load(Acquire).as_ref() }
    }

    /// Unparks the slot's worker, if one has arrived.
    pub fn unpark(&self) {
        if let Some(p) = self.parker() {
            p.unpark();
        }
    }

    /// Raises the flag for the worker (a leased worker that may be asleep in the reserve, or a
    /// worker about to sleep in a join): the first waker that needs it claims the flag and
    /// unparks it. Returns the word as it was.
    pub fn expect_sleeper(&self, sleepers: &AtomicUsize) -> usize {
        let old = self.word.fetch_or(SLEEPING, AcqRel);
        if old & SLEEPING == 0 {
            sleepers.fetch_add(1, Relaxed);
        }
        old
    }

    /// Takes the sleep flag: true for at most one caller per raised flag, which must then
    /// unpark (or, for the worker itself, has withdrawn its announcement).
    #[inline]
    pub fn take_sleeper(&self, sleepers: &AtomicUsize) -> bool {
        if self.word.load(Relaxed) & SLEEPING != 0
            && self.word.fetch_and(!SLEEPING, AcqRel) & SLEEPING != 0
        {
            sleepers.fetch_sub(1, Relaxed);
            return true;
        }
        false
    }

    /// The worker's sleep: raise the flag, re-check the generation against `seen` and then
    /// `awake()` (after a SeqCst fence, for conditions kept elsewhere), park only if nothing
    /// changed, then withdraw the flag. Returns whether it parked, and whether a waker ended it.
    pub fn sleep(
        &self,
        parker: &Parker,
        sleepers: &AtomicUsize,
        seen: usize,
        awake: impl FnOnce() -> bool,
    ) -> Slept {
        let old = self.expect_sleeper(sleepers);
        fence(SeqCst);
        let parked = old / GENERATION == seen && !awake();
        if parked {
            parker.park();
        }
        // Withdrawing the flag ourselves means no waker claimed it.
        match (parked, self.take_sleeper(sleepers)) {
            (false, _) => Slept::Not,
            (true, true) => Slept::Spurious,
            (true, false) => Slept::Woken,
        }
    }

    /// Publishes share `index` of `section` to this slot and wakes its worker if it sleeps.
    /// Returns whether it had to wake it.
    #[cfg_attr(not(loom), allow(dead_code))] // the pool stages and releases on its own
    pub fn publish(&self, section: &Section<'_>, index: usize, sleepers: &AtomicUsize) -> bool {
        self.stage(section, index);
        self.release(sleepers)
    }

    /// The first half of [`publish`](Slot::publish): stores the share, which the worker cannot
    /// see yet. (The slot's cache line is then the publisher's, so what it reads of the slot
    /// before [`release`](Slot::release) costs nothing more.)
    #[inline]
    pub fn stage(&self, section: &Section<'_>, index: usize) {
        self.section.store(
            (section as *const Section<'_>)
                .cast_mut()
                .cast::<Section<'static>>(),
            Relaxed,
        );
        self.index.store(index, Relaxed);
    }

    /// The second half of [`publish`](Slot::publish): makes the staged share the worker's and
    /// wakes the worker if it sleeps. Returns whether it had to wake it.
    #[inline]
    pub fn release(&self, sleepers: &AtomicUsize) -> bool {
        // Release for the two stores of `stage`; returns the flag as it was just before.
        let old = self.word.fetch_add(GENERATION, AcqRel);
        if old & SLEEPING != 0 && self.take_sleeper(sleepers) {
            self.unpark();
            return true;
        }
        false
    }

    /// Wakes the slot's worker if it announced a sleep (a team member about to be needed: the
    /// kernels warm their members at entry, so the first section finds them spinning). Returns
    /// whether it woke it. The worker finds nothing new and starts a fresh spin.
    pub fn wake(&self, sleepers: &AtomicUsize) -> bool {
        let woke = self.take_sleeper(sleepers);
        if woke {
            self.unpark(); // the warm-up wake
        }
        woke
    }

    /// Whether a share newer than generation `seen` was published.
    #[inline]
    pub fn has_share(&self, seen: usize) -> bool {
        self.word.load(Relaxed) / GENERATION != seen
    }

    /// Takes the share published since generation `seen`, if any, and advances `seen`. The
    /// share is the worker's only if it claims it first; `None` in the tuple's place means the
    /// leader already ran it, and the section must not be touched.
    #[inline]
    pub fn take_share(&self, seen: &mut usize) -> Option<Option<(*const Section<'static>, usize)>> {
        let g = self.word.load(Acquire) / GENERATION;
        if g == *seen {
            return None;
        }
        *seen = g;
        let mine = self.claim(g);
        Some(mine.then(|| {
            (
                self.section.load(Relaxed).cast_const(),
                self.index.load(Relaxed),
            )
        }))
    }

    /// The leader claims the share it published last, when the worker has not: a member that
    /// has not started by the time the leader finished its own share (still waking, or queued
    /// behind the leader on its CPU) would only make the leader wait. Returns whether it did;
    /// the leader then runs the share itself.
    pub fn steal(&self) -> bool {
        // Only this leader publishes to the slot while it leads, so the generation is its own.
        let g = self.word.load(Relaxed) / GENERATION;
        self.claim(g)
    }

    /// Claims generation `g`'s share: true for exactly one caller, the worker or the leader.
    fn claim(&self, g: usize) -> bool {
        self.claimed
            .compare_exchange(g - 1, g, AcqRel, Relaxed)
            .is_ok()
    }
}

/// Wakes up to `n` workers of `slots` that announced a sleep and may serve queued work (their
/// slot is `IDLE` or `BUSY`: team members and reserved workers serve no queue), after work was
/// queued. Returns how many it woke.
///
/// The race with a worker going to sleep is decided across two locations (the queue's count
/// and the slot's word), so both sides put a `SeqCst` fence between their write and their
/// read: the worker's in [`Slot::sleep`] (after raising its flag, before re-checking the
/// queue), this one after the queueing and before reading `sleepers`. Either the worker's
/// re-check sees the work, or this sees its flag. A worker that misses both cannot exist; a
/// wake that finds nobody costs only parallelism (a caller runs its unclaimed jobs itself).
///
/// Checked by the loom model `idle_worker_woken_for_queued_work`.
pub fn wake_for_queue<'s>(
    slots: impl IntoIterator<Item = &'s Slot>,
    sleepers: &AtomicUsize,
    n: usize,
) -> usize {
    if n == 0 {
        return 0;
    }
    fence(SeqCst);
    if sleepers.load(Relaxed) == 0 {
        return 0;
    }
    let mut woken = 0;
    for slot in slots {
        let state = slot.state.load(Relaxed);
        if (state == IDLE || state == BUSY) && slot.take_sleeper(sleepers) {
            slot.unpark(); // the idle-worker wake
            woken += 1;
            if woken == n {
                break;
            }
        }
    }
    woken
}
