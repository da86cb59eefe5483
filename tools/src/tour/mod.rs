//! Measurements of the executor on this host: the timing helpers (`measure`) and the arms the
//! `teamalg` program and the benchmarks time (`plain`, `team`, `kernels`).

pub mod kernels;
pub mod measure;
pub mod plain;
pub mod team;
