//! The stress programs with the whole test pinned to one CPU: pools built here see one CPU, so
//! their waits take the throttled spin budget; everything must still complete.

#[path = "common/stress.rs"]
mod common;

use teamalg::Pool;

#[cfg(target_os = "linux")]
fn pin_to_one_cpu() {
    // SAFETY: plain data; zeroed is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is this thread; the size matches.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    assert_eq!(rc, 0);
    // SAFETY: indices below CPU_SETSIZE.
    let first = (0..libc::CPU_SETSIZE as usize)
        .find(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .unwrap();
    // SAFETY: plain data.
    let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: index below CPU_SETSIZE.
    unsafe { libc::CPU_SET(first, &mut one) };
    // SAFETY: pid 0 is this thread; the size matches.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &one) };
    assert_eq!(rc, 0);
}

#[test]
fn pinned_to_one_cpu() {
    #[cfg(target_os = "linux")]
    pin_to_one_cpu();
    assert_eq!(teamalg::available_cpus(), 1);
    let pool = Pool::builder().threads(4).build().unwrap();
    assert_eq!(pool.threads(), 4);
    let t = std::time::Instant::now();
    // Threads spawned by the stress inherit the pin.
    common::stress(&pool, 5, 200, 2);
    let default_pool = Pool::builder().build().unwrap();
    assert_eq!(default_pool.threads(), 1);
    common::stress(&default_pool, 6, 100, 1);
    eprintln!("pinned stress took {:?}", t.elapsed());
}
