//! A thread that holds one CPU at real-time priority, so that nothing else of normal priority
//! runs there: how the tests make a participant the OS does not run. Needs `CAP_SYS_NICE` (CI
//! runs as root). A test file that uses it declares `common/pin.rs` as `mod pin` too.

#![cfg(target_os = "linux")]

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

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
