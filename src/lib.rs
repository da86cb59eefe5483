//! teamalg: linear algebra (GEMM, triangular solve, LU, Cholesky, Householder QR and least
//! squares, the SVD, the self-adjoint eigendecomposition, sparse products) on low-latency
//! thread teams.
//!
//! Its parts:
//! - the executor: pools of teamalg's own worker threads, a process-wide reserve of idle
//!   workers (so a pool built per call starts no thread), budget tokens that make nested
//!   parallelism conserve threads, hot teams whose sections cost well under a microsecond,
//!   and libgomp-style staged waits (spin, yield, sleep);
//! - [`share`], a process's share of its node when several run on it (MPI ranks, batch
//!   jobs), so that ranks times width stays within the cores;
//! - [`linalg`], the facade: faer-like calls that take the executor last, check their input
//!   and decide per region, with the cost model of [`gates`], whether going parallel pays.
//!
//! The SVD ([`linalg::Svd`]) runs teamalg's own path ([`kernels::svd`]: its
//! bidiagonalization on the team, then with vectors its bidiagonal divide and conquer and
//! back-transformations on the team, for values only dqds) for values only from order 128,
//! with vectors from 256 up to twice as long as wide, and faer's serial SVD where that
//! measured faster (smaller orders, more elongated shapes with vectors); the self-adjoint EVD
//! ([`linalg::SelfAdjointEigen`]) runs its tridiagonalization, its tridiagonal solver (split
//! once, with vectors) and its back-transformation on the team (`docs/svd.md`).
//!
//! ```
//! use teamalg::{Exec, Pool};
//!
//! let pool = Pool::builder().threads(2).build()?;
//! let mut out = vec![0u64; 1000];
//! let chunks: Vec<&mut [u64]> = out.chunks_mut(250).collect();
//! let cells: Vec<std::sync::Mutex<&mut [u64]>> = chunks.into_iter().map(std::sync::Mutex::new).collect();
//! Exec::new(&pool, 2)?.fork(cells.len(), |i, _child| {
//!     let mut c = cells[i].lock().unwrap();
//!     for (j, x) in c.iter_mut().enumerate() {
//!         *x = (i * 250 + j) as u64;
//!     }
//! });
//! drop(cells);
//! assert_eq!(out[999], 999);
//! # Ok::<(), teamalg::Error>(())
//! ```
//!
//! The design records are `docs/executor.md` (the executor and the layout of `src/`),
//! `docs/waiting.md` (teams and waits), `docs/gates.md` and `docs/kernels.md`.

#![cfg_attr(loom, allow(dead_code, unused_imports, missing_debug_implementations))]

/// Items that the loom models do not build (they test the protocols alone).
macro_rules! not_under_loom {
    ($($item:item)*) => {
        $(#[cfg(not(loom))] $item)*
    };
}

mod runtime;

not_under_loom! {
    mod environment;
    mod error;
    mod exec;
    mod executor;
    pub mod linalg;
    mod pool;
    pub mod share;
    mod team;
    mod with_team;
}

/// The staged waits' defaults and their counters.
pub mod wait {
    pub use crate::runtime::counters;
    pub use crate::runtime::wait::{DEFAULT_SPIN_POLLS, THROTTLED_SPIN_POLLS, YIELD_POLLS};
}

/// The contention signal's sources, read directly: for benchmarks of what a read costs, and
/// for programs that want to see what the gates see (`docs/gates.md`, "Contention").
#[cfg(not(loom))]
pub mod signal {
    pub use crate::runtime::contention::{Sources, read_run_queue, read_sources};
}

/// The process-wide reserve of idle workers that pools lease their threads from.
#[cfg(not(loom))]
pub mod reserve {
    pub use crate::runtime::reserve::{idle_workers, spawned_workers, trim, trim_to};
}

/// The slot ledger (feature `ledger`): live tasks per root token, for the slot-conservation
/// tests; `Exec::ledger_root` names a token's root.
#[cfg(all(feature = "ledger", not(loom)))]
pub mod ledger {
    pub use crate::runtime::ledger::{live, max_live};
}

#[cfg(not(loom))]
pub use environment::{PROFILE_VAR, THRESHOLDS_VAR};
#[cfg(not(loom))]
pub use error::{Error, Refused};
#[cfg(not(loom))]
pub use exec::Exec;
/// faer, the matrices and serial kernels the facade takes and wraps (the version teamalg is
/// built with).
#[cfg(not(loom))]
pub use faer;
#[cfg(not(loom))]
pub use pool::{Pool, PoolBuilder};
#[cfg(not(loom))]
pub use reserve::spawned_workers;
#[cfg(not(loom))]
pub use runtime::cpus::available_cpus;
pub use runtime::team::section::Participant;
#[cfg(not(loom))]
pub use team::{IntoTeamError, Team, TeamExec};
/// The cost model (`teamalg-gates`): the rule, dispatch costs, rates, profiles.
pub use teamalg_gates as gates;
/// The kernels (`teamalg-kernels`) and their executor contract.
#[cfg(not(loom))]
pub use teamalg_kernels as kernels;
/// What runs a kernel: `&Team`, a token (`Exec`, `TeamExec`) or `Exec::serial()`.
#[cfg(not(loom))]
pub use teamalg_kernels::par::Executor;
#[cfg(not(loom))]
pub use with_team::with_team;

/// The protocol types, exposed for the loom models only.
#[cfg(loom)]
#[doc(hidden)]
pub mod loom_api {
    pub use crate::runtime::parker::Parker;
    pub use crate::runtime::plain::fork::Fork;
    pub use crate::runtime::plain::queue::Queue;
    pub use crate::runtime::team::section::{Participant, Roster, Section};
    pub use crate::runtime::team::slot::{Slot, wake_for_queue};
}

/// The README's examples, compiled and run as doctests so they stay true.
#[cfg(all(doctest, not(loom)))]
#[doc = include_str!("../README.md")]
pub struct ReadmeExamples;
