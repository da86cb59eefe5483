//! A pool's shared state: its worker slots, its queue, its model, and the operations its
//! handles and tokens use on them (reserve and release slots, publish a section, wake idle
//! workers, shut down). The worker loop is `serve.rs`, its idle wait `idle.rs`.
//!
//! A pool owns `threads` worker *slots*. Idle workers sleep and are woken through their slot's
//! protocol (see [`crate::runtime::team::slot`]): a caller that queued a fork reads `sleepers`
//! and, when it is non-zero, claims and unparks up to `n` sleeping slots. A missed wake there
//! would only cost parallelism, never progress: a caller runs every unclaimed job itself.
//! Sections are published to slots the same way. The design records are `docs/executor.md`
//! and `docs/waiting.md`.

use std::sync::atomic::AtomicUsize as StdAtomicUsize;
use std::time::Duration;

use crossbeam_utils::CachePadded;
use teamalg_gates::{Contention, Model};

use crate::runtime::contention;
use crate::runtime::counters;
use crate::runtime::live::{self, Live};
use crate::runtime::cpus::CpuSet;
use crate::runtime::parker::{self, Parker};
use crate::runtime::plain::queue::Queue;
use crate::runtime::sync::{current_cpu, AtomicBool, AtomicPtr, AtomicUsize, Ordering::*, NO_CPU};
use crate::runtime::team::section::Section;
use crate::runtime::team::slot::{wake_for_queue, Slot, BUSY, IDLE, RESERVED, TEAM};
use crate::runtime::wait::{wait_staged, Crowd, Waiter, THROTTLED_SPIN_POLLS};

/// Workers serving some pool right now, process-wide (for the oversubscription test).
pub(crate) static SERVING: StdAtomicUsize = StdAtomicUsize::new(0);
/// Of those, workers in the sleep phase of a wait right now (asleep, or about to be).
pub(crate) static SLEEPING: StdAtomicUsize = StdAtomicUsize::new(0);
pub(crate) use crate::runtime::live::WAKE_COST;

/// Stands for the parker of a slot whose worker has not arrived yet (never slept on).
static UNARRIVED: Parker = Parker::new();

/// State shared by a pool's handle, its tokens and its workers.
pub(crate) struct PoolShared {
    pub(crate) queue: Queue,
    pub(crate) slots: Box<[CachePadded<Slot>]>,
    pub(crate) sleepers: AtomicUsize,
    pub(crate) idle_spinning: AtomicUsize,
    /// Slots reserved as team members: while there are any, the pool's other idle workers do
    /// not spin (a yielding leader would hand its CPU to them).
    pub(crate) members: StdAtomicUsize,
    pub(crate) spin_polls: u32,
    pub(crate) cpus: CpuSet,
    /// `cpus.usable()` (the set or the cgroup's quota, the smaller), fixed at build: the
    /// waits read it on every poll.
    pub(crate) usable_cpus: usize,
    pub(crate) acquire_timeout: Duration,
    /// What the gates read: dispatch costs, rates, split costs, thresholds.
    pub(crate) model: Model,
    /// What sections lose now to late participants: the process's live view (`live.rs`);
    /// `None` for a pool built with `live_view(false)`.
    pub(crate) live: Option<&'static Live>,
    pub(crate) shutdown: AtomicBool,
    /// Workers that have not yet left the pool.
    active: AtomicUsize,
    /// Fresh threads that have started (so `build` can wait for them).
    arrived: AtomicUsize,
    /// The parker of the thread dropping the pool, set before `shutdown`.
    dropper: AtomicPtr<Parker>,
    /// `on_start` hooks that panicked (the worker served anyway).
    pub(crate) hook_panics: StdAtomicUsize,
}

thread_local! {
    /// The pool and slot this thread serves, when it is a worker.
    static CURRENT: std::cell::Cell<(*const PoolShared, usize)> =
        const { std::cell::Cell::new((std::ptr::null(), 0)) };
}

/// Names the pool and slot the calling thread serves (a null pool: none).
pub(crate) fn set_current_worker(pool: *const PoolShared, k: usize) {
    CURRENT.with(|c| c.set((pool, k)));
}

/// The pool and slot the calling thread serves, if it is a worker.
pub(crate) fn current_worker() -> Option<(&'static PoolShared, usize)> {
    let (p, k) = CURRENT.try_with(|c| c.get()).ok()?;
    // SAFETY: a worker holds an `Arc` of the pool it serves for as long as CURRENT names it.
    (!p.is_null()).then(|| (unsafe { &*p }, k))
}

/// This process's workers that are awake now (serving a pool and not asleep).
pub(crate) fn awake() -> usize {
    SERVING.load(Relaxed).saturating_sub(SLEEPING.load(Relaxed))
}

impl PoolShared {
    pub(crate) fn new(
        threads: usize,
        spin_polls: u32,
        cpus: CpuSet,
        acquire_timeout: Duration,
        model: Model,
    ) -> Self {
        PoolShared {
            queue: Queue::new(),
            slots: (0..threads)
                .map(|_| CachePadded::new(Slot::new()))
                .collect(),
            sleepers: AtomicUsize::new(0),
            idle_spinning: AtomicUsize::new(0),
            members: StdAtomicUsize::new(0),
            spin_polls,
            usable_cpus: cpus.usable(),
            live: Some(live::machine()),
            cpus,
            acquire_timeout,
            model,
            shutdown: AtomicBool::new(false),
            active: AtomicUsize::new(threads),
            arrived: AtomicUsize::new(0),
            dropper: AtomicPtr::new(std::ptr::null_mut()),
            hook_panics: StdAtomicUsize::new(0),
        }
    }

    /// A freshly spawned worker thread reports that it runs.
    pub(crate) fn arrive(&self) {
        self.arrived.fetch_add(1, Release);
    }

    /// Waits until `n` fresh threads have arrived. A freshly spawned thread may need a CPU
    /// that spinning threads hold, so this naps rather than spins.
    pub(crate) fn wait_arrivals(&self, n: usize) {
        while self.arrived.load(Acquire) < n {
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    pub(crate) fn threads(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn is_shut_down(&self) -> bool {
        self.shutdown.load(Acquire)
    }

    /// Whether the calling thread is a worker of this pool.
    pub(crate) fn is_current_worker(&self) -> bool {
        current_worker().is_some_and(|(p, _)| std::ptr::eq(p, self))
    }

    /// Spin polls for a wait, throttled when more threads can be awake than this pool has
    /// CPUs: a pool wider than its CPU set (counting every slot, also those whose worker still
    /// sleeps in the reserve), or more workers awake process-wide (serving a pool and not
    /// asleep: the sleeping members of a held team or of another pool take no CPU, and counting
    /// them throttled the member of a pool built per call next to a held team), or sections
    /// that lose time to late participants now (`Live::contended`: the machine is busy).
    #[inline]
    pub(crate) fn polls(&self) -> u32 {
        let cpus = self.usable_cpus;
        let awake = SERVING.load(Relaxed).saturating_sub(SLEEPING.load(Relaxed));
        if self.threads() > cpus || awake > cpus || self.contended() {
            THROTTLED_SPIN_POLLS.min(self.spin_polls)
        } else {
            self.spin_polls
        }
    }

    /// How contended the CPUs are for a region of serial time `estimate` on `members` more
    /// participants of this pool (the contention signal, `contention.rs`, with the live view
    /// as one of its sources and this pool's CPUs); nothing for a pool without a live view.
    pub(crate) fn contention(&self, members: usize, estimate: Duration) -> Contention {
        contention::signal().reading(self.live, estimate, members, self.usable_cpus, awake)
    }

    /// What each section on `members` more participants loses now (the signal, for a region
    /// too small to read the sources at entry).
    pub(crate) fn lateness(&self, members: usize) -> Duration {
        self.contention(members, Duration::ZERO).late
    }

    /// Whether sections lose time to late participants now: the live view says so, or the
    /// team's own threads waited for their CPUs lately (the contention signal's run queue);
    /// never for a pool without a live view. Waits then sleep rather than spin, and a team
    /// cuts a chunked region finer (`exec/parts.rs`).
    #[inline]
    pub(crate) fn contended(&self) -> bool {
        self.live
            .is_some_and(|live| live.contended() || contention::signal().busy())
    }

    /// Idle workers spinning in this pool now (they will see queued work without a wake).
    pub(crate) fn spinning(&self) -> usize {
        self.idle_spinning.load(Relaxed)
    }

    /// Wakes up to `n` sleeping workers that may serve the queue, after work was queued.
    /// Returns how many (see [`wake_for_queue`]).
    pub(crate) fn wake_idle(&self, n: usize) -> usize {
        wake_for_queue(self.slots.iter().map(|s| &**s), &self.sleepers, n)
    }

    /// Whether some worker of the pool may still serve its queue: a slot that is idle or busy
    /// with a fork (team members and reserved slots serve none).
    pub(crate) fn can_serve_queue(&self) -> bool {
        self.slots
            .iter()
            .any(|s| matches!(s.state.load(Relaxed), IDLE | BUSY))
    }

    /// Reserves up to `n` idle slots (none of them the caller's) for `broadcast` or `external`.
    /// Returns their indices in `out` and how many were reserved.
    pub(crate) fn reserve_idle(&self, n: usize, out: &mut [usize]) -> usize {
        self.reserve_as(RESERVED, n, out)
    }

    /// Reserves up to `n` idle slots as team members. Returns how many were reserved (their
    /// indices in `out`). A member that is spinning switches to waiting for sections; one that
    /// sleeps stays asleep with its flag raised, so the first section wakes it and its leader
    /// knows it had to (and naps in its join instead of spinning against it).
    pub(crate) fn reserve_members(&self, n: usize, out: &mut [usize]) -> usize {
        self.reserve_as(TEAM, n, out)
    }

    fn reserve_as(&self, state: u8, n: usize, out: &mut [usize]) -> usize {
        let mut got = 0;
        // The reserving thread leads the members: they keep clear of its CPU from now on.
        let here = current_cpu();
        for (k, slot) in self.slots.iter().enumerate() {
            if got == n {
                break;
            }
            if slot.state.load(Relaxed) == IDLE
                && slot
                    .state
                    .compare_exchange(IDLE, state, Acquire, Relaxed)
                    .is_ok()
            {
                slot.note_leader_cpu(here);
                out[got] = k;
                got += 1;
            }
        }
        if state == TEAM {
            self.members.fetch_add(got, Relaxed);
        }
        got
    }

    /// Releases reserved slots.
    pub(crate) fn release(&self, slots: &[usize]) {
        for &k in slots {
            if self.slots[k].state.swap(IDLE, Release) == TEAM {
                self.members.fetch_sub(1, Relaxed);
            }
        }
    }

    /// Publishes share `index` of `section` to reserved slot `k`, waking it only if it sleeps.
    /// Returns whether it had to wake it.
    ///
    /// `leader` is the publishing thread's parker, the team it leads (its claim word's
    /// address) and its CPU. The member is moved off the leader's CPU first (`move_off`):
    /// - when it last reported that CPU and is awake: it is queued behind the leader there;
    /// - when it went to sleep to leave that CPU to the leader (it ceded);
    /// - when it sleeps and `place_away` (a kernel's section, whose shares are long and which
    ///   the leader runs itself when the member is late): the wake then lands on another CPU,
    ///   where the member works beside the leader instead of queued behind it.
    ///
    /// Otherwise a sleeping member is woken where it is, which on small hosts is the leader's
    /// CPU: it starts within about 12 us there, where a wake onto a CPU idle for milliseconds
    /// took 75 to 150 us on the development VM (the first `run` section after an idle gap).
    pub(crate) fn publish(
        &self,
        k: usize,
        section: &Section<'_>,
        index: usize,
        leader: (&Parker, usize, u32),
        place_away: bool,
    ) -> bool {
        let (parker, team, leader_cpu) = leader;
        let slot = &self.slots[k];
        slot.stage(section, index);
        slot.note_leader_cpu(leader_cpu);
        slot.note_leader(parker, team);
        if leader_cpu != NO_CPU {
            let asleep = slot.announced_sleep();
            let stacked = slot.cpu() == leader_cpu && (!asleep || slot.ceded());
            if stacked || (asleep && place_away) {
                self.move_off(k, leader_cpu);
            }
        }
        slot.release(&self.sleepers)
    }

    /// What a leader waiting for the members of `slots` should do about its CPU:
    /// - a member that has not started its share may be queued behind the leader when the
    ///   publish had to wake it (`asleep`, a bit per member: on small hosts a woken thread lands
    ///   on its waker's CPU) or when nobody knows where it is (a worker that has not reported a
    ///   CPU yet, fresh from the reserve): the leader yields, so it can start (a short share
    ///   runs here sooner than a move would bring it elsewhere);
    /// - a member that last reported the leader's CPU is queued behind it (the leader runs):
    ///   the leader moves it off, or yields to it when it cannot.
    pub(crate) fn crowd(&self, slots: &[usize], asleep: u64) -> Crowd {
        let here = current_cpu();
        let mut crowd = Crowd::Alone;
        for (i, &k) in slots.iter().enumerate() {
            let slot = &self.slots[k];
            let cpu = slot.cpu();
            let woken = i < 64 && asleep & (1 << i) != 0;
            let unplaced = (woken || cpu == NO_CPU) && !slot.started();
            // (Evaluated in this order: an unplaced member is not moved.)
            if unplaced || (here != NO_CPU && cpu == here && !self.move_off(k, here)) {
                crowd = Crowd::Yield;
            }
        }
        crowd
    }

    /// Moves the worker of slot `k`, which is not running (the caller runs on its CPU), off
    /// `cpu` to the rest of the pool's CPU set, and keeps it off while it is a team member.
    /// Returns whether it did.
    pub(crate) fn move_off(&self, k: usize, cpu: u32) -> bool {
        let slot = &self.slots[k];
        let tid = slot.tid();
        let moved = tid != 0
            && self
                .cpus
                .without(cpu)
                .is_some_and(|away| away.apply_to(tid));
        if moved {
            slot.set_narrowed(true);
            slot.note_cpu(NO_CPU); // until the worker reports where it went
            counters::record_move();
        }
        moved
    }

    /// Wakes those of the team members in `slots` that sleep, so they spin through the serial
    /// work before the caller's next section. Returns how many it woke. A member is first
    /// moved off the caller's CPU (where it would otherwise land, see `publish`): here the
    /// point is to overlap its wake with the caller's serial work, not to start it at once.
    ///
    /// The caller leads `team` from now on (its claim word's address): the woken members see
    /// their leader there, not at another team it led last, and on its CPU of now, not the
    /// one of its last section (a member moved to that CPU would cede it and sleep again).
    pub(crate) fn wake_members(&self, slots: &[usize], team: usize) -> usize {
        let here = current_cpu();
        let leader = parker::current();
        leader.set_leading(team);
        slots
            .iter()
            .filter(|&&k| {
                let slot = &self.slots[k];
                slot.note_leader(leader, team);
                slot.note_leader_cpu(here);
                if here != NO_CPU && slot.announced_sleep() {
                    self.move_off(k, here);
                }
                slot.wake(&self.sleepers)
            })
            .count()
    }

    /// The wake a section on `members` would pay now: [`WAKE_COST`] when the first of them has
    /// announced a sleep (members of one team fall asleep together, after the same idle time,
    /// so one look will do).
    pub(crate) fn wake_cost(&self, members: &[usize]) -> Duration {
        match members.first() {
            Some(&k) if self.slots[k].announced_sleep() => WAKE_COST,
            _ => Duration::ZERO,
        }
    }

    /// Whether slot `k`'s worker has reported no CPU since it last woke or was moved.
    pub(crate) fn cpu_unknown(&self, k: usize) -> bool {
        self.slots[k].cpu() == NO_CPU
    }

    /// Whether the share last published to slot `k` has been claimed (by its worker or by
    /// the leader).
    pub(crate) fn started(&self, k: usize) -> bool {
        self.slots[k].started()
    }

    /// Claims the share last published to slot `k` when its worker has not.
    pub(crate) fn steal(&self, k: usize) -> bool {
        self.slots[k].steal()
    }

    /// The parker of the worker serving slot `k`.
    pub(crate) fn slot_parker(&self, k: usize) -> &Parker {
        // A worker that has not arrived yet is not asleep in a barrier: a stand-in will do.
        self.slots[k].parker().unwrap_or(&UNARRIVED)
    }

    /// Records that the worker leased for slot `k` may be asleep on `parker` in the reserve:
    /// the slot counts as sleeping, so the first work that needs it wakes it.
    pub(crate) fn expect_sleeper(&self, k: usize, parker: *mut Parker) {
        let slot = &self.slots[k];
        // SAFETY: a reserve worker's parker, which is never freed.
        slot.set_parker(unsafe { &*parker });
        slot.expect_sleeper(&self.sleepers);
    }

    /// Records the thread id of the worker leased for slot `k` (see `Slot::tid`).
    pub(crate) fn set_worker_tid(&self, k: usize, tid: u32) {
        self.slots[k].set_tid(tid);
    }

    /// Forgets the worker leased for slot `k`, whose order was taken back before it served:
    /// nobody wakes it for this pool any more. Returns whether a leader of this pool had
    /// narrowed its affinity meanwhile (`move_off` on a worker still asleep in the reserve),
    /// which the caller must undo: the worker never serves, so it would not widen it itself.
    pub(crate) fn forget_worker(&self, k: usize) -> bool {
        let slot = &self.slots[k];
        slot.clear_parker();
        slot.set_tid(0); // and nobody moves it for this pool
        slot.set_narrowed(false)
    }

    /// Forgets `n` workers that never arrived (a failed build), so shutdown does not wait for
    /// them, and shuts down.
    pub(crate) fn abandon(&self, n: usize) {
        self.forget(n);
        self.shut_down();
    }

    /// Forgets `n` workers that will never serve (their orders were taken back).
    pub(crate) fn forget(&self, n: usize) {
        self.active.fetch_sub(n, AcqRel);
    }

    /// Begins shutting the pool down and waits until its workers have left (all but the caller,
    /// when the caller is one of them). Returns whether the caller is a worker of this pool.
    pub(crate) fn shut_down(&self) -> bool {
        let me_worker = self.is_current_worker();
        self.dropper
            .store(parker::current() as *const Parker as *mut Parker, SeqCst);
        self.shutdown.store(true, SeqCst);
        for slot in self.slots.iter() {
            slot.unpark();
        }
        let stay = usize::from(me_worker);
        struct Leaving<'a>(&'a PoolShared, usize);
        impl Waiter for Leaving<'_> {
            fn ready(&mut self) -> bool {
                self.0.active.load(Acquire) <= self.1
            }
            fn sleep(&mut self) {
                parker::current().park();
            }
        }
        // Each leaving worker unparks the dropper (`leave`), so a plain park loses nothing. A
        // spinning worker leaves within the throttled spin; one that must first be scheduled
        // may need this CPU, so the dropper never spins its full budget here.
        wait_staged(THROTTLED_SPIN_POLLS, &mut Leaving(self, stay));
        me_worker
    }

    /// Tells the dropper that one worker has left (after `serve` returned and a leased worker is
    /// back in the reserve, so a pool built right after the drop finds it there). Returns
    /// whether it had to wake the dropper from its sleep.
    pub(crate) fn leave(&self) -> bool {
        let dropper = self.dropper.load(SeqCst);
        self.active.fetch_sub(1, AcqRel);
        // SAFETY: parkers are never freed.
        !dropper.is_null() && unsafe { (*dropper).unpark() }
    }
}
