//! The executor's contracts: errors, lazy paths, budgets, panics, drop, reserve, broadcast.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use std::sync::{Arc, Barrier, Mutex};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use teamalg::{Error, Exec, Pool, Refused};

fn pool(n: usize) -> Pool {
    Pool::builder().threads(n).build().expect("pool")
}

/// Waits (bounded) until `cond` holds; returns whether it did.
fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if cond() {
            return true;
        }
        thread::yield_now();
    }
    false
}

#[test]
fn zero_threads_and_zero_budget_are_errors() {
    assert!(matches!(
        Pool::builder().threads(0).build(),
        Err(Error::ZeroThreads)
    ));
    let p = pool(2);
    assert!(matches!(Exec::new(&p, 0), Err(Error::ZeroBudget)));
    assert_eq!(
        Exec::new(&p, 99).unwrap().budget(),
        2,
        "clamped to the pool"
    );
    assert_eq!(Exec::new(&p, 2).unwrap().limit(1).budget(), 1);
    assert_eq!(Exec::new(&p, 2).unwrap().limit(0).budget(), 1);
    assert_eq!(
        Exec::new(&p, 1).unwrap().limit(5).budget(),
        1,
        "limit never raises"
    );
    assert!(Error::ZeroBudget.to_string().contains("budget"));
}

#[test]
fn default_threads_are_the_affinity_set() {
    let p = Pool::builder().build().unwrap();
    assert_eq!(p.threads(), teamalg::available_cpus());
    assert_eq!(p.spin_polls(), teamalg::wait::DEFAULT_SPIN_POLLS);
    let q = Pool::builder().threads(2).spin_polls(7).build().unwrap();
    assert_eq!(q.spin_polls(), 7);
}

fn threads_used(exec: Exec<'_>, jobs: usize) -> Vec<ThreadId> {
    let seen = Mutex::new(Vec::new());
    exec.fork(jobs, |_, _| {
        seen.lock().unwrap().push(thread::current().id())
    });
    seen.into_inner().unwrap()
}

#[test]
fn lazy_paths_run_inline() {
    let me = thread::current().id();
    let p = pool(2);
    assert!(threads_used(Exec::serial(), 8).iter().all(|&t| t == me));
    assert!(
        threads_used(Exec::new(&p, 1).unwrap(), 8)
            .iter()
            .all(|&t| t == me)
    );
    assert_eq!(threads_used(Exec::new(&p, 2).unwrap(), 1), vec![me]);
    // One range runs inline too.
    let on = Mutex::new(None);
    Exec::new(&p, 2).unwrap().for_ranges(10, 10, |_| {
        *on.lock().unwrap() = Some(thread::current().id())
    });
    assert_eq!(on.into_inner().unwrap(), Some(me));
    // A single job keeps the whole budget.
    Exec::new(&p, 2)
        .unwrap()
        .fork(1, |_, child| assert_eq!(child.budget(), 2));
}

#[test]
fn fork_runs_every_job_once_with_split_budgets() {
    let p = pool(4);
    let hits: Vec<AtomicUsize> = (0..100).map(|_| AtomicUsize::new(0)).collect();
    Exec::new(&p, 4).unwrap().fork(100, |i, child| {
        assert_eq!(child.budget(), 1);
        hits[i].fetch_add(1, Relaxed);
    });
    assert!(hits.iter().all(|h| h.load(Relaxed) == 1));

    let budgets = Mutex::new(vec![0; 3]);
    Exec::new(&p, 4)
        .unwrap()
        .fork(3, |i, child| budgets.lock().unwrap()[i] = child.budget());
    assert_eq!(budgets.into_inner().unwrap(), vec![2, 1, 1]);

    let budgets = Mutex::new(vec![0; 2]);
    Exec::new(&p, 4).unwrap().fork_sized(&[3, 1], |i, child| {
        budgets.lock().unwrap()[i] = child.budget()
    });
    assert_eq!(budgets.into_inner().unwrap(), vec![3, 1]);

    let budgets = Mutex::new(vec![0; 3]);
    Exec::new(&p, 4)
        .unwrap()
        .fork_sized(&[1, 1, 1], |i, child| {
            budgets.lock().unwrap()[i] = child.budget()
        });
    let b = budgets.into_inner().unwrap();
    assert_eq!(b.iter().sum::<usize>(), 4);
    assert!(b.iter().all(|&x| x >= 1));
}

#[test]
fn for_ranges_covers_each_index_once() {
    let p = pool(3);
    for (len, grain) in [(0, 1), (1, 1), (7, 0), (10, 3), (1000, 7), (5, 100)] {
        let hits: Vec<AtomicUsize> = (0..len).map(|_| AtomicUsize::new(0)).collect();
        let ranges = AtomicUsize::new(0);
        Exec::new(&p, 3).unwrap().for_ranges(len, grain, |r| {
            assert!(!r.is_empty());
            ranges.fetch_add(1, Relaxed);
            for i in r {
                hits[i].fetch_add(1, Relaxed);
            }
        });
        assert!(hits.iter().all(|h| h.load(Relaxed) == 1), "len {len}");
        let n = ranges.load(Relaxed);
        assert!(n <= 3 && (len == 0 || n >= 1));
        assert!(len == 0 || n <= len.div_ceil(grain.max(1)));
    }
}

#[test]
fn panics_resume_on_the_caller_and_the_pool_stays_usable() {
    let p = pool(2);
    for round in 0..20 {
        let who = round % 2;
        let r = catch_unwind(AssertUnwindSafe(|| {
            Exec::new(&p, 2).unwrap().fork(2, |i, _| {
                if i == who {
                    panic!("job {i} failed");
                }
            })
        }));
        let payload = r.expect_err("the panic resumes on the caller");
        let msg = payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert_eq!(msg, format!("job {who} failed"));
        // Nested panic two levels down.
        let r = catch_unwind(AssertUnwindSafe(|| {
            Exec::new(&p, 2)
                .unwrap()
                .fork(2, |_, c| c.fork(4, |j, _| assert!(j != 3, "deep")))
        }));
        assert!(r.is_err());
        // The pool still works, in parallel.
        let sum = AtomicUsize::new(0);
        Exec::new(&p, 2).unwrap().for_ranges(100, 1, |r| {
            sum.fetch_add(r.len(), Relaxed);
        });
        assert_eq!(sum.load(Relaxed), 100);
    }
    // install and broadcast propagate too.
    let r = catch_unwind(AssertUnwindSafe(|| {
        Exec::new(&p, 2).unwrap().install(|_| panic!("in install"))
    }));
    assert!(r.is_err());
    assert_eq!(Exec::new(&p, 2).unwrap().install(|e| e.budget()), 2);
}

#[test]
fn helpers_really_run_in_parallel() {
    let p = pool(2);
    // Two jobs that each wait for the other: they complete only with two threads at once. Every
    // one of 20 forks must overlap (a late helper may take a while on a busy host, so the wait
    // is long; a fork that ran its jobs one after the other fails after it, never hangs).
    for round in 0..20 {
        let arrived = AtomicUsize::new(0);
        let ok = AtomicBool::new(true);
        Exec::new(&p, 2).unwrap().fork(2, |_, _| {
            arrived.fetch_add(1, SeqCst);
            let t = Instant::now();
            while arrived.load(SeqCst) < 2 {
                if t.elapsed() > Duration::from_secs(5) {
                    ok.store(false, SeqCst);
                    return;
                }
                std::hint::spin_loop();
            }
        });
        assert!(
            ok.load(SeqCst),
            "fork {round}: the two jobs did not overlap"
        );
    }
}

#[test]
fn cross_pool_a_b_a_completes() {
    let a = pool(2);
    let b = pool(2);
    let n = AtomicUsize::new(0);
    for _ in 0..200 {
        Exec::new(&a, 2).unwrap().fork(2, |_, _| {
            Exec::new(&b, 2).unwrap().fork(2, |_, _| {
                Exec::new(&a, 2).unwrap().for_ranges(4, 1, |r| {
                    n.fetch_add(r.len(), Relaxed);
                });
            });
        });
    }
    assert_eq!(n.load(Relaxed), 200 * 2 * 2 * 4);
}

#[test]
fn dedicated_workers_are_joined_with_their_thread_locals() {
    static DTORS: AtomicUsize = AtomicUsize::new(0);
    static STARTED: AtomicUsize = AtomicUsize::new(0);
    struct Mark;
    impl Drop for Mark {
        fn drop(&mut self) {
            DTORS.fetch_add(1, SeqCst);
        }
    }
    thread_local!(static MARK: std::cell::RefCell<Option<Mark>> = const { std::cell::RefCell::new(None) });
    let names = Arc::new(Mutex::new(Vec::new()));
    let names2 = names.clone();
    let p = Pool::builder()
        .threads(3)
        .thread_name(|k| format!("solver-{k}"))
        .stack_size(1 << 20)
        .on_start(move |k| {
            MARK.with(|m| *m.borrow_mut() = Some(Mark));
            STARTED.fetch_add(1, SeqCst);
            names2
                .lock()
                .unwrap()
                .push((k, thread::current().name().map(str::to_owned)));
        })
        .build()
        .unwrap();
    assert!(eventually(|| STARTED.load(SeqCst) == 3));
    Exec::new(&p, 3).unwrap().for_ranges(3, 1, |_| {});
    drop(p);
    assert_eq!(DTORS.load(SeqCst), 3, "drop joined every dedicated worker");
    let mut names = names.lock().unwrap().clone();
    names.sort();
    assert_eq!(names[1], (1, Some("solver-1".to_string())));
}

#[test]
fn a_panicking_start_hook_loses_no_worker() {
    let p = Pool::builder()
        .threads(2)
        .on_start(|_| panic!("hook"))
        .build()
        .unwrap();
    assert_eq!(Exec::new(&p, 2).unwrap().install(|e| e.budget()), 2);
    // Both hooks ran before the workers served the section above, and both are counted.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while p.start_hook_panics() < 2 && std::time::Instant::now() < deadline {
        thread::yield_now();
    }
    assert_eq!(p.start_hook_panics(), 2);
    drop(p); // would hang if a worker had died
}

#[test]
fn a_pool_dropped_from_its_own_worker_does_not_hang() {
    let main = thread::current().id();
    for dedicated in [false, true] {
        let mut dropped_on_worker = false;
        for _ in 0..50 {
            let b = Pool::builder().threads(2);
            let b = if dedicated { b.stack_size(1 << 20) } else { b };
            let holder = Mutex::new(Some(b.build().unwrap()));
            let exec = Exec::new(holder.lock().unwrap().as_ref().unwrap(), 2).unwrap();
            let on_worker = AtomicBool::new(false);
            exec.fork(2, |_, _| {
                // Give the helper time to join, then let whoever is not main drop the pool.
                let t = Instant::now();
                while t.elapsed() < Duration::from_millis(5) {
                    std::hint::spin_loop();
                }
                if thread::current().id() != main {
                    if let Some(p) = holder.lock().unwrap().take() {
                        drop(p);
                        on_worker.store(true, SeqCst);
                    }
                }
            });
            if on_worker.load(SeqCst) {
                dropped_on_worker = true;
                break;
            }
        }
        assert!(
            dropped_on_worker,
            "no job ever ran on a worker (dedicated {dedicated})"
        );
    }
}

#[test]
fn a_token_that_outlives_its_pool_runs_serially() {
    let holder = Mutex::new(Some(pool(2)));
    let exec = Exec::new(holder.lock().unwrap().as_ref().unwrap(), 2).unwrap();
    drop(holder.lock().unwrap().take());
    let me = thread::current().id();
    assert!(threads_used(exec, 4).iter().all(|&t| t == me));
}

#[test]
fn broadcast_runs_every_share_at_once_or_refuses() {
    let p = pool(3);
    let barrier = Barrier::new(3);
    let seen = Mutex::new(Vec::new());
    Exec::new(&p, 3)
        .unwrap()
        .broadcast(|i| {
            barrier.wait(); // deadlocks unless all three run at once
            seen.lock().unwrap().push(i);
        })
        .unwrap();
    let mut seen = seen.into_inner().unwrap();
    seen.sort();
    assert_eq!(seen, vec![0, 1, 2]);

    let refused = Mutex::new(None);
    Exec::new(&p, 3).unwrap().fork(2, |i, child| {
        if i == 0 {
            *refused.lock().unwrap() = Some(child.broadcast(|_| {}));
        }
    });
    assert_eq!(refused.into_inner().unwrap(), Some(Err(Refused::Nested)));
    let inner = Exec::new(&p, 3)
        .unwrap()
        .install(|_| Exec::new(&p, 2).unwrap().broadcast(|_| {}));
    assert_eq!(inner, Err(Refused::InPool));

    // With every worker held by `external`, there is nobody to reserve.
    let busy = Exec::new(&p, 3).unwrap().external(|width| {
        assert_eq!(width, 3);
        Exec::new(&p, 3).unwrap().broadcast(|_| {})
    });
    assert_eq!(busy, Err(Refused::Busy));
    assert_eq!(Exec::serial().broadcast(|i| assert_eq!(i, 0)), Ok(()));
    // After `external` the workers are free again.
    assert_eq!(Exec::new(&p, 3).unwrap().broadcast(|_| {}), Ok(()));
}

#[test]
fn external_width_and_install() {
    let p = pool(2);
    assert_eq!(Exec::serial().external(|w| w), 1);
    assert_eq!(Exec::new(&p, 1).unwrap().external(|w| w), 1);
    assert!(eventually(|| Exec::new(&p, 2).unwrap().external(|w| w) == 2));
    let main = thread::current().id();
    let on = Exec::new(&p, 2).unwrap().install(|e| {
        assert_eq!(e.budget(), 2);
        thread::current().id()
    });
    assert_ne!(on, main, "install runs on a worker");
    assert_eq!(Exec::serial().install(|_| thread::current().id()), main);
}

#[test]
fn wait_counters_see_parks_after_a_gap() {
    let p = Pool::builder().threads(2).spin_polls(10).build().unwrap();
    Exec::new(&p, 2).unwrap().for_ranges(2, 1, |_| {});
    thread::sleep(Duration::from_millis(50)); // the idle workers park
    let before = teamalg::wait::counters::snapshot();
    assert!(before.parks > 0 && before.idle_sleeps > 0);
    Exec::new(&p, 2)
        .unwrap()
        .for_ranges(2, 1, |_| thread::sleep(Duration::from_millis(1)));
    thread::sleep(Duration::from_millis(50));
    let d = teamalg::wait::counters::snapshot() - before;
    assert!(d.idle_sleeps > 0, "{d:?}");
}

/// Every range `for_ranges` hands out has at least `grain` elements (the whole range when it
/// is shorter than two grains), on plain tokens and on team tokens alike.
#[test]
fn for_ranges_never_hands_out_less_than_a_grain() {
    let p = pool(4);
    let team = pool(4).into_team(4).unwrap();
    let cases =
        (1..=4).flat_map(|b| (1..=40).flat_map(move |len| (0..=12).map(move |g| (b, len, g))));
    for (budget, len, grain) in cases {
        for on_team in [false, true] {
            let ranges = Mutex::new(Vec::new());
            let f = |r: std::ops::Range<usize>| ranges.lock().unwrap().push(r);
            if on_team {
                team.exec(budget).for_ranges(len, grain, f);
            } else {
                Exec::new(&p, budget).unwrap().for_ranges(len, grain, f);
            }
            let mut ranges = ranges.into_inner().unwrap();
            ranges.sort_by_key(|r| r.start);
            let case = format!("budget {budget}, len {len}, grain {grain}: {ranges:?}");
            assert!(ranges.len() <= budget, "{case}");
            assert_eq!(ranges.first().map(|r| r.start), Some(0), "{case}");
            assert_eq!(ranges.last().map(|r| r.end), Some(len), "{case}");
            assert!(ranges.windows(2).all(|w| w[0].end == w[1].start), "{case}");
            if ranges.len() > 1 {
                assert!(ranges.iter().all(|r| r.len() >= grain.max(1)), "{case}");
            }
        }
    }
    // The two cases that once came out short.
    let ranges = Mutex::new(Vec::new());
    Exec::new(&p, 3)
        .unwrap()
        .for_ranges(7, 3, |r| ranges.lock().unwrap().push(r));
    assert_eq!(ranges.into_inner().unwrap().len(), 2);
    let ranges = Mutex::new(Vec::new());
    Exec::new(&p, 2)
        .unwrap()
        .for_ranges(9, 8, |r| ranges.lock().unwrap().push(r));
    let ranges = ranges.into_inner().unwrap();
    assert_eq!((ranges.len(), ranges[0].clone()), (1, 0..9));
}

/// `fork_sized` divides the budget in proportion to the shares: every split that is exact in
/// integers is kept exactly, every child gets at least one slot, the budgets sum to the
/// parent's, and a larger share never gets fewer slots. Plain and team tokens agree.
#[test]
fn fork_sized_divides_the_budget_in_proportion() {
    let p = pool(8);
    let team = pool(8).into_team(8).unwrap();
    let mut exact = 0;
    for budget in 2..=8usize {
        for jobs in 2..budget.min(5) {
            let mut shares = vec![0usize; jobs];
            // Every vector of shares in 0..=5 (0 counts as 1), for up to 4 children.
            for code in 0..6usize.pow(jobs as u32) {
                let mut c = code;
                for s in shares.iter_mut() {
                    *s = c % 6;
                    c /= 6;
                }
                let got = |on_team: bool| {
                    let budgets = Mutex::new(vec![0; jobs]);
                    let f = |i: usize, child: Exec<'_>| budgets.lock().unwrap()[i] = child.budget();
                    if on_team {
                        team.exec(budget).fork_sized(&shares, f);
                    } else {
                        Exec::new(&p, budget).unwrap().fork_sized(&shares, f);
                    }
                    budgets.into_inner().unwrap()
                };
                let b = got(false);
                let case = format!("budget {budget}, shares {shares:?}: {b:?}");
                assert_eq!(got(true), b, "{case}");
                assert_eq!(b.iter().sum::<usize>(), budget, "{case}");
                assert!(b.iter().all(|&x| x >= 1), "{case}");
                let w: Vec<usize> = shares.iter().map(|&s| s.max(1)).collect();
                let total: usize = w.iter().sum();
                for i in 0..jobs {
                    for j in 0..jobs {
                        assert!(w[i] <= w[j] || b[i] >= b[j], "{case}");
                    }
                }
                if w.iter().all(|&s| (budget * s) % total == 0) {
                    exact += 1;
                    let want: Vec<usize> = w.iter().map(|&s| budget * s / total).collect();
                    assert_eq!(b, want, "{case}");
                }
            }
        }
    }
    assert!(exact > 100, "{exact} exact cases");
    // The two cases that once came out wrong.
    let budgets = Mutex::new(vec![0; 2]);
    Exec::new(&p, 4)
        .unwrap()
        .fork_sized(&[1, 3], |i, c| budgets.lock().unwrap()[i] = c.budget());
    assert_eq!(budgets.into_inner().unwrap(), [1, 3]);
    let budgets = Mutex::new(vec![0; 2]);
    Exec::new(&p, 5)
        .unwrap()
        .fork_sized(&[4, 1], |i, c| budgets.lock().unwrap()[i] = c.budget());
    assert_eq!(budgets.into_inner().unwrap(), [4, 1]);
}

/// Sizes whose sum overflows are an invalid split, not a panic.
#[test]
fn split_sizes_that_overflow_are_invalid() {
    let team = pool(2).into_team(2).unwrap();
    team.exec(2)
        .team(|t| {
            let r = t.split(&[usize::MAX, 2], |_, _| unreachable!("refused"));
            assert!(
                matches!(r, Err(Error::InvalidSplit { sizes: 2, .. })),
                "{r:?}"
            );
            let r = t.split(&[usize::MAX, usize::MAX], |_, _| unreachable!("refused"));
            assert!(matches!(r, Err(Error::InvalidSplit { .. })), "{r:?}");
        })
        .unwrap();
}

/// A token, a team and a team's handle price no width they cannot run: beyond the budget the
/// dispatch cost is infinite and nothing pays.
#[test]
fn no_cost_beyond_the_budget() {
    let p = pool(4);
    let big = Duration::from_secs(1);
    for budget in 1..=4 {
        let e = Exec::new(&p, budget).unwrap();
        for w in 2..=6 {
            let within = w <= budget;
            assert_eq!(
                e.dispatch_cost(w) < Duration::MAX,
                within,
                "budget {budget}, width {w}"
            );
            assert_eq!(e.pays(big, 1, w), within, "budget {budget}, width {w}");
        }
        assert!(e.width_for(big, 1).get() <= budget);
    }
    let team = pool(3).into_team(3).unwrap();
    assert_eq!(team.dispatch_cost(4), Duration::MAX);
    assert!(team.dispatch_cost(3) < Duration::MAX);
    let tok = team.exec(2);
    assert_eq!(tok.dispatch_cost(3), Duration::MAX);
    tok.team(|t| {
        assert_eq!(t.dispatch_cost(3), Duration::MAX);
        assert!(!t.pays(big, 1, 3));
        assert!(t.dispatch_cost(2) < Duration::MAX);
    })
    .unwrap();
}

/// `install` never waits for ever: with every slot of the pool reserved by scopes it is
/// nested in (`external`, a team's members, both), or reserved by another thread for a while,
/// it still returns the job's result.
#[test]
fn install_returns_when_every_slot_is_reserved() {
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        let p = pool(2);
        let r = Exec::new(&p, 2).unwrap().external(|a| {
            Exec::new(&p, 2).unwrap().external(|b| {
                assert_eq!((a, b), (2, 2), "both workers reserved");
                Exec::new(&p, 2).unwrap().install(|e| e.budget() * 10)
            })
        });
        assert_eq!(r, 20);

        let r = Exec::new(&p, 2)
            .unwrap()
            .team(|_| {
                Exec::new(&p, 2)
                    .unwrap()
                    .external(|_| Exec::new(&p, 2).unwrap().install(|_| 7))
            })
            .unwrap();
        assert_eq!(r, 7);

        // Reserved by another thread: the job runs (on a worker once one is free, or here).
        let held = Barrier::new(2);
        let r = thread::scope(|s| {
            s.spawn(|| {
                Exec::new(&p, 3).unwrap().external(|_| {
                    held.wait();
                    thread::sleep(Duration::from_millis(20));
                })
            });
            held.wait();
            Exec::new(&p, 2).unwrap().install(|_| 5)
        });
        assert_eq!(r, 5);
        tx.send(()).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("install returned within a minute");
}

/// `Executor::run_chunks`: every chunk runs exactly once, cut into one chunk per participant on
/// a team token and a serial one, and into four per participant on a plain token (whose helpers
/// claim them one at a time).
#[test]
fn run_chunks_runs_every_chunk_once() {
    use teamalg::kernels::par::{Executor, Seq};
    let check = |exec: &dyn Executor, width: usize, want: usize| {
        let seen = Mutex::new(Vec::new());
        exec.run_chunks(width, &|c, n| seen.lock().unwrap().push((c, n)));
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        let n = seen[0].1;
        assert_eq!(n, want);
        assert_eq!(seen, (0..n).map(|c| (c, n)).collect::<Vec<_>>());
    };
    let p = pool(3);
    check(&Exec::new(&p, 3).unwrap(), 3, 12);
    check(&Exec::new(&p, 3).unwrap(), 2, 8);
    check(&Exec::new(&p, 3).unwrap(), 1, 1);
    check(&Exec::serial(), 2, 1);
    check(&Seq, 1, 1);
    let team = pool(3).into_team(3).unwrap();
    check(&team.exec(3), 3, 3);
    check(&team, 2, 2);
}
