//! The process-wide reserve of idle workers.
//!
//! A pool built with default thread settings *leases* its workers from here and hands them back
//! when it is dropped; a returned worker sleeps on its parker until the next pool leases it. So a
//! pool built per call starts no thread once the reserve holds enough workers. The reserve keeps
//! at most `max(CPUs, widest pool built so far)` idle workers (extra returning workers exit), and
//! [`trim`] retires all of them.
//!
//! A leased worker that serves a pool whose CPU set differs from the one it last ran on binds
//! itself to the new pool's set before serving.

use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::error::Error;
use crate::runtime::cpus::CpuSet;
use crate::runtime::idle::SpinPlace;
use crate::runtime::parker::{self, Parker};
use crate::runtime::sync::{
    current_cpu, lock, AtomicBool, AtomicPtr, AtomicU32, Mutex, Ordering::*, NO_CPU,
};
use crate::runtime::wait::{wait_staged, Waiter};
use crate::runtime::worker::PoolShared;

static SPAWNED: StdAtomicUsize = StdAtomicUsize::new(0);

/// Spin polls of a worker back in the reserve before it sleeps: enough to catch the next pool of
/// a loop that builds one per call (a few microseconds later), short enough not to hold a CPU
/// for milliseconds that the threads still finishing the last pool may need (a full 300000-poll
/// spin there made a pool-and-team per call take about 3 ms to drop on 2 CPUs).
const RESERVE_SPIN_POLLS: u32 = 4096;

/// Worker threads ever started by teamalg in this process (leased and dedicated).
pub fn spawned_workers() -> usize {
    SPAWNED.load(Relaxed)
}

pub(crate) fn count_spawn() {
    SPAWNED.fetch_add(1, Relaxed);
}

enum Order {
    Serve(Arc<PoolShared>, usize),
    Retire,
}

struct IdleWorker {
    parker: AtomicPtr<Parker>,
    /// In the spin phase of its wait for an order: it takes an order at once.
    spinning: AtomicBool,
    /// The CPU it last reported (`NO_CPU` when unknown).
    cpu: AtomicU32,
    /// Its thread id (0 until the thread runs), for leaders that move it (`PoolShared::move_off`).
    tid: AtomicU32,
    order: Mutex<Option<Order>>,
    /// Mirrors `order.is_some()`, so that a waiting worker polls an atomic, not the lock.
    has_order: AtomicBool,
    handle: Mutex<Option<JoinHandle<()>>>,
}

impl IdleWorker {
    fn give(&self, order: Order) {
        *lock(&self.order) = Some(order);
        self.has_order.store(true, Release);
        let p = self.parker.load(Acquire);
        if !p.is_null() {
            // SAFETY: parkers are never freed.
            unsafe { (*p).unpark() };
        }
    }

    /// Waits for the next order, staged: a worker handed back by a pool dropped after one call
    /// is usually leased again within microseconds by the next pool, so it spins a short while
    /// first (one of the CPUs - 1 idle spinners), then sleeps.
    fn wait_order(&self, spin: bool) -> Order {
        struct Orders<'a>(&'a IdleWorker, bool, usize);
        impl Waiter for Orders<'_> {
            fn ready(&mut self) -> bool {
                // A spinner gives its place up when a team needs the CPUs (then sleeps).
                self.0.has_order.load(Acquire) || (self.1 && SpinPlace::crowded(self.2))
            }
            fn sleep(&mut self) {
                parker::current().park();
            }
        }
        let cpus = crate::runtime::cpus::available_cpus();
        let spin = SpinPlace::take(if spin { RESERVE_SPIN_POLLS } else { 0 }, cpus);
        let mut polls = spin.polls();
        let full = spin.full();
        self.cpu.store(current_cpu(), Relaxed);
        loop {
            self.spinning.store(polls > 0, Relaxed);
            wait_staged(polls, &mut Orders(self, full && polls > 0, cpus));
            self.spinning.store(false, Relaxed);
            let mut order = lock(&self.order);
            self.has_order.store(false, Relaxed);
            if let Some(o) = order.take() {
                return o;
            }
            // The order was taken back (its pool was dropped before needing us): wait again.
            polls = 0;
        }
    }
}

struct Reserve {
    idle: Vec<Arc<IdleWorker>>,
    widest: usize,
}

static RESERVE: Mutex<Reserve> = Mutex::new(Reserve {
    idle: Vec::new(),
    widest: 0,
});

fn bound(r: &Reserve) -> usize {
    r.widest.max(crate::runtime::cpus::available_cpus())
}

/// Idle workers in the reserve now.
pub fn idle_workers() -> usize {
    lock(&RESERVE).idle.len()
}

/// Retires every idle worker of the reserve and waits for their threads to end. Returns how
/// many were retired. Pools built later start new threads.
pub fn trim() -> usize {
    let idle = std::mem::take(&mut lock(&RESERVE).idle);
    let n = idle.len();
    for w in idle {
        let handle = lock(&w.handle).take();
        w.give(Order::Retire);
        if let Some(h) = handle {
            let _ = h.join();
        }
    }
    n
}

/// The workers a pool leased from the reserve, kept so that its drop can take back the orders
/// of those that never started serving.
pub(crate) struct Lease {
    workers: Vec<Arc<IdleWorker>>,
}

/// Leases `pool.threads()` workers for `pool`, starting threads for those the reserve lacks.
///
/// A worker taken from the reserve gets its order without a wake-up: one still spinning there
/// picks it up at once, and one asleep is recorded as a sleeping slot of the pool, so it is
/// woken only when the pool has work for it (by the pool's ordinary idle-worker wake).
pub(crate) fn lease(pool: &Arc<PoolShared>) -> Result<Lease, Error> {
    let threads = pool.threads();
    let mut workers = Vec::with_capacity(threads);
    let mut fresh = 0;
    let mut r = lock(&RESERVE);
    r.widest = r.widest.max(threads);
    prefer_spinners(&mut r.idle, threads);
    for k in 0..threads {
        match r.idle.pop() {
            Some(w) => {
                pool.expect_sleeper(k, w.parker.load(Acquire));
                // A leased worker serves on its pool's CPU set, so a leader may move it, also
                // before it starts (a warm-up that wakes it from the reserve).
                pool.set_worker_tid(k, w.tid.load(Relaxed));
                *lock(&w.order) = Some(Order::Serve(pool.clone(), k));
                w.has_order.store(true, Release);
                workers.push(w);
            }
            None => {
                fresh += 1;
                if let Err(e) = spawn(pool.clone(), k) {
                    drop(r);
                    let lease = Lease { workers };
                    let revoked = lease.revoke_unstarted(pool);
                    pool.abandon(threads - k + revoked);
                    return Err(e);
                }
            }
        }
    }
    drop(r);
    // New threads serve at once; wait until they run, so the pool is ready when built.
    pool.wait_arrivals(fresh);
    Ok(Lease { workers })
}

/// Orders the last `n` idle workers (those `lease` pops first, for the lowest slots) so that
/// workers still spinning come first, and among them those not on the caller's CPU. Teams
/// reserve the lowest slots as members: a spinning worker takes its order at once and serves
/// from another CPU, while a sleeping one would need a wake (tens of microseconds, and on
/// small hosts a place on the waker's CPU). Workers leased to slots no one uses stay asleep,
/// and their orders are taken back without a wake when the pool is dropped.
fn prefer_spinners(idle: &mut [Arc<IdleWorker>], n: usize) {
    let here = current_cpu();
    let rank = |w: &Arc<IdleWorker>| match (w.spinning.load(Relaxed), w.cpu.load(Relaxed)) {
        (false, _) => 0,
        (true, cpu) if cpu == here && cpu != NO_CPU => 1,
        (true, _) => 2,
    };
    // Popped from the back: the best rank goes last. A stable sort keeps the reserve's
    // last-in-first-out order otherwise. Small: at most the reserve's bound.
    if idle.len() > 1 && n > 0 {
        idle.sort_by_key(rank);
    }
}

impl Lease {
    /// Takes back the orders of workers that have not started serving `pool` and returns them
    /// to the reserve. Returns how many. Called before the pool shuts down, so its drop never
    /// waits for a worker it did not need.
    pub(crate) fn revoke_unstarted(&self, pool: &Arc<PoolShared>) -> usize {
        let mut revoked = Vec::new();
        for w in &self.workers {
            let mut order = lock(&w.order);
            if let Some(Order::Serve(p, k)) = &*order {
                if Arc::ptr_eq(p, pool) {
                    // It never served: shutting the pool down must not wake it.
                    pool.forget_worker(*k);
                    *order = None;
                    w.has_order.store(false, Relaxed);
                    revoked.push(w.clone());
                }
            }
        }
        let n = revoked.len();
        if n > 0 {
            let mut r = lock(&RESERVE);
            for w in revoked {
                if r.idle.len() < bound(&r) {
                    r.idle.push(w);
                } else {
                    w.give(Order::Retire);
                }
            }
        }
        n
    }
}

fn spawn(pool: Arc<PoolShared>, k: usize) -> Result<(), Error> {
    let me = Arc::new(IdleWorker {
        parker: AtomicPtr::new(std::ptr::null_mut()),
        spinning: AtomicBool::new(false),
        cpu: AtomicU32::new(NO_CPU),
        tid: AtomicU32::new(0),
        order: Mutex::new(None),
        has_order: AtomicBool::new(false),
        handle: Mutex::new(None),
    });
    let inner = me.clone();
    let handle = std::thread::Builder::new()
        .name("teamalg-worker".into())
        .spawn(move || {
            pool.arrive();
            run(inner, Order::Serve(pool, k))
        })
        .map_err(Error::Spawn)?;
    count_spawn();
    *lock(&me.handle) = Some(handle);
    Ok(())
}

/// A leased worker's life: serve pools, rest in the reserve between them.
fn run(me: Arc<IdleWorker>, first: Order) {
    me.tid.store(crate::runtime::cpus::current_tid(), Relaxed);
    me.parker
        .store(parker::current() as *const Parker as *mut Parker, Release);
    let mut cpus: Option<CpuSet> = None;
    let mut order = first;
    let mut spin;
    loop {
        match order {
            Order::Retire => return,
            Order::Serve(pool, k) => {
                match &cpus {
                    // A fresh thread inherited its builder's set, which is the pool's.
                    None => cpus = Some(pool.cpus.clone()),
                    Some(c) if *c != pool.cpus => {
                        pool.cpus.apply();
                        cpus = Some(pool.cpus.clone());
                    }
                    Some(_) => {}
                }
                pool.serve(k, true);
                let stays = {
                    let mut r = lock(&RESERVE);
                    let stays = r.idle.len() < bound(&r);
                    if stays {
                        r.idle.push(me.clone());
                    }
                    stays
                };
                // A worker that had to wake the pool's dropper shares its CPU with it now (on
                // small hosts a woken thread lands on its waker's CPU): it does not spin there.
                spin = !pool.leave();
                if !stays {
                    return;
                }
            }
        }
        order = me.wait_order(spin);
    }
}
