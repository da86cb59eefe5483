//! What the SVD and the self-adjoint EVD share: the scalar traits ([`scalar`]), the fused
//! reduction passes ([`fused`]), the Householder block factors (`householder`), the secular
//! equation of the divide-and-conquer merges (`secular`), and the bundle a reduction's passes
//! run with (`passes`). Design record:
//! `docs/svd.md`.

pub mod cost;
pub mod fused;
pub(crate) mod householder;
pub(crate) mod passes;
pub mod scalar;
pub(crate) mod secular;
