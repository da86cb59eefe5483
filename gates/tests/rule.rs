//! The rule's properties and the model's layers (the built-in rows are the kernels':
//! `tests/kernels/rows.rs`).

use std::num::NonZeroUsize;
use std::time::Duration;

use teamalg_gates::{
    choose, pays_at, width_for_by, AppleRate, CostsError, CpuVendor, DispatchCosts, DispatchKind,
    Family, HostClass, Model, ParThreshold, Rate, Rows, Source, SplitCost, SplitCurve, Thresholds,
    Verdict, WidthCosts, PAYS,
};

/// Rows for a model: one flat rate, splits free.
fn rows(_: Family) -> Rows {
    Rows::new(None, AppleRate::Measured(Rate::halved(0.5, 1.5)), None)
}

fn us(x: f64) -> Duration {
    Duration::from_secs_f64(x * 1e-6)
}

fn nz(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap()
}

#[test]
fn pays_is_the_threshold_and_monotone() {
    assert_eq!(PAYS, 3.0);
    let d = us(1.0);
    assert!(pays_at(us(3.0), 1, d));
    assert!(!pays_at(us(2.99), 1, d));
    assert!(pays_at(us(6.0), 2, d) && !pays_at(us(5.9), 2, d));
    assert!(!pays_at(us(1e9), 1, Duration::MAX));
    assert!(pays_at(Duration::ZERO, 0, d));
    // Monotone: more estimate never stops paying; more sections never start paying.
    for s in 1..20 {
        let mut paid = false;
        for e in 0..200 {
            let p = pays_at(us(e as f64 * 0.5), s, d);
            assert!(p || !paid, "paying stopped as the estimate grew");
            paid |= p;
            if p {
                assert!(
                    pays_at(us(e as f64 * 0.5), s - 1, d),
                    "fewer sections must pay too"
                );
            }
        }
    }
}

#[test]
fn width_is_one_when_nothing_pays_and_ties_go_to_the_smaller() {
    let flat = |_: NonZeroUsize| us(10.0);
    assert_eq!(width_for_by(us(29.0), 1, nz(8), flat).get(), 1);
    assert_eq!(width_for_by(us(1e6), 1, nz(1), flat).get(), 1);
    // Costs growing so fast that widths 2 and 3 tie: the smaller wins.
    // time(k) = D(k) + E / k with E = 600: D(2) = 10 -> 310, D(3) = 110 -> 310.
    let tie = |k: NonZeroUsize| {
        us(match k.get() {
            2 => 10.0,
            3 => 110.0,
            _ => 1000.0,
        })
    };
    assert_eq!(width_for_by(us(600.0), 1, nz(8), tie).get(), 2);
    // A large region on cheap dispatch takes the whole budget.
    assert_eq!(width_for_by(us(1e5), 1, nz(8), flat).get(), 8);
}

#[test]
fn width_is_monotone_in_estimate_and_sections() {
    let costs = DispatchCosts::for_class(HostClass::X86_64Avx2);
    let cost = |k: NonZeroUsize| costs.cost(DispatchKind::Team, k.get());
    let mut last = 1;
    for e in 0..400 {
        let w = width_for_by(us(e as f64 * 5.0), 4, nz(64), cost).get();
        assert!(
            w >= last,
            "width fell from {last} to {w} as the estimate grew"
        );
        last = w;
    }
    let mut last = usize::MAX;
    for s in 1..200 {
        let w = width_for_by(us(500.0), s, nz(64), cost).get();
        assert!(
            w <= last,
            "width grew from {last} to {w} with more sections"
        );
        last = w;
    }
    assert_eq!(last, 1);
}

#[test]
fn rows_hold_their_anchors_and_interpolate() {
    let c = DispatchCosts::for_class(HostClass::X86_64Avx2);
    let team = |w| c.cost(DispatchKind::Team, w).as_nanos();
    for (w, ns) in [
        (2, 1420),
        (4, 1990),
        (6, 2330),
        (8, 2740),
        (12, 3560),
        (16, 4080),
    ] {
        assert_eq!(team(w), ns);
    }
    for (w, ns) in [(24, 4290), (32, 4840), (48, 6400), (64, 9330)] {
        assert_eq!(team(w), ns);
    }
    assert_eq!(team(3), (1420 + 1990) / 2);
    assert_eq!(team(40), (4840 + 6400) / 2);
    // Above the largest anchor: in proportion to the width.
    assert_eq!(team(128), 9330 * 2);
    assert!(team(65535) > team(1000) && team(1000) > team(128));
    // Below width 2 nothing dispatches.
    assert_eq!(c.cost(DispatchKind::Team, 1), Duration::MAX);
    let r = DispatchCosts::for_class(HostClass::X86_64Avx512);
    assert_eq!(r.cost(DispatchKind::Team, 2).as_nanos(), 280);
    assert_eq!(r.cost(DispatchKind::Team, 4).as_nanos(), 700);
    assert_eq!(r.cost(DispatchKind::InPool, 4).as_nanos(), 780);
    assert_eq!(r.cost(DispatchKind::Outside, 6).as_nanos(), 410 * 3);
    assert_eq!(r.cost(DispatchKind::Team, 7).as_nanos(), (900 + 980) / 2);
    let a = DispatchCosts::for_class(HostClass::Aarch64Apple);
    assert_eq!(a.cost(DispatchKind::InPool, 4).as_nanos(), 11000);
    assert_eq!(a.min_cost(DispatchKind::Team).as_nanos(), 1400);
    let g = DispatchCosts::for_class(HostClass::Generic);
    assert_eq!(g.cost(DispatchKind::Team, 3).as_nanos(), 3000);
    assert_eq!(g.cost(DispatchKind::InPool, 2).as_nanos(), 15000);
    assert_eq!(g.cost(DispatchKind::Outside, 4).as_nanos(), 40000);
    assert_eq!(g.cost(DispatchKind::Outside, 8).as_nanos(), 80000);
}

#[test]
fn rows_are_validated_and_replaceable() {
    assert_eq!(WidthCosts::new(&[]), Err(CostsError::Empty));
    assert!(matches!(
        WidthCosts::new(&[(2, 1), (2, 2)]),
        Err(CostsError::Unordered { width: 2 })
    ));
    assert!(matches!(
        WidthCosts::new(&[(0, 1)]),
        Err(CostsError::Unordered { width: 0 })
    ));
    let many: Vec<(u16, u32)> = (1..=17).map(|w| (w, 1)).collect();
    assert_eq!(WidthCosts::new(&many), Err(CostsError::TooMany(17)));
    let row = WidthCosts::new(&[(2, 500), (16, 2000)]).unwrap();
    assert_eq!(row.at(1).as_nanos(), 500);
    assert_eq!(row.at(9).as_nanos(), 500 + 1500 * 7 / 14);
    let c = DispatchCosts::for_class(HostClass::Generic).with(DispatchKind::Team, row);
    assert_eq!(c.cost(DispatchKind::Team, 16).as_nanos(), 2000);
    assert_eq!(c.cost(DispatchKind::InPool, 16).as_nanos(), 15000 * 4);
    assert_eq!(c.row(DispatchKind::Team), &row);
}

#[test]
fn classes_have_names_and_one_is_detected() {
    for name in [
        "x86_64-avx512",
        "x86_64-avx2",
        "x86_64-scalar",
        "aarch64-apple",
        "aarch64",
        "generic",
    ] {
        assert_eq!(HostClass::from_name(name).unwrap().name(), name);
    }
    assert_eq!(HostClass::from_name("sparc"), None);
    let c = HostClass::detect();
    assert_eq!(DispatchCosts::host_default(), DispatchCosts::for_class(c));
}

fn ns(x: u64) -> Duration {
    Duration::from_nanos(x)
}

#[test]
fn choose_is_the_rule_without_split_costs() {
    let budget = NonZeroUsize::new(8).unwrap();
    let cost = |k: NonZeroUsize| ns(500 * k.get() as u64);
    for est in [100u64, 2_000, 3_000, 10_000, 100_000, 10_000_000] {
        let (w, v) = choose(ns(est), 1, budget, &SplitCurve::FREE, cost);
        assert_eq!(w, width_for_by(ns(est), 1, budget, cost), "{est}");
        assert_eq!(v == Verdict::Paid, w.get() > 1, "{est}");
    }
}

#[test]
fn split_costs_raise_the_bar() {
    let two = NonZeroUsize::new(2).unwrap();
    let d = |_: NonZeroUsize| ns(500);
    let split = |overhead_ns, efficiency| {
        SplitCurve::single(
            SplitCost {
                overhead_ns,
                efficiency,
            },
            0.0,
        )
    };
    // 10 us pays for a 0.5 us dispatch and halves to 5.5 us ...
    assert_eq!(
        choose(us(10.0), 1, two, &SplitCurve::FREE, d),
        (two, Verdict::Paid)
    );
    // ... still with 3 us of overhead per section (8.5 us) ...
    assert_eq!(
        choose(us(10.0), 1, two, &split(3000.0, 1.0), d).1,
        Verdict::Paid
    );
    // ... not with 6 us (11.5 us), nor at half efficiency (10.5 us) ...
    for s in [split(6000.0, 1.0), split(0.0, 0.5)] {
        assert_eq!(
            choose(us(10.0), 1, two, &s, d),
            (NonZeroUsize::MIN, Verdict::NotFaster)
        );
    }
    // ... and 1 us does not pay its dispatch at all.
    assert_eq!(
        choose(us(1.0), 1, two, &SplitCurve::FREE, d).1,
        Verdict::NotPaid
    );
    // Sections count: ten sections of 6 us overhead against 100 us.
    assert_eq!(
        choose(us(100.0), 10, two, &split(6000.0, 1.0), d).1,
        Verdict::NotFaster
    );
    assert_eq!(
        choose(us(1000.0), 10, two, &split(6000.0, 1.0), d).1,
        Verdict::Paid
    );
    // An invalid split is ignored rather than trusted.
    assert_eq!(
        choose(us(10.0), 1, two, &split(f64::NAN, 7.0), d).1,
        Verdict::Paid
    );
}

/// The split cost is read at each width weighed: a team of 16 whose efficiency falls beyond 4
/// runs the region at 4, where the width-2 efficiency held at every width took all 16.
#[test]
fn a_falling_efficiency_narrows_the_width() {
    let sixteen = NonZeroUsize::new(16).unwrap();
    let d = |k: NonZeroUsize| ns(200 * k.get() as u64);
    let at = |overhead_ns, efficiency| SplitCost {
        overhead_ns,
        efficiency,
    };
    let falling = SplitCurve::new(
        &[
            (2, at(1000.0, 0.9)),
            (4, at(1000.0, 0.85)),
            (8, at(1000.0, 0.3)),
        ],
        0.0,
    )
    .unwrap();
    // Least squares of ln efficiency on ln k over the three anchors.
    assert!(
        (falling.decay() - 0.792).abs() < 1e-3,
        "{}",
        falling.decay()
    );
    let est = us(500.0);
    assert_eq!(
        choose(est, 4, sixteen, &falling, d),
        (NonZeroUsize::new(4).unwrap(), Verdict::Paid)
    );
    let held = SplitCurve::single(at(1000.0, 0.9), 0.0);
    assert_eq!(choose(est, 4, sixteen, &held, d), (sixteen, Verdict::Paid));
    // With the built-in decay of a family measured to fall slowly (GEMM, 0.2) the whole
    // team still wins a large product; with Cholesky's (0.7), a narrower width.
    let gemm = SplitCurve::single(at(195.0, 0.949), Family::Gemm.decay());
    assert_eq!(choose(us(5000.0), 1, sixteen, &gemm, d).0, sixteen);
    let chol = SplitCurve::single(at(1654.0, 0.847), Family::Cholesky.decay());
    let w = choose(us(500.0), 16, sixteen, &chol, d).0.get();
    assert!((2..16).contains(&w), "{w}");
}

#[test]
fn model_thresholds_layer() {
    let env = Thresholds::parse("lu=never,gemm=fixed:10", Source::Environment).unwrap();
    let pool = Thresholds::new().with(Family::Gemm, ParThreshold::Derived, Source::Pool);
    let m = Model::for_class(HostClass::Generic, rows)
        .with_thresholds(env)
        .with_thresholds(pool);
    assert_eq!(
        m.threshold(Family::Gemm),
        (ParThreshold::Derived, Source::Pool)
    );
    assert_eq!(
        m.threshold(Family::LuPartial),
        (ParThreshold::Never, Source::Environment)
    );
    assert_eq!(
        m.threshold(Family::Cholesky),
        (ParThreshold::Derived, Source::Derived)
    );
    assert_eq!(
        "fixed:1_000".parse::<ParThreshold>(),
        Ok(ParThreshold::Fixed(1000))
    );
    assert_eq!(ParThreshold::Fixed(7).to_string(), "fixed:7");
    assert!("fixed:".parse::<ParThreshold>().is_err());
    assert_eq!(Family::from_name("lu_partial"), Some(Family::LuPartial));
    assert_eq!(Family::from_name("trsm"), Some(Family::TriangularSolve));
    for f in Family::ALL {
        assert_eq!(Family::from_name(f.name()), Some(f));
        assert_eq!(Family::ALL[f.index()], f);
    }
}

/// The vendor read by `cpuid` is the one Linux reports.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[test]
fn vendor_matches_the_kernel() {
    let info = std::fs::read_to_string("/proc/cpuinfo").expect("cpuinfo");
    let id = info
        .lines()
        .find_map(|l| l.strip_prefix("vendor_id"))
        .map(|v| v.trim_start_matches([' ', '\t', ':']).trim())
        .expect("vendor_id");
    let want = match id {
        "AuthenticAMD" => CpuVendor::Amd,
        "GenuineIntel" => CpuVendor::Intel,
        _ => CpuVendor::Other,
    };
    assert_eq!(CpuVendor::detect(), want, "vendor_id {id}");
}
