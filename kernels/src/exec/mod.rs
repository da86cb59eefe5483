//! What the kernels ask of an executor and how they use it: the contract ([`par`]), the gate
//! every region asks ([`gate`]), paying a sleeping team's wake once per stream of calls
//! ([`wakes`]), the section recorder
//! ([`sections`]), and the two ways a region's work is divided: column chunks claimed by
//! whichever participant is free (`claims`) and disjoint tiles of one matrix (`tiles`).

pub mod call;
pub(crate) mod claims;
pub mod gate;
pub(crate) mod occupancy;
pub mod par;
pub mod sections;
pub(crate) mod tiles;
pub mod wakes;
