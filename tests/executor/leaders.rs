//! One leader per team, whichever handle leads: two threads sharing each kind of team handle in
//! every way the API allows, and nested calls on one thread and on members. Every call must
//! finish (a watchdog fails the test instead of hanging it) with every share of every section
//! run exactly once.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use faer::{Accum, Mat};
use teamalg::kernels::par::{Executor, Part};
use teamalg::{Error, Exec, Participant, Refused, TeamExec, linalg};

#[path = "../common/sample.rs"]
mod sample;
use sample::team;

/// Runs `f` on a thread of its own and fails the test if it has not finished in a minute.
fn within_a_minute(name: &str, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let h = thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => h.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(p) = h.join() {
                std::panic::resume_unwind(p)
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{name}: hung for a minute"),
    }
}

/// The shares one section ran: participant indices seen, each must be `0..width` once.
struct Shares {
    seen: Mutex<Vec<(usize, usize)>>,
}

impl Shares {
    fn new() -> Self {
        Shares {
            seen: Mutex::new(Vec::new()),
        }
    }
    fn record(&self, p: &Participant<'_>) {
        self.seen.lock().unwrap().push((p.index(), p.width()));
    }
    fn record_part(&self, p: &Part<'_>) {
        self.seen.lock().unwrap().push((p.index(), p.width()));
    }
    /// Every index of the section's width exactly once; returns the width.
    fn check(self) -> usize {
        let mut seen = self.seen.into_inner().unwrap();
        seen.sort();
        let width = seen.first().expect("the section ran").1;
        assert!(seen.iter().all(|&(_, w)| w == width), "{seen:?}");
        let indices: Vec<usize> = seen.iter().map(|&(i, _)| i).collect();
        assert_eq!(indices, (0..width).collect::<Vec<_>>(), "{seen:?}");
        width
    }
}

/// Two threads share one `TeamExec` and call `run` in a loop: each section has one leader and
/// all its shares, and a section that found the team busy ran alone.
#[test]
fn two_threads_sharing_a_team_exec() {
    within_a_minute("shared TeamExec", || {
        let t = team(3);
        let (wide, alone) = (AtomicUsize::new(0), AtomicUsize::new(0));
        t.exec(3)
            .team(|te| {
                thread::scope(|s| {
                    for _ in 0..2 {
                        s.spawn(|| {
                            for _ in 0..300 {
                                let shares = Shares::new();
                                te.run(|p| {
                                    shares.record(&p);
                                    p.barrier(); // a section's participants really meet
                                });
                                match shares.check() {
                                    1 => alone.fetch_add(1, Relaxed),
                                    3 => wide.fetch_add(1, Relaxed),
                                    w => panic!("width {w}"),
                                };
                            }
                        });
                    }
                });
            })
            .unwrap();
        assert_eq!(wide.load(Relaxed) + alone.load(Relaxed), 600);
        assert!(wide.load(Relaxed) > 0, "some sections had the whole team");
    });
}

/// Two threads share one team token (it is `Sync`): kernels called with it from both compute
/// the right product, each region on the team or, when the other leads, on its own thread.
#[test]
fn two_threads_sharing_a_team_token() {
    within_a_minute("shared token", || {
        let t = team(2);
        let token = t.exec(2);
        let a = Mat::<f64>::from_fn(96, 96, |i, j| ((i * 7 + j * 3) % 11) as f64 - 5.0);
        let mut want = Mat::<f64>::zeros(96, 96);
        linalg::matmul(
            want.as_mut(),
            Accum::Replace,
            a.as_ref(),
            a.as_ref(),
            1.0,
            &Exec::serial(),
        )
        .unwrap();
        thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..40 {
                        let mut c = Mat::<f64>::zeros(96, 96);
                        linalg::matmul(&mut c, Accum::Replace, &a, &a, 1.0, &token).unwrap();
                        assert_eq!(c, want);
                        let shares = Shares::new();
                        Executor::run(&token, 2, &|p| shares.record_part(&p));
                        shares.check();
                    }
                });
            }
        });
    });
}

/// Two threads share a held `Team`: `exec` waits like a lock, `try_exec` refuses, and the
/// team as a kernel executor never waits (a busy team runs the region's parts in turn).
#[test]
fn two_threads_sharing_a_team() {
    within_a_minute("shared Team", || {
        let t = team(2);
        let sections = AtomicUsize::new(0);
        thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for k in 0..200 {
                        if k % 2 == 0 {
                            let shares = Shares::new();
                            t.exec(2).team(|te| te.run(|p| shares.record(&p))).unwrap();
                            assert_eq!(shares.check(), 2, "a token from `exec` leads alone");
                        } else {
                            let shares = Shares::new();
                            Executor::run(&t, 2, &|p| shares.record_part(&p));
                            assert_eq!(shares.check(), 2);
                        }
                        if let Ok(tok) = t.try_exec(2) {
                            tok.for_ranges(10, 1, |_| {});
                        }
                        sections.fetch_add(1, Relaxed);
                    }
                });
            }
        });
        assert_eq!(sections.into_inner(), 400);
    });
}

/// Calls nested in a section of the same team, on the leader's thread: a section runs alone,
/// a split is refused, fork and ranges run here, broadcast is refused, a kernel runs serially,
/// and `Team::exec` returns a serial token instead of waiting for itself.
#[test]
fn nested_calls_on_the_leading_thread() {
    within_a_minute("nested on the leader", || {
        let t = team(2);
        let mut token = t.exec(2);
        token
            .reborrow()
            .team(|te| {
                te.run(|p| {
                    if p.index() != 0 {
                        return;
                    }
                    let inner = Shares::new();
                    te.run(|q| inner.record(&q));
                    assert_eq!(inner.check(), 1);
                    assert!(matches!(
                        te.split(&[1, 1], |_, _| unreachable!("refused")),
                        Err(Error::TeamBusy)
                    ));
                    let n = AtomicUsize::new(0);
                    te.token().fork(3, |_, child| {
                        assert_eq!(child.budget(), 1);
                        n.fetch_add(1, Relaxed);
                    });
                    te.token().for_ranges(10, 1, |r| {
                        n.fetch_add(r.len(), Relaxed);
                    });
                    assert_eq!(n.load(Relaxed), 13);
                    assert_eq!(te.token().broadcast(|_| {}), Err(Refused::Busy));
                    assert_eq!(t.exec(2).budget(), 1, "no wait for itself");
                    let shares = Shares::new();
                    Executor::run(&te, 2, &|p| shares.record_part(&p));
                    shares.check();
                });
            })
            .unwrap();
        // The team is whole again afterwards.
        let shares = Shares::new();
        token.team(|te| te.run(|p| shares.record(&p))).unwrap();
        assert_eq!(shares.check(), 2);
    });
}

/// Calls made by a member inside a section of its own team: the parent's `run` from a child
/// team led by a member, `Team::exec` and the team as a kernel executor from a member.
#[test]
fn nested_calls_on_members() {
    within_a_minute("nested on members", || {
        let t = team(4);
        let ran = AtomicUsize::new(0);
        t.exec(4)
            .team(|te| {
                te.split(&[2, 2], |_, child: TeamExec<'_>| {
                    // Every child runs a full section of its own...
                    let shares = Shares::new();
                    child.run(|p| shares.record(&p));
                    assert_eq!(shares.check(), 2);
                    // ...but the parent team is leading the split: it runs here, alone.
                    let parent = Shares::new();
                    te.run(|p| parent.record(&p));
                    assert_eq!(parent.check(), 1);
                    ran.fetch_add(1, Relaxed);
                })
                .unwrap();
                te.run(|p| {
                    if p.index() == 1 {
                        // A member asking its own team for a token, or running a kernel on it.
                        assert_eq!(t.exec(4).budget(), 1);
                        assert_eq!(Executor::width(&t), 1);
                        let shares = Shares::new();
                        Executor::run(&t, 4, &|q| shares.record_part(&q));
                        assert_eq!(shares.check(), 4);
                        ran.fetch_add(1, Relaxed);
                    }
                });
            })
            .unwrap();
        assert_eq!(ran.into_inner(), 3);
    });
}

/// A thread spawned inside a share, which the share waits for, leads a section of the same
/// team: it runs alone instead of waiting for the section it is part of.
#[test]
fn a_thread_spawned_inside_a_share_runs_alone() {
    within_a_minute("spawned inside a share", || {
        let t = team(2);
        let done = AtomicBool::new(false);
        t.exec(2)
            .team(|te| {
                te.run(|p| {
                    if p.index() == 0 {
                        thread::scope(|s| {
                            s.spawn(|| {
                                let shares = Shares::new();
                                te.run(|q| shares.record(&q));
                                assert_eq!(shares.check(), 1);
                                done.store(true, SeqCst);
                            });
                        });
                    }
                });
            })
            .unwrap();
        assert!(done.load(SeqCst));
    });
}

/// Many threads hammer one held team through every handle at once.
#[test]
fn many_threads_every_handle() {
    within_a_minute("every handle", || {
        let t = team(3);
        let total = AtomicUsize::new(0);
        thread::scope(|s| {
            for k in 0..4 {
                let (t, total) = (&t, &total);
                s.spawn(move || {
                    for _ in 0..100 {
                        match k {
                            0 => {
                                let n = AtomicUsize::new(0);
                                t.exec(3).for_ranges(30, 1, |r| {
                                    n.fetch_add(r.len(), Relaxed);
                                });
                                assert_eq!(n.into_inner(), 30);
                            }
                            1 => {
                                let shares = Shares::new();
                                Executor::run(t, 3, &|p| shares.record_part(&p));
                                shares.check();
                            }
                            2 => {
                                if let Ok(tok) = t.try_exec(3) {
                                    let n = AtomicUsize::new(0);
                                    tok.fork(5, |_, _| {
                                        n.fetch_add(1, Relaxed);
                                    });
                                    assert_eq!(n.into_inner(), 5);
                                }
                            }
                            _ => {
                                let shares = Shares::new();
                                t.exec(2).team(|te| te.run(|p| shares.record(&p))).unwrap();
                                shares.check();
                            }
                        }
                        total.fetch_add(1, Relaxed);
                    }
                });
            }
        });
        assert_eq!(total.into_inner(), 400);
    });
}
