//! The protocol of teams: a worker's slot (publish, claim, sleep and wake: `slot`), a section
//! with its join, barrier and cancellation (`section`), and how a leader runs one on reserved
//! members (`dispatch`). Its loom models are in `tests/executor/loom.rs`; the design record is
//! `docs/waiting.md`.

#[cfg(not(loom))]
pub(crate) mod dispatch;
pub(crate) mod section;
pub(crate) mod slot;
