//! `TEAMALG_PROFILE`: a usable profile is read; a bad one warns and falls back to the class
//! row. Its own binary: it sets a process-wide environment variable.

use teamalg::gates::{DispatchCosts, Fingerprint, HostClass, HostProfile, WidthCosts};
use teamalg::Pool;

#[test]
fn the_environment_names_the_profile() {
    let path = std::env::temp_dir().join(format!("teamalg-env-{}.toml", std::process::id()));
    let costs = DispatchCosts::for_class(HostClass::Generic).with(
        teamalg::gates::DispatchKind::Team,
        WidthCosts::new(&[(2, 777)]).unwrap(),
    );
    HostProfile {
        fingerprint: Fingerprint::current(),
        costs,
        rates: Vec::new(),
    }
    .save(&path)
    .unwrap();
    std::env::set_var(teamalg::PROFILE_VAR, &path);
    let pool = Pool::builder().threads(1).build().unwrap();
    assert_eq!(pool.dispatch_costs(), costs);
    // Malformed: the pool still builds, with the class row (and a warning on stderr).
    std::fs::write(&path, "this is not a profile\n").unwrap();
    let pool = Pool::builder().threads(1).build().unwrap();
    assert_eq!(pool.dispatch_costs(), DispatchCosts::host_default());
    std::fs::remove_file(&path).unwrap();
    std::env::remove_var(teamalg::PROFILE_VAR);
}
