//! `--load N[:NICE]` and `--load-phases ON_MS:OFF_MS`: busy processes beside the benchmark, for
//! as long as it runs, the way a shared machine looks.
//!
//! Each is `sh -c 'while :; do :; done'` at the given nice level (0 by default: it competes as
//! an equal). With phases, a thread stops them all (`SIGSTOP`) for `OFF_MS` and lets them run
//! (`SIGCONT`) for `ON_MS`, in turn: a load that comes and goes. The processes end when the
//! benchmark does (also when it panics: the guard's drop kills them).
//!
//! A library module because two programs start it: `kernels` (`--load`, `--load-phases`, and
//! the load matrix, which passes them on to each run) and `batch` (the same two options).

use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// When the phases switched, and to what (`true`: the load runs), in order; empty without
/// phases.
static SWITCHES: Mutex<Vec<(Instant, bool)>> = Mutex::new(Vec::new());

fn switched(on: bool) {
    SWITCHES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((Instant::now(), on));
}

/// The phase at `t` when the load comes and goes: its index (counted from the start, on and
/// off alike), whether the load ran, and how long the phase had lasted; `None` without phases
/// or before the first.
pub fn phase_at(t: Instant) -> Option<(usize, bool, Duration)> {
    let s = SWITCHES.lock().unwrap_or_else(|e| e.into_inner());
    let i = s.partition_point(|&(at, _)| at <= t).checked_sub(1)?;
    let (at, on) = s[i];
    Some((i, on, t - at))
}

/// What `--load` and `--load-phases` asked for.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadSpec {
    /// Busy processes.
    pub processes: usize,
    /// Their nice level.
    pub nice: i32,
    /// On and off phases, when the load comes and goes.
    pub phases: Option<(Duration, Duration)>,
}

impl LoadSpec {
    /// `N` or `N:NICE`.
    ///
    /// # Panics
    /// When `N` is no count or `NICE` no integer.
    pub fn parse_load(&mut self, arg: &str) {
        let (n, nice) = arg.split_once(':').unwrap_or((arg, "0"));
        self.processes = n.parse().expect("--load N[:NICE]: N a count");
        self.nice = nice.parse().expect("--load N[:NICE]: NICE an integer");
    }

    /// `ON_MS:OFF_MS`.
    ///
    /// # Panics
    /// When either is no count of milliseconds.
    pub fn parse_phases(&mut self, arg: &str) {
        let (on, off) = arg.split_once(':').expect("--load-phases ON_MS:OFF_MS");
        let ms = |s: &str| Duration::from_millis(s.parse().expect("--load-phases: milliseconds"));
        self.phases = Some((ms(on), ms(off)));
    }

    /// The load in words, for the table's header.
    pub fn describe(&self) -> String {
        match (self.processes, self.phases) {
            (0, _) => "no load".into(),
            (n, None) => format!("{n} busy process(es) at nice {}", self.nice),
            (n, Some((on, off))) => format!(
                "{n} busy process(es) at nice {}, on {} ms / off {} ms",
                self.nice,
                on.as_millis(),
                off.as_millis()
            ),
        }
    }

    /// Starts the load; it runs until the guard is dropped.
    ///
    /// # Panics
    /// When a busy process cannot be started (`nice` or `sh` missing).
    pub fn start(&self) -> Load {
        let children: Vec<Child> = (0..self.processes)
            .map(|_| {
                Command::new("nice")
                    .args([
                        "-n",
                        &self.nice.to_string(),
                        "sh",
                        "-c",
                        "while :; do :; done",
                    ])
                    .spawn()
                    .expect("--load: cannot start a busy process (nice, sh)")
            })
            .collect();
        let pids: Vec<i32> = children.iter().map(|c| c.id() as i32).collect();
        let children = Arc::new(Mutex::new(children));
        let stop = Arc::new(AtomicBool::new(false));
        let phases = self.phases.filter(|_| !pids.is_empty()).map(|(on, off)| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let signal = |sig| {
                    for &pid in &pids {
                        // SAFETY: `kill` has no memory preconditions; the pids are our own
                        // children, alive until the guard reaps them after this thread ends.
                        unsafe { libc::kill(pid, sig) };
                    }
                };
                switched(true);
                while !stop.load(Relaxed) {
                    std::thread::sleep(on);
                    signal(libc::SIGSTOP);
                    switched(false);
                    std::thread::sleep(off);
                    signal(libc::SIGCONT);
                    switched(true);
                }
            })
        });
        if self.processes > 0 {
            // Let the processes get going before the first timed call.
            std::thread::sleep(Duration::from_millis(500));
        }
        Load {
            children,
            stop,
            phases,
        }
    }
}

/// The running load: dropping it ends the phases and kills the processes.
#[derive(Debug)]
pub struct Load {
    children: Arc<Mutex<Vec<Child>>>,
    stop: Arc<AtomicBool>,
    phases: Option<JoinHandle<()>>,
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.phases.take() {
            let _ = t.join();
        }
        let mut children = self.children.lock().unwrap_or_else(|e| e.into_inner());
        for c in children.iter_mut() {
            // SIGKILL ends a stopped process too.
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
