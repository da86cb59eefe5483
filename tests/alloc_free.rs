//! `fork`, `for_ranges`, `fork_sized`, `install` and `broadcast` allocate nothing once warm: a
//! counting global allocator sees every allocation of every thread in this binary.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};

use teamalg::{Exec, Pool};

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static COUNTING: AtomicBool = AtomicBool::new(false);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if COUNTING.load(Relaxed) {
            ALLOCS.fetch_add(1, Relaxed);
        }
        // SAFETY: same contract as ours.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        if COUNTING.load(Relaxed) {
            ALLOCS.fetch_add(1, Relaxed);
        }
        // SAFETY: same contract as ours.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn calls(pool: &Pool, sink: &AtomicUsize) {
    for _ in 0..200 {
        Exec::new(pool, 2).unwrap().fork(2, |i, child| {
            child.fork(2, |j, _| {
                sink.fetch_add(i + j, Relaxed);
            })
        });
        Exec::new(pool, 2).unwrap().for_ranges(64, 8, |r| {
            sink.fetch_add(r.len(), Relaxed);
        });
        Exec::new(pool, 3).unwrap().fork_sized(&[2, 1], |i, _| {
            sink.fetch_add(i, Relaxed);
        });
        // From inside the pool.
        Exec::new(pool, 2).unwrap().install(|e| {
            e.for_ranges(64, 8, |r| {
                sink.fetch_add(r.len(), Relaxed);
            })
        });
        let _ = Exec::new(pool, 2).unwrap().broadcast(|i| {
            sink.fetch_add(i, Relaxed);
        });
    }
}

#[test]
fn warm_entries_allocate_nothing() {
    let pool = Pool::builder().threads(3).build().unwrap();
    let sink = AtomicUsize::new(0);
    calls(&pool, &sink); // warm: thread-local parkers, worker start-up
    ALLOCS.store(0, SeqCst);
    COUNTING.store(true, SeqCst);
    calls(&pool, &sink);
    COUNTING.store(false, SeqCst);
    assert_eq!(ALLOCS.load(SeqCst), 0, "allocations in warm entries");
    assert!(sink.load(Relaxed) > 0);
}
