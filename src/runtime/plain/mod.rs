//! The protocol of plain tokens: a caller's fork of jobs on its pool's queue, which idle
//! workers attach to (`fork`, `queue`); the caller's join is `runtime/join.rs`. The loom
//! models are in `tests/executor/loom.rs`; the design record is `docs/executor.md`.

pub(crate) mod fork;
pub(crate) mod queue;
