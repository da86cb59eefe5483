//! Smoke run.
use std::sync::atomic::{AtomicUsize, Ordering};
use teamalg::{Exec, Pool};
fn main() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let n = AtomicUsize::new(0);
    for _ in 0..10000 {
        Exec::new(&pool, 2).unwrap().for_ranges(100, 1, |r| {
            n.fetch_add(r.len(), Ordering::Relaxed);
        });
    }
    assert_eq!(n.load(Ordering::Relaxed), 1_000_000);
    let t = std::time::Instant::now();
    for _ in 0..10000 {
        Exec::new(&pool, 2).unwrap().fork(2, |i, c| {
            c.fork(3, |_, _| {
                n.fetch_add(i, Ordering::Relaxed);
            })
        });
    }
    println!("fork ok {:?}", t.elapsed() / 10000);
    let r = Exec::new(&pool, 2).unwrap().install(|e| e.budget() * 10);
    println!("install {r}");
    println!(
        "bcast {:?}",
        Exec::new(&pool, 2).unwrap().broadcast(|i| println!("b{i}"))
    );
    drop(pool);
    for _ in 0..1000 {
        let p = Pool::builder().threads(2).build().unwrap();
        Exec::new(&p, 2).unwrap().for_ranges(2, 1, |_| {});
    }
    println!("spawned {}", teamalg::spawned_workers());
}
