//! The environment: `TEAMALG_PROFILE` names a profile, `TEAMALG_THRESHOLDS` sets thresholds;
//! a bad value of either is a typed error from `build`, and the precedence is call over pool
//! over environment over derived. One test in its own binary: it sets process-wide variables.

use faer::{Accum, Mat};
use teamalg::gates::trace::Reason;
use teamalg::gates::{
    DispatchCosts, DispatchKind, Family, Fingerprint, HostClass, HostProfile, ParThreshold, Source,
    WidthCosts, trace,
};
use teamalg::{Error, Pool, linalg};

/// The decision of one 256 x 256 GEMM on a team of two built by `builder`, with `options`.
fn gemm_decision(pool: Pool, options: &linalg::Options) -> trace::Decision {
    let team = pool.into_team(2).map_err(|e| e.error).unwrap();
    let a = Mat::<f64>::ones(256, 256);
    let mut c = Mat::<f64>::zeros(256, 256);
    let (r, seen) =
        trace::collect(|| linalg::matmul_with(&mut c, Accum::Replace, &a, &a, 1.0, &team, options));
    r.unwrap();
    assert_eq!(seen.len(), 1, "{seen}");
    seen[0].clone()
}

#[test]
fn the_environment_sets_profile_and_thresholds_under_pool_and_call() {
    // --- TEAMALG_PROFILE ---
    let path = std::env::temp_dir().join(format!("teamalg-env-{}.toml", std::process::id()));
    let costs = DispatchCosts::for_class(HostClass::Generic)
        .with(DispatchKind::Team, WidthCosts::new(&[(2, 777)]).unwrap());
    HostProfile {
        fingerprint: Fingerprint::current(),
        costs,
        rates: Vec::new(),
        splits: Vec::new(),
        load: None,
    }
    .save(&path)
    .unwrap();
    // SAFETY: (1) no other thread touches the environment now: this binary holds this one
    // test, libtest's main thread only waits for it, and the workers of the pools the test
    // builds read no variable (a pool reads the environment once, in `build`, on this thread).
    unsafe { std::env::set_var(teamalg::PROFILE_VAR, &path) };
    let pool = Pool::builder().threads(1).build().unwrap();
    assert_eq!(pool.dispatch_costs(), costs);
    // Malformed: a typed error that names the variable and the line, no pool.
    std::fs::write(&path, "this is not a profile\n").unwrap();
    let e = Pool::builder().threads(1).build().unwrap_err();
    assert!(matches!(e, Error::Profile(_)), "{e}");
    assert!(
        e.to_string()
            .starts_with("TEAMALG_PROFILE: malformed host profile, line 1"),
        "{e}"
    );
    std::fs::remove_file(&path).unwrap();
    // SAFETY: as (1).
    unsafe { std::env::remove_var(teamalg::PROFILE_VAR) };

    // --- derived: nothing set, a 256 GEMM on two pays ---
    // (The model alone: on a busy test machine the live view would add what sections lose.)
    let plain = || Pool::builder().threads(2).live_view(false).build().unwrap();
    let none = linalg::Options::new();
    let d = gemm_decision(plain(), &none);
    assert_eq!(
        (d.source, d.reason, d.width),
        (Source::Derived, Reason::Paid, 2)
    );

    // --- environment over derived ---
    // SAFETY: as (1).
    unsafe { std::env::set_var(teamalg::THRESHOLDS_VAR, "gemm=never, lu=fixed:1000") };
    let d = gemm_decision(plain(), &none);
    assert_eq!(
        (d.source, d.reason, d.width),
        (Source::Environment, Reason::Never, 1)
    );
    assert_eq!(
        plain().model().threshold(Family::LuPartial),
        (ParThreshold::Fixed(1000), Source::Environment)
    );

    // --- pool over environment ---
    let pool = Pool::builder()
        .threads(2)
        .threshold(Family::Gemm, ParThreshold::Fixed(1_000))
        .build()
        .unwrap();
    let d = gemm_decision(pool, &none);
    assert_eq!(
        (d.source, d.reason, d.width),
        (Source::Pool, Reason::FixedAbove, 2)
    );

    // --- call over pool ---
    let pool = Pool::builder()
        .threads(2)
        .threshold(Family::Gemm, ParThreshold::Fixed(1_000))
        .build()
        .unwrap();
    let call = linalg::Options::new().threshold(Family::Gemm, ParThreshold::Fixed(u64::MAX));
    let d = gemm_decision(pool, &call);
    assert_eq!(
        (d.source, d.reason, d.width),
        (Source::Call, Reason::FixedBelow, 1)
    );
    // A call may also ask for the rule back.
    let call = linalg::Options::new().threshold(Family::Gemm, ParThreshold::Derived);
    let d = gemm_decision(plain(), &call);
    assert_eq!(
        (d.source, d.reason, d.width),
        (Source::Call, Reason::Paid, 2)
    );

    // --- a malformed value: a clear, typed error ---
    for (bad, says) in [
        ("gemm=sometimes", "\"sometimes\" is not a threshold"),
        (
            "lu=fixed:many",
            "\"many\" in \"fixed:many\" is not a whole number",
        ),
        ("svd=never", "unknown family \"svd\""),
        ("gemm", "expected family=threshold"),
        ("gemm=never,gemm=derived", "gemm is named twice"),
    ] {
        // SAFETY: as (1).
        unsafe { std::env::set_var(teamalg::THRESHOLDS_VAR, bad) };
        let e = Pool::builder().threads(1).build().unwrap_err();
        assert!(matches!(e, Error::Thresholds(_)), "{bad}: {e}");
        let text = e.to_string();
        assert!(
            text.starts_with("TEAMALG_THRESHOLDS: bad threshold"),
            "{text}"
        );
        assert!(text.contains(says), "{bad}: {text}");
    }
    // SAFETY: as (1).
    unsafe { std::env::remove_var(teamalg::THRESHOLDS_VAR) };
    Pool::builder().threads(1).build().unwrap();
}
