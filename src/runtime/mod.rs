//! The machinery under the public handles, in layers: primitives (`sync`, `cpus`, `parker`,
//! `wait`, `counters`); the two protocols (`plain`: batches on a pool's queue; `team`: slots,
//! sections and their dispatch); and the workers that serve them and the callers' waits (`worker`: a
//! pool's shared state; `serve`: the worker loop; `idle`, `join`, `reserve`, `ledger`). Nothing here is public; imports run from the handles down, and within
//! this folder from the workers to the protocols to the primitives.

pub mod counters;
pub(crate) mod parker;
pub(crate) mod plain;
pub(crate) mod sync;
pub(crate) mod team;
pub(crate) mod wait;

#[cfg(not(loom))]
pub(crate) mod cpus;
#[cfg(not(loom))]
pub(crate) mod idle;
#[cfg(not(loom))]
pub(crate) mod join;
#[cfg(not(loom))]
pub(crate) mod ledger;
#[cfg(not(loom))]
pub(crate) mod reserve;
#[cfg(not(loom))]
pub(crate) mod serve;
#[cfg(not(loom))]
pub(crate) mod worker;
