//! Hot teams: formation, sections, barriers, splits, team tokens, leadership, panics.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use std::sync::{Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use teamalg::{Error, Exec, Pool, Refused, Team};

/// Counts this arrival at `arrived` and waits until `n` have arrived: true when they did
/// within 5 s, false (marking `late`) when not. A section that did not run its participants at
/// once then fails its test instead of hanging it.
fn meet(arrived: &AtomicUsize, n: usize, late: &AtomicBool) -> bool {
    arrived.fetch_add(1, SeqCst);
    let start = Instant::now();
    while arrived.load(SeqCst) < n {
        if start.elapsed() > Duration::from_secs(5) {
            late.store(true, SeqCst);
            return false;
        }
        std::hint::spin_loop();
    }
    true
}

fn team(width: usize) -> Team {
    Pool::builder()
        .threads(width)
        .build()
        .unwrap()
        .into_team(width)
        .unwrap()
}

#[test]
fn into_team_errors_give_the_pool_back() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let e = pool.into_team(0).unwrap_err();
    assert!(matches!(e.error, Error::ZeroWidth));
    let e = e.pool.into_team(3).unwrap_err();
    assert!(matches!(
        e.error,
        Error::TeamTooWide {
            width: 3,
            threads: 2
        }
    ));
    assert!(e.to_string().contains("width 3"));
    let pool = e.pool;
    // The pool still works, and can still become a team.
    assert_eq!(Exec::new(&pool, 2).unwrap().install(|e| e.budget()), 2);
    let t = pool.into_team(2).unwrap();
    assert_eq!(t.width(), 2);
    let pool = t.into_pool();
    let n = AtomicUsize::new(0);
    Exec::new(&pool, 2).unwrap().for_ranges(10, 1, |r| {
        n.fetch_add(r.len(), Relaxed);
    });
    assert_eq!(n.load(Relaxed), 10);
}

#[test]
fn members_busy_is_an_error() {
    let pool = Pool::builder()
        .threads(2)
        .acquire_timeout(Duration::from_millis(5))
        .build()
        .unwrap();
    // Two holders take one worker each; a third caller finds none.
    let held = Barrier::new(3);
    let done = AtomicBool::new(false);
    let hold = || {
        held.wait();
        while !done.load(SeqCst) {
            thread::sleep(Duration::from_millis(1));
        }
    };
    let r = thread::scope(|s| {
        s.spawn(|| Exec::new(&pool, 2).unwrap().external(|_| hold()));
        s.spawn(|| Exec::new(&pool, 2).unwrap().team(|_| hold()).unwrap());
        held.wait();
        let r = Exec::new(&pool, 2).unwrap().team(|_| ());
        done.store(true, SeqCst);
        r
    });
    assert_eq!(r, Err(Refused::Busy));
    assert_eq!(Exec::new(&pool, 2).unwrap().team(|t| t.width()), Ok(2));
}

#[test]
fn a_section_runs_every_participant_at_once() {
    let t = team(3);
    for round in 0..100 {
        let seen = Mutex::new(Vec::new());
        // Every participant waits for all three: only participants running at once meet.
        let (arrived, late) = (AtomicUsize::new(0), AtomicBool::new(false));
        t.exec(3)
            .team(|te| {
                te.run(|p| {
                    assert_eq!(p.width(), 3);
                    meet(&arrived, 3, &late);
                    seen.lock().unwrap().push(p.index());
                })
            })
            .unwrap();
        assert!(
            !late.load(SeqCst),
            "round {round}: the participants did not run at once"
        );
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        assert_eq!(seen, vec![0, 1, 2]);
    }
}

#[test]
fn barriers_hold_across_many_rounds() {
    let t = team(3);
    let cells: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
    t.exec(3)
        .team(|te| {
            te.run(|p| {
                for round in 1..=200 {
                    cells[p.index()].store(round, SeqCst);
                    p.barrier();
                    // After the barrier, everyone has written this round.
                    for c in &cells {
                        assert!(c.load(SeqCst) >= round);
                    }
                    p.barrier();
                }
            })
        })
        .unwrap();
}

#[test]
fn splits_run_child_teams_at_once_and_nest() {
    let t = team(4);
    let te_token = t.exec(4);
    te_token
        .team(|te| {
            assert!(matches!(
                te.split(&[3, 2], |_, _| {}),
                Err(Error::InvalidSplit {
                    total: 5,
                    width: 4,
                    ..
                })
            ));
            assert!(matches!(
                te.split(&[], |_, _| {}),
                Err(Error::InvalidSplit { .. })
            ));
            assert!(matches!(
                te.split(&[0, 1], |_, _| {}),
                Err(Error::InvalidSplit { .. })
            ));
            for _ in 0..50 {
                // Both children at once.
                let (arrived, late) = (AtomicUsize::new(0), AtomicBool::new(false));
                let widths = Mutex::new(vec![0; 2]);
                let inner = AtomicUsize::new(0);
                te.split(&[2, 2], |i, child| {
                    meet(&arrived, 2, &late);
                    widths.lock().unwrap()[i] = child.width();
                    child.run(|p| {
                        p.barrier();
                        inner.fetch_add(1, SeqCst);
                    });
                    // Nested split of a pair into singles.
                    child
                        .split(&[1, 1], |_, single| {
                            assert_eq!(single.width(), 1);
                            single.run(|_| {
                                inner.fetch_add(1, SeqCst);
                            });
                        })
                        .unwrap();
                })
                .unwrap();
                assert!(!late.load(SeqCst), "the children did not run at once");
                assert_eq!(widths.into_inner().unwrap(), vec![2, 2]);
                assert_eq!(inner.load(SeqCst), 8);
            }
            // A split that leaves members out.
            te.split(&[1, 2], |i, c| assert_eq!(c.width(), i + 1))
                .unwrap();
        })
        .unwrap();
}

#[test]
fn team_tokens_fork_and_range_as_sections() {
    let t = team(3);
    let main = thread::current().id();
    let hits: Vec<AtomicUsize> = (0..50).map(|_| AtomicUsize::new(0)).collect();
    let others = AtomicUsize::new(0);
    t.exec(3).fork(50, |i, child| {
        assert_eq!(child.budget(), 1);
        hits[i].fetch_add(1, Relaxed);
        if thread::current().id() != main {
            others.fetch_add(1, Relaxed);
        }
    });
    assert!(hits.iter().all(|h| h.load(Relaxed) == 1));
    // Fewer jobs than participants: child teams with split budgets.
    let budgets = Mutex::new(vec![0; 2]);
    t.exec(3)
        .fork(2, |i, child| budgets.lock().unwrap()[i] = child.budget());
    assert_eq!(budgets.into_inner().unwrap(), vec![2, 1]);
    let budgets = Mutex::new(vec![0; 2]);
    t.exec(3).fork_sized(&[1, 5], |i, child| {
        budgets.lock().unwrap()[i] = child.budget()
    });
    assert_eq!(budgets.into_inner().unwrap(), vec![1, 2]);
    // for_ranges: each participant one chunk; all at once.
    let (arrived, late) = (AtomicUsize::new(0), AtomicBool::new(false));
    let total = AtomicUsize::new(0);
    t.exec(3).for_ranges(300, 1, |r| {
        meet(&arrived, 3, &late);
        total.fetch_add(r.len(), Relaxed);
    });
    assert_eq!(total.load(Relaxed), 300);
    assert!(!late.load(SeqCst), "for_ranges' chunks did not run at once");
    // broadcast never refuses on a team token.
    let (arrived, late) = (AtomicUsize::new(0), AtomicBool::new(false));
    assert_eq!(
        t.exec(3).broadcast(|_| {
            meet(&arrived, 3, &late);
        }),
        Ok(())
    );
    assert!(!late.load(SeqCst), "broadcast's shares did not run at once");
    // A limited token uses fewer members.
    let n = AtomicUsize::new(0);
    t.exec(3)
        .limit(2)
        .broadcast(|_| {
            n.fetch_add(1, Relaxed);
        })
        .unwrap();
    assert_eq!(n.load(Relaxed), 2);
}

#[test]
fn one_leader_at_a_time() {
    let t = team(2);
    let first = t.exec(2);
    assert!(matches!(t.try_exec(2), Err(Refused::Busy)));
    let released = AtomicBool::new(false);
    thread::scope(|s| {
        s.spawn(|| {
            let second = t.exec(2); // waits for `first`
            assert!(released.load(SeqCst));
            second.for_ranges(2, 1, |_| {});
        });
        thread::sleep(Duration::from_millis(20));
        released.store(true, SeqCst);
        drop(first);
    });
    assert!(t.try_exec(1).is_ok());
}

#[test]
fn panics_resume_on_the_leader_and_the_team_stays_usable() {
    let t = team(3);
    let main = thread::current().id();
    for who in [0usize, 1, 2] {
        for _ in 0..20 {
            // A panic in one share while the others wait at a barrier.
            let r = catch_unwind(AssertUnwindSafe(|| {
                t.exec(3)
                    .team(|te| {
                        te.run(|p| {
                            if p.index() == who {
                                panic!("share {who}");
                            }
                            p.barrier();
                            unreachable!("the barrier is cancelled");
                        })
                    })
                    .unwrap()
            }));
            let msg = r.unwrap_err().downcast_ref::<String>().cloned();
            assert_eq!(msg.as_deref(), Some(format!("share {who}").as_str()));
            assert_eq!(thread::current().id(), main);
            // The next section works, barriers included.
            let n = AtomicUsize::new(0);
            t.exec(3)
                .team(|te| {
                    te.run(|p| {
                        p.barrier();
                        n.fetch_add(1, SeqCst);
                    })
                })
                .unwrap();
            assert_eq!(n.load(SeqCst), 3);
        }
    }
}

#[test]
fn a_scoped_team_on_a_plain_token() {
    let pool = Pool::builder().threads(3).build().unwrap();
    let w = Exec::new(&pool, 3)
        .unwrap()
        .team(|te| {
            let n = AtomicUsize::new(0);
            te.run(|p| {
                p.barrier();
                n.fetch_add(1, Relaxed);
            });
            assert_eq!(n.load(Relaxed), 3);
            // The team's token dispatches as sections too.
            let m = AtomicUsize::new(0);
            te.token().for_ranges(30, 1, |r| {
                m.fetch_add(r.len(), Relaxed);
            });
            assert_eq!(m.load(Relaxed), 30);
            te.width()
        })
        .unwrap();
    assert_eq!(w, 3);
    assert_eq!(Exec::serial().team(|te| te.width()), Ok(1));
    // After the scope the workers serve plain tokens again.
    assert_eq!(Exec::new(&pool, 3).unwrap().broadcast(|_| {}), Ok(()));
}

#[test]
fn teams_from_pools_built_per_call() {
    let start = Instant::now();
    for _ in 0..200 {
        let t = team(2);
        let n = AtomicUsize::new(0);
        t.exec(2).for_ranges(2, 1, |_| {
            n.fetch_add(1, Relaxed);
        });
        assert_eq!(n.load(Relaxed), 2);
    }
    assert!(start.elapsed() < Duration::from_secs(60));
}

/// The thread that leads a team through a token may still pass the team itself (to a kernel,
/// or ask it for another token): it gets serial execution instead of waiting for itself.
#[test]
fn the_leading_thread_gets_a_serial_team_instead_of_waiting_for_itself() {
    use teamalg::kernels::par::Executor;
    let team = Pool::builder()
        .threads(2)
        .build()
        .unwrap()
        .into_team(2)
        .unwrap();
    let tok = team.exec(2);
    assert_eq!(tok.budget(), 2);
    assert!(team.try_exec(2).is_err());
    assert_eq!(team.exec(2).budget(), 1);
    assert_eq!(Executor::width(&team), 1);
    let ran = std::sync::atomic::AtomicUsize::new(0);
    Executor::run(&team, 2, &|p| {
        ran.fetch_add(p.index() + 1, std::sync::atomic::Ordering::Relaxed);
    });
    assert_eq!(ran.into_inner(), 3);
    drop(tok);
    assert_eq!(Executor::width(&team), 2);
    assert_eq!(team.exec(2).budget(), 2);
}

/// `run` promises every participant its own thread at once, so shares may wait for each other
/// without a barrier: the leader never runs a late member's share, even one it had to wake (a
/// team per call, whose members start asleep in the reserve).
#[test]
fn run_never_takes_a_late_members_share() {
    for round in 0..50 {
        let team = team(2);
        let (started, late) = (AtomicUsize::new(0), AtomicBool::new(false));
        team.exec(2)
            .team(|t| {
                t.run(|p| {
                    if p.index() == 0 {
                        // Waits for participant 1, which must be running elsewhere: a leader
                        // that kept its share to run after this one would never see it start.
                        meet(&started, 2, &late);
                    } else {
                        started.fetch_add(1, SeqCst);
                    }
                })
            })
            .unwrap();
        assert!(
            !late.load(SeqCst),
            "round {round}: the leader ran the late member's share after its own"
        );
    }
}

/// A kernel's section whose member was asleep may run the member's share on the leader; the
/// results are the same either way.
#[test]
fn kernel_sections_on_teams_per_call_are_complete() {
    use teamalg::kernels::par::{Executor, Part};
    for _ in 0..50 {
        let team = team(2);
        let hits: Vec<AtomicUsize> = (0..2).map(|_| AtomicUsize::new(0)).collect();
        Executor::run(&team, 2, &|p: Part<'_>| {
            hits[p.index()].fetch_add(1, Relaxed);
        });
        assert!(hits.iter().all(|h| h.load(Relaxed) == 1));
    }
}
