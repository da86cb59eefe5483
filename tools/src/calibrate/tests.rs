//! Calibration's tests: what it measures, that a serial sample never becomes a cost (also with a
//! saboteur hogging a CPU), and that a profile's numbers decide.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::calibrate::{self, Measure, SHARE};
use faer::Mat;
use teamalg::gates::trace::{self, Reason};
use teamalg::gates::{DispatchKind, Family, Fingerprint};
use teamalg::{linalg, Pool};

/// The tests of this file take turns: the saboteur's spinners would otherwise disturb the
/// calibration's timings (and the calibration the saboteur's), as they did in a CI run.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn calibration_measures_every_kind_rate_and_split() {
    let _turn = turn();
    assert_eq!(calibrate::anchor_widths(1), Vec::<usize>::new());
    assert_eq!(calibrate::anchor_widths(2), vec![2]);
    assert_eq!(
        calibrate::anchor_widths(64),
        vec![2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
    );
    assert_eq!(calibrate::anchor_widths(100_000).len(), 16);
    assert_eq!(calibrate::split_widths(1), Vec::<usize>::new());
    assert_eq!(calibrate::split_widths(2), vec![2]);
    assert_eq!(calibrate::split_widths(12), vec![2, 4, 8, 12]);
    assert_eq!(calibrate::split_widths(64), vec![2, 4, 8, 16, 32, 64]);
    assert_eq!(calibrate::split_widths(128), vec![2, 8, 32, 128]);
    assert_eq!(
        calibrate::split_widths(1024),
        vec![2, 8, 32, 128, 512, 1024]
    );
    let mut steps = Vec::new();
    let cal = calibrate::calibrate(|s| steps.push((s.done, s.total, s.what)));
    let cpus = teamalg::available_cpus();
    let widths = calibrate::anchor_widths(cpus);
    let split_widths = calibrate::split_widths(cpus);
    let splits = if cpus >= 2 {
        calibrate::SPLIT_FAMILIES.len()
    } else {
        0
    };
    assert_eq!(
        steps.len(),
        3 * widths.len() + Family::KERNELS.len() + splits * split_widths.len()
    );
    assert!(steps
        .iter()
        .enumerate()
        .all(|(i, s)| s.0 == i + 1 && s.1 == steps.len()));
    assert!(steps.iter().any(|s| s.2 == Measure::Rate(Family::Cholesky)));
    let profile = &cal.profile;
    assert_eq!(profile.fingerprint, Fingerprint::current());
    // Every kernel family rated for all four scalar types, at rates a real host reaches.
    assert_eq!(profile.rates.len(), Family::KERNELS.len());
    for (family, curve) in &profile.rates {
        assert!(Family::KERNELS.contains(family));
        assert_eq!(curve.anchors().count(), calibrate::RATE_SIZES.len());
        for (units, rate) in curve.anchors() {
            for v in rate.values() {
                assert!(v > 1e-4 && v < 1e3, "{family:?} {units} {rate:?}");
            }
        }
        // A sanity check of the units, where the margin is wide (c64 takes about three times
        // f64 at n = 256 on every host seen), not of the host's speed.
        let (_, large) = curve.anchors().last().expect("anchors");
        assert!(
            large.cplx > large.real,
            "complex is not slower than real at n = 256: {large:?}"
        );
    }
    // Every anchor measured or honestly absent, and every recorded cost is one the host has:
    // below the share (a serial sample costs about a whole share).
    assert_eq!(cal.anchors.len(), 3 * widths.len());
    for a in &cal.anchors {
        if let Some(ns) = a.cost {
            assert!((ns as u128) < SHARE.as_nanos(), "{a:?}");
            let row: Vec<(u16, u32)> = profile.costs.row(a.kind).anchors().collect();
            assert!(row.contains(&(a.width as u16, ns)), "{a:?} not in {row:?}");
        }
    }
    // The split of each gated family, real and complex, valid, one anchor per split width.
    assert_eq!(profile.splits.len(), splits);
    for (_, s) in &profile.splits {
        for curve in [s.real, s.cplx] {
            let anchors: Vec<_> = curve.anchors().collect();
            let at: Vec<usize> = anchors.iter().map(|a| a.0).collect();
            assert_eq!(at, split_widths, "{s:?}");
            assert!(anchors.iter().all(|a| a.1.is_valid()), "{s:?}");
        }
    }
    // How long it took is a measurement, not a property: printed, and recorded in
    // `docs/perf/calibration.md` (timing belongs in benchmarks, not in tests).
    eprintln!("calibration took {:?}", cal.took);
}

/// A thread that spins on a CPU until told to stop.
fn saboteur(stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        std::hint::spin_loop();
    }
}

#[test]
fn a_saboteur_never_turns_a_serial_sample_into_a_cost() {
    let _turn = turn();
    if teamalg::available_cpus() < 2 {
        return;
    }
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        // One spinner per CPU: the pool's worker is late for many sections, so the caller
        // runs its share (a serial sample), or a participant is descheduled.
        for _ in 0..teamalg::available_cpus() {
            s.spawn(|| saboteur(&stop));
        }
        for kind in [
            DispatchKind::Outside,
            DispatchKind::InPool,
            DispatchKind::Team,
        ] {
            let a = calibrate::measure_anchor(kind, 2, calibrate::round_gap(3));
            // Either too few samples survived and nothing is recorded, or the cost is a real
            // dispatch's: well below the 10 us a serial sample costs.
            if let Some(ns) = a.cost {
                assert!(
                    (ns as u128) < SHARE.as_nanos() / 2,
                    "{a:?}: a serial sample was recorded"
                );
            }
            assert_eq!(a.samples, a.rounds * calibrate::ROUND, "{a:?}");
        }
        stop.store(true, Ordering::Relaxed);
    });
}

#[test]
fn a_profile_rate_decides() {
    let _turn = turn();
    let team = |rate_scale: f64| {
        let mut profile = teamalg::gates::HostProfile {
            fingerprint: Fingerprint::current(),
            costs: teamalg::gates::DispatchCosts::host_default(),
            rates: Vec::new(),
            splits: Vec::new(),
            load: None,
        };
        let base = teamalg::gates::builtin_rate(
            Family::LuPartial,
            profile.fingerprint.class,
            teamalg::kernels::families::CATALOGUE,
        );
        profile
            .rates
            .push((Family::LuPartial, base.scaled(rate_scale)));
        Pool::builder()
            .threads(2)
            .host_profile(profile)
            .build()
            .unwrap()
            .into_team(2)
            .map_err(|e| e.error)
            .unwrap()
    };
    let lu_decision = |team: &teamalg::Team| {
        let mut a = Mat::<f64>::from_fn(512, 512, |i, j| {
            if i == j {
                2000.0
            } else {
                ((i * 7 + j * 3) % 11) as f64
            }
        });
        let (_, seen) = trace::collect(|| drop(linalg::lu(a.as_mut(), team)));
        seen[0].clone()
    };
    // LU of 512 pays on two with the host's rate ...
    let d = lu_decision(&team(1.0));
    assert_eq!(
        (d.family, d.reason, d.width),
        (Family::LuPartial, Reason::Paid, 2),
        "{d:?}"
    );
    // ... and stays serial when the profile says the host is 100 times faster.
    let d = lu_decision(&team(0.01));
    assert_eq!(d.width, 1, "{d:?}");
    assert!(
        matches!(d.reason, Reason::NotPaid | Reason::BelowModelledMinimum),
        "{d:?}"
    );
}
