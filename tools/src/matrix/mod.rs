//! The load matrix of `kernels --matrix` (`docs/perf/busy.md`): the load conditions it runs
//! the table under and the goal each sets (`conditions`), and the page written from the runs'
//! CSV rows (`page`). In the library rather than the program, so that `cargo test` runs their
//! tests without building the benchmark programs.

pub mod conditions;
pub mod page;
