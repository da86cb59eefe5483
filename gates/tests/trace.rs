//! The decision recorder: scopes see their own thread's decisions, the log sees everything
//! while enabled, and nothing is built while nobody watches.

use std::cell::Cell;
use std::time::Duration;

use teamalg_gates::trace::{self, Decision, Reason};
use teamalg_gates::{Family, ParThreshold, ScalarKind, Signal, Source};

fn d(width: usize) -> Decision {
    Decision {
        site: "test/region",
        family: Family::Gemm,
        scalar: ScalarKind::F64,
        dims: [64, 64, 64],
        units: 262_144.0,
        call_units: 262_144.0,
        sections: 1,
        estimate: Duration::from_micros(9),
        dispatch_cost: Duration::from_nanos(600),
        overhead: Duration::from_nanos(500),
        efficiency: 0.95,
        late: Duration::ZERO,
        signal: Signal::None,
        threshold: ParThreshold::Derived,
        source: Source::Derived,
        reason: if width > 1 {
            Reason::Paid
        } else {
            Reason::NotPaid
        },
        width,
    }
}

// One test: the process-wide log is shared by every test of this binary.
#[test]
fn decisions_reach_scopes_and_the_log_only_when_watched() {
    // Nobody watches: the decision is not even built.
    let built = Cell::new(0);
    trace::record(|| {
        built.set(built.get() + 1);
        d(1)
    });
    assert_eq!(built.get(), 0);
    assert!(trace::drain().is_empty());

    // A scope sees what its thread decides, nested scopes both do, the log stays empty.
    let ((), outer) = trace::collect(|| {
        trace::record(|| d(1));
        let ((), inner) = trace::collect(|| trace::record(|| d(2)));
        assert_eq!(inner.len(), 1);
        assert!(inner[0].parallel());
        // Another thread's decision is not this scope's.
        std::thread::scope(|s| {
            s.spawn(|| trace::record(|| d(3)));
        });
    });
    assert_eq!(outer.iter().map(|d| d.width).collect::<Vec<_>>(), [1, 2]);
    assert!(trace::drain().is_empty());

    // The log sees every thread while enabled.
    trace::enable();
    trace::record(|| d(1));
    std::thread::scope(|s| {
        s.spawn(|| trace::record(|| d(2)));
    });
    trace::disable();
    trace::record(|| d(3));
    let log = trace::drain();
    assert_eq!(log.len(), 2);
    assert!(!log[0].parallel() && log[1].parallel());

    // A scope whose closure panics is closed: later records are not built.
    let r = std::panic::catch_unwind(|| trace::collect(|| panic!("inside a scope")));
    assert!(r.is_err());
    trace::record(|| {
        built.set(built.get() + 1);
        d(1)
    });
    assert_eq!(built.get(), 0);

    // The table names every column and says why.
    let table = log.to_string();
    for word in [
        "site",
        "family",
        "threshold (source)",
        "reason",
        "gemm",
        "not paid",
        "derived (derived)",
    ] {
        assert!(table.contains(word), "{word} missing from\n{table}");
    }

    // The log is a ring: past its capacity the oldest decisions go, and it says how many.
    trace::enable();
    for i in 0..trace::LOG_CAPACITY + 5 {
        trace::record(|| d(1 + i % 2));
    }
    trace::disable();
    assert_eq!(trace::dropped(), 5);
    let log = trace::drain();
    assert_eq!(log.len(), trace::LOG_CAPACITY);
    // The first kept is record 5 (odd index: width 2), the last is the last recorded.
    assert_eq!(log[0].width, 2);
    assert_eq!(log[log.len() - 1].width, 1 + (trace::LOG_CAPACITY + 4) % 2);
    assert_eq!(trace::dropped(), 0, "a drain resets the count");
}
