//! `linalg::batch`: every family on every executor against a serial loop of faer's own calls
//! (bit for bit where the problems are spread), uneven sizes, one bad problem among many, the
//! shape the gate chooses, and the refusals of the whole call.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::svd::ComputeSvdVectors;
use faer::{Accum, Conj, Mat, MatMut, MatRef, Par, c64};
use teamalg::gates::trace;
use teamalg::gates::{Family, ParThreshold};
use teamalg::kernels::par::Executor;
use teamalg::linalg::batch::{self, Status};
use teamalg::linalg::{self, Diag, LinalgError, Options, SolveSide, Triangle};

use super::sample;
use sample::{Sample, assert_backward, every_executor, hermitian, mat, norm, spd, team};

/// Orders from 1 to 24, uneven, with a 0 among them.
fn orders(count: usize) -> Vec<usize> {
    (0..count).map(|k| (k * 7 + 3) % 25).collect()
}

/// The family forced onto the executor's whole width (the spread section for any size).
fn forced(family: Family) -> Options {
    Options::new().threshold(family, ParThreshold::Fixed(0))
}

fn views_mut<T>(v: &mut [Mat<T>]) -> Vec<MatMut<'_, T>> {
    v.iter_mut().map(|m| m.as_mut()).collect()
}

fn views<T>(v: &[Mat<T>]) -> Vec<MatRef<'_, T>> {
    v.iter().map(|m| m.as_ref()).collect()
}

fn same<T: Sample>(what: &str, k: usize, x: &Mat<T>, y: &Mat<T>) {
    assert_eq!(x.shape(), y.shape(), "{what} {k}");
    for j in 0..x.ncols() {
        for i in 0..x.nrows() {
            assert!(
                x[(i, j)] == y[(i, j)],
                "{what} {k}: ({i}, {j}) differs from the serial loop's"
            );
        }
    }
}

/// faer's serial LU and solve, as a serial loop calls them.
fn faer_lu_solve<T: Sample>(a: &mut Mat<T>, b: &mut Mat<T>) {
    use faer::linalg::lu::partial_pivoting::{factor, solve};
    let n = a.nrows();
    let mut buf = MemBuffer::new(
        factor::lu_in_place_scratch::<usize, T>(n, n, Par::Seq, Default::default()).or(
            solve::solve_in_place_scratch::<usize, T>(n, b.ncols(), Par::Seq),
        ),
    );
    let stack = MemStack::new(&mut buf);
    let (mut p, mut pi) = (vec![0usize; n], vec![0usize; n]);
    let (_, perm) = factor::lu_in_place(
        a.as_mut(),
        &mut p,
        &mut pi,
        Par::Seq,
        stack,
        Default::default(),
    );
    let a = a.as_ref();
    solve::solve_in_place_with_conj(a, a, perm, Conj::No, b.as_mut(), Par::Seq, stack);
}

fn check_lu<T: Sample>(exec: &dyn Executor, options: &Options, seed: f64) {
    let n = orders(40);
    let a0: Vec<Mat<T>> = n.iter().map(|&n| spd::<T>(n, seed)).collect();
    let b0: Vec<Mat<T>> = n.iter().map(|&n| mat::<T>(n, 2, seed + 1.0)).collect();
    let (mut a, mut b) = (a0.clone(), b0.clone());
    let mut status: Vec<Status> = vec![Err(LinalgError::NoConvergence { op: "unset" }); n.len()];
    let run = batch::lu_solve_with(
        &mut views_mut(&mut a),
        &mut views_mut(&mut b),
        &mut status,
        exec,
        options,
    )
    .unwrap();
    assert_eq!((run.problems, run.failed, run.on_team), (n.len(), 0, 0));
    for k in 0..n.len() {
        assert_eq!(status[k], Ok(()));
        let (mut ra, mut rb) = (a0[k].clone(), b0[k].clone());
        faer_lu_solve(&mut ra, &mut rb);
        same("lu factors", k, &a[k], &ra);
        same("lu solution", k, &b[k], &rb);
        let residual = &a0[k] * &b[k] - &b0[k];
        assert_backward::<T>("lu", residual.as_ref(), n[k], norm(a0[k].as_ref()));
    }
}

#[test]
fn lu_solve_matches_the_serial_loop_everywhere() {
    every_executor(|exec, force| {
        let o = if force {
            forced(Family::LuPartial)
        } else {
            Options::new()
        };
        check_lu::<f64>(exec, &o, 1.0);
        check_lu::<c64>(exec, &o, 2.0);
    });
}

#[test]
fn cholesky_solve_matches_the_serial_loop_everywhere() {
    use faer::linalg::cholesky::llt::{factor, solve};
    every_executor(|exec, force| {
        let o = if force {
            forced(Family::Cholesky)
        } else {
            Options::new()
        };
        let n = orders(30);
        let a0: Vec<Mat<c64>> = n.iter().map(|&n| spd::<c64>(n, 3.0)).collect();
        let b0: Vec<Mat<c64>> = n.iter().map(|&n| mat::<c64>(n, 3, 4.0)).collect();
        let (mut a, mut b) = (a0.clone(), b0.clone());
        let mut status = vec![Ok(()); n.len()];
        let run = batch::cholesky_solve_with(
            &mut views_mut(&mut a),
            &mut views_mut(&mut b),
            &mut status,
            exec,
            &o,
        )
        .unwrap();
        assert_eq!(run.failed, 0);
        for k in 0..n.len() {
            let (mut ra, mut rb) = (a0[k].clone(), b0[k].clone());
            let mut buf = MemBuffer::new(factor::cholesky_in_place_scratch::<c64>(
                n[k],
                Par::Seq,
                Default::default(),
            ));
            let stack = MemStack::new(&mut buf);
            factor::cholesky_in_place(
                ra.as_mut(),
                Default::default(),
                Par::Seq,
                stack,
                Default::default(),
            )
            .unwrap();
            solve::solve_in_place_with_conj(ra.as_ref(), Conj::No, rb.as_mut(), Par::Seq, stack);
            same("cholesky", k, &b[k], &rb);
            let residual = &a0[k] * &b[k] - &b0[k];
            assert_backward::<c64>("cholesky", residual.as_ref(), n[k], norm(a0[k].as_ref()));
        }
    });
}

#[test]
fn products_and_triangular_solves_match_the_serial_loop_everywhere() {
    every_executor(|exec, force| {
        let n = orders(30);
        let a: Vec<Mat<f64>> = n.iter().map(|&n| mat::<f64>(n, n + 1, 5.0)).collect();
        let b: Vec<Mat<f64>> = n.iter().map(|&n| mat::<f64>(n + 1, 3, 6.0)).collect();
        let c0: Vec<Mat<f64>> = n.iter().map(|&n| mat::<f64>(n, 3, 7.0)).collect();
        let mut c = c0.clone();
        let mut status = vec![Ok(()); n.len()];
        let o = if force {
            forced(Family::Gemm)
        } else {
            Options::new()
        };
        batch::matmul_with(
            &mut views_mut(&mut c),
            Accum::Add,
            &views(&a),
            &views(&b),
            0.5,
            &mut status,
            exec,
            &o,
        )
        .unwrap();
        for k in 0..n.len() {
            let mut r = c0[k].clone();
            faer::linalg::matmul::matmul(
                r.as_mut(),
                Accum::Add,
                a[k].as_ref(),
                b[k].as_ref(),
                0.5,
                Par::Seq,
            );
            same("gemm", k, &c[k], &r);
        }

        let t: Vec<Mat<f64>> = n.iter().map(|&n| spd::<f64>(n, 8.0)).collect();
        let x0: Vec<Mat<f64>> = n.iter().map(|&n| mat::<f64>(2, n, 9.0)).collect();
        let mut x = x0.clone();
        let o = if force {
            forced(Family::TriangularSolve)
        } else {
            Options::new()
        };
        batch::solve_triangular_with(
            &views(&t),
            &mut views_mut(&mut x),
            SolveSide::Right,
            Triangle::Upper,
            Diag::NonUnit,
            &mut status,
            exec,
            &o,
        )
        .unwrap();
        for k in 0..n.len() {
            let mut r = x0[k].clone();
            let one = teamalg::Exec::serial();
            linalg::solve_triangular(
                &t[k],
                &mut r,
                SolveSide::Right,
                Triangle::Upper,
                Diag::NonUnit,
                &one,
            )
            .unwrap();
            same("trsm", k, &x[k], &r);
        }
    });
}

#[test]
fn least_squares_match_the_serial_loop_everywhere() {
    use faer::linalg::qr::no_pivoting::{factor, solve};
    every_executor(|exec, force| {
        let n: Vec<usize> = orders(30).into_iter().map(|n| n.max(1)).collect();
        let a0: Vec<Mat<f64>> = n.iter().map(|&n| mat::<f64>(n + 3, n, 10.0)).collect();
        let b0: Vec<Mat<f64>> = n.iter().map(|&n| mat::<f64>(n + 3, 2, 11.0)).collect();
        let (mut a, mut b) = (a0.clone(), b0.clone());
        let mut status = vec![Ok(()); n.len()];
        let o = if force {
            forced(Family::Qr)
        } else {
            Options::new()
        };
        batch::lstsq_with(
            &mut views_mut(&mut a),
            &mut views_mut(&mut b),
            &mut status,
            exec,
            &o,
        )
        .unwrap();
        for k in 0..n.len() {
            assert_eq!(status[k], Ok(()), "{k}");
            let (m, nn) = a0[k].shape();
            let (mut ra, mut rb) = (a0[k].clone(), b0[k].clone());
            let bs = factor::recommended_block_size::<f64>(m, nn);
            let mut h = Mat::<f64>::zeros(bs, nn);
            let mut buf = MemBuffer::new(
                factor::qr_in_place_scratch::<f64>(m, nn, bs, Par::Seq, Default::default()).or(
                    solve::solve_lstsq_in_place_scratch::<f64>(m, nn, bs, 2, Par::Seq),
                ),
            );
            let stack = MemStack::new(&mut buf);
            factor::qr_in_place(ra.as_mut(), h.as_mut(), Par::Seq, stack, Default::default());
            solve::solve_lstsq_in_place_with_conj(
                ra.as_ref(),
                h.as_ref(),
                ra.as_ref(),
                Conj::No,
                rb.as_mut(),
                Par::Seq,
                stack,
            );
            same("lstsq", k, &b[k], &rb);
        }
    });
}

#[test]
fn svds_and_evds_match_the_serial_loop_everywhere() {
    every_executor(|exec, force| {
        let n: Vec<usize> = orders(16);
        let a: Vec<Mat<c64>> = n.iter().map(|&n| mat::<c64>(n + 2, n, 12.0)).collect();
        let mut s: Vec<Vec<f64>> = n.iter().map(|&n| vec![0.0; n]).collect();
        let mut u: Vec<Mat<c64>> = n.iter().map(|&n| Mat::zeros(n + 2, n)).collect();
        let mut sv: Vec<&mut [f64]> = s.iter_mut().map(|x| &mut x[..]).collect();
        let mut status = vec![Ok(()); n.len()];
        let o = if force {
            forced(Family::BidiagSvdDc)
        } else {
            Options::new()
        };
        batch::svd_with(
            &views(&a),
            &mut sv,
            Some((&mut views_mut(&mut u)).into()),
            None,
            &mut status,
            exec,
            &o,
        )
        .unwrap();
        for k in 0..n.len() {
            assert_eq!(status[k], Ok(()), "{k}");
            let (m, nn) = a[k].shape();
            let mut d = Mat::<c64>::zeros(nn, 1);
            let mut ru = Mat::<c64>::zeros(m, nn);
            let mut buf = MemBuffer::new(faer::linalg::svd::svd_scratch::<c64>(
                m,
                nn,
                ComputeSvdVectors::Thin,
                ComputeSvdVectors::No,
                Par::Seq,
                Default::default(),
            ));
            faer::linalg::svd::svd(
                a[k].as_ref(),
                d.as_mut().col_mut(0).as_diagonal_mut(),
                Some(ru.as_mut()),
                None,
                Par::Seq,
                MemStack::new(&mut buf),
                Default::default(),
            )
            .unwrap();
            same("svd u", k, &u[k], &ru);
            assert!((0..nn).all(|j| s[k][j] == d[(j, 0)].re), "svd values {k}");
        }

        let h: Vec<Mat<f64>> = n.iter().map(|&n| hermitian::<f64>(n, 13.0)).collect();
        let mut w: Vec<Vec<f64>> = n.iter().map(|&n| vec![0.0; n]).collect();
        let mut wv: Vec<&mut [f64]> = w.iter_mut().map(|x| &mut x[..]).collect();
        let o = if force {
            forced(Family::TridiagEvdDc)
        } else {
            Options::new()
        };
        batch::self_adjoint_eigen_with(&views(&h), &mut wv, None, &mut status, exec, &o).unwrap();
        for k in 0..n.len() {
            let nn = n[k];
            let mut d = Mat::<f64>::zeros(nn, 1);
            let mut buf = MemBuffer::new(faer::linalg::evd::self_adjoint_evd_scratch::<f64>(
                nn,
                faer::linalg::evd::ComputeEigenvectors::No,
                Par::Seq,
                Default::default(),
            ));
            faer::linalg::evd::self_adjoint_evd(
                h[k].as_ref(),
                d.as_mut().col_mut(0).as_diagonal_mut(),
                None,
                Par::Seq,
                MemStack::new(&mut buf),
                Default::default(),
            )
            .unwrap();
            assert!((0..nn).all(|j| w[k][j] == d[(j, 0)]), "evd values {k}");
        }
    });
}

/// One singular, one non-finite and one misshapen problem among a thousand: each gets its own
/// error, and the other 997 results are the serial loop's.
#[test]
fn bad_problems_fail_alone() {
    let team = team(2);
    let count = 1000;
    let a0: Vec<Mat<f64>> = (0..count).map(|k| spd::<f64>(8, k as f64)).collect();
    let b0: Vec<Mat<f64>> = (0..count)
        .map(|k| mat::<f64>(8, 1, k as f64 + 0.5))
        .collect();
    let (mut a, mut b) = (a0.clone(), b0.clone());
    a[10] = Mat::zeros(8, 8);
    a[500][(3, 4)] = f64::NAN;
    b[999] = Mat::zeros(7, 1);
    let nan_input = a[500].clone();
    let mut status = vec![Ok(()); count];
    let o = forced(Family::LuPartial);
    let run = batch::lu_solve_with(
        &mut views_mut(&mut a),
        &mut views_mut(&mut b),
        &mut status,
        &team,
        &o,
    )
    .unwrap();
    assert_eq!((run.failed, run.spread_width), (3, 2));
    assert_eq!(
        status[10],
        Err(LinalgError::Singular {
            op: "batch::lu_solve",
            index: 0
        })
    );
    assert_eq!(
        status[500],
        Err(LinalgError::NotFinite {
            op: "batch::lu_solve",
            operand: "A",
            row: 3,
            col: 4
        })
    );
    assert!(matches!(
        status[999],
        Err(LinalgError::ShapeMismatch { operand: "B", .. })
    ));
    // The non-finite problem was left as it was given.
    assert!(
        a[500]
            .as_ref()
            .col(4)
            .iter()
            .zip(nan_input.col(4).iter())
            .all(|(x, y)| x == y || (x.is_nan() && y.is_nan()))
    );
    for k in (0..count).filter(|k| ![10, 500, 999].contains(k)) {
        assert_eq!(status[k], Ok(()));
        let (mut ra, mut rb) = (a0[k].clone(), b0[k].clone());
        faer_lu_solve(&mut ra, &mut rb);
        same("lu", k, &b[k], &rb);
    }
}

/// Many small problems are spread; a problem that is a whole participant's share and pays
/// alone runs on the team; the trace names the spread.
#[test]
fn the_gate_chooses_the_shape() {
    let team = team(2);
    // 2000 problems of 16: spread two wide.
    let mut a: Vec<Mat<f64>> = (0..2000).map(|k| spd::<f64>(16, k as f64)).collect();
    let mut b: Vec<Mat<f64>> = (0..2000).map(|_| Mat::ones(16, 1)).collect();
    let mut status = vec![Ok(()); 2000];
    let (run, seen) = trace::collect(|| {
        batch::lu_solve(
            &mut views_mut(&mut a),
            &mut views_mut(&mut b),
            &mut status,
            &team,
        )
        .unwrap()
    });
    // Two wide, unless the team's participants were late lately (a machine loaded by other
    // work, or by this binary's other tests), the load let them fall asleep and the spread
    // would not pay their wake (`wake not paid`, with lateness read), or this binary's other
    // tests held the CPUs (`occupied`): then serial is the gate's right answer.
    let lu = seen
        .iter()
        .find(|d| d.site == "batch/lu")
        .expect("a batch/lu decision");
    let loaded = match lu.reason {
        trace::Reason::Late | trace::Reason::Occupied => true,
        trace::Reason::WakeNotPaid => !lu.late.is_zero(),
        _ => false,
    };
    let width = if loaded { 1 } else { 2 };
    assert_eq!((run.on_team, run.spread_width), (0, width), "{seen:?}");
    assert_eq!(lu.width, width, "{seen:?}");
    // One problem of 600 beside ten of 8: the large one on the team, the small ones too few
    // to spread.
    let sizes: Vec<usize> = std::iter::once(600).chain([8; 10]).collect();
    let a0: Vec<Mat<f64>> = sizes.iter().map(|&n| spd::<f64>(n, 1.0)).collect();
    let b0: Vec<Mat<f64>> = sizes.iter().map(|&n| mat::<f64>(n, 1, 2.0)).collect();
    let (mut a, mut b) = (a0.clone(), b0.clone());
    let mut status = vec![Ok(()); sizes.len()];
    let run = batch::lu_solve(
        &mut views_mut(&mut a),
        &mut views_mut(&mut b),
        &mut status,
        &team,
    )
    .unwrap();
    assert_eq!((run.on_team, run.spread_width, run.failed), (1, 1, 0));
    let residual = &a0[0] * &b[0] - &b0[0];
    assert_backward::<f64>(
        "lu on the team",
        residual.as_ref(),
        600,
        norm(a0[0].as_ref()),
    );
    // The caller's word: never parallel.
    let never = Options::new().threshold(Family::LuPartial, ParThreshold::Never);
    let run = batch::lu_solve_with(
        &mut views_mut(&mut a),
        &mut views_mut(&mut b),
        &mut status,
        &team,
        &never,
    )
    .unwrap();
    assert_eq!((run.on_team, run.spread_width), (0, 1));
}

#[test]
fn slices_of_other_lengths_are_refused_before_anything_is_read() {
    let team = team(2);
    let mut a: Vec<Mat<f64>> = (0..3).map(|k| spd::<f64>(4, k as f64)).collect();
    let mut b: Vec<Mat<f64>> = (0..2).map(|_| Mat::ones(4, 1)).collect();
    let before = a.clone();
    let mut status = vec![Ok(()); 3];
    let e = batch::lu_solve(
        &mut views_mut(&mut a),
        &mut views_mut(&mut b),
        &mut status,
        &team,
    )
    .unwrap_err();
    assert_eq!(
        e,
        LinalgError::BatchLength {
            op: "batch::lu_solve",
            operand: "b",
            expected: 3,
            found: 2
        }
    );
    assert_eq!(a, before);
    let mut short = vec![Ok(()); 2];
    let mut b: Vec<Mat<f64>> = (0..3).map(|_| Mat::ones(4, 1)).collect();
    let e = batch::lu_solve(
        &mut views_mut(&mut a),
        &mut views_mut(&mut b),
        &mut short,
        &team,
    )
    .unwrap_err();
    assert!(matches!(
        e,
        LinalgError::BatchLength {
            operand: "status",
            ..
        }
    ));
    let e = batch::matmul(
        &mut views_mut(&mut a),
        Accum::Replace,
        &views(&before),
        &views(&before),
        f64::NAN,
        &mut status,
        &team,
    )
    .unwrap_err();
    assert!(matches!(
        e,
        LinalgError::NotFinite {
            operand: "alpha",
            ..
        }
    ));
    assert_eq!(a, before);
}

/// Every family with one large problem among a few small ones: the large one runs on the whole
/// team (the single-call kernel), the others on the caller, and every result holds to its
/// backward-error bound.
#[test]
fn each_family_runs_a_large_problem_on_the_team() {
    let team = team(2);
    let small = 6;
    let sizes = |big: usize| -> Vec<usize> { std::iter::once(big).chain([small; 4]).collect() };

    let n = sizes(500);
    let a0: Vec<Mat<f64>> = n.iter().map(|&n| spd::<f64>(n, 1.0)).collect();
    let b0: Vec<Mat<f64>> = n.iter().map(|&n| mat::<f64>(n, 2, 2.0)).collect();
    let mut status = vec![Ok(()); n.len()];
    for family in ["lu", "cholesky", "lstsq"] {
        let (mut a, mut b) = (a0.clone(), b0.clone());
        let (av, bv) = (&mut views_mut(&mut a), &mut views_mut(&mut b));
        let run = match family {
            "lu" => batch::lu_solve(av, bv, &mut status, &team),
            "cholesky" => batch::cholesky_solve(av, bv, &mut status, &team),
            _ => batch::lstsq(av, bv, &mut status, &team),
        }
        .unwrap();
        assert_eq!((run.on_team, run.failed), (1, 0), "{family}");
        for k in 0..n.len() {
            let residual = &a0[k] * &b[k] - &b0[k];
            assert_backward::<f64>(family, residual.as_ref(), n[k], norm(a0[k].as_ref()));
        }
    }

    let n = sizes(400);
    let a: Vec<Mat<f64>> = n.iter().map(|&n| mat::<f64>(n, n, 3.0)).collect();
    let mut c: Vec<Mat<f64>> = n.iter().map(|&n| Mat::zeros(n, n)).collect();
    let run = batch::matmul(
        &mut views_mut(&mut c),
        Accum::Replace,
        &views(&a),
        &views(&a),
        1.0,
        &mut status,
        &team,
    )
    .unwrap();
    assert_eq!(run.on_team, 1);
    for k in 0..n.len() {
        let e = (&c[k] - &a[k] * &a[k]).norm_max() / (&a[k] * &a[k]).norm_max().max(1.0);
        assert!(e < 1e-13, "gemm {k}: {e:e}");
    }
    let mut x: Vec<Mat<f64>> = n.iter().map(|&n| mat::<f64>(n, n, 4.0)).collect();
    let x0 = x.clone();
    let t: Vec<Mat<f64>> = n.iter().map(|&n| spd::<f64>(n, 5.0)).collect();
    let (left, lower, non_unit) = (SolveSide::Left, Triangle::Lower, Diag::NonUnit);
    let run = batch::solve_triangular(
        &views(&t),
        &mut views_mut(&mut x),
        left,
        lower,
        non_unit,
        &mut status,
        &team,
    )
    .unwrap();
    assert_eq!(run.on_team, 1);
    for k in 0..n.len() {
        let l = Mat::from_fn(n[k], n[k], |i, j| if i >= j { t[k][(i, j)] } else { 0.0 });
        // A triangular solve's residual is bounded by `c u n ||L|| ||X||`.
        let residual = &l * &x[k] - &x0[k];
        let scale = norm(l.as_ref()) * norm(x[k].as_ref());
        assert_backward::<f64>("trsm", residual.as_ref(), n[k], scale);
    }

    let n = sizes(300);
    let h: Vec<Mat<f64>> = n.iter().map(|&n| hermitian::<f64>(n, 6.0)).collect();
    let mut w: Vec<Vec<f64>> = n.iter().map(|&n| vec![0.0; n]).collect();
    let mut u: Vec<Mat<f64>> = n.iter().map(|&n| Mat::zeros(n, n)).collect();
    let mut wv: Vec<&mut [f64]> = w.iter_mut().map(|x| &mut x[..]).collect();
    let run = batch::self_adjoint_eigen(
        &views(&h),
        &mut wv,
        Some((&mut views_mut(&mut u)).into()),
        &mut status,
        &team,
    )
    .unwrap();
    assert_eq!(run.on_team, 1);
    for k in 0..n.len() {
        let d = Mat::from_fn(n[k], n[k], |i, j| if i == j { w[k][i] } else { 0.0 });
        let residual = &h[k] * &u[k] - &u[k] * &d;
        assert_backward::<f64>("evd", residual.as_ref(), n[k], norm(h[k].as_ref()));
    }
    let mut s: Vec<Vec<f64>> = n.iter().map(|&n| vec![0.0; n]).collect();
    let mut sv: Vec<&mut [f64]> = s.iter_mut().map(|x| &mut x[..]).collect();
    let mut v: Vec<Mat<f64>> = n.iter().map(|&n| Mat::zeros(n, n)).collect();
    let run = batch::svd(
        &views(&h),
        &mut sv,
        Some((&mut views_mut(&mut u)).into()),
        Some((&mut views_mut(&mut v)).into()),
        &mut status,
        &team,
    )
    .unwrap();
    assert_eq!(run.on_team, 1);
    for k in 0..n.len() {
        let d = Mat::from_fn(n[k], n[k], |i, j| if i == j { s[k][i] } else { 0.0 });
        let residual = &u[k] * &d * v[k].transpose() - &h[k];
        assert_backward::<f64>("svd", residual.as_ref(), n[k], norm(h[k].as_ref()));
    }
}

/// Strided operands: the same results as the views, bit for bit, and a matrix that is not a
/// whole number of problems refused.
#[test]
fn strided_operands_match_the_views() {
    use teamalg::linalg::batch::{BatchMut, BatchRef};
    let team = team(2);
    let (n, count) = (7, 300);
    let big_a = Mat::from_fn(n, n * count, |i, j| {
        let k = j / n;
        if i == j % n {
            (2 * n + k) as f64
        } else {
            1.0 / (1 + i + j % n) as f64
        }
    });
    let big_b = mat::<f64>(n, 2 * count, 1.0);
    let o = forced(Family::LuPartial);
    let mut status = vec![Ok(()); count];
    let (mut sa, mut sb) = (big_a.clone(), big_b.clone());
    let run = batch::lu_solve_with(
        BatchMut::strided(sa.as_mut(), n).unwrap(),
        BatchMut::strided(sb.as_mut(), 2).unwrap(),
        &mut status,
        &team,
        &o,
    )
    .unwrap();
    assert_eq!((run.failed, run.spread_width), (0, 2));
    let mut a: Vec<Mat<f64>> = (0..count)
        .map(|k| big_a.get(.., k * n..(k + 1) * n).to_owned())
        .collect();
    let mut b: Vec<Mat<f64>> = (0..count)
        .map(|k| big_b.get(.., 2 * k..2 * k + 2).to_owned())
        .collect();
    batch::lu_solve_with(
        &mut views_mut(&mut a),
        &mut views_mut(&mut b),
        &mut status,
        &team,
        &o,
    )
    .unwrap();
    for k in 0..count {
        same(
            "strided lu",
            k,
            &sb.get(.., 2 * k..2 * k + 2).to_owned(),
            &b[k],
        );
        same(
            "strided factors",
            k,
            &sa.get(.., k * n..(k + 1) * n).to_owned(),
            &a[k],
        );
    }
    // Products, reading and writing strided.
    let mut c = Mat::<f64>::zeros(n, n * count);
    let ar = BatchRef::strided(big_a.as_ref(), n).unwrap();
    let o = forced(Family::Gemm);
    batch::matmul_with(
        BatchMut::strided(c.as_mut(), n).unwrap(),
        Accum::Replace,
        ar,
        ar,
        1.0,
        &mut status,
        &team,
        &o,
    )
    .unwrap();
    for k in (0..count).step_by(37) {
        let x = big_a.get(.., k * n..(k + 1) * n);
        same(
            "strided gemm",
            k,
            &c.get(.., k * n..(k + 1) * n).to_owned(),
            &(x * x),
        );
    }
    // 2 100 columns are not a whole number of problems of 11.
    match BatchRef::strided(big_a.as_ref(), 11) {
        Err(e) => assert!(
            matches!(
                e,
                LinalgError::ShapeMismatch {
                    op: "batch::strided",
                    found: 2100,
                    ..
                }
            ),
            "{e:?}"
        ),
        Ok(_) => panic!("a partial problem was accepted"),
    }
    assert!(
        BatchRef::<f64>::strided(Mat::<f64>::zeros(3, 0).as_ref(), 0)
            .unwrap()
            .is_empty()
    );
}

/// Batches nested in user parallelism: four jobs of one pool's `Exec::fork`, each running its
/// own batch on its child token at once, give the serial loop's results.
#[test]
fn batches_inside_forked_jobs_match_the_serial_loop() {
    let pool = teamalg::Pool::builder().threads(4).build().unwrap();
    type Systems = (Vec<Mat<f64>>, Vec<Mat<f64>>);
    let jobs: Vec<std::sync::Mutex<Systems>> = (0..4)
        .map(|j| {
            let a = (0..200)
                .map(|k| spd::<f64>(6 + k % 5, (j * 1000 + k) as f64))
                .collect();
            let b = (0..200)
                .map(|k| mat::<f64>(6 + k % 5, 1, k as f64))
                .collect();
            std::sync::Mutex::new((a, b))
        })
        .collect();
    let inputs: Vec<Systems> = jobs.iter().map(|m| m.lock().unwrap().clone()).collect();
    teamalg::Exec::new(&pool, 4).unwrap().fork(4, |j, child| {
        let mut job = jobs[j].lock().unwrap();
        let (a, b) = &mut *job;
        let mut status = vec![Ok(()); a.len()];
        let o = forced(Family::LuPartial);
        let run = batch::lu_solve_with(
            &mut views_mut(a),
            &mut views_mut(b),
            &mut status,
            &child,
            &o,
        )
        .unwrap();
        assert_eq!(run.failed, 0);
    });
    for (j, (a0, b0)) in inputs.into_iter().enumerate() {
        let job = jobs[j].lock().unwrap();
        for k in 0..a0.len() {
            let (mut ra, mut rb) = (a0[k].clone(), b0[k].clone());
            faer_lu_solve(&mut ra, &mut rb);
            same("forked lu", k, &job.1[k], &rb);
        }
    }
}

/// faer checks no stride for a matrix without rows, so a strided batch of empty problems may
/// carry a column stride whose offsets leave the allocation, here wrapping to null at the
/// second problem: every empty problem's view must start at the matrix's own pointer.
#[test]
fn empty_strided_problems_are_never_offset() {
    let mut x = [0.0f64; 1];
    let base = x.as_mut_ptr();
    // The column stride that takes column 1 to address 0.
    let wrap = -(base as usize as isize / std::mem::size_of::<f64>() as isize);
    // SAFETY: a 0 x 2 view reads and writes nothing; faer accepts any strides for it.
    let c = unsafe { MatMut::from_raw_parts_mut(base, 0, 2, 1, wrap) };
    let (a, b) = (Mat::<f64>::zeros(0, 2), Mat::<f64>::zeros(1, 2));
    let mut status = vec![
        Err(LinalgError::BatchLength {
            op: "",
            operand: "",
            expected: 0,
            found: 0
        });
        2
    ];
    let run = batch::matmul(
        batch::BatchMut::strided(c, 1).unwrap(),
        Accum::Replace,
        batch::BatchRef::strided(a.as_ref(), 1).unwrap(),
        batch::BatchRef::strided(b.as_ref(), 1).unwrap(),
        1.0,
        &mut status,
        &teamalg::Exec::serial(),
    )
    .unwrap();
    assert_eq!((run.problems, run.failed), (2, 0));
    assert!(status.iter().all(|s| s.is_ok()));
}

/// A zero on one problem's non-unit diagonal is refused as the single solve refuses it
/// (`Singular` with its row, whatever `check_finite` says), that problem's `B` left as it was,
/// and every other problem solved as the serial loop solves it, on every executor.
#[test]
fn a_zero_diagonal_fails_alone_as_the_single_solve_refuses_it() {
    let n = orders(30);
    let bad = n.iter().position(|&n| n == 24).unwrap();
    let mut t: Vec<Mat<f64>> = n.iter().map(|&n| spd::<f64>(n, 3.0)).collect();
    t[bad][(5, 5)] = 0.0;
    t[bad][(9, 9)] = 0.0;
    let b0: Vec<Mat<f64>> = n.iter().map(|&n| mat::<f64>(n, 2, 4.0)).collect();
    let one = teamalg::Exec::serial();
    let reference: Vec<Mat<f64>> = (0..n.len())
        .map(|k| {
            let mut r = b0[k].clone();
            let _ = linalg::solve_triangular(
                &t[k],
                &mut r,
                SolveSide::Left,
                Triangle::Lower,
                Diag::NonUnit,
                &one,
            );
            r
        })
        .collect();
    every_executor(|exec, force| {
        for check in [true, false] {
            let o = if force {
                forced(Family::TriangularSolve)
            } else {
                Options::new()
            }
            .check_finite(check);
            let mut b = b0.clone();
            let mut status = vec![Ok(()); n.len()];
            let run = batch::solve_triangular_with(
                &views(&t),
                &mut views_mut(&mut b),
                SolveSide::Left,
                Triangle::Lower,
                Diag::NonUnit,
                &mut status,
                exec,
                &o,
            )
            .unwrap();
            assert_eq!(run.failed, 1);
            assert_eq!(
                status[bad],
                Err(LinalgError::Singular {
                    op: "batch::solve_triangular",
                    index: 5
                })
            );
            same("zero diagonal left as given", bad, &b[bad], &b0[bad]);
            for k in (0..n.len()).filter(|&k| k != bad) {
                assert_eq!(status[k], Ok(()), "problem {k}");
                same("trsm", k, &b[k], &reference[k]);
            }
        }
    });
}
