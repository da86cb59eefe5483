//! loom models of the executor's park/wake protocols, run on the shipped code through the
//! `sync` facade:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release --test loom
//! ```
//!
//! Each model guards one wake. `scripts/loom-mutants.sh` removes that wake from a scratch copy
//! of the tree and checks that the model then fails; the expected failure is written beside
//! each model.

#![cfg(loom)]

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use loom::sync::Arc;
use loom::thread;

use teamalg::loom_api::{Batch, Parker, Queue};

/// A waker sets a flag and unparks; the owner parks until it sees the flag.
///
/// Guards the signal in `Parker::unpark` (`self.cvar.notify_one()`). Without it, loom reports
/// a deadlock: the owner sleeps on the condition variable and nobody signals it (checked with
/// `scripts/loom-mutants.sh parker`).
#[test]
fn parker_no_lost_wakeup() {
    loom::model(|| {
        let parker = Arc::new(Parker::new());
        let flag = Arc::new(AtomicBool::new(false));
        let waker = {
            let (parker, flag) = (parker.clone(), flag.clone());
            thread::spawn(move || {
                flag.store(true, Release);
                parker.unpark();
            })
        };
        while !flag.load(Acquire) {
            parker.park();
        }
        waker.join().unwrap();
    });
}

/// A token left by an early `unpark` makes the next `park` return (no sleep, no loss).
#[test]
fn parker_token_is_kept() {
    loom::model(|| {
        let parker = Arc::new(Parker::new());
        let waker = {
            let parker = parker.clone();
            thread::spawn(move || parker.unpark())
        };
        waker.join().unwrap();
        parker.park(); // must not block: the token is there
    });
}

/// The batch claim protocol: an owner queues a batch of two jobs that two helpers may join;
/// everyone claims, the owner unlinks and sleeps until the batch settles. Every job runs once
/// and the owner wakes.
///
/// Guards the wake in `Batch::detach` (`(*owner).unpark()`, by the last helper to leave).
/// Without it, loom reports a deadlock: the owner parks while a helper still holds the batch
/// and nobody wakes it (checked with `scripts/loom-mutants.sh batch`).
#[test]
fn batch_two_claimers() {
    loom::model(|| {
        let queue = Arc::new(Queue::new());
        let owner = Arc::new(Parker::new());
        let ran = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
        let helpers: Vec<_> = (0..2)
            .map(|_| {
                let queue = queue.clone();
                thread::spawn(move || {
                    if let Some(b) = queue.attach(|_| true) {
                        // SAFETY: attached, so the batch is alive until `detach`.
                        unsafe { (*b).run_jobs() };
                        // SAFETY: attached above; last access.
                        unsafe { Batch::detach(b) };
                    }
                })
            })
            .collect();
        {
            let r = ran.clone();
            let job = move |i: usize| {
                r[i].fetch_add(1, Relaxed);
            };
            let batch = Batch::new(2, 2, &owner, &job, 0);
            // SAFETY: the batch is unlinked and settled before this block ends.
            unsafe { queue.push(&batch) };
            batch.run_jobs();
            queue.unlink(&batch);
            while !batch.settled() {
                owner.park();
            }
        }
        for h in helpers {
            h.join().unwrap();
        }
        assert_eq!(ran[0].load(Relaxed), 1);
        assert_eq!(ran[1].load(Relaxed), 1);
    });
}

/// An owner that claims nothing (`install`): it must not return before the one helper has
/// claimed, run and left. Guards the same wake as `batch_two_claimers`, and the order of the
/// two reads in `Batch::settled` (reading `attached` first lets the owner return while the
/// helper still runs; loom then finds the job not yet run).
#[test]
fn batch_owner_waits_for_its_only_helper() {
    loom::model(|| {
        let queue = Arc::new(Queue::new());
        let owner = Arc::new(Parker::new());
        let ran = Arc::new(AtomicUsize::new(0));
        let helper = {
            let queue = queue.clone();
            thread::spawn(move || loop {
                if let Some(b) = queue.attach(|_| true) {
                    // SAFETY: attached, so the batch is alive until `detach`.
                    unsafe { (*b).run_jobs() };
                    // SAFETY: attached above; last access.
                    unsafe { Batch::detach(b) };
                    return;
                }
                thread::yield_now();
            })
        };
        {
            let r = ran.clone();
            let job = move |_: usize| {
                r.fetch_add(1, Relaxed);
            };
            let batch = Batch::new(1, 1, &owner, &job, 0);
            // SAFETY: the helper's attachment unlinks the batch, and the owner waits until it
            // has left.
            unsafe { queue.push(&batch) };
            while !batch.settled() {
                owner.park();
            }
            assert_eq!(
                ran.load(Relaxed),
                1,
                "the owner returned before the job ran"
            );
        }
        helper.join().unwrap();
    });
}
