//! The wait of an idle worker: for a section share, queued work, a change of its slot's state,
//! or shutdown (spin, yield, sleep, as `docs/waiting.md` describes), and the spin places that
//! keep idle spinners from outnumbering the CPUs.

use std::sync::atomic::AtomicUsize as StdAtomicUsize;

use crate::runtime::contention::Spin;
use crate::runtime::counters;
use crate::runtime::cpus::CpuSet;
use crate::runtime::parker::Parker;
use crate::runtime::sync::{current_cpu, Ordering::*, NO_CPU};
use crate::runtime::team::slot::{Slept, Slot, IDLE, RESERVED, TEAM};
use crate::runtime::wait::{Crowd, Waiter, THROTTLED_SPIN_POLLS};
use crate::runtime::pool_shared::{awake, PoolShared, SLEEPING};

/// Idle workers in their full spin phase right now, process-wide.
static IDLE_SPINNERS: StdAtomicUsize = StdAtomicUsize::new(0);

/// A worker's wait for a section share, queued work, a change of its slot's state, or
/// shutdown. Team members wait here between sections.
pub(crate) struct IdleWait<'a> {
    pool: &'a PoolShared,
    k: usize,
    parker: &'static Parker,
    /// The worker's CPU set, which it widens to again before it sleeps.
    home: &'a CpuSet,
    /// The member sleeps to leave its CPU to its leader.
    ceding: bool,
    /// The member sleeps because its leader now leads another team.
    left: bool,
    /// A waker ended the last sleep.
    woken: bool,
    /// The slot generation already served.
    seen: usize,
    /// The slot state when the wait began.
    state: u8,
    spinning: bool,
    /// Its own run-queue readings while it spins (the contention signal's third source).
    spin: Spin,
}

impl<'a> IdleWait<'a> {
    /// The wait of the worker of slot `k` (parker `parker`, CPU set `home`) after serving
    /// generation `seen`, its slot in `state`.
    pub(crate) fn new(
        pool: &'a PoolShared,
        k: usize,
        parker: &'static Parker,
        home: &'a CpuSet,
        seen: usize,
        state: u8,
    ) -> Self {
        IdleWait {
            pool,
            k,
            parker,
            home,
            ceding: false,
            left: false,
            woken: false,
            seen,
            state,
            spinning: false,
            spin: Spin::default(),
        }
    }

    /// Team members spin their full budget (a hot team) and hold a spin place, so that other
    /// idle workers yield the CPUs; reserved slots sleep at once (their CPUs belong to someone
    /// else); other idle workers spin in full only when they get a [`SpinPlace`].
    pub(crate) fn polls(&mut self) -> u32 {
        let pool = self.pool;
        match self.state {
            RESERVED => return 0,
            TEAM => {
                let polls = pool.polls();
                if polls > THROTTLED_SPIN_POLLS {
                    IDLE_SPINNERS.fetch_add(1, Relaxed);
                    pool.idle_spinning.fetch_add(1, SeqCst);
                    self.spinning = true;
                }
                return polls;
            }
            _ if pool.members.load(Relaxed) > 0 => return THROTTLED_SPIN_POLLS,
            _ => {}
        }
        let place = SpinPlace::take(pool.polls(), pool.usable_cpus);
        let polls = place.polls();
        if place.full {
            pool.idle_spinning.fetch_add(1, SeqCst);
            std::mem::forget(place);
            self.spinning = true;
        }
        polls
    }

    pub(crate) fn stop_spinning(&mut self) {
        if std::mem::take(&mut self.spinning) {
            IDLE_SPINNERS.fetch_sub(1, Relaxed);
            self.pool.idle_spinning.fetch_sub(1, SeqCst);
        }
    }
}

/// A place among the idle workers allowed a full spin: at most CPUs - 1 process-wide, so one
/// CPU stays free for the callers that will hand them work. Others take the throttled count.
pub(crate) struct SpinPlace {
    full: bool,
    polls: u32,
}

impl SpinPlace {
    pub(crate) fn take(polls: u32, cpus: usize) -> SpinPlace {
        if polls <= THROTTLED_SPIN_POLLS {
            return SpinPlace { full: false, polls };
        }
        let cap = cpus.saturating_sub(1);
        let full = IDLE_SPINNERS
            .fetch_update(Relaxed, Relaxed, |n| (n < cap).then_some(n + 1))
            .is_ok();
        SpinPlace {
            full,
            polls: if full { polls } else { THROTTLED_SPIN_POLLS },
        }
    }

    pub(crate) fn polls(&self) -> u32 {
        self.polls
    }

    /// Whether more threads spin than there are places (team members take theirs regardless):
    /// an idle worker holding a place then gives it up and sleeps, so the team keeps its CPUs.
    #[inline]
    pub(crate) fn crowded(cpus: usize) -> bool {
        IDLE_SPINNERS.load(Relaxed) > cpus.saturating_sub(1)
    }

    /// Whether this place spins in full.
    pub(crate) fn full(&self) -> bool {
        self.full
    }
}

impl Drop for SpinPlace {
    fn drop(&mut self) {
        if self.full {
            IDLE_SPINNERS.fetch_sub(1, Relaxed);
        }
    }
}

impl IdleWait<'_> {
    /// A member whose spin ran out moves to its leader's CPU before it sleeps, with its whole
    /// CPU set again. A wake lands on the wakee's last CPU when that CPU is idle, else on the
    /// waker's: woken from the leader's CPU while the leader runs there, it starts within about
    /// 12 us, where a wake onto a CPU idle for milliseconds took 75 to 150 us on the 2-vCPU
    /// development VM. So the first section after an idle gap is short; the member then leaves
    /// the leader's CPU (`crowd`, `PoolShared::publish`). The move costs this member's own idle
    /// time, and the leader's CPU a few microseconds.
    fn sleep_by_leader(&self, slot: &Slot) {
        let leader = slot.leader_cpu();
        let narrowed = slot.set_narrowed(false);
        let moved = slot.tid() != 0
            && leader != NO_CPU
            && self.home.contains(leader)
            && current_cpu() != leader
            && CpuSet::one(leader).apply();
        if moved || narrowed {
            self.home.apply();
        }
    }
}

impl Waiter for IdleWait<'_> {
    #[inline]
    fn ready(&mut self) -> bool {
        let slot = &self.pool.slots[self.k];
        slot.has_share(self.seen)
            || slot.state.load(Relaxed) != self.state
            || (self.state == IDLE && self.pool.queue.has_work())
            || self.pool.shutdown.load(Relaxed)
            || self.woken
            || (self.spinning
                && self.state != TEAM
                && (SpinPlace::crowded(self.pool.usable_cpus)
                    || self.pool.members.load(Relaxed) > 0))
    }

    /// Every worker reports its CPU now and then. A team member stops spinning and sleeps at
    /// once in two cases, and the next publish wakes it:
    /// - it is on its leader's CPU: it leaves the CPU to the leader, which moves it off that
    ///   CPU before it wakes it (`move_off`). (Yielding instead is a poor trade under the EEVDF
    ///   scheduler: a leader that yielded while waiting had pushed its own deadline back, and
    ///   the member's yields handed the CPU back to itself for about 40 us.)
    /// - its leader has since led a section of another team: a thread that builds a pool and
    ///   team per call, or uses several teams in turn, does not come back soon, and this spin
    ///   would only take a CPU from the team it leads now.
    fn crowd(&mut self) -> Crowd {
        // A spinning worker has nothing to do: it reads its own run-queue delay now and then
        // for the contention signal (`contention.rs`), at no cost to any leader. A pool
        // without a live view reads nothing.
        if self.pool.live.is_some() {
            self.spin.tick(awake, self.pool.usable_cpus);
        }
        let slot = &self.pool.slots[self.k];
        let here = current_cpu();
        slot.note_cpu(here);
        if self.state != TEAM {
            return Crowd::Alone;
        }
        if slot.leader_moved_on() {
            counters::record_leave();
            self.left = true;
            Crowd::Sleep
        } else if slot.on_leader_cpu(here) {
            counters::record_cede();
            self.ceding = true;
            Crowd::Sleep
        } else {
            Crowd::Alone
        }
    }

    fn sleep(&mut self) {
        self.stop_spinning();
        self.spin.reset();
        let slot = &self.pool.slots[self.k];
        if self.ceding {
            slot.set_ceded(true);
        } else if self.state == TEAM && !self.left {
            self.sleep_by_leader(slot);
        }
        let (pool, k, state, ceding) = (self.pool, self.k, self.state, self.ceding);
        let awake = || {
            let slot = &pool.slots[k];
            slot.state.load(Relaxed) != state
                || (state == IDLE && pool.queue.has_work())
                || pool.shutdown.load(Relaxed)
                // Moved off the leader's CPU since it decided to cede: spin where it is now.
                || (ceding && !slot.on_leader_cpu(current_cpu()))
        };
        SLEEPING.fetch_add(1, Relaxed);
        let slept = slot.sleep(self.parker, &self.pool.sleepers, self.seen, awake);
        SLEEPING.fetch_sub(1, Relaxed);
        slot.set_ceded(false);
        self.ceding = false;
        self.left = false;
        // Woken with nothing new (a warm-up): a fresh wait episode, spinning first.
        self.woken = slept == Slept::Woken;
        if slept.parked() {
            if self.state == TEAM {
                counters::record_member_sleep();
            } else {
                counters::record_idle_sleep();
            }
        }
    }
}
