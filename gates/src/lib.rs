//! The cost model of teamalg.
//!
//! Every parallel region of teamalg asks one rule before it goes parallel:
//!
//! ```text
//! estimate >= PAYS * sections * D(kind, width)
//! ```
//!
//! where `estimate` is the region's serial time (units of work times the kernel family's serial
//! [`Rate`] at the call's size, a [`RateCurve`]), `sections` the dispatches it really makes, and
//! `D` the measured cost of one section for the kind of token ([`DispatchKind`]) at that width
//! ([`DispatchCosts`]). [`width_for_by`] picks the width that minimises
//! `sections * D(k) + estimate / k` among those that pay; [`choose`] adds the kernel family's
//! measured split cost at each width ([`SplitCurve`] of [`SplitCost`]: overhead per section,
//! efficiency) and goes parallel only where the model says the call finishes sooner.
//!
//! A [`Model`] holds what a pool's gates read: dispatch costs, rate curves, split costs and the
//! [`Thresholds`] set by a pool or the environment. [`HostProfile`] is its file form, written by
//! `teamalg calibrate`; [`trace`] records every decision with its reason. The design record is
//! `docs/gates.md`.
//!
//! This crate has no threads and no heavy dependencies, so it can be used and tested on its own.
//!
//! ```
//! use std::num::NonZeroUsize;
//! use std::time::Duration;
//! use teamalg_gates::{pays_at, width_for_by, DispatchCosts, DispatchKind, HostClass};
//!
//! let costs = DispatchCosts::for_class(HostClass::X86_64Avx512);
//! let d = costs.cost(DispatchKind::Team, 2); // 0.28 us on that class
//! assert!(pays_at(Duration::from_micros(10), 1, d));
//! assert!(!pays_at(Duration::from_nanos(500), 1, d));
//! let w = width_for_by(Duration::from_millis(1), 1, NonZeroUsize::new(8).unwrap(), |k| {
//!     costs.cost(DispatchKind::Team, k.get())
//! });
//! assert_eq!(w.get(), 8);
//! ```

pub mod contention;
mod costs;
mod family;
mod model;
mod profile;
mod rate;
mod rows;
mod rule;
mod scalar;
mod split;
mod thresholds;
pub mod trace;

pub use contention::{Contention, Signal};
pub use costs::{
    CostsError, CpuVendor, DispatchCosts, DispatchKind, HostClass, WidthCosts, MAX_ANCHORS,
};
pub use family::{Family, FAMILIES};
pub use model::Model;
pub use profile::{Fingerprint, HostProfile, ProfileError, SeenLoad};
pub use rate::{Rate, RateCurve, MAX_RATE_ANCHORS};
pub use rows::{builtin_rate, builtin_split, Anchors, AppleRate, Catalogue, Rows, SplitRow};
pub use rule::{choose, decide, gain, pays_at, width_for_by, Ask, Verdict, PAYS};
pub use scalar::{Scalar, ScalarKind};
pub use split::{SplitCost, SplitCurve, SplitCurveError, Splits, MAX_SPLIT_WIDTHS};
pub use thresholds::{ParThreshold, Source, Thresholds, ThresholdsError};
