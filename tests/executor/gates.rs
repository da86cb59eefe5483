//! The executor's gate entry points: token kinds, dispatch costs, profiles.

use std::time::Duration;

use teamalg::gates::{
    DispatchCosts, DispatchKind, Fingerprint, HostClass, HostProfile, ProfileError, WidthCosts,
};
use teamalg::{Exec, Pool};

fn costs() -> DispatchCosts {
    DispatchCosts::new(
        WidthCosts::new(&[(2, 1_000)]).unwrap(),
        WidthCosts::new(&[(2, 5_000)]).unwrap(),
        WidthCosts::new(&[(2, 20_000)]).unwrap(),
    )
}

fn us(x: u64) -> Duration {
    Duration::from_micros(x)
}

#[test]
fn the_kind_is_read_from_the_token_and_the_thread() {
    // The model alone (on a busy test machine the live view would add lateness).
    let pool = Pool::builder()
        .threads(2)
        .dispatch_costs(costs())
        .live_view(false)
        .build()
        .unwrap();
    assert_eq!(pool.dispatch_costs(), costs());
    let outside = Exec::new(&pool, 2).unwrap();
    assert_eq!(outside.kind(), Some(DispatchKind::Outside));
    assert_eq!(outside.dispatch_cost(2), us(20));
    assert_eq!(outside.dispatch_cost(1), Duration::MAX);
    let inside = Exec::new(&pool, 2)
        .unwrap()
        .install(|e| (e.kind(), e.dispatch_cost(2)));
    assert_eq!(inside, (Some(DispatchKind::InPool), us(5)));
    let serial = Exec::serial();
    assert_eq!(serial.kind(), None);
    assert_eq!(serial.dispatch_cost(2), Duration::MAX);
    assert_eq!(serial.width_for(us(1_000_000), 1).get(), 1);
    let team = pool.into_team(2).unwrap();
    let t = team.exec(2);
    assert_eq!(t.kind(), Some(DispatchKind::Team));
    assert_eq!(t.dispatch_cost(2), us(1));
    t.team(|te| {
        assert_eq!(te.dispatch_cost(2), us(1));
        // The team's 1 us section: 2 us do not pay it three times; 203 us pay it and a
        // sleeping member's 100 us wake (see the next test), so the member's state, which
        // this test does not control, does not matter.
        assert!(te.pays(us(203), 1, 2) && !te.pays(us(2), 1, 2));
        assert_eq!(te.width_for(us(203), 1).get(), 2);
        assert_eq!(te.width_for(us(2), 1).get(), 1);
    })
    .unwrap();
}

/// `Exec::pays` weighs a sleeping member's wake as the kernels' gate does (one decision,
/// `teamalg_gates::decide`): a region pays at two when `100 + 1 + S / 2 < S`.
#[test]
fn pays_weighs_the_wake_of_a_sleeping_member() {
    let team = Pool::builder()
        .threads(2)
        .dispatch_costs(costs())
        .spin_polls(0)
        .live_view(false)
        .build()
        .unwrap()
        .into_team(2)
        .unwrap();
    // A member that never spins has gone to sleep well within this.
    std::thread::sleep(Duration::from_millis(50));
    team.exec(2)
        .team(|te| {
            assert!(te.pays(us(203), 1, 2), "the wake and the section are paid");
            assert!(
                !te.pays(us(202), 1, 2),
                "a region that pays its section but not the wake"
            );
            assert_eq!(te.width_for(us(202), 1).get(), 1);
        })
        .unwrap();
}

#[test]
fn pays_and_width_for_use_the_tokens_own_cost() {
    // No live view: the decisions below are the model's alone, whatever else runs.
    let pool = Pool::builder()
        .threads(2)
        .dispatch_costs(costs())
        .live_view(false)
        .build()
        .unwrap();
    let e = Exec::new(&pool, 2).unwrap();
    // Outside: 20 us per section; 60 us pays, 59 does not.
    assert!(e.pays(us(60), 1, 2));
    assert!(!e.pays(us(59), 1, 2));
    assert_eq!(e.width_for(us(59), 1).get(), 1);
    assert_eq!(e.width_for(us(60), 1).get(), 2);
    assert_eq!(e.width_for(us(600), 10).get(), 2);
    assert_eq!(e.width_for(us(599), 10).get(), 1);
    // The same region pays from inside the pool (5 us).
    let w = Exec::new(&pool, 2)
        .unwrap()
        .install(|e| e.width_for(us(20), 1).get());
    assert_eq!(w, 2);
    assert_eq!(
        Exec::new(&pool, 1)
            .unwrap()
            .width_for(us(1_000_000), 1)
            .get(),
        1
    );
}

#[test]
fn a_pool_reads_a_profile_of_this_host_and_refuses_others() {
    let dir = std::env::temp_dir();
    let mine = HostProfile {
        fingerprint: Fingerprint::current(),
        costs: costs(),
        rates: Vec::new(),
        splits: Vec::new(),
        load: None,
    };
    let path = dir.join(format!("teamalg-gates-{}.toml", std::process::id()));
    mine.save(&path).unwrap();
    let pool = Pool::builder()
        .threads(2)
        .profile(&path)
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(pool.dispatch_costs(), costs());
    // Another machine's profile.
    let mut foreign = mine.clone();
    foreign.fingerprint.cores += 1;
    foreign.save(&path).unwrap();
    let e = Pool::builder().profile(&path).unwrap_err();
    assert!(matches!(e, ProfileError::ForeignHost { .. }), "{e}");
    // Malformed and missing files.
    std::fs::write(&path, "team = [[2,\n").unwrap();
    assert!(matches!(
        Pool::builder().profile(&path).unwrap_err(),
        ProfileError::Malformed { line: 1, .. }
    ));
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(
        Pool::builder().profile(&path).unwrap_err(),
        ProfileError::Io { .. }
    ));
    // Without a profile a pool uses its class row.
    let plain = Pool::builder().threads(2).build().unwrap();
    if std::env::var_os(teamalg::PROFILE_VAR).is_none() {
        assert_eq!(
            plain.dispatch_costs(),
            DispatchCosts::for_class(HostClass::detect())
        );
    }
}
