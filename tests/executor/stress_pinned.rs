//! The stress programs with the whole test pinned to one CPU: pools built here see one CPU, so
//! their waits take the throttled spin budget; everything must still complete.

#[path = "../common/stress.rs"]
mod common;

use teamalg::Pool;

#[path = "../common/pin.rs"]
mod pin;
#[cfg(target_os = "linux")]
use pin::pin_to_one_cpu;

#[test]
fn pinned_to_one_cpu() {
    #[cfg(target_os = "linux")]
    pin_to_one_cpu();
    assert_eq!(teamalg::available_cpus(), 1);
    let pool = Pool::builder().threads(4).build().unwrap();
    assert_eq!(pool.threads(), 4);
    let t = std::time::Instant::now();
    // Threads spawned by the stress inherit the pin.
    common::stress(&pool, 5, 200, 2);
    let default_pool = Pool::builder().build().unwrap();
    assert_eq!(default_pool.threads(), 1);
    common::stress(&default_pool, 6, 100, 1);
    eprintln!("pinned stress took {:?}", t.elapsed());
}
