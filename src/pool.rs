//! Pools: their shared state, the worker loop, and the waits of idle workers and callers.
//!
//! A pool owns `threads` worker *slots*. A worker serving slot `k` loops: run the section
//! share published to its slot (team sections, `broadcast`), else attach to a queued batch, else
//! wait (staged, see [`crate::wait`]). The design records are `docs/executor.md` and
//! `docs/waiting.md`.
//!
//! Idle workers sleep and are woken through their slot's protocol (see [`crate::slot`]): a caller
//! that queued a batch reads `sleepers` and, when it is non-zero, claims and unparks up to `n`
//! sleeping slots. A missed wake there would only cost parallelism, never progress: a caller runs
//! every unclaimed job itself. Sections are published to slots the same way.

use std::sync::atomic::AtomicUsize as StdAtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_utils::CachePadded;
use teamalg_gates::Model;

use crate::batch::Batch;
use crate::cpus::{current_tid, CpuSet};
use crate::ledger;
use crate::parker::{self, Parker};
use crate::queue::Queue;
use crate::section::Section;
use crate::slot::{wake_for_queue, Slept, Slot, BUSY, IDLE, RESERVED, TEAM};
use crate::sync::{current_cpu, fence, AtomicBool, AtomicPtr, AtomicUsize, Ordering::*, NO_CPU};
use crate::wait::{counters, join_after_wake, wait_staged, Crowd, Waiter, THROTTLED_SPIN_POLLS};

/// Workers serving some pool right now, process-wide (for the oversubscription test).
static SERVING: StdAtomicUsize = StdAtomicUsize::new(0);
/// Of those, workers in the sleep phase of a wait right now (asleep, or about to be).
static SLEEPING: StdAtomicUsize = StdAtomicUsize::new(0);
/// Idle workers in their full spin phase right now, process-wide.
static IDLE_SPINNERS: StdAtomicUsize = StdAtomicUsize::new(0);

/// What a section costs more when its members sleep: until a woken member starts on another
/// CPU, the leader runs alone (and in a kernel's section it runs the late member's share
/// itself). On the 2-vCPU development VM a member woken onto a CPU idle for milliseconds
/// started 75 to 150 us after the wake, and the waker spent 8 to 27 us in the unpark and the
/// move; 100 us is that start, the part the leader cannot overlap. With 20 us (the unpark
/// alone) a held team whose member slept (its leader had led another team meanwhile) still ran
/// an LU of 128 (c64) at 1.26x faer serial: the gate sent its one 73 us section two wide, and
/// the member arrived after it.
pub(crate) const WAKE_COST: Duration = Duration::from_micros(100);

/// Stands for the parker of a slot whose worker has not arrived yet (never slept on).
static UNARRIVED: Parker = Parker::new();

/// State shared by a pool's handle, its tokens and its workers.
pub(crate) struct PoolShared {
    pub(crate) queue: Queue,
    slots: Box<[CachePadded<Slot>]>,
    sleepers: AtomicUsize,
    idle_spinning: AtomicUsize,
    /// Slots reserved as team members: while there are any, the pool's other idle workers do
    /// not spin (a yielding leader would hand its CPU to them).
    members: StdAtomicUsize,
    pub(crate) spin_polls: u32,
    pub(crate) cpus: CpuSet,
    pub(crate) acquire_timeout: Duration,
    /// What the gates read: dispatch costs, rates, split costs, thresholds.
    pub(crate) model: Model,
    shutdown: AtomicBool,
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

/// The pool and slot the calling thread serves, if it is a worker.
pub(crate) fn current_worker() -> Option<(&'static PoolShared, usize)> {
    let (p, k) = CURRENT.try_with(|c| c.get()).ok()?;
    // SAFETY: a worker holds an `Arc` of the pool it serves for as long as CURRENT names it.
    (!p.is_null()).then(|| (unsafe { &*p }, k))
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
    /// them throttled the member of a pool built per call next to a held team).
    #[inline]
    pub(crate) fn polls(&self) -> u32 {
        let cpus = self.cpus.count();
        let awake = SERVING.load(Relaxed).saturating_sub(SLEEPING.load(Relaxed));
        if self.threads() > cpus || awake > cpus {
            THROTTLED_SPIN_POLLS.min(self.spin_polls)
        } else {
            self.spin_polls
        }
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
    /// with a batch (team members and reserved slots serve none).
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
    /// their leader there, not at another team it led last.
    pub(crate) fn wake_members(&self, slots: &[usize], team: usize) -> usize {
        let here = current_cpu();
        let leader = parker::current();
        leader.set_leading(team);
        slots
            .iter()
            .filter(|&&k| {
                let slot = &self.slots[k];
                slot.note_leader(leader, team);
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
    /// nobody wakes it for this pool any more.
    pub(crate) fn forget_worker(&self, k: usize) {
        self.slots[k].clear_parker();
        self.slots[k].set_tid(0); // and nobody moves it for this pool
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

    /// Runs a helper's part of a batch: claims and runs jobs, then detaches.
    fn help(&self, b: *const Batch<'static>) {
        // SAFETY: attached, so the batch is alive until `detach`.
        let root = unsafe { (*b).root };
        ledger::enter(root);
        // SAFETY: as above.
        unsafe { (*b).run_jobs() };
        ledger::exit(root);
        // SAFETY: attached by `Queue::attach`; this is our last access.
        unsafe { Batch::detach(b) };
    }

    /// Attaches slot `k`'s worker to one queued batch and helps it. Returns whether it did.
    pub(crate) fn serve_queue_once(&self, k: usize) -> bool {
        if !self.queue.has_work() {
            return false;
        }
        let slot = &self.slots[k];
        let state = slot.state.load(Relaxed);
        let was_busy = state == BUSY;
        if !was_busy
            && slot
                .state
                .compare_exchange(IDLE, BUSY, Acquire, Relaxed)
                .is_err()
        {
            return false;
        }
        match self.queue.attach() {
            Some(b) => {
                self.help(b);
                if !was_busy {
                    slot.state.store(IDLE, Release);
                }
                true
            }
            None => {
                if !was_busy {
                    slot.state.store(IDLE, Release);
                }
                false
            }
        }
    }

    /// Runs the section share published to slot `k` since generation `seen`, if any.
    fn serve_section(&self, k: usize, seen: &mut usize) -> bool {
        let slot = &self.slots[k];
        match slot.take_share(seen) {
            Some(Some((section, index))) => {
                // Where this member works, for a leader deciding whether to spin.
                slot.note_cpu(current_cpu());
                // SAFETY: published to this slot for this generation and claimed by us; the
                // leader waits for us.
                unsafe { Section::run_member(section, index) };
                true
            }
            // The leader ran it.
            Some(None) => true,
            None => false,
        }
    }

    /// The worker loop of slot `k`, until the pool shuts down. The thread then calls `leave`.
    /// `leased`: a worker of the reserve, which runs on the pool's CPU set (a dedicated worker
    /// runs where its start hook put it).
    pub(crate) fn serve(self: &Arc<Self>, k: usize, leased: bool) {
        let me = parker::current();
        let slot = &self.slots[k];
        // A leader may move this worker off its own CPU (within the pool's CPU set) only when
        // the worker runs on exactly that set: a start hook's own pinning is left alone.
        let home = if leased {
            self.cpus.clone()
        } else {
            CpuSet::current()
        };
        slot.set_tid(if home == self.cpus { current_tid() } else { 0 });
        slot.set_parker(me);
        slot.claim_sleeper(&self.sleepers);
        let this: *const PoolShared = &**self;
        CURRENT.with(|c| c.set((this, k)));
        SERVING.fetch_add(1, Relaxed);
        // Generations start at 0 and each slot has one worker for the pool's life: starting
        // from 0 runs a share published before this worker arrived.
        let mut seen = 0;
        loop {
            if slot.state.load(Relaxed) != TEAM && slot.set_narrowed(false) {
                home.apply(); // no longer a member: every CPU of the set again
            }
            if self.serve_section(k, &mut seen) || self.serve_queue_once(k) {
                continue;
            }
            if self.shutdown.load(Acquire) {
                break;
            }
            let mut idle = IdleWait {
                pool: self,
                k,
                parker: me,
                home: &home,
                ceding: false,
                left: false,
                woken: false,
                seen,
                state: slot.state.load(Acquire),
                spinning: false,
            };
            let polls = idle.polls();
            wait_staged(polls, &mut idle);
            idle.stop_spinning();
        }
        slot.set_tid(0);
        if slot.set_narrowed(false) {
            home.apply();
        }
        SERVING.fetch_sub(1, Relaxed);
        CURRENT.with(|c| c.set((std::ptr::null(), 0)));
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

/// A worker's wait for a section share, queued work, a change of its slot's state, or
/// shutdown. Team members wait here between sections.
struct IdleWait<'a> {
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
}

impl IdleWait<'_> {
    /// Team members spin their full budget (a hot team) and hold a spin place, so that other
    /// idle workers yield the CPUs; reserved slots sleep at once (their CPUs belong to someone
    /// else); other idle workers spin in full only when they get a [`SpinPlace`].
    fn polls(&mut self) -> u32 {
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
        let place = SpinPlace::take(pool.polls(), pool.cpus.count());
        let polls = place.polls();
        if place.full {
            pool.idle_spinning.fetch_add(1, SeqCst);
            std::mem::forget(place);
            self.spinning = true;
        }
        polls
    }

    fn stop_spinning(&mut self) {
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
                && (SpinPlace::crowded(self.pool.cpus.count())
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

/// A caller's wait for its batch to settle. A worker keeps serving its own pool meanwhile.
pub(crate) struct JoinWait<'a, 'b> {
    pub(crate) batch: &'a Batch<'b>,
    pub(crate) parker: &'static Parker,
    /// Whether the caller woke a sleeping worker for this batch (then it naps, not spins).
    pub(crate) woke: bool,
    /// An `install` whose owner claims nothing: the pool it waits on, so it can take its job
    /// back when no worker of that pool can serve the queue (see `take_back_if_stuck`).
    pub(crate) install: Option<&'a PoolShared>,
}

/// How often an `install` owner that sleeps looks whether any worker could still take its job.
const INSTALL_CHECK: Duration = Duration::from_millis(1);

impl JoinWait<'_, '_> {
    /// An `install` whose job no worker has claimed while every slot of its pool is reserved
    /// (team members and `external`/`broadcast` reservations serve no queue; nested inside
    /// such a scope the caller would wait for ever) runs the job itself: it unlinks the batch
    /// and claims the job, which the batch protocol lets exactly one of it and a worker do.
    fn take_back_if_stuck(&self, pool: &PoolShared) {
        if !self.batch.settled() && !self.batch.claimed() && !pool.can_serve_queue() {
            pool.queue.unlink(self.batch);
            self.batch.run_jobs();
        }
    }
}

impl Waiter for JoinWait<'_, '_> {
    #[inline]
    fn ready(&mut self) -> bool {
        if self.batch.settled() {
            return true;
        }
        if let Some((pool, k)) = current_worker() {
            if pool.queue.has_work() {
                // A waiting parent holds no slot while it serves other work.
                ledger::exit(self.batch.root);
                pool.serve_queue_once(k);
                ledger::enter(self.batch.root);
            }
        }
        self.batch.settled()
    }

    fn sleep(&mut self) {
        counters::record_join_sleep();
        let own = current_worker();
        if let Some((pool, k)) = own {
            // Announce: new work in our own pool wakes us too (the fence pairs with the one
            // in `wake_idle`, as in `Slot::sleep`).
            pool.slots[k].expect_sleeper(&pool.sleepers);
            fence(SeqCst);
        }
        if !self.ready() {
            if let Some(pool) = self.install {
                self.parker.park_timeout(INSTALL_CHECK);
                self.take_back_if_stuck(pool);
            } else if self.woke {
                let batch = self.batch;
                join_after_wake(self.parker, || batch.settled());
            } else {
                self.parker.park();
            }
        }
        if let Some((pool, k)) = own {
            pool.slots[k].claim_sleeper(&pool.sleepers);
        }
    }
}

/// Joins a batch the caller owns: unlinks it, then waits until it is settled. Runs on drop, so
/// the batch is settled before its stack frame goes away even if the caller unwinds.
pub(crate) struct Settle<'a, 'b> {
    pub(crate) pool: &'a PoolShared,
    pub(crate) batch: &'a Batch<'b>,
    pub(crate) woke: bool,
    /// Unlink before waiting (a batch whose owner works on it); `install` leaves it to the
    /// worker that takes its only job.
    pub(crate) unlink: bool,
}

impl Drop for Settle<'_, '_> {
    fn drop(&mut self) {
        if self.unlink {
            self.pool.queue.unlink(self.batch);
        }
        let polls = if self.woke {
            THROTTLED_SPIN_POLLS
        } else {
            self.pool.polls()
        };
        let mut join = JoinWait {
            batch: self.batch,
            parker: parker::current(),
            woke: self.woke,
            install: (!self.unlink).then_some(self.pool),
        };
        wait_staged(polls, &mut join);
    }
}
