//! Pins the calling thread (and every thread it spawns later) to the first CPU of its set.

#[cfg(target_os = "linux")]
pub(crate) fn pin_to_one_cpu() {
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
