//! The `teamalg` program: a tour of what the executor costs on this host.
//!
//! `cargo run --release -p teamalg-tools` prints, as tables, the cost of entering a parallel
//! region from outside a pool and from inside it at each width, of a pool built per call, and
//! of the kernels beside faer; `teamalg calibrate` writes a host profile.

mod cli;

fn main() {
    cli::run();
}
