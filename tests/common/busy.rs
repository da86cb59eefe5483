//! Normal-priority threads that spin until dropped: other work on every CPU they get, the way
//! a shared machine looks to a test. A test file declares it as `mod busy`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

pub(crate) struct Busy {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Busy {
    /// `n` spinning threads.
    pub(crate) fn start(n: usize) -> Busy {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..n)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !stop.load(Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        Busy { stop, threads }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
