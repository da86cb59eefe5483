//! The sparse kernels: sparse times dense and sparse times sparse ([`products`], re-exported
//! here). Design record: `docs/kernels.md`.

pub mod cost;
pub mod products;

pub use products::*;
