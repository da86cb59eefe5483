//! The process-wide reserve: reuse, bound, trim, CPU sets. One binary, tests run in sequence
//! (they count threads process-wide).

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use teamalg::{Exec, Pool, reserve, spawned_workers};

#[path = "../common/pin.rs"]
mod pin;

static SERIAL: Mutex<()> = Mutex::new(());

#[test]
fn a_thousand_pools_start_no_more_threads_than_the_widest() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = spawned_workers();
    let n = AtomicUsize::new(0);
    for i in 0..1000 {
        let width = 1 + i % 3;
        let p = Pool::builder().threads(width).build().unwrap();
        Exec::new(&p, width).unwrap().for_ranges(width, 1, |r| {
            n.fetch_add(r.len(), Relaxed);
        });
    }
    let started = spawned_workers() - before;
    assert!(
        started <= 3,
        "started {started} threads for pools of width <= 3"
    );
    assert!(n.load(Relaxed) > 1000);
    assert!(reserve::idle_workers() >= 3.min(started));
}

#[test]
fn trim_empties_the_reserve_and_new_pools_start_threads() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    drop(Pool::builder().threads(2).build().unwrap());
    assert!(reserve::idle_workers() >= 2);
    let retired = reserve::trim();
    assert!(retired >= 2);
    assert_eq!(reserve::idle_workers(), 0);
    let before = spawned_workers();
    let p = Pool::builder().threads(2).build().unwrap();
    assert_eq!(spawned_workers() - before, 2);
    drop(p);
    assert_eq!(reserve::idle_workers(), 2);
}

#[test]
fn the_reserve_is_bounded() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    reserve::trim();
    let wide = teamalg::available_cpus() + 3;
    drop(Pool::builder().threads(wide).build().unwrap());
    // Bound is max(CPUs, widest so far) >= wide: all stay.
    assert_eq!(reserve::idle_workers(), wide);
    // Two pools at once need more than the reserve holds; afterwards it keeps only the bound.
    let a = Pool::builder().threads(wide).build().unwrap();
    let b = Pool::builder().threads(wide).build().unwrap();
    drop(a);
    drop(b);
    let idle = reserve::idle_workers();
    assert!(
        idle <= wide.max(teamalg::available_cpus()) && idle >= wide,
        "idle {idle}"
    );
}

#[test]
fn trim_to_releases_workers_and_forgets_the_widest_pool() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cpus = teamalg::available_cpus();
    let wide = cpus + 3;
    drop(Pool::builder().threads(wide).build().unwrap());
    assert_eq!(reserve::idle_workers(), wide);
    assert_eq!(reserve::trim_to(1), wide - 1);
    assert_eq!(reserve::idle_workers(), 1);
    // The bound is the CPUs again: two pools of `cpus` at once lease 2 * cpus workers, and
    // only `cpus` of them stay (the bound would still be `wide` if the trim kept it).
    let a = Pool::builder().threads(cpus).build().unwrap();
    let b = Pool::builder().threads(cpus).build().unwrap();
    drop(a);
    drop(b);
    assert_eq!(reserve::idle_workers(), cpus);
    reserve::trim();
    assert_eq!(reserve::idle_workers(), 0);
}

#[cfg(target_os = "linux")]
#[test]
fn a_worker_serving_a_second_pool_takes_its_cpu_set() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let all = pin::cpus_of_this_thread();
    if all.len() < 2 {
        return; // nothing to narrow on a one-CPU host
    }
    reserve::trim();
    let before = spawned_workers();
    drop(Pool::builder().threads(1).build().unwrap());
    // Build the second pool from a thread pinned to one CPU; it leases the same worker.
    let pinned = std::thread::spawn(move || {
        // SAFETY: plain data.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: index below CPU_SETSIZE.
        unsafe { libc::CPU_SET(all[1], &mut set) };
        // SAFETY: pid 0 is this thread; the size matches.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        let p = Pool::builder().threads(1).build().unwrap();
        assert_eq!(p.threads(), 1);
        let seen = Exec::new(&p, 1)
            .unwrap()
            .install(|_| pin::cpus_of_this_thread());
        (seen, all[1])
    })
    .join()
    .unwrap();
    assert_eq!(spawned_workers() - before, 1, "the worker was reused");
    assert_eq!(pinned.0, vec![pinned.1]);
}
