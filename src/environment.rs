//! What a pool reads from the environment when its builder does not say: the host profile
//! (`TEAMALG_PROFILE`) and per-family thresholds (`TEAMALG_THRESHOLDS`).

use teamalg_gates::{HostProfile, Model, ProfileError, Source, Thresholds, ThresholdsError};

/// The model of a pool built without a profile: the profile named by `TEAMALG_PROFILE` when
/// set, else the built-in model of this host's class.
pub(crate) fn model_from_environment() -> Result<Model, ProfileError> {
    match std::env::var_os(PROFILE_VAR) {
        None => Ok(*teamalg_kernels::families::host_model()),
        Some(path) => HostProfile::load(&path).map(|p| p.model(teamalg_kernels::families::CATALOGUE)),
    }
}

/// The thresholds of `TEAMALG_THRESHOLDS`, none when unset.
pub(crate) fn thresholds_from_environment() -> Result<Thresholds, ThresholdsError> {
    match std::env::var(THRESHOLDS_VAR) {
        Err(std::env::VarError::NotPresent) => Ok(Thresholds::new()),
        Err(std::env::VarError::NotUnicode(v)) => Err(ThresholdsError {
            item: v.to_string_lossy().into_owned(),
            reason: "not valid UTF-8".into(),
        }),
        Ok(text) => Thresholds::parse(&text, Source::Environment),
    }
}

/// The environment variable naming a host profile for pools built without one.
pub const PROFILE_VAR: &str = "TEAMALG_PROFILE";

/// The environment variable with per-family thresholds for every pool, for example
/// `TEAMALG_THRESHOLDS=lu=never,gemm=fixed:100000` (see `Thresholds::parse`). A pool's
/// builder wins over it, a call's options over both.
pub const THRESHOLDS_VAR: &str = "TEAMALG_THRESHOLDS";
