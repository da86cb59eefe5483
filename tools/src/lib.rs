//! What the `teamalg` program and the benchmark programs (`src/bin/`: `kernels`, `batch`,
//! `wait_scenarios`, `entry`, `perf-page`, `plots`) share: timing helpers and the arms they time
//! (`tour`), medians and percentiles (`stats`), the CSV files (`csv`), the busy processes a
//! benchmark starts beside itself (`load`), the load matrix's conditions and page (`matrix`), the
//! perf front page (`perf_page`), the plots (`plots`), and the calibration that writes a host
//! profile (`calibrate`). Not published: library users get none of it.

pub mod anchor;
pub mod calibrate;
pub mod csv;
pub mod load;
pub mod matrix;
pub mod perf_page;
pub mod plots;
pub mod seen_load;
pub mod sparse_problems;
pub mod stats;
pub mod tour;
