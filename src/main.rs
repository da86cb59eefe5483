//! The `teamalg` program: a tour of what the executor costs on this host.
//!
//! `cargo run --release` prints, as tables, the cost of entering a parallel region from outside
//! a pool and from inside it at each width, and of a pool built per call.

// Under the loom models the executor's public API is not built, so neither is the program.
#[cfg(not(loom))]
mod cli;
#[cfg(not(loom))]
mod tour;

fn main() {
    #[cfg(not(loom))]
    cli::run();
}
