//! Host profiles: round trip, malformed and foreign files.

use teamalg_gates::{
    DispatchCosts, DispatchKind, Family, Fingerprint, HostClass, HostProfile, ProfileError, Rate,
    WidthCosts,
};

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
        rates: vec![(
            Family::Gemm,
            Rate {
                real: 0.064,
                cplx: 0.257,
            },
        )],
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
    let back = HostProfile::parse(&text).unwrap();
    assert_eq!(back, p);
    assert_eq!(back.costs.cost(DispatchKind::Team, 8).as_nanos(), 1500);
    assert_eq!(back.rate(Family::Gemm).real, 0.064);
    assert_eq!(back.rate(Family::Matvec), Family::Matvec.rate());
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
    let bad_rate = good.replace("[0.064, 0.257]", "[0.064]");
    assert!(matches!(
        HostProfile::parse(&bad_rate),
        Err(ProfileError::Malformed { .. })
    ));
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
