//! Slot conservation under randomised nested programs (needs the `ledger` feature).

#[path = "../common/stress.rs"]
mod common;

use teamalg::Pool;

#[test]
fn nested_programs_conserve_slots() {
    let pool = Pool::builder().threads(4).build().unwrap();
    let max = common::stress(&pool, 1, 300, 1);
    assert!(max >= 2, "the stress never ran two tasks at once");
}

#[test]
fn concurrent_roots_conserve_slots() {
    let pool = Pool::builder().threads(3).build().unwrap();
    common::stress(&pool, 2, 150, 3);
}

#[test]
fn two_pools_at_once_conserve_slots() {
    let a = Pool::builder().threads(2).build().unwrap();
    let b = Pool::builder().threads(2).build().unwrap();
    std::thread::scope(|s| {
        s.spawn(|| common::stress(&a, 3, 150, 1));
        s.spawn(|| common::stress(&b, 4, 150, 1));
    });
}
