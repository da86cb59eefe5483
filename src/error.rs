//! The crate's error: what building a pool, minting a token or a linear-algebra call can
//! refuse, with `From` conversions from each part's own error so `?` works across them.

use std::fmt;

/// What can go wrong when building a pool, minting a token, forming a team, or in a
/// linear-algebra call: the crate's one error type. The parts' own errors convert into it
/// ([`LinalgError`](crate::linalg::LinalgError), [`Refused`], `IntoTeamError`,
/// `ThresholdsError`, `ProfileError`), so one `?` serves a function that does all of them.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// `Pool::builder().threads(0)`: a pool needs at least one thread.
    ZeroThreads,
    /// `Exec::new(&pool, 0)`: a token needs a budget of at least one slot.
    ZeroBudget,
    /// The operating system refused to start a worker thread.
    Spawn(std::io::Error),
    /// `into_team(0)`: a team needs at least its leader.
    ZeroWidth,
    /// `into_team(width)` with more participants than the pool has threads.
    TeamTooWide {
        /// The width asked for.
        width: usize,
        /// The pool's threads.
        threads: usize,
    },
    /// The members of a team could not be reserved within the pool's `acquire_timeout`.
    MembersBusy,
    /// `split` on a team that is already leading a section: another thread shares the handle,
    /// or the call is nested in one of the team's own sections.
    TeamBusy,
    /// `split(&sizes, ..)` with no sizes, a size of 0, or sizes summing to more than the width.
    InvalidSplit {
        /// How many children were asked for.
        sizes: usize,
        /// The sum of the sizes.
        total: usize,
        /// The width of the team being split.
        width: usize,
    },
    /// `TEAMALG_THRESHOLDS` does not parse: the pool is not built, rather than run with a
    /// setting its deployer did not mean.
    Thresholds(teamalg_gates::ThresholdsError),
    /// `TEAMALG_PROFILE` names a profile that cannot be used (missing, malformed, or
    /// measured on another machine).
    Profile(Box<teamalg_gates::ProfileError>),
    /// A linear-algebra call refused its input (`?` on a `linalg` call in a function that
    /// returns this error).
    Linalg(crate::linalg::LinalgError),
    /// An entry that needs co-scheduled participants declined to run.
    Refused(Refused),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::ZeroThreads => {
                f.write_str("a pool needs at least one thread (threads(0) given)")
            }
            Error::ZeroBudget => {
                f.write_str("a token needs a budget of at least one slot (0 given)")
            }
            Error::Spawn(e) => write!(f, "could not start a worker thread: {e}"),
            Error::ZeroWidth => f.write_str("a team needs a width of at least 1 (0 given)"),
            Error::TeamTooWide { width, threads } => write!(
                f,
                "a team of width {width} needs more workers than the pool's {threads} threads"
            ),
            Error::MembersBusy => {
                f.write_str("the team's members could not be reserved in time (workers busy)")
            }
            Error::TeamBusy => f.write_str(
                "the team is already leading a section (on another thread, or in a call this \
                 one is nested in)",
            ),
            Error::InvalidSplit {
                sizes,
                total,
                width,
            } => write!(
                f,
                "invalid split: {sizes} children of total size {total} on a team of width \
                 {width} (each size must be at least 1 and the total at most the width)"
            ),
            Error::Thresholds(e) => write!(f, "{}: {e}", crate::environment::THRESHOLDS_VAR),
            Error::Profile(e) => write!(f, "{}: {e}", crate::environment::PROFILE_VAR),
            Error::Linalg(e) => write!(f, "{e}"),
            Error::Refused(e) => write!(f, "{e}"),
        }
    }
}

impl From<teamalg_gates::ThresholdsError> for Error {
    fn from(e: teamalg_gates::ThresholdsError) -> Self {
        Error::Thresholds(e)
    }
}

impl From<teamalg_gates::ProfileError> for Error {
    fn from(e: teamalg_gates::ProfileError) -> Self {
        Error::Profile(Box::new(e))
    }
}

impl From<crate::linalg::LinalgError> for Error {
    fn from(e: crate::linalg::LinalgError) -> Self {
        Error::Linalg(e)
    }
}

impl From<Refused> for Error {
    fn from(e: Refused) -> Self {
        Error::Refused(e)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Spawn(e) => Some(e),
            Error::Thresholds(e) => Some(e),
            Error::Profile(e) => Some(e.as_ref()),
            Error::Linalg(e) => Some(e),
            Error::Refused(e) => Some(e),
            _ => None,
        }
    }
}

/// Why an entry that needs co-scheduled participants declined to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refused {
    /// The token is a fork child: its siblings may hold the workers it would need.
    Nested,
    /// The caller is a worker of the same pool: it cannot also wait for all the others.
    InPool,
    /// Not enough idle workers could be reserved at once right now.
    Busy,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refused::Nested => {
                "refused: a fork child cannot guarantee its participants run at once"
            }
            Refused::InPool => "refused: the caller is a worker of the same pool",
            Refused::Busy => "refused: not enough idle workers to run every participant at once",
        })
    }
}

impl std::error::Error for Refused {}
