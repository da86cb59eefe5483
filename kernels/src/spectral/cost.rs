//! The cost of what the SVD and the EVD share: the Householder rank-one updates of their
//! back-transformations ([`Family::HouseholderRank1`]).
//!
//! [`Family::HouseholderRank1`]: teamalg_gates::Family::HouseholderRank1

use teamalg_gates::{AppleRate, Rate, Rows};

/// The Householder rank-one updates' built-in rows (split free).
pub const HOUSEHOLDER_RANK1_ROWS: Rows =
    Rows::new(None, AppleRate::Measured(Rate::halved(0.212, 0.725)), None);
