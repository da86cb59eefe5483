//! Pools: their shared state, the worker loop, and the waits of idle workers and callers.
//!
//! A pool owns `threads` worker *slots*. A worker serving slot `k` loops: run its mail (a share
//! addressed to this slot by `broadcast`), else attach to a queued batch, else wait (staged, see
//! [`crate::wait`]). The design record is `docs/executor.md`.
//!
//! Idle-worker wake protocol (a Dekker pair, both sides SeqCst):
//! - an idle worker that reaches the sleep phase sets its slot's `sleeping`, adds one to
//!   `sleepers`, re-checks for work, and only then parks;
//! - a caller that queued a batch reads `sleepers`; when it is non-zero it clears the `sleeping`
//!   flag of up to `n` slots (a swap, so each sleeper is claimed by one waker) and unparks them.
//!
//! Either the worker's re-check sees the batch or the caller sees the flag. A missed wake would
//! only cost parallelism, never progress: a caller runs every unclaimed job itself. Mail is
//! different (a reserved worker must run its share), so mail is always followed by an unpark.

use std::sync::atomic::{AtomicU8, AtomicUsize as StdAtomicUsize};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_utils::CachePadded;

use crate::batch::Batch;
use crate::cpus::CpuSet;
use crate::ledger;
use crate::parker::{self, Parker};
use crate::queue::Queue;
use crate::sync::{AtomicBool, AtomicPtr, AtomicUsize, Ordering::*};
use crate::wait::{counters, wait_staged, Waiter, THROTTLED_SPIN_POLLS};

/// Workers serving some pool right now, process-wide (for the oversubscription test).
static SERVING: StdAtomicUsize = StdAtomicUsize::new(0);
/// Idle workers in their full spin phase right now, process-wide.
static IDLE_SPINNERS: StdAtomicUsize = StdAtomicUsize::new(0);

/// How long a caller that had to wake a sleeping worker sleeps per round in its join, instead
/// of spinning: on a small host the woken worker is often queued on the caller's own CPU.
const JOIN_NAP: Duration = Duration::from_micros(50);

const IDLE: u8 = 0;
const BUSY: u8 = 1;
const RESERVED: u8 = 2;

/// One worker place of a pool.
pub(crate) struct Slot {
    /// The serving worker's parker (null before a worker has arrived).
    parker: AtomicPtr<Parker>,
    /// Set by the worker before it parks; cleared by the waker that claims it.
    sleeping: AtomicBool,
    /// IDLE, BUSY (attached to a batch) or RESERVED (held by `broadcast` or `external`).
    state: AtomicU8,
    /// A batch addressed to this slot alone, with the share index in `mail_index`.
    mail: AtomicPtr<Batch<'static>>,
    mail_index: AtomicUsize,
}

impl Slot {
    fn new() -> Self {
        Slot {
            parker: AtomicPtr::new(std::ptr::null_mut()),
            sleeping: AtomicBool::new(false),
            state: AtomicU8::new(IDLE),
            mail: AtomicPtr::new(std::ptr::null_mut()),
            mail_index: AtomicUsize::new(0),
        }
    }

    fn unpark(&self) {
        let p = self.parker.load(Acquire);
        if !p.is_null() {
            // SAFETY: parkers are never freed (see `parker::current`).
            unsafe { (*p).unpark() };
        }
    }
}

/// State shared by a pool's handle, its tokens and its workers.
pub(crate) struct PoolShared {
    pub(crate) queue: Queue,
    slots: Box<[CachePadded<Slot>]>,
    sleepers: AtomicUsize,
    idle_spinning: AtomicUsize,
    pub(crate) spin_polls: u32,
    pub(crate) cpus: CpuSet,
    shutdown: AtomicBool,
    /// Workers that have not yet left the pool.
    active: AtomicUsize,
    /// Fresh threads that have started (so `build` can wait for them).
    arrived: AtomicUsize,
    /// The parker of the thread dropping the pool, set before `shutdown`.
    dropper: AtomicPtr<Parker>,
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
    pub(crate) fn new(threads: usize, spin_polls: u32, cpus: CpuSet) -> Self {
        PoolShared {
            queue: Queue::new(),
            slots: (0..threads)
                .map(|_| CachePadded::new(Slot::new()))
                .collect(),
            sleepers: AtomicUsize::new(0),
            idle_spinning: AtomicUsize::new(0),
            spin_polls,
            cpus,
            shutdown: AtomicBool::new(false),
            active: AtomicUsize::new(threads),
            arrived: AtomicUsize::new(0),
            dropper: AtomicPtr::new(std::ptr::null_mut()),
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

    /// Spin polls for a wait, throttled when more workers serve than this pool has CPUs.
    #[inline]
    pub(crate) fn polls(&self) -> u32 {
        if SERVING.load(Relaxed) > self.cpus.count() {
            THROTTLED_SPIN_POLLS.min(self.spin_polls)
        } else {
            self.spin_polls
        }
    }

    /// Wakes up to `n` sleeping workers, beyond those already spinning. Returns how many.
    pub(crate) fn wake_idle(&self, n: usize) -> usize {
        let mut n = n.saturating_sub(self.idle_spinning.load(SeqCst));
        if n == 0 || self.sleepers.load(SeqCst) == 0 {
            return 0;
        }
        let mut woken = 0;
        for slot in self.slots.iter() {
            if slot.sleeping.load(Relaxed) && slot.sleeping.swap(false, SeqCst) {
                self.sleepers.fetch_sub(1, SeqCst);
                slot.unpark();
                woken += 1;
                n -= 1;
                if n == 0 {
                    break;
                }
            }
        }
        woken
    }

    /// Reserves up to `n` idle slots (none of them the caller's). Returns their indices in
    /// `out` and how many were reserved.
    pub(crate) fn reserve_idle(&self, n: usize, out: &mut [usize]) -> usize {
        let mut got = 0;
        for (k, slot) in self.slots.iter().enumerate() {
            if got == n {
                break;
            }
            if slot.state.load(Relaxed) == IDLE
                && slot
                    .state
                    .compare_exchange(IDLE, RESERVED, Acquire, Relaxed)
                    .is_ok()
            {
                out[got] = k;
                got += 1;
            }
        }
        got
    }

    /// Releases reserved slots.
    pub(crate) fn release(&self, slots: &[usize]) {
        for &k in slots {
            self.slots[k].state.store(IDLE, Release);
        }
    }

    /// Hands share `index` of `batch` to reserved slot `k` and wakes it. The batch must count
    /// the slot as attached already.
    pub(crate) fn mail(&self, k: usize, batch: &Batch<'_>, index: usize) {
        let slot = &self.slots[k];
        slot.mail_index.store(index, Relaxed);
        slot.mail.store(
            (batch as *const Batch<'_>)
                .cast_mut()
                .cast::<Batch<'static>>(),
            Release,
        );
        if slot.sleeping.swap(false, SeqCst) {
            self.sleepers.fetch_sub(1, SeqCst);
        }
        slot.unpark();
    }

    /// Records that the worker leased for slot `k` may be asleep on `parker` in the reserve:
    /// the slot counts as sleeping, so the first work that needs it wakes it.
    pub(crate) fn expect_sleeper(&self, k: usize, parker: *mut Parker) {
        let slot = &self.slots[k];
        slot.parker.store(parker, Release);
        slot.sleeping.store(true, SeqCst);
        self.sleepers.fetch_add(1, SeqCst);
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
        let mut woke = false;
        for slot in self.slots.iter() {
            woke |= slot.sleeping.load(SeqCst);
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
        // Each leaving worker unparks the dropper (`leave`), so a plain park loses nothing.
        // A worker we had to wake may be queued on our CPU: then do not spin against it.
        let polls = if woke {
            THROTTLED_SPIN_POLLS
        } else {
            self.polls()
        };
        wait_staged(polls, &mut Leaving(self, stay));
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
        match self.queue.attach(|_| true) {
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

    /// Runs the mail of slot `k`, if any. Returns whether there was some.
    fn serve_mail(&self, k: usize) -> bool {
        let slot = &self.slots[k];
        let b = slot.mail.swap(std::ptr::null_mut(), Acquire);
        if b.is_null() {
            return false;
        }
        let index = slot.mail_index.load(Relaxed);
        // SAFETY: the sender counted this slot as attached, so the batch is alive.
        let root = unsafe { (*b).root };
        ledger::enter(root);
        // SAFETY: as above.
        unsafe { (*b).run_one(index) };
        ledger::exit(root);
        slot.state.store(IDLE, Release);
        // SAFETY: attached by the sender; this is our last access.
        unsafe { Batch::detach(b) };
        true
    }

    /// The worker loop of slot `k`, until the pool shuts down. The thread then calls `leave`.
    pub(crate) fn serve(self: &Arc<Self>, k: usize) {
        let me = parker::current();
        let slot = &self.slots[k];
        slot.parker
            .store(me as *const Parker as *mut Parker, Release);
        if slot.sleeping.swap(false, SeqCst) {
            self.sleepers.fetch_sub(1, SeqCst);
        }
        let this: *const PoolShared = &**self;
        CURRENT.with(|c| c.set((this, k)));
        SERVING.fetch_add(1, Relaxed);
        loop {
            if self.serve_mail(k) || self.serve_queue_once(k) {
                continue;
            }
            if self.shutdown.load(Acquire) {
                break;
            }
            let mut idle = IdleWait {
                pool: self,
                k,
                parker: me,
                spinning: false,
            };
            let polls = idle.polls();
            wait_staged(polls, &mut idle);
            idle.stop_spinning();
        }
        SERVING.fetch_sub(1, Relaxed);
        CURRENT.with(|c| c.set((std::ptr::null(), 0)));
    }

    /// Tells the dropper that one worker has left (after `serve` returned and a leased worker is
    /// back in the reserve, so a pool built right after the drop finds it there).
    pub(crate) fn leave(&self) {
        let dropper = self.dropper.load(SeqCst);
        self.active.fetch_sub(1, AcqRel);
        if !dropper.is_null() {
            // SAFETY: parkers are never freed.
            unsafe { (*dropper).unpark() };
        }
    }
}

/// An idle worker's wait for mail, queued work or shutdown.
struct IdleWait<'a> {
    pool: &'a PoolShared,
    k: usize,
    parker: &'static Parker,
    spinning: bool,
}

impl IdleWait<'_> {
    /// Reserved slots sleep at once (their CPUs belong to someone else); others spin in full
    /// only when they get a [`SpinPlace`].
    fn polls(&mut self) -> u32 {
        let pool = self.pool;
        if pool.slots[self.k].state.load(Relaxed) == RESERVED {
            return 0;
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
}

impl Drop for SpinPlace {
    fn drop(&mut self) {
        if self.full {
            IDLE_SPINNERS.fetch_sub(1, Relaxed);
        }
    }
}

impl Waiter for IdleWait<'_> {
    #[inline]
    fn ready(&mut self) -> bool {
        let slot = &self.pool.slots[self.k];
        !slot.mail.load(Relaxed).is_null()
            || (self.pool.queue.has_work() && slot.state.load(Relaxed) != RESERVED)
            || self.pool.shutdown.load(Relaxed)
    }

    fn sleep(&mut self) {
        self.stop_spinning();
        let slot = &self.pool.slots[self.k];
        slot.sleeping.store(true, SeqCst);
        self.pool.sleepers.fetch_add(1, SeqCst);
        if !self.ready() {
            counters::record_idle_sleep();
            self.parker.park();
        }
        if slot.sleeping.swap(false, SeqCst) {
            self.pool.sleepers.fetch_sub(1, SeqCst);
        }
    }
}

/// A caller's wait for its batch to settle. A worker keeps serving its own pool meanwhile.
pub(crate) struct JoinWait<'a, 'b> {
    pub(crate) batch: &'a Batch<'b>,
    pub(crate) parker: &'static Parker,
    /// Whether the caller woke a sleeping worker for this batch (then it naps, not spins).
    pub(crate) woke: bool,
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
            // Announce: new work in our own pool wakes us too.
            pool.slots[k].sleeping.store(true, SeqCst);
            pool.sleepers.fetch_add(1, SeqCst);
        }
        if !self.ready() {
            if self.woke {
                self.parker.park_timeout(JOIN_NAP);
            } else {
                self.parker.park();
            }
        }
        if let Some((pool, k)) = own {
            if pool.slots[k].sleeping.swap(false, SeqCst) {
                pool.sleepers.fetch_sub(1, SeqCst);
            }
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
        };
        wait_staged(polls, &mut join);
    }
}
