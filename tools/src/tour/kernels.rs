//! The program's short kernel table: faer serial against teamalg on a held team, a few sizes.

use std::time::{Duration, Instant};

use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::linalg::lu::partial_pivoting::factor::{lu_in_place, lu_in_place_scratch};
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};
use teamalg::{linalg, Team};

/// A kernel's serial faer call and its teamalg call on a team, each on fresh input.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// The kernel's name.
    pub kernel: &'static str,
    /// The matrix order.
    pub n: usize,
    /// faer serial's median call.
    pub serial: Duration,
    /// teamalg's median call on the team.
    pub team: Duration,
}

/// Interleaves `calls` serial and team calls (the host's speed drifts; a ratio within a pair
/// is what counts) and returns the medians; `prepare` runs untimed before each call.
pub fn pair(
    calls: usize,
    mut prepare: impl FnMut(),
    mut serial: impl FnMut(),
    mut team: impl FnMut(),
) -> (Duration, Duration) {
    let (mut s, mut t) = (Vec::new(), Vec::new());
    for _ in 0..calls {
        prepare();
        let start = Instant::now();
        serial();
        s.push(start.elapsed());
        prepare();
        let start = Instant::now();
        team();
        t.push(start.elapsed());
    }
    s.sort();
    t.sort();
    (s[calls / 2], t[calls / 2])
}

/// A reproducible, well-conditioned entry.
pub fn entry(i: usize, j: usize) -> f64 {
    let h = (i as u64 * 0x9e37_79b9 + j as u64 * 0x85eb_ca6b) % 1000;
    ((i * 7 + j * 3) as f64 * 0.01).sin() + h as f64 / 1000.0 - 0.5
}

/// GEMM, LU, Cholesky, QR and the self-adjoint EVD with vectors (f64) at each size in
/// `sizes`.
pub fn rows(team: &Team, sizes: &[usize]) -> Vec<Row> {
    let mut out = Vec::new();
    for &n in sizes {
        let calls = if n >= 1024 { 5 } else { 21 };
        let a = Mat::from_fn(n, n, entry);
        let b = Mat::from_fn(n, n, |i, j| entry(j, i));
        let c = std::cell::RefCell::new(Mat::<f64>::zeros(n, n));
        let (serial, t) = pair(
            calls,
            || {},
            || {
                let mut c = c.borrow_mut();
                matmul(
                    c.as_mut(),
                    Accum::Replace,
                    a.as_ref(),
                    b.as_ref(),
                    1.0,
                    Par::Seq,
                )
            },
            || {
                let mut c = c.borrow_mut();
                linalg::matmul(
                    c.as_mut(),
                    Accum::Replace,
                    a.as_ref(),
                    b.as_ref(),
                    1.0,
                    team,
                )
                .expect("shapes agree")
            },
        );
        out.push(Row {
            kernel: "gemm",
            n,
            serial,
            team: t,
        });

        let work = std::cell::RefCell::new(a.clone());
        let (mut perm, mut perm_inv) = (vec![0usize; n], vec![0usize; n]);
        let mut buf = faer::dyn_stack::MemBuffer::new(
            lu_in_place_scratch::<usize, f64>(n, n, Par::Seq, Default::default()).or(
                cholesky_in_place_scratch::<f64>(n, Par::Seq, Default::default()),
            ),
        );
        let (serial, t) = pair(
            calls,
            || work.borrow_mut().copy_from(&a),
            || {
                let stack = faer::dyn_stack::MemStack::new(&mut buf);
                let mut w = work.borrow_mut();
                let p = Default::default();
                lu_in_place(w.as_mut(), &mut perm, &mut perm_inv, Par::Seq, stack, p);
            },
            || {
                linalg::lu(work.borrow_mut().as_mut(), team).expect("finite input");
            },
        );
        out.push(Row {
            kernel: "lu",
            n,
            serial,
            team: t,
        });

        let mut spd = Mat::<f64>::zeros(n, n);
        matmul(
            spd.as_mut(),
            Accum::Replace,
            a.as_ref(),
            a.transpose(),
            1.0,
            Par::Seq,
        );
        for i in 0..n {
            spd[(i, i)] += n as f64;
        }
        let (serial, t) = pair(
            calls,
            || work.borrow_mut().copy_from(&spd),
            || {
                let stack = faer::dyn_stack::MemStack::new(&mut buf);
                let mut w = work.borrow_mut();
                let (r, p) = (Default::default(), Default::default());
                cholesky_in_place(w.as_mut(), r, Par::Seq, stack, p).expect("positive definite");
            },
            || {
                linalg::cholesky(work.borrow_mut().as_mut(), team).expect("positive definite");
            },
        );
        out.push(Row {
            kernel: "cholesky",
            n,
            serial,
            team: t,
        });

        let bs = faer::linalg::qr::no_pivoting::factor::recommended_block_size::<f64>(n, n);
        let mut h = Mat::<f64>::zeros(bs, n);
        let mut qr_buf = faer::dyn_stack::MemBuffer::new(
            faer::linalg::qr::no_pivoting::factor::qr_in_place_scratch::<f64>(
                n,
                n,
                bs,
                Par::Seq,
                Default::default(),
            ),
        );
        let (serial, t) = pair(
            calls,
            || work.borrow_mut().copy_from(&a),
            || {
                let stack = faer::dyn_stack::MemStack::new(&mut qr_buf);
                let mut w = work.borrow_mut();
                let p = Default::default();
                faer::linalg::qr::no_pivoting::factor::qr_in_place(
                    w.as_mut(),
                    h.as_mut(),
                    Par::Seq,
                    stack,
                    p,
                );
            },
            || {
                linalg::qr(work.borrow_mut().as_mut(), team).expect("finite input");
            },
        );
        out.push(Row {
            kernel: "qr",
            n,
            serial,
            team: t,
        });

        // The self-adjoint EVD with vectors, each side in scratch it holds.
        let sym = Mat::from_fn(n, n, |i, j| a[(i, j)] + a[(j, i)]);
        let yes = faer::linalg::evd::ComputeEigenvectors::Yes;
        let mut faer_buf =
            faer::dyn_stack::MemBuffer::new(faer::linalg::evd::self_adjoint_evd_scratch::<f64>(
                n,
                yes,
                Par::Seq,
                Default::default(),
            ));
        let mut our_buf =
            faer::dyn_stack::MemBuffer::new(linalg::self_adjoint_eigen_scratch::<f64>(n, true));
        let (mut s, mut u, mut v) = (
            Mat::<f64>::zeros(n, 1),
            Mat::<f64>::zeros(n, n),
            Mat::<f64>::zeros(n, n),
        );
        let mut w = vec![0.0; n];
        let options = linalg::Options::new();
        let (serial, t) = pair(
            calls.min(11),
            || {},
            || {
                let stack = faer::dyn_stack::MemStack::new(&mut faer_buf);
                faer::linalg::evd::self_adjoint_evd(
                    sym.as_ref(),
                    s.as_mut().col_mut(0).as_diagonal_mut(),
                    Some(u.as_mut()),
                    Par::Seq,
                    stack,
                    Default::default(),
                )
                .expect("converges");
            },
            || {
                let stack = faer::dyn_stack::MemStack::new(&mut our_buf);
                linalg::self_adjoint_eigen_into_with_scratch(
                    sym.as_ref(),
                    &mut w,
                    Some(v.as_mut()),
                    team,
                    &options,
                    stack,
                )
                .expect("converges");
            },
        );
        out.push(Row {
            kernel: "evd",
            n,
            serial,
            team: t,
        });
    }
    out
}
