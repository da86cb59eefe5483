//! The cost model of teamalg.
//!
//! This crate will own the single rule every parallel region of teamalg asks before it goes
//! parallel, `estimate >= PAYS * sections * D(kind, width)`, together with its data: the
//! measured dispatch cost `D` of a section for each kind of token (team, in pool, outside) and
//! width, by host class or from a calibrated host profile, and the serial rate of each kernel
//! family (nanoseconds per unit of work). It has no threads and no heavy dependencies, so it can
//! be used and tested on its own. See `docs/gates.md` once it lands.
