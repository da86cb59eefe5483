//! Measurements of the executor on this host, for the `teamalg` program (the benchmarks include
//! the files they need).

pub(crate) mod kernels;
pub(crate) mod measure;
pub(crate) mod plain;
pub(crate) mod team;
