//! Host profiles: round trip, malformed and foreign files.

use teamalg_gates::{
    builtin_rate, builtin_split, AppleRate, CpuVendor, DispatchCosts, DispatchKind, Family,
    Fingerprint, HostClass, HostProfile, ParThreshold, ProfileError, Rate, RateCurve, Rows,
    SeenLoad, SplitCost, SplitCurve, Splits, WidthCosts,
};

/// The built-in rows the profiles fall back on: one flat rate and one split for every family
/// (the kernels' own rows are theirs, `teamalg_kernels::families`).
fn rows(_: Family) -> Rows {
    Rows::new(
        None,
        AppleRate::Measured(Rate::halved(0.5, 1.5)),
        Some((SplitCost::new(700.0, 0.9), SplitCost::new(900.0, 0.85))),
    )
}

fn sample() -> HostProfile {
    let fingerprint = Fingerprint {
        cpu_model: "Test CPU \"9000\"".into(),
        cores: 16,
        class: HostClass::X86_64Avx2,
    };
    let costs = DispatchCosts::for_class(HostClass::Generic)
        .with(
            DispatchKind::Team,
            WidthCosts::new(&[(2, 640), (8, 1500), (16, 2900)]).unwrap(),
        )
        .with(
            DispatchKind::Outside,
            WidthCosts::new(&[(2, 1100)]).unwrap(),
        );
    HostProfile {
        fingerprint,
        costs,
        rates: vec![
            (Family::Gemm, RateCurve::flat(Rate::halved(0.064, 0.257))),
            (
                Family::Cholesky,
                RateCurve::new(&[
                    (5000.0, Rate::halved(0.2, 0.5)),
                    (
                        3e6,
                        Rate {
                            real: 0.06,
                            cplx: 0.23,
                            real_single: 0.035,
                            cplx_single: 0.18,
                        },
                    ),
                ])
                .unwrap(),
            ),
        ],
        splits: vec![(
            Family::LuPartial,
            Splits {
                real: SplitCurve::new(&[(2, at(6200.0, 0.93)), (8, at(7000.0, 0.7))], 0.4).unwrap(),
                cplx: SplitCurve::new(&[(2, at(9000.0, 0.95)), (8, at(9500.0, 0.8))], 0.4).unwrap(),
            },
        )],
        load: Some(SeenLoad {
            others: 0.25,
            rejected: 0.03,
            unstable: 1,
        }),
    }
}

fn at(overhead_ns: f64, efficiency: f64) -> SplitCost {
    SplitCost {
        overhead_ns,
        efficiency,
    }
}

#[test]
fn a_profile_round_trips() {
    let p = sample();
    let text = p.to_text();
    assert!(
        text.contains("team = [[2, 640], [8, 1500], [16, 2900]]"),
        "{text}"
    );
    assert!(text.contains("load = [0.25, 0.03, 1]"), "{text}");
    let back = HostProfile::parse(&text).unwrap();
    assert_eq!(back, p);
    assert_eq!(back.costs.cost(DispatchKind::Team, 8).as_nanos(), 1500);
    assert_eq!(back.rate(Family::Gemm, rows).at(1e5).real, 0.064);
    assert_eq!(
        back.rate(Family::TridiagStep, rows),
        builtin_rate(Family::TridiagStep, HostClass::X86_64Avx2, rows)
    );
    assert_eq!(back.rate(Family::Cholesky, rows).at(1e9).cplx_single, 0.18);
    assert_eq!(back.rate(Family::Cholesky, rows).at(1.0).real, 0.2);
    assert!(
        text.contains("split.lu = [[2, 6200, 0.93, 9000, 0.95], [8, 7000, 0.7, 9500, 0.8]]"),
        "{text}"
    );
    assert_eq!(
        back.split(Family::LuPartial, rows).real.at(2).overhead_ns,
        6200.0
    );
    assert_eq!(
        back.split(Family::LuPartial, rows).real.at(8).efficiency,
        0.7
    );
    assert_eq!(
        back.split(Family::Gemm, rows),
        builtin_split(Family::Gemm, CpuVendor::detect(), rows)
    );
    // Its model: measured where measured, built in elsewhere, no thresholds.
    let m = back.model(rows);
    assert_eq!(m.curve(Family::Cholesky), back.rate(Family::Cholesky, rows));
    assert_eq!(m.split(Family::LuPartial).cplx.at(2).efficiency, 0.95);
    assert_eq!(m.costs, back.costs);
    assert_eq!(m.threshold(Family::Gemm).0, ParThreshold::Derived);
    // Through a file.
    let path = std::env::temp_dir().join(format!("teamalg-profile-{}.toml", std::process::id()));
    p.save(&path).unwrap();
    let parsed = HostProfile::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(parsed, p);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn malformed_profiles_say_where() {
    let good = sample().to_text();
    let bad_line = good.replace("cores = 16", "cores 16");
    match HostProfile::parse(&bad_line) {
        Err(ProfileError::Malformed { line: 3, .. }) => {}
        other => panic!("{other:?}"),
    }
    let bad_pairs = good.replace("[[2, 640], [8, 1500]", "[[2, 640], [8 1500]");
    assert!(matches!(
        HostProfile::parse(&bad_pairs),
        Err(ProfileError::Malformed { .. })
    ));
    let unordered = good.replace("[[2, 640], [8, 1500]", "[[8, 640], [2, 1500]");
    let e = HostProfile::parse(&unordered).unwrap_err();
    assert!(e.to_string().contains("increasing"), "{e}");
    let unknown = format!("{good}speed = 3\n");
    assert!(HostProfile::parse(&unknown)
        .unwrap_err()
        .to_string()
        .contains("unknown key"));
    let missing: String = good
        .lines()
        .filter(|l| !l.starts_with("outside"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(
        HostProfile::parse(&missing),
        Err(ProfileError::Missing("outside"))
    );
    // Two rates (f64, c64) are read with single precision at half.
    let two = good.replace(
        "[[1, 0.064000, 0.257000, 0.032000, 0.128500]]",
        "[0.064, 0.257]",
    );
    assert_ne!(two, good);
    assert_eq!(
        HostProfile::parse(&two)
            .unwrap()
            .rate(Family::Gemm, rows)
            .at(1e5)
            .real_single,
        0.032
    );
    let bad_rate = good.replace("[[1, 0.064000, 0.257000, 0.032000, 0.128500]]", "[0.064]");
    assert!(matches!(
        HostProfile::parse(&bad_rate),
        Err(ProfileError::Malformed { .. })
    ));
    // Four numbers alone (older profiles) are width 2, with the family's built-in decay.
    let lu = "[[2, 6200, 0.93, 9000, 0.95], [8, 7000, 0.7, 9500, 0.8]]";
    let flat = HostProfile::parse(&good.replace(lu, "[6200, 0.93, 9000, 0.95]")).unwrap();
    let real = flat.split(Family::LuPartial, rows).real;
    assert_eq!(
        real.anchors().collect::<Vec<_>>(),
        vec![(2, at(6200.0, 0.93))]
    );
    assert_eq!(real.decay(), Family::LuPartial.decay());
    // A split outside (0, 1] of efficiency, a negative overhead, a width below 2 or out of
    // order, or a short row is refused.
    for bad in [
        "[6200, 1.5, 9000, 0.95]",
        "[-1, 0.9, 9000, 0.95]",
        "[6200, 0.93]",
        "[[1, 6200, 0.93, 9000, 0.95]]",
        "[[2.5, 6200, 0.93, 9000, 0.95]]",
        "[[4, 6200, 0.93, 9000, 0.95], [2, 7000, 0.7, 9500, 0.8]]",
        "[[2, 6200, 0.93, 9000]]",
    ] {
        let text = good.replace(lu, bad);
        assert_ne!(text, good);
        assert!(
            matches!(
                HostProfile::parse(&text),
                Err(ProfileError::Malformed { .. })
            ),
            "{bad}"
        );
    }
    assert!(matches!(
        HostProfile::load("/nonexistent/teamalg.toml"),
        Err(ProfileError::Io { .. })
    ));
}

#[test]
fn a_foreign_profile_is_refused() {
    let p = sample();
    let here = Fingerprint::current();
    let e = p.check(&here).unwrap_err();
    assert!(matches!(e, ProfileError::ForeignHost { .. }));
    assert!(e.to_string().contains("not on this host"), "{e}");
    let mut mine = p.clone();
    mine.fingerprint = here.clone();
    assert_eq!(mine.check(&here), Ok(()));
}
