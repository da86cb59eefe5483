//! No process oversubscribes itself: a parallel call holds its CPUs, and a region of another
//! thread's call gets only what the others leave (`kernels/src/exec/occupancy.rs`). Two
//! threads that each hold a team as wide as the CPUs narrow each other. (Its own binary: its
//! calls hold every CPU of the process.)

use std::sync::mpsc;

use teamalg::Pool;
use teamalg::gates::trace::{self, Reason};
use teamalg::gates::{Family, ParThreshold};
use teamalg::kernels::gate::{self, Region, Scope};

fn region() -> Region {
    // A large product: parallel on any quiet machine.
    Region {
        site: "test/occupancy",
        dims: [0; 3],
        units: 1.0e9,
        family: Family::Gemm,
        sections: 1,
        scope: Scope::Call,
        call_units: 1.0e9,
    }
}

#[test]
fn two_teams_as_wide_as_the_cpus_narrow_each_other() {
    let cpus = teamalg::available_cpus().max(2);
    let team = |w| {
        Pool::builder()
            .threads(w)
            .build()
            .expect("pool")
            .into_team(w)
            .expect("team")
    };
    let (a, b) = (team(cpus), team(cpus));
    let (held, holding) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let a = &a;
    std::thread::scope(|s| {
        s.spawn(move || {
            // The caller's own threshold takes the whole team: the call holds every CPU.
            let call = gate::call::<f64>(a, region(), Some(ParThreshold::Fixed(0)));
            held.send(call.width()).unwrap();
            released.recv().unwrap();
        });
        assert_eq!(
            holding.recv().unwrap(),
            cpus,
            "the first call went parallel"
        );
        let (w, seen) = trace::collect(|| gate::width::<f64>(&b, region(), None));
        release.send(()).unwrap();
        assert_eq!(w, 1, "{seen}");
        assert_eq!(seen[0].reason, Reason::Occupied, "{seen}");
    });
    // Once the first call is over, the CPUs are free again.
    let ((), seen) = trace::collect(|| {
        gate::width::<f64>(&b, region(), None);
    });
    assert_ne!(seen[0].reason, Reason::Occupied, "{seen}");
}
