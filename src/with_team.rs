//! `with_team`: a pool and a team built for one call and dropped after it.

use crate::error::Error;
use crate::pool::Pool;
use crate::team::Team;

/// Runs `f` on a team of `width` built for this call (a pool of `width` threads with the default
/// settings, so its workers are leased from the process-wide reserve and no thread starts once
/// the reserve holds enough), then drops team and pool, returning `f`'s result. The helper of
/// the same name users know from faer's issue tracker; `examples/acquire_probe.rs` times it
/// beside a held team, a team reserved per call from a held pool and a pool built per call.
/// Hold a team instead where calls repeat on one thread.
///
/// ```
/// use faer::{Accum, Mat};
/// use teamalg::linalg;
///
/// let a = Mat::<f64>::ones(256, 256);
/// let mut c = Mat::<f64>::zeros(256, 256);
/// teamalg::with_team(2, |team| {
///     linalg::matmul(c.as_mut(), Accum::Replace, a.as_ref(), a.as_ref(), 1.0, team)
/// })??;
/// assert_eq!(c[(0, 0)], 256.0);
/// assert!(matches!(teamalg::with_team(0, |_| ()), Err(teamalg::Error::ZeroThreads)));
///
/// // The same by hand, with `?` on the team's error:
/// fn by_hand() -> Result<usize, teamalg::Error> {
///     let team = teamalg::Pool::builder().threads(2).build()?.into_team(2)?;
///     Ok(team.width())
/// }
/// assert_eq!(by_hand()?, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// Those of [`PoolBuilder::build`](crate::PoolBuilder::build) (`ZeroThreads` for width 0, a
/// bad `TEAMALG_THRESHOLDS` or `TEAMALG_PROFILE`) and of [`Pool::into_team`]
/// (`MembersBusy` when the members cannot be reserved in time).
pub fn with_team<R>(width: usize, f: impl FnOnce(&Team) -> R) -> Result<R, Error> {
    let pool = Pool::builder().threads(width).build()?;
    let team = pool.into_team(width)?;
    Ok(f(&team))
}
