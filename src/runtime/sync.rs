//! The synchronisation facade: std primitives normally, loom's under `cfg(loom)`.
//!
//! Every protocol in the executor (parker, fork claim, idle-worker wake) reaches atomics, locks
//! and the spin hint through this module, so the loom models in `tests/executor/loom.rs` check the very
//! code that ships.

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence,
};
#[cfg(not(loom))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence,
};
#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};

/// One poll's pause: the PAUSE instruction on x86-64 (a loom yield under the model).
#[inline]
pub(crate) fn spin_pause() {
    #[cfg(not(loom))]
    std::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// Gives the CPU to another runnable thread.
#[inline]
pub(crate) fn yield_now() {
    #[cfg(not(loom))]
    std::thread::yield_now();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// Stands for "no CPU known" where a CPU number is stored.
pub(crate) const NO_CPU: u32 = u32::MAX;

/// The CPU the calling thread runs on now, or [`NO_CPU`] where the platform cannot tell (and
/// under the loom models, where every thread has a CPU of its own). On Linux with glibc 2.35 or
/// newer this reads the kernel's restartable-sequence area: about 2 ns.
#[inline]
pub(crate) fn current_cpu() -> u32 {
    #[cfg(all(target_os = "linux", not(loom)))]
    {
        // SAFETY: `sched_getcpu` has no preconditions; it returns -1 on failure.
        let cpu = unsafe { libc::sched_getcpu() };
        if cpu >= 0 {
            return cpu as u32;
        }
    }
    NO_CPU
}

/// Locks a mutex, ignoring poisoning: every critical section in the executor leaves its data
/// consistent before any user code can run, so a poisoned lock holds nothing half-written.
#[inline]
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    #[cfg(not(loom))]
    {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }
    #[cfg(loom)]
    {
        m.lock().unwrap()
    }
}
