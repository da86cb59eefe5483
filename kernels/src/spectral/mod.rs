//! What the SVD and the self-adjoint EVD share: the scalar traits ([`real`]), the fused
//! reduction passes ([`fused`]), the Householder block factors (`householder`), the secular
//! equation of the divide-and-conquer merges (`secular`), and the watch that takes a
//! reduction's sections back to the caller on a busy machine (`watch`). Design record:
//! `docs/svd.md`.

pub mod fused;
pub(crate) mod householder;
pub mod real;
pub(crate) mod secular;
pub(crate) mod watch;
