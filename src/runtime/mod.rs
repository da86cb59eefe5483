//! The machinery under the public handles, in layers: primitives (`sync`, `cpus` and `quota`, `parker`,
//! `wait`, `counters`); the two protocols (`plain`: forks on a pool's queue; `team`: slots,
//! sections and their dispatch); and the workers that serve them and the callers' waits (`pool_shared`: a
//! pool's shared state; `serve`: the worker loop; `idle`, `join`, `reserve`, `ledger`). Nothing here is public; imports run from the handles down, and within
//! this folder from the workers to the protocols to the primitives.

pub mod counters;
pub(crate) mod parker;
pub(crate) mod plain;
pub(crate) mod sync;
pub(crate) mod team;
pub(crate) mod wait;

not_under_loom! {
    pub(crate) mod contention;
    pub(crate) mod cpus;
    pub(crate) mod idle;
    pub(crate) mod join;
    pub(crate) mod ledger;
    pub(crate) mod live;
    pub(crate) mod quota;
    pub(crate) mod reserve;
    pub(crate) mod serve;
    pub(crate) mod pool_shared;
}
