//! The CPU set of a thread (its affinity), which sizes pools and decides when waits throttle.

/// A set of CPUs, as the scheduler's affinity mask (up to 1024 CPUs).
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct CpuSet {
    bits: [u64; 16],
    count: usize,
}

impl CpuSet {
    /// The calling thread's affinity set.
    pub(crate) fn current() -> CpuSet {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: `cpu_set_t` is plain data; zeroed is a valid empty set.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            // SAFETY: pid 0 is the calling thread; the size matches the buffer.
            let rc = unsafe {
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set)
            };
            if rc == 0 {
                let mut bits = [0u64; 16];
                let mut count = 0;
                for cpu in 0..1024.min(libc::CPU_SETSIZE as usize) {
                    // SAFETY: `cpu` is below CPU_SETSIZE.
                    if unsafe { libc::CPU_ISSET(cpu, &set) } {
                        bits[cpu / 64] |= 1 << (cpu % 64);
                        count += 1;
                    }
                }
                if count > 0 {
                    return CpuSet { bits, count };
                }
            }
        }
        let count = std::thread::available_parallelism().map_or(1, |n| n.get());
        CpuSet {
            bits: [0; 16],
            count,
        }
    }

    /// How many CPUs the set holds (at least one).
    pub(crate) fn count(&self) -> usize {
        self.count.max(1)
    }

    /// Binds the calling thread to this set. Best effort: a failure leaves the affinity as it was.
    pub(crate) fn apply(&self) {
        #[cfg(target_os = "linux")]
        {
            if self.bits.iter().all(|&b| b == 0) {
                return;
            }
            // SAFETY: plain data; zeroed is a valid empty set.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            for cpu in 0..1024.min(libc::CPU_SETSIZE as usize) {
                if self.bits[cpu / 64] & (1 << (cpu % 64)) != 0 {
                    // SAFETY: `cpu` is below CPU_SETSIZE.
                    unsafe { libc::CPU_SET(cpu, &mut set) };
                }
            }
            // SAFETY: pid 0 is the calling thread; the size matches the buffer.
            unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        }
    }
}

/// Number of CPUs in the calling thread's affinity set.
pub fn available_cpus() -> usize {
    CpuSet::current().count()
}
