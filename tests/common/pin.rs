//! The calling thread's CPUs: read them, pin to one (and every thread it spawns later).

#![allow(dead_code)] // each test file uses its own part

/// The CPUs of the calling thread's affinity set, in order.
#[cfg(target_os = "linux")]
pub(crate) fn cpus_of_this_thread() -> Vec<usize> {
    // SAFETY: plain data; zeroed is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is this thread; the size matches.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    assert_eq!(rc, 0);
    // SAFETY: indices below CPU_SETSIZE.
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// Pins the calling thread (and the threads it spawns later) to `cpu`.
#[cfg(target_os = "linux")]
pub(crate) fn pin_this_thread(cpu: usize) {
    // SAFETY: plain data.
    let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: index below CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu, &mut one) };
    // SAFETY: pid 0 is this thread; the size matches.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &one) };
    assert_eq!(rc, 0);
}

/// Pins the calling thread (and every thread it spawns later) to the first CPU of its set.
#[cfg(target_os = "linux")]
pub(crate) fn pin_to_one_cpu() {
    pin_this_thread(cpus_of_this_thread()[0]);
}
