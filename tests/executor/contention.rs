//! The contention signal is read at entry: a kernel called while more busy threads than CPUs
//! keep every CPU contended decides serial before its first section, without a late section
//! first (`docs/gates.md`, "Contention: one signal, read before waiting"). Nothing else read
//! the sources meanwhile: the members slept, so the entry's own read of the CPU pressure
//! (`/proc/pressure/cpu`) is what knows. (Its own binary: it keeps the CPUs busy.)

#![cfg(target_os = "linux")]

use std::time::Duration;

use faer::Mat;
use faer::dyn_stack::{MemBuffer, MemStack};
use teamalg::Pool;
use teamalg::gates::Signal;
use teamalg::gates::trace::{self, Reason};
use teamalg::kernels::lu::{LuParams, lu_in_place, lu_in_place_scratch};
use teamalg::kernels::sections;

#[path = "../common/busy.rs"]
mod busy;
use busy::Busy;

fn lu(team: &teamalg::Team, n: usize) -> Mat<f64> {
    let mut a = Mat::<f64>::from_fn(n, n, |i, j| {
        if i == j {
            n as f64
        } else {
            ((i * 7 + j * 3) % 11) as f64 / 11.0
        }
    });
    let mut swaps = vec![0; n];
    let mut buf = MemBuffer::new(lu_in_place_scratch::<f64>(n, n));
    lu_in_place(
        a.as_mut(),
        &mut swaps,
        team,
        LuParams::default(),
        MemStack::new(&mut buf),
    );
    a
}

#[test]
fn a_busy_machine_is_seen_before_the_first_section() {
    if teamalg::signal::read_sources().stall_us.is_none() {
        eprintln!("skipped: no /proc/pressure/cpu here (a kernel or container without PSI)");
        return;
    }
    let cpus = teamalg::available_cpus();
    let team = Pool::builder()
        .threads(2)
        .build()
        .expect("pool")
        .into_team(2)
        .expect("team");
    // An estimate (about 20 ms) far above `READ_SHARE` times what a read costs, even on a host
    // whose reads of /proc take 100 us.
    let n = 1024;
    // Quiet first (a call that pays goes parallel), then a pause longer than any reading is
    // believed: the members sleep, and nothing read since knows of the busy threads.
    let _ = lu(&team, n);
    std::thread::sleep(Duration::from_millis(200));
    // More busy threads than CPUs: some thread always waits for one. For most of the pressure
    // window the entry reads (from the last read, at the quiet call, to now): a host whose
    // pressure counts only part of the stall still reads above `P_MIN`.
    let busy = Busy::start(cpus + 1);
    std::thread::sleep(Duration::from_millis(1000));
    let ((_, seen), decisions) = trace::collect(|| sections::collect(|| lu(&team, n)));
    drop(busy);
    let entry = decisions.first().expect("the call's gate decided");
    assert_eq!(entry.site, "lu", "{decisions}");
    assert_eq!(entry.width, 1, "{decisions}");
    assert_eq!(
        entry.reason,
        Reason::Late,
        "parallel on a quiet machine: {decisions}"
    );
    assert!(
        matches!(
            entry.signal,
            Signal::Count | Signal::Pressure | Signal::RunQueue
        ),
        "read at entry: {decisions}"
    );
    assert!(entry.late > Duration::ZERO, "{decisions}");
    assert!(
        seen.iter().all(|s| s.width == 1),
        "no parallel section ran: {seen:?}"
    );
}
