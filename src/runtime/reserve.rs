//! The process-wide reserve of idle workers.
//!
//! A pool built with default thread settings *leases* its workers from here and hands them back
//! when it is dropped; a returned worker sleeps on its parker until the next pool leases it. So a
//! pool built per call starts no thread once the reserve holds enough workers.
//!
//! What the reserve keeps, and when workers are released:
//! - at most `max(CPUs, widest pool leased since the last trim)` idle workers: a worker that
//!   returns to a full reserve exits at once (this is the only release teamalg makes by
//!   itself: it never retires a worker for having slept long, as a sleeping thread costs no
//!   CPU, only its stack and a kernel task, and the next pool would pay to start it again);
//! - [`trim`] retires every idle worker, and [`trim_to`] all but `keep`; both also forget the
//!   widest pool, so a process that once built a wide pool can bring the bound back to its
//!   CPUs (workers still leased return afterwards under the new bound).
//!
//! A leased worker that serves a pool whose CPU set differs from the one it was born with binds
//! itself to the pool's set before serving, and back to its birth set after. A leader may narrow
//! a member's set while it is a team member (`PoolShared::move_off`), also while it still sleeps
//! here with its order; whoever ends the lease widens it again (the worker after serving, the
//! pool's drop when it takes back an order the worker never took). So every worker in the
//! reserve has the set it was born with.

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
use crate::runtime::pool_shared::PoolShared;

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
    /// The CPU set it was born with (its spawner's, which was the first pool's), and has
    /// whenever it is in the reserve.
    birth: CpuSet,
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
                // Past its spin: a lease now finds it asleep (`prefer_spinners`).
                self.0.spinning.store(false, Relaxed);
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

/// Retires every idle worker of the reserve and waits for their threads to end, and forgets
/// the widest pool (the reserve's bound is the CPUs again). Returns how many were retired.
/// Pools built later start new threads. The same as [`trim_to(0)`](trim_to).
///
/// ```
/// drop(teamalg::Pool::builder().threads(3).build()?);
/// assert!(teamalg::reserve::idle_workers() >= 3);
/// teamalg::reserve::trim();
/// assert_eq!(teamalg::reserve::idle_workers(), 0);
/// # Ok::<(), teamalg::Error>(())
/// ```
pub fn trim() -> usize {
    trim_to(0)
}

/// Retires the idle workers of the reserve beyond `keep` (those asleep longest go first) and
/// waits for their threads to end; the reserve's bound becomes `max(CPUs, keep)` until a wider
/// pool is leased. Returns how many were retired.
///
/// ```
/// drop(teamalg::Pool::builder().threads(3).build()?);
/// teamalg::reserve::trim_to(1);
/// assert!(teamalg::reserve::idle_workers() <= 1);
/// # Ok::<(), teamalg::Error>(())
/// ```
pub fn trim_to(keep: usize) -> usize {
    let idle = {
        let mut r = lock(&RESERVE);
        r.widest = keep;
        // Pools pop from the back: the front has slept longest.
        let n = r.idle.len().saturating_sub(keep);
        r.idle.drain(..n).collect::<Vec<_>>()
    };
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
                    // It never served: shutting the pool down must not wake it. A leader that
                    // moved it meanwhile narrowed its set; it never took the order, so it does
                    // not widen it itself: its set goes back to its birth set here (its tid is
                    // live, it sleeps in the reserve).
                    if pool.forget_worker(*k) {
                        w.birth.apply_to(w.tid.load(Relaxed));
                    }
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
        // The spawning thread built the pool, and the thread inherits its set: the pool's.
        birth: pool.cpus.clone(),
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
    let mut order = first;
    let mut spin;
    loop {
        match order {
            Order::Retire => return,
            Order::Serve(pool, k) => {
                let elsewhere = pool.cpus != me.birth;
                if elsewhere {
                    pool.cpus.apply();
                }
                // `serve` widens a set narrowed by a leader back to the pool's before it returns.
                pool.serve(k, true);
                if elsewhere {
                    me.birth.apply();
                }
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::time::{Duration, Instant};

    use super::{lock, trim, RESERVE};
    use crate::runtime::cpus::CpuSet;
    use crate::runtime::sync::Ordering::*;
    use crate::Pool;

    /// The one reserve worker's thread id and whether it spins, once it sleeps there.
    fn sleeping_worker() -> u32 {
        let start = Instant::now();
        loop {
            {
                let r = lock(&RESERVE);
                assert_eq!(r.idle.len(), 1, "one worker in the reserve");
                let w = &r.idle[0];
                if !w.spinning.load(Relaxed) && w.tid.load(Relaxed) != 0 {
                    return w.tid.load(Relaxed);
                }
            }
            assert!(start.elapsed() < Duration::from_secs(10), "the worker never slept");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// A leader of a pool moves a leased worker off its CPU while the worker still sleeps in
    /// the reserve with its order; the pool is dropped before the worker takes the order. The
    /// worker is back in the reserve with the set it was born with, not the narrowed one.
    #[test]
    fn a_revoked_worker_gets_its_birth_set_back() {
        let birth = CpuSet::current();
        let Some(cpu) = (0..1024u32).find(|&c| birth.contains(c)) else {
            return; // the set is not known CPU by CPU: nothing can be narrowed
        };
        if birth.without(cpu).is_none() {
            eprintln!("skipped: one CPU in the affinity set, no set to narrow a worker to");
            return;
        }
        trim();
        // A worker is born (with this thread's set), serves, and goes to the reserve to sleep.
        drop(Pool::builder().threads(1).build().unwrap());
        let tid = sleeping_worker();
        assert_eq!(CpuSet::of_thread(tid), birth);
        // The next pool leases it asleep; its leader moves it off `cpu` before it serves.
        let pool = Pool::builder().threads(1).build().unwrap();
        assert!(pool.shared.move_off(0, cpu), "the move needs a live tid");
        assert_eq!(CpuSet::of_thread(tid), birth.without(cpu).unwrap());
        // Dropped before the worker took its order: the drop takes the order back.
        drop(pool);
        assert_eq!(sleeping_worker(), tid, "the same worker, back in the reserve");
        assert_eq!(
            CpuSet::of_thread(tid),
            birth,
            "a worker in the reserve keeps a leader's narrowed set"
        );
        trim();
    }
}
