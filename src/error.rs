//! Errors of the executor.

use std::fmt;

/// What can go wrong when building a pool or minting a token.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// `Pool::builder().threads(0)`: a pool needs at least one thread.
    ZeroThreads,
    /// `Exec::new(&pool, 0)`: a token needs a budget of at least one slot.
    ZeroBudget,
    /// The operating system refused to start a worker thread.
    Spawn(std::io::Error),
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
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Spawn(e) => Some(e),
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
