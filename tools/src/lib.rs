//! What the `teamalg` program and teamalg's benchmarks share: timing helpers and the arms they
//! time (`tour`), and the calibration that writes a host profile (`calibrate`). Not published:
//! library users get neither.

pub mod anchor;
pub mod calibrate;
pub mod csv;
pub mod perf_page;
pub mod plots;
pub mod seen_load;
pub mod stats;
pub mod tour;
