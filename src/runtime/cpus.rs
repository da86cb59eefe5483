//! The CPU set of a thread (its affinity) and, with the cgroup's CPU quota (`quota.rs`), how
//! many CPUs it may use at once: that count sizes pools and decides when waits throttle.

/// A set of CPUs, as the scheduler's affinity mask (up to 1024 CPUs).
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct CpuSet {
    bits: [u64; 16],
    count: usize,
}

impl CpuSet {
    /// The calling thread's affinity set.
    pub(crate) fn current() -> CpuSet {
        Self::of_thread(0)
    }

    /// Thread `tid`'s affinity set (0: the calling thread's). Where it cannot be read, the
    /// platform's CPU count, not known CPU by CPU.
    pub(crate) fn of_thread(tid: u32) -> CpuSet {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: `cpu_set_t` is plain data; zeroed is a valid empty set.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            // SAFETY: the kernel writes at most the given size into `set`, a live `cpu_set_t`
            // of exactly that size; an unknown `tid` fails with ESRCH and writes nothing.
            let rc = unsafe {
                libc::sched_getaffinity(
                    tid as libc::pid_t,
                    std::mem::size_of::<libc::cpu_set_t>(),
                    &mut set,
                )
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
        #[cfg(not(target_os = "linux"))]
        let _ = tid;
        let count = std::thread::available_parallelism().map_or(1, |n| n.get());
        CpuSet {
            bits: [0; 16],
            count,
        }
    }

    // Only the `mpi` share (and the tests) exchange sets as words.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    /// The set as 16 words of 64 CPUs each (all zero where only a count is known).
    pub(crate) fn words(&self) -> [u64; 16] {
        self.bits
    }

    // Only the `mpi` share (and the tests) exchange sets as words.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    /// The set of the CPUs in `words` (as [`CpuSet::words`] gives them; missing words are
    /// empty).
    pub(crate) fn from_words(words: &[u64]) -> CpuSet {
        let mut bits = [0u64; 16];
        for (b, w) in bits.iter_mut().zip(words) {
            *b = *w;
        }
        let count = bits.iter().map(|w| w.count_ones() as usize).sum();
        CpuSet { bits, count }
    }

    /// How many CPUs the set holds (at least one).
    pub(crate) fn count(&self) -> usize {
        self.count.max(1)
    }

    /// How many of the set's CPUs the process may keep busy at once: the set's size, or the
    /// cgroup's CPU quota in whole CPUs where that is smaller (`quota.rs`). Pools are as wide
    /// as this by default, and their waits throttle when more threads are awake than this.
    pub(crate) fn usable(&self) -> usize {
        let count = self.count();
        crate::runtime::quota::cpus().map_or(count, |q| count.min(q))
    }

    /// Whether the set is known CPU by CPU (it is not where the platform gives only a count).
    fn is_known(&self) -> bool {
        self.bits.iter().any(|&b| b != 0)
    }

    /// Whether `cpu` is in the set (false when the set is not known CPU by CPU).
    pub(crate) fn contains(&self, cpu: u32) -> bool {
        let cpu = cpu as usize;
        cpu < 1024 && self.bits[cpu / 64] & (1 << (cpu % 64)) != 0
    }

    /// The set of the one CPU `cpu`.
    pub(crate) fn one(cpu: u32) -> CpuSet {
        let mut bits = [0u64; 16];
        if (cpu as usize) < 1024 {
            bits[cpu as usize / 64] = 1 << (cpu % 64);
        }
        CpuSet { bits, count: 1 }
    }

    /// This set without `cpu`, when that leaves at least one CPU.
    pub(crate) fn without(&self, cpu: u32) -> Option<CpuSet> {
        if !self.contains(cpu) || self.count() < 2 {
            return None;
        }
        let mut away = self.clone();
        away.bits[cpu as usize / 64] &= !(1 << (cpu % 64));
        away.count -= 1;
        Some(away)
    }

    /// Binds the calling thread to this set. Best effort: a failure leaves the affinity as it
    /// was, and returns false.
    pub(crate) fn apply(&self) -> bool {
        self.apply_to(0)
    }

    /// Binds thread `tid` (0: the calling thread) to this set; false when that failed.
    ///
    /// A leader uses it to move a team member queued behind it on its own CPU: on small
    /// virtual machines the scheduler puts a woken thread on its waker's CPU even when another
    /// CPU is idle, and two threads of a team stacked on one CPU stay there for milliseconds
    /// before the load balancer separates them (see `docs/waiting.md`). Moving a thread that
    /// is not running costs the caller about 14 us there and needs nothing of the mover's
    /// target; a running thread moving itself costs its CPU about 40 us more.
    pub(crate) fn apply_to(&self, tid: u32) -> bool {
        #[cfg(target_os = "linux")]
        {
            if !self.is_known() {
                return false;
            }
            // SAFETY: plain data; zeroed is a valid empty set.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            for cpu in 0..1024.min(libc::CPU_SETSIZE as usize) {
                if self.bits[cpu / 64] & (1 << (cpu % 64)) != 0 {
                    // SAFETY: `cpu` is below CPU_SETSIZE.
                    unsafe { libc::CPU_SET(cpu, &mut set) };
                }
            }
            // SAFETY: the call reads `size_of::<cpu_set_t>()` bytes from `&set`, a live,
            // initialized `cpu_set_t` of exactly that size, and writes nothing of ours. `tid`
            // names a thread (0: the caller); which thread has no bearing on memory safety: the
            // kernel checks it, and an unknown one fails with ESRCH (returned as false). That a
            // tid names the intended thread is the callers' contract, not a safety condition:
            // they pass only tids of teamalg workers that are alive (a slot's tid is cleared
            // before its worker stops serving, and a reserve worker's lives as long as it is
            // in the reserve).
            let rc = unsafe {
                libc::sched_setaffinity(
                    tid as libc::pid_t,
                    std::mem::size_of::<libc::cpu_set_t>(),
                    &set,
                )
            };
            rc == 0
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = tid;
            false
        }
    }
}

/// The calling thread's id for [`CpuSet::apply_to`] (0 where there is none).
pub(crate) fn current_tid() -> u32 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `gettid` has no preconditions and cannot fail.
        unsafe { libc::gettid() as u32 }
    }
    #[cfg(not(target_os = "linux"))]
    0
}

/// How many CPUs the calling thread may keep busy at once: the CPUs of its affinity set, or
/// the process's cgroup CPU quota (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us` over
/// `cpu.cfs_period_us`, the smallest on the way up the hierarchy) in whole CPUs, rounded down
/// and at least 1, where that is smaller. A pool built without
/// [`threads`](crate::PoolBuilder::threads) is this wide.
///
/// The smaller wins because either one alone oversubscribes: a container limited to 2 CPUs'
/// time keeps all of a 64-CPU node in its mask, and 64 workers whose members spin would use the
/// quota up and stall the whole container until the next period; a mask of 2 CPUs runs at most
/// 2 threads at once whatever the quota. Rounded down because a team's members spin for whole
/// CPUs. The quota is read once per process, at the first call or pool; the mask at every call.
/// `std::thread::available_parallelism` takes the same minimum.
///
/// ```
/// let n = teamalg::available_cpus();
/// assert!(n >= 1);
/// // A pool built without a thread count is this wide.
/// assert_eq!(teamalg::Pool::builder().build()?.threads(), n);
/// # Ok::<(), teamalg::Error>(())
/// ```
pub fn available_cpus() -> usize {
    CpuSet::current().usable()
}
