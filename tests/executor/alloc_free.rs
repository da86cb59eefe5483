//! `fork`, `for_ranges`, `fork_sized`, `install` and `broadcast`, and team sections, barriers,
//! splits and team tokens, allocate nothing once warm: a counting global allocator sees every
//! allocation of every thread in this binary.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};

use teamalg::{Exec, Pool, Team};

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);
static COUNTING: AtomicBool = AtomicBool::new(false);
/// The tests of this binary count one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `calls` once to warm up, then again while counting; returns the allocations seen.
/// Callers hold `ONE_AT_A_TIME` (from before they build their pools: starting threads
/// allocates).
fn count(mut calls: impl FnMut()) -> usize {
    calls();
    ALLOCS.store(0, SeqCst);
    BYTES.store(0, SeqCst);
    COUNTING.store(true, SeqCst);
    calls();
    COUNTING.store(false, SeqCst);
    ALLOCS.load(SeqCst)
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if COUNTING.load(Relaxed) {
            ALLOCS.fetch_add(1, Relaxed);
            BYTES.fetch_add(l.size(), Relaxed);
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
            BYTES.fetch_add(n, Relaxed);
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
        // The gates.
        let e = Exec::new(pool, 2).unwrap();
        let est = std::time::Duration::from_micros(sink.load(Relaxed) as u64 % 100);
        sink.fetch_add(
            usize::from(e.pays(est, 1, 2)) + e.width_for(est, 2).get(),
            Relaxed,
        );
    }
}

fn team_calls(team: &Team, sink: &AtomicUsize) {
    for _ in 0..200 {
        team.exec(3)
            .team(|t| {
                t.run(|p| {
                    p.barrier();
                    sink.fetch_add(p.index(), Relaxed);
                });
                t.split(&[2, 1], |i, child| {
                    child.run(|p| {
                        sink.fetch_add(i + p.index(), Relaxed);
                    })
                })
                .unwrap();
            })
            .unwrap();
        team.exec(3).for_ranges(64, 8, |r| {
            sink.fetch_add(r.len(), Relaxed);
        });
        team.exec(3).fork(2, |i, child| {
            child.fork(2, |j, _| {
                sink.fetch_add(i + j, Relaxed);
            })
        });
    }
}

#[test]
fn warm_team_sections_allocate_nothing() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let team = Pool::builder()
        .threads(3)
        .build()
        .unwrap()
        .into_team(3)
        .unwrap();
    let sink = AtomicUsize::new(0);
    let allocs = count(|| team_calls(&team, &sink));
    assert_eq!(allocs, 0, "allocations in warm team sections");
    assert!(sink.load(Relaxed) > 0);
}

#[test]
fn warm_entries_allocate_nothing() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let pool = Pool::builder().threads(3).build().unwrap();
    let sink = AtomicUsize::new(0);
    let allocs = count(|| calls(&pool, &sink));
    assert_eq!(allocs, 0, "allocations in warm entries");
    assert!(sink.load(Relaxed) > 0);
}

/// Once warm, the owned forms take their scratch from the keep (`linalg::kept_scratch`): a
/// factorization allocates its copy of `A` and its own vectors, nothing else; an SVD or EVD
/// its results and `O(n)` vectors, never its scratch (several times the results' size).
#[test]
fn owned_forms_allocate_only_their_results_once_warm() {
    use faer::Mat;
    use teamalg::linalg::{self, ColPivQr, Qr, SelfAdjointEigen, Svd};

    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let team = Pool::builder()
        .threads(2)
        .build()
        .unwrap()
        .into_team(2)
        .unwrap();
    let n = 200;
    let a = Mat::<f64>::from_fn(n, n, |i, j| {
        if i == j {
            2.0 * n as f64
        } else {
            1.0 / (1 + i + j) as f64
        }
    });
    // Warm faer's per-thread GEMM workspaces on both threads, as above.
    let big = Mat::<f64>::from_fn(
        2 * n,
        2 * n,
        |i, j| if i == j { 4.0 * n as f64 } else { 1.0 },
    );
    for _ in 0..3 {
        linalg::Lu::new(&big, &team).unwrap();
        linalg::Cholesky::new(&big, &team).unwrap();
        Qr::new(&big, &team).unwrap();
    }
    let lu = count(|| drop(linalg::Lu::new(&a, &team).unwrap()));
    assert_eq!(
        lu, 3,
        "Lu::new allocates its copy of A, its swaps and its row order"
    );
    let cholesky = count(|| drop(linalg::Cholesky::new(&a, &team).unwrap()));
    assert_eq!(cholesky, 1, "Cholesky::new allocates its copy of A");
    let qr = count(|| drop(Qr::new(&a, &team).unwrap()));
    assert_eq!(
        qr, 2,
        "Qr::new allocates its copy of A and its block factors"
    );
    let cp = count(|| drop(ColPivQr::new(&a, &team).unwrap()));
    assert_eq!(
        cp, 4,
        "ColPivQr::new allocates its copy, block factors and permutation"
    );
    let results = 2 * n * n * 8;
    for (name, bytes, scratch) in [
        (
            "Svd::new_thin",
            {
                count(|| drop(Svd::new_thin(&a, &team).unwrap()));
                BYTES.load(SeqCst)
            },
            linalg::svd_scratch::<f64>(n, n, true),
        ),
        (
            "SelfAdjointEigen::new",
            {
                count(|| drop(SelfAdjointEigen::new(&a, &team).unwrap()));
                BYTES.load(SeqCst)
            },
            linalg::self_adjoint_eigen_scratch::<f64>(n, true),
        ),
    ] {
        let scratch = scratch.unaligned_bytes_required();
        assert!(scratch > results, "{name}: the scratch is the larger");
        assert!(
            bytes < results + results / 4,
            "{name} allocated {bytes} bytes once warm (results {results}, scratch {scratch})"
        );
    }
    assert!(linalg::kept_scratch() > 0);
}

/// The facade's calls allocate only what their documentation says: `matmul` and
/// `solve_triangular` nothing, `cholesky_with_scratch` nothing, `lu_with_scratch` its two
/// pivot vectors, `qr_with_scratch` its block factors (the scratch comes from the caller's
/// `MemStack`).
#[test]
fn the_facade_allocates_only_its_pivots() {
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::{Accum, Mat};
    use teamalg::linalg::{self, Diag, Options, SolveSide, Triangle};

    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let team = Pool::builder()
        .threads(2)
        .build()
        .unwrap()
        .into_team(2)
        .unwrap();
    let n = 96;
    let a = Mat::<f64>::from_fn(n, n, |i, j| {
        if i == j {
            2.0 * n as f64
        } else {
            1.0 / (1 + i + j) as f64
        }
    });
    let mut c = Mat::<f64>::zeros(n, n);
    let mut b = Mat::<f64>::ones(n, 4);
    let mut work = a.clone();
    let opts = Options::new();
    let mut buf =
        MemBuffer::new(linalg::lu_scratch::<f64>(n, n).or(linalg::cholesky_scratch::<f64>(n)));
    // The factorizations' participants claim column chunks of whatever size is left, so which
    // thread runs the largest GEMM varies from call to call, and faer's per-thread GEMM
    // workspaces grow (once) to the largest product a thread has run. Warm both threads with
    // factorizations twice as large first: every chunk of the counted calls is smaller.
    let big = Mat::<f64>::from_fn(
        2 * n,
        2 * n,
        |i, j| if i == j { 4.0 * n as f64 } else { 1.0 },
    );
    for _ in 0..3 {
        linalg::Cholesky::new(&big, &team).unwrap();
        linalg::Lu::new(&big, &team).unwrap();
        linalg::Qr::new(&big, &team).unwrap();
    }
    let products = count(|| {
        linalg::matmul(&mut c, Accum::Replace, &a, &a, 1.0, &team).unwrap();
        let (left, lower, non_unit) = (SolveSide::Left, Triangle::Lower, Diag::NonUnit);
        linalg::solve_triangular(&a, &mut b, left, lower, non_unit, &team).unwrap();
    });
    assert_eq!(products, 0, "allocations in matmul and solve_triangular");
    let cholesky = count(|| {
        work.copy_from(&a);
        let stack = MemStack::new(&mut buf);
        linalg::cholesky_with_scratch(work.as_mut(), &team, &opts, stack).unwrap();
    });
    assert_eq!(cholesky, 0, "allocations in cholesky_with_scratch");
    let lu = count(|| {
        work.copy_from(&a);
        let stack = MemStack::new(&mut buf);
        linalg::lu_with_scratch(work.as_mut(), &team, &opts, stack).unwrap();
    });
    assert_eq!(
        lu, 2,
        "lu_with_scratch allocates its swaps and its row order, nothing else"
    );
    // QR, forced onto the team's two participants: only its block factors.
    let forced = Options::new().threshold(
        teamalg::gates::Family::Qr,
        teamalg::gates::ParThreshold::Fixed(0),
    );
    let mut qr_buf = MemBuffer::new(linalg::qr_scratch::<f64>(n, n, 2));
    let qr = count(|| {
        work.copy_from(&a);
        let stack = MemStack::new(&mut qr_buf);
        linalg::qr_with_scratch(work.as_mut(), &team, &forced, stack).unwrap();
    });
    assert_eq!(
        qr, 1,
        "qr_with_scratch allocates its block factors, nothing else"
    );
    // The same call again, recorded (which allocates): it did run sections on the team.
    work.copy_from(&a);
    let ((), sections) = teamalg::kernels::sections::collect(|| {
        let stack = MemStack::new(&mut qr_buf);
        linalg::qr_with_scratch(work.as_mut(), &team, &forced, stack).unwrap();
    });
    assert!(
        sections.iter().any(|s| s.width == 2),
        "the QR ran sections on the team"
    );
}

/// A warm batch spread over a team allocates nothing: each participant reuses one buffer of
/// the keep, and the problems run faer's serial kernels in it (the caller's views are made once,
/// outside the count, as a caller repeating a batch makes them).
#[test]
fn warm_batches_allocate_nothing() {
    use faer::{Accum, Mat, MatMut, MatRef};
    use teamalg::gates::{Family, ParThreshold};
    use teamalg::linalg::batch::{self, Status};
    use teamalg::linalg::{Diag, Options, SolveSide, Triangle};

    fn views(v: &mut [Mat<f64>]) -> Vec<MatMut<'_, f64>> {
        v.iter_mut().map(|m| m.as_mut()).collect()
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let team = Pool::builder()
        .threads(2)
        .build()
        .unwrap()
        .into_team(2)
        .unwrap();
    let sizes: Vec<usize> = (0..400).map(|k| 4 + k % 29).collect();
    let a0: Vec<Mat<f64>> = sizes
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            Mat::from_fn(n, n, |i, j| {
                if i == j {
                    (2 * n + k) as f64
                } else {
                    1.0 / (1 + i + j) as f64
                }
            })
        })
        .collect();
    let (mut a, mut b) = (
        a0.clone(),
        sizes.iter().map(|&n| Mat::ones(n, 2)).collect::<Vec<_>>(),
    );
    let mut c: Vec<Mat<f64>> = sizes.iter().map(|&n| Mat::zeros(n, n)).collect();
    let mut w: Vec<Vec<f64>> = sizes.iter().map(|&n| vec![0.0; n]).collect();
    let mut status: Vec<Status> = vec![Ok(()); sizes.len()];
    let ar: Vec<MatRef<'_, f64>> = a0.iter().map(|m| m.as_ref()).collect();
    let (mut av, mut bv, mut cv) = (views(&mut a), views(&mut b), views(&mut c));
    let mut wv: Vec<&mut [f64]> = w.iter_mut().map(|x| &mut x[..]).collect();
    let spread = |f: Family| Options::new().threshold(f, ParThreshold::Fixed(0));
    let restore = |av: &mut [MatMut<'_, f64>]| {
        for (x, y) in av.iter_mut().zip(&a0) {
            x.copy_from(y);
        }
    };
    let names = [
        "lu_solve",
        "cholesky_solve",
        "matmul",
        "solve_triangular",
        "lstsq",
        "svd",
        "self_adjoint_eigen",
    ];
    let mut run = |name: &str, st: &mut [Status]| match name {
        "lu_solve" => {
            restore(&mut av);
            let run = batch::lu_solve_with(&mut av, &mut bv, st, &team, &spread(Family::LuPartial));
            assert_eq!(run.unwrap().spread_width, 2);
        }
        "cholesky_solve" => {
            restore(&mut av);
            let o = spread(Family::Cholesky);
            batch::cholesky_solve_with(&mut av, &mut bv, st, &team, &o).unwrap();
        }
        "matmul" => {
            let o = spread(Family::Gemm);
            batch::matmul_with(&mut cv, Accum::Replace, &ar, &ar, 1.0, st, &team, &o).unwrap();
        }
        "solve_triangular" => {
            let o = spread(Family::TriangularSolve);
            let (l, lo, nu) = (SolveSide::Left, Triangle::Lower, Diag::NonUnit);
            batch::solve_triangular_with(&ar, &mut bv, l, lo, nu, st, &team, &o).unwrap();
        }
        "lstsq" => {
            restore(&mut av);
            let o = spread(Family::Qr);
            batch::lstsq_with(&mut av, &mut bv, st, &team, &o).unwrap();
        }
        "svd" => {
            let o = spread(Family::BidiagSvdDc);
            batch::svd_with(&ar, &mut wv, Some((&mut cv).into()), None, st, &team, &o).unwrap();
        }
        _ => {
            let o = spread(Family::TridiagEvdDc);
            batch::self_adjoint_eigen_with(&ar, &mut wv, Some((&mut cv).into()), st, &team, &o)
                .unwrap();
        }
    };
    // faer's serial kernels keep a workspace per thread that grows, once, to the largest
    // product the thread has run; which thread runs which problem varies with the claims, so
    // every family runs a few times on both threads before anything is counted.
    for _ in 0..4 {
        for name in names {
            run(name, &mut status);
        }
    }
    for name in names {
        let n = count(|| run(name, &mut status));
        assert!(status.iter().all(|s| s.is_ok()), "{name}: {status:?}");
        assert_eq!(n, 0, "{name}: allocations in a warm batch");
    }
}
