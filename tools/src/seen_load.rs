//! What else wants the CPUs while a calibration runs: a thread samples, every
//! [`SAMPLE_EVERY`], the machine's runnable threads (`/proc/loadavg`'s fourth field) less this
//! process's own running ones (`/proc/self/task/*/stat` in state `R`). A profile measured beside
//! other work describes a passing state: its dispatch rows and split costs are wrong for the
//! quiet machine the gates assume, so `teamalg calibrate` refuses to write it unless forced, and
//! records what it saw in the profile either way.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use teamalg::gates::SeenLoad;

use crate::anchor::Anchor;

/// How often the sampler samples.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(20);

/// Other runnable threads on average from which a host counts as busy: a competitor present
/// for half the run.
pub const BUSY_OTHERS: f64 = 0.5;

/// Rejected dispatch samples (a participant descheduled) from which a host counts as busy.
pub const BUSY_REJECTED: f64 = 0.25;

/// Runnable threads of the whole machine, from `/proc/loadavg`'s text (`running/total`).
pub fn running_of(loadavg: &str) -> Option<usize> {
    loadavg
        .split_whitespace()
        .nth(3)?
        .split('/')
        .next()?
        .parse()
        .ok()
}

/// Whether a `/proc/.../stat` line says the thread is running (state `R`, after the command
/// name in parentheses, which may itself hold spaces and parentheses).
pub fn is_running(stat: &str) -> bool {
    stat.rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next())
        == Some("R")
}

/// This process's threads that are running now.
fn own_running() -> usize {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|s| is_running(s))
        .count()
}

/// Runnable threads not this process's, now; `None` where `/proc` does not say.
pub fn others_now() -> Option<usize> {
    let all = running_of(&std::fs::read_to_string("/proc/loadavg").ok()?)?;
    Some(all.saturating_sub(own_running()))
}

/// The sampler: a thread that samples the load until [`LoadSampler::finish`].
#[derive(Debug)]
pub struct LoadSampler {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<(f64, usize)>,
}

impl LoadSampler {
    /// Starts sampling.
    pub fn start() -> LoadSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            let (mut sum, mut n) = (0.0, 0);
            while !flag.load(Relaxed) {
                if let Some(o) = others_now() {
                    sum += o as f64;
                    n += 1;
                }
                std::thread::sleep(SAMPLE_EVERY);
            }
            (sum, n)
        });
        LoadSampler { stop, handle }
    }

    /// Stops sampling; the load seen, with the dispatch rows' rejections and stability.
    pub fn finish(self, anchors: &[Anchor]) -> SeenLoad {
        self.stop.store(true, Relaxed);
        let (sum, n) = self.handle.join().unwrap_or((0.0, 0));
        let samples: usize = anchors.iter().map(|a| a.samples).sum();
        let rejected: usize = anchors.iter().map(|a| a.descheduled).sum();
        SeenLoad {
            others: if n == 0 { 0.0 } else { sum / n as f64 },
            rejected: if samples == 0 {
                0.0
            } else {
                rejected as f64 / samples as f64
            },
            unstable: anchors.iter().filter(|a| !a.stable).count(),
        }
    }
}

/// Why a calibration that saw `load` over `rows` dispatch rows describes a busy host; empty
/// when it was quiet.
pub fn busy_reasons(load: &SeenLoad, rows: usize) -> Vec<String> {
    let mut why = Vec::new();
    if load.others >= BUSY_OTHERS {
        why.push(format!(
            "{:.1} other runnable threads on average",
            load.others
        ));
    }
    if load.rejected >= BUSY_REJECTED {
        why.push(format!(
            "{:.0}% of the dispatch samples had a participant descheduled",
            load.rejected * 100.0
        ));
    }
    if rows > 0 && 2 * load.unstable > rows {
        why.push(format!(
            "{} of {rows} dispatch rows never gave agreeing rounds",
            load.unstable
        ));
    }
    why
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_texts_are_read() {
        assert_eq!(running_of("0.32 1.46 1.75 3/81 17268\n"), Some(3));
        assert_eq!(running_of("garbage"), None);
        assert!(is_running("123 (a (b) c) R 1 2 3"));
        assert!(!is_running("123 (x R) S 1 2 3"));
    }

    #[test]
    fn each_sign_of_a_busy_host_is_named() {
        let quiet = SeenLoad {
            others: 0.1,
            rejected: 0.02,
            unstable: 1,
        };
        assert!(busy_reasons(&quiet, 6).is_empty());
        let loaded = SeenLoad {
            others: 1.0,
            rejected: 0.4,
            unstable: 4,
        };
        assert_eq!(busy_reasons(&loaded, 6).len(), 3);
    }

    #[test]
    fn a_busy_process_is_seen() {
        // A process of its own: the sampler does not count this process's threads.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .expect("sh");
        std::thread::sleep(Duration::from_millis(50));
        let seen: Vec<usize> = (0..10)
            .filter_map(|_| {
                std::thread::sleep(Duration::from_millis(5));
                others_now()
            })
            .collect();
        let _ = child.kill();
        let _ = child.wait();
        // Runnable every time it is looked at, but a sample may land while the kernel runs
        // this test's own reader on the shell's CPU: most samples, not all.
        let busy = seen.iter().filter(|&&o| o >= 1).count();
        assert!(busy * 2 >= seen.len(), "{seen:?}");
    }
}
