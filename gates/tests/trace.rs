//! The decision recorder (feature `trace`).
#![cfg(feature = "trace")]

use std::time::Duration;

use teamalg_gates::trace::{self, Decision};

#[test]
fn decisions_are_recorded_only_while_enabled() {
    let d = |w| Decision {
        site: "test/region",
        dims: [64, 64, 0],
        units: 4096.0,
        sections: 1,
        estimate: Duration::from_micros(3),
        dispatch_cost: Duration::from_micros(1),
        width: w,
    };
    trace::record(|| d(1));
    assert!(trace::drain().is_empty());
    trace::enable();
    trace::record(|| d(1));
    trace::record(|| d(2));
    trace::disable();
    trace::record(|| d(3));
    let log = trace::drain();
    assert_eq!(log.len(), 2);
    assert!(!log[0].parallel() && log[1].parallel());
    assert_eq!(log[1].site, "test/region");
}
