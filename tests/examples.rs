//! The examples build with the tests (cargo builds every example for `cargo test`); the acquire
//! probe also runs here, in a short mode: few calls of the small kernels, every arm.

#[path = "../examples/acquire_probe.rs"]
#[allow(dead_code, unreachable_pub, missing_docs)]
mod acquire_probe;

use acquire_probe::{run, Config, ARMS};

#[test]
fn the_acquire_probe_runs_every_arm_in_a_short_mode() {
    let cfg = Config {
        threads: 2,
        spin_polls: Some(1_000),
        acquire_timeout: None,
        calls: Some(5),
        arms: ARMS.iter().map(|s| s.to_string()).collect(),
        kernels: vec!["gemm128".into(), "lu512".into()],
    };
    let rows = run(&cfg).expect("the probe's pools and teams");
    assert_eq!(rows.len(), ARMS.len() * 2);
    for r in &rows {
        assert_eq!(r.calls, 5, "{r:?}");
        assert!(r.median <= r.p90 && r.p90 <= r.max, "{r:?}");
        assert!(r.median.as_nanos() > 0, "{r:?}");
    }
    // Pools built per call lease their workers from the reserve: after the first few, no
    // thread starts per call.
    let before = teamalg::spawned_workers();
    run(&cfg).expect("again");
    assert!(
        teamalg::spawned_workers() - before <= 2 * cfg.threads,
        "pools per call started threads: {} -> {}",
        before,
        teamalg::spawned_workers()
    );
}
