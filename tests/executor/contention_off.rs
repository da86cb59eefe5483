//! `TEAMALG_CONTENTION=off` turns the contention signal off for the process: the same busy
//! machine as `contention.rs` (more busy threads than CPUs), and the gate decides from the
//! model alone, reading nothing (`docs/gates.md`, "Opting out"). (Its own binary: the
//! variable is read once per process.)

#![cfg(target_os = "linux")]

use std::time::Duration;

use teamalg::Pool;
use teamalg::gates::trace;
use teamalg::gates::{Family, Signal};
use teamalg::kernels::gate::{self, Region, Scope};

#[path = "../common/busy.rs"]
mod busy;
use busy::Busy;

#[test]
fn the_signal_can_be_turned_off() {
    // SAFETY: no other thread touches the environment now: this binary holds this one test,
    // libtest's main thread only waits for it, and it sets the variable before it builds a
    // pool or starts a busy thread.
    unsafe { std::env::set_var("TEAMALG_CONTENTION", "off") };
    if teamalg::signal::read_sources().stall_us.is_none() {
        eprintln!("skipped: no /proc/pressure/cpu here (a kernel or container without PSI)");
        return;
    }
    let team = Pool::builder()
        .threads(2)
        .build()
        .expect("pool")
        .into_team(2)
        .expect("team");
    let busy = Busy::start(teamalg::available_cpus() + 1);
    std::thread::sleep(Duration::from_millis(300));
    // A region large enough to read the sources at entry, were the signal on.
    let region = Region {
        site: "test/off",
        dims: [0; 3],
        units: 1.0e9,
        family: Family::Gemm,
        sections: 1,
        scope: Scope::Call,
        call_units: 1.0e9,
    };
    let (w, seen) = trace::collect(|| gate::width::<f64>(&team, region, None));
    drop(busy);
    assert_eq!(seen[0].signal, Signal::None, "{seen}");
    assert_eq!(seen[0].late, Duration::ZERO, "{seen}");
    assert_eq!(
        w, 2,
        "the model alone sends a large product parallel: {seen}"
    );
}
