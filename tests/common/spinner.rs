//! A thread that holds one CPU at real-time priority, so that nothing else of normal priority
//! runs there: how the tests make a participant the OS does not run. Needs `CAP_SYS_NICE` (CI
//! runs as root). A test file that uses it declares `common/pin.rs` as `mod pin` too.

#![cfg(target_os = "linux")]

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use teamalg::kernels::par::Executor;

// The test file declares `common/pin.rs` as its module `pin`.
use super::pin::pin_this_thread;

/// A thread that holds `cpu` at real-time priority until dropped: nothing else of normal
/// priority runs there meanwhile (for at least the 950 ms of the kernel's real-time budget).
pub(crate) struct Spinner {
    stop: &'static AtomicBool,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Spinner {
    pub(crate) fn hold(cpu: usize) -> Spinner {
        let stop: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
        let (tx, rx) = std::sync::mpsc::channel();
        let handle = std::thread::spawn(move || {
            pin_this_thread(cpu);
            let param = libc::sched_param { sched_priority: 1 };
            // SAFETY: pid 0 is this thread; `param` is a valid parameter block.
            let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
            tx.send(rc).unwrap();
            while !stop.load(Relaxed) {
                std::hint::spin_loop();
            }
        });
        let rc = rx.recv().unwrap();
        assert_eq!(
            rc,
            0,
            "a real-time spinner needs CAP_SYS_NICE (CI runs as root): {}",
            std::io::Error::last_os_error()
        );
        Spinner {
            stop,
            handle: Some(handle),
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Spins for `d`.
pub(crate) fn busy(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// Runs `rounds` regions of 8 chunks of `chunk` busy time each on `exec` at width 2, while the
/// other participants' CPU is held: asserts that every chunk ran once, all on the calling
/// thread, and returns how long the rounds took.
pub(crate) fn caller_runs_every_chunk(
    exec: &dyn Executor,
    rounds: usize,
    chunk: Duration,
) -> Duration {
    let me = std::thread::current().id();
    let start = Instant::now();
    for round in 0..rounds {
        let ran: Mutex<Vec<(usize, std::thread::ThreadId)>> = Mutex::new(Vec::new());
        exec.run_chunks_of(2, 8, &|c, n| {
            assert_eq!(n, 8);
            busy(chunk);
            ran.lock().unwrap().push((c, std::thread::current().id()));
        });
        let mut ran = ran.into_inner().unwrap();
        ran.sort_by_key(|r| r.0);
        assert_eq!(
            ran.iter().map(|r| r.0).collect::<Vec<_>>(),
            (0..8).collect::<Vec<_>>(),
            "round {round}: every chunk once"
        );
        assert!(
            ran.iter().all(|r| r.1 == me),
            "round {round}: the caller waited for a participant that could not run: {ran:?}"
        );
    }
    start.elapsed()
}
