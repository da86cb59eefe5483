//! The examples build with the tests (cargo builds every example for `cargo test`); the acquire
//! probe also runs here, in a short mode: few calls of the small kernels, every arm.

#[path = "../../examples/acquire_probe.rs"]
#[allow(dead_code, unreachable_pub, missing_docs)]
mod acquire_probe;

use acquire_probe::{ARMS, Config, run};

/// The tests take turns: the probe counts the threads the process starts.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn the_acquire_probe_runs_every_arm_in_a_short_mode() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
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

#[test]
fn with_team_nests_inside_a_team_section_and_from_threads() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    use faer::{Accum, Mat};
    use teamalg::linalg;
    let a = Mat::<f64>::ones(64, 64);
    let product = |team: &teamalg::Team| {
        let mut c = Mat::<f64>::zeros(64, 64);
        linalg::matmul(&mut c, Accum::Replace, &a, &a, 1.0, team).unwrap();
        c[(0, 0)]
    };
    // Inside another with_team's section: the inner call builds its own pool from the reserve.
    let outer = teamalg::with_team(2, |team| {
        team.exec(2)
            .team(|t| {
                t.run(|_| {
                    assert_eq!(teamalg::with_team(1, product).unwrap(), 64.0);
                })
            })
            .unwrap();
        product(team)
    })
    .unwrap();
    assert_eq!(outer, 64.0);
    // From several threads at once.
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| assert_eq!(teamalg::with_team(2, product).unwrap(), 64.0));
        }
    });
}

/// An example's binary, which `cargo test` builds beside the test binaries (in `examples/`
/// next to the tests' `deps/`): running it, rather than compiling its source into this binary
/// again, keeps the test build from compiling each example twice.
fn example(name: &str) -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps");
    dir.join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// The facade's examples run to the end: each checks its own results (and exits with an error
/// when a check fails).
#[test]
fn the_facade_examples_run() {
    for (name, args) in [
        ("least_squares", &[][..]),
        ("self_adjoint_eigen", &[]),
        ("sparse_products", &[]),
        ("symmetric_indefinite", &[]),
        ("general_eigen", &[]),
        ("sparse_solve", &["--side", "10"]),
    ] {
        let path = example(name);
        let out = std::process::Command::new(&path)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{}: {e} (cargo test builds the examples)", path.display()));
        assert!(
            out.status.success(),
            "{name}: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
