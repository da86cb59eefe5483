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

use crate::cpus::CpuSet;
use crate::error::Error;
use crate::parker::{self, Parker};
use crate::pool::PoolShared;
use crate::sync::{lock, AtomicPtr, Mutex, Ordering::*};

static SPAWNED: StdAtomicUsize = StdAtomicUsize::new(0);

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
    order: Mutex<Option<Order>>,
    handle: Mutex<Option<JoinHandle<()>>>,
}

impl IdleWorker {
    fn give(&self, order: Order) {
        *lock(&self.order) = Some(order);
        let p = self.parker.load(Acquire);
        if !p.is_null() {
            // SAFETY: parkers are never freed.
            unsafe { (*p).unpark() };
        }
    }

    fn wait_order(&self) -> Order {
        loop {
            if let Some(o) = lock(&self.order).take() {
                return o;
            }
            parker::current().park();
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
    r.widest.max(crate::cpus::available_cpus())
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

/// Leases `pool.threads()` workers for `pool`, starting threads for those the reserve lacks.
pub(crate) fn lease(pool: &Arc<PoolShared>) -> Result<(), Error> {
    let threads = pool.threads();
    let mut r = lock(&RESERVE);
    r.widest = r.widest.max(threads);
    for k in 0..threads {
        match r.idle.pop() {
            Some(w) => w.give(Order::Serve(pool.clone(), k)),
            None => {
                if let Err(e) = spawn(pool.clone(), k) {
                    drop(r);
                    pool.abandon(threads - k);
                    return Err(e);
                }
            }
        }
    }
    Ok(())
}

fn spawn(pool: Arc<PoolShared>, k: usize) -> Result<(), Error> {
    let me = Arc::new(IdleWorker {
        parker: AtomicPtr::new(std::ptr::null_mut()),
        order: Mutex::new(None),
        handle: Mutex::new(None),
    });
    let inner = me.clone();
    let handle = std::thread::Builder::new()
        .name("teamalg-worker".into())
        .spawn(move || run(inner, Order::Serve(pool, k)))
        .map_err(Error::Spawn)?;
    count_spawn();
    *lock(&me.handle) = Some(handle);
    Ok(())
}

/// A leased worker's life: serve pools, rest in the reserve between them.
fn run(me: Arc<IdleWorker>, first: Order) {
    me.parker
        .store(parker::current() as *const Parker as *mut Parker, Release);
    let mut cpus: Option<CpuSet> = None;
    let mut order = first;
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
                pool.serve(k);
                let stays = {
                    let mut r = lock(&RESERVE);
                    let stays = r.idle.len() < bound(&r);
                    if stays {
                        r.idle.push(me.clone());
                    }
                    stays
                };
                pool.leave();
                if !stays {
                    return;
                }
            }
        }
        order = me.wait_order();
    }
}
