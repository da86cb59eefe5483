//! The kernels against faer, side by side in one run.
//!
//! ```text
//! cargo bench --bench kernels -- [--sizes 32,64,...] [--width W] [--kernels gemm,lu,cholesky,qr,svd,evd,tridiag,bidiag]
//!     [--settled] [--inside-rayon] [--audit] [--finite-check] [--sections] [--csv FILE]
//!     [--block N] [--wide N] [--svd-auto] [--owned] [--aspect X]
//!     [--load N[:NICE]] [--load-phases ON_MS:OFF_MS] [--blocks PAUSE_MS:CALLS]
//! ```
//!
//! `--blocks PAUSE_MS:CALLS` runs the blocks pattern instead of interleaved calls: in each round
//! every arm in turn pauses `PAUSE_MS`, then makes `CALLS` calls back to back (a program's loop
//! after other work); medians, p90 and ratios are over the calls of the blocks, call `i` of a
//! block against call `i` of faer serial's block in the same round.
//!
//! `--load N[:NICE]` runs N busy processes (`sh -c 'while :; do :; done'`, nice 0 by default)
//! beside the whole run, the way a shared machine looks; `--load-phases ON_MS:OFF_MS` stops and
//! continues them in turn, a load that comes and goes (`kernels/load.rs`). With phases each cell
//! runs for six cycles, and two lines under it give the held team's and the team-per-call
//! arm's median ratio to faer serial over the rounds of on phases, of the first 50 ms of off
//! phases and of the rest of off phases (each with its count of rounds), and the worst off
//! phase's rest: how soon the gate is back once the load is gone.
//!
//! `--owned` times the SVD and EVD rows' teamalg arms through the owned facade forms
//! (`Svd::new`, `singular_values`, `SelfAdjointEigen::new`, `self_adjoint_eigenvalues`: input
//! checked, outputs and scratch allocated per call), as most users call them.
//!
//! `--block N` and `--wide N` force LU's and Cholesky's panel width and wide panel width (the
//! second blocking level; the panel width gives one level); 0, the default, picks each from
//! the size.
//!
//! `--sections` prints where the factorizations' time goes on a held team (`lu`, `cholesky`,
//! `qr`, `svd`, `bidiag`, f64): per call, the serial time outside sections and each section's
//! wall time against the busy time of its lead and of participant 1, in all, per site and per
//! third of the call (`teamalg_kernels::sections`).
//!
//! `--finite-check` measures what the facade's finiteness check costs (checked against
//! `Options::check_finite(false)`, alternated, GEMM, LU and Cholesky at each size).
//!
//! `--csv FILE` appends one row per kernel, size and arm of the interleaved table to `FILE`
//! (`kernel,scalar,n,width,arm,median_us,p90_us,max_us,ratio_to_serial`, the header when the
//! file is new): the data of the plots in `docs/perf/` (`cargo run --release -p teamalg-tools
//! --bin plots`).
//!
//! Why not criterion: the arms are compared inside a round (one call of each, back to back),
//! because this host's speed drifts by tens of percent over seconds; criterion times one
//! function at a time, so its ratios would carry the drift, and it pauses between benchmarks,
//! which hides what one arm's spinning threads do to the next.
//!
//! `--audit` runs the gate audit instead (`kernels/audit.rs`): per cell, forced serial, forced
//! parallel and the gate's choice, interleaved (kernels `gemm,trsm,lu,cholesky` by default).
//!
//! Arms, per kernel, size and scalar type: faer `Par::Seq`; faer `Par::rayon(W)` called from the
//! main thread; teamalg on a held team of width W; teamalg with a pool and team built per call.
//! The arms run the way users call: back to back, interleaved call by call (a *round* is one
//! call of each arm in turn), with no pause anywhere, so the threads one arm leaves spinning
//! (rayon's, a team's member, a dropped pool's workers) meet the next. A ratio is the median
//! over rounds of the arm's time divided by faer serial's in the same round (this host's speed
//! drifts by tens of percent over seconds; within a round it does not); `p90` is the arm's own
//! 90th percentile time. `--settled` instead runs each arm alone against faer serial after a
//! 50 ms pause (the threads of the arm before have stopped spinning): labelled as such, for
//! comparison only.
//!
//! `--inside-rayon` runs the other scenario users meet: four rayon workers on the host's CPUs
//! each call GEMM 256 through plain tokens (budget W) of one shared pool of W, against the same
//! loop with serial tokens, rounds alternating.
//!
//! Kernels: GEMM (`n x n x n`), LU with partial pivoting, Cholesky and Householder QR
//! (`n x n`, QR with faer's block size in both arms); the factorizations' sizes start at 64. `--kernels sparse` (not in the default list): the 2D Laplacian of
//! an `n x n` grid (sizes from 64 on) times 64 dense columns; `--kernels sparse_sparse`: a random
//! `n x n` matrix with 10 entries per column times itself. `--kernels svd` (teamalg's own SVD
//! path, `SvdPath::Own`, in scratch it holds; `--svd-auto`: the default path; `--aspect X`:
//! `round(X n) x n` matrices; thin vectors, values only, c64) and `--kernels evd` (the self-adjoint
//! EVD, vectors, values only, c64), `--kernels tridiag` (its tridiagonalization alone, f64
//! and c64) and `--kernels bidiag` (the SVD's bidiagonalization alone, f64 and c64), sizes from 64 on, in scratch each arm holds. The
//! factorizations work in place: each call gets its input back first, outside the timed part.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::linalg::evd::{
    self_adjoint_evd as faer_evd, self_adjoint_evd_scratch as faer_evd_scratch, ComputeEigenvectors,
};
use faer::linalg::lu::partial_pivoting::factor::{lu_in_place, lu_in_place_scratch};
use faer::linalg::matmul::matmul as faer_matmul;
use faer::linalg::qr::no_pivoting::factor::{
    qr_in_place as faer_qr, qr_in_place_scratch as faer_qr_scratch,
};
use faer::linalg::svd::{svd as faer_svd, svd_scratch as faer_svd_scratch, ComputeSvdVectors};
use faer::sparse::linalg::matmul::sparse_dense_matmul as faer_sparse_dense;
use faer::traits::ComplexField;
use faer::{c64, Accum, Mat, Par};
use teamalg::gates::Scalar;
use teamalg::kernels::bidiag;
use teamalg::kernels::bidiag_svd::{Real as RealNumber, Rotate};
use teamalg::kernels::cholesky::{self, CholeskyParams};
use teamalg::kernels::evd::{self, EvdParams};
use teamalg::kernels::gemm::{matmul, GemmParams};
use teamalg::kernels::lu::{self, LuParams};
use teamalg::kernels::par::Executor;
use teamalg::kernels::qr::{self, QrParams};
use teamalg::kernels::sparse::{sparse_dense_matmul, SparseParams};
use teamalg::kernels::svd::{self, SvdParams, SvdPath};
use teamalg::kernels::tridiag;
use teamalg::Pool;
use teamalg_tools::csv::Csv;
use teamalg_tools::tour::team::held_team;

#[path = "kernels/audit.rs"]
mod audit;
#[path = "kernels/load.rs"]
mod load;

/// Alternates `a` and `b` call by call (each after an untimed `prepare`) until `budget` is
/// spent (at least 5, at most 51 pairs). Returns the median times of `a` and of `b` and the
/// median ratio `b / a` within a pair: the host's speed drifts by tens of percent over seconds,
/// and only a comparison inside a pair is free of it.
fn pairs(
    mut prepare: impl FnMut(),
    mut a: impl FnMut(),
    mut b: impl FnMut(),
    budget: Duration,
) -> (f64, f64, f64) {
    let mut time = |f: &mut dyn FnMut()| {
        prepare();
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64()
    };
    time(&mut a);
    time(&mut b);
    let (mut ta, mut tb, mut r) = (Vec::new(), Vec::new(), Vec::new());
    let start = Instant::now();
    while ta.len() < 5 || (ta.len() < 51 && start.elapsed() < budget) {
        let (x, y) = (time(&mut a), time(&mut b));
        ta.push(x);
        tb.push(y);
        r.push(y / x);
    }
    (mid(ta), mid(tb), mid(r))
}

fn mid(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// One kernel at one size: the faer call and the teamalg call, each after `prepare` (untimed:
/// a factorization gets its input back).
trait Case {
    fn prepare(&mut self) {}
    fn faer(&mut self, par: Par);
    fn teamalg(&mut self, exec: &dyn Executor);
}

struct Gemm<T> {
    a: Mat<T>,
    b: Mat<T>,
    c: Mat<T>,
    one: T,
}

impl<T: ComplexField + Scalar + Send + Sync + Copy> Case for Gemm<T> {
    fn faer(&mut self, par: Par) {
        let (a, b) = (self.a.as_ref(), self.b.as_ref());
        faer_matmul(self.c.as_mut(), Accum::Replace, a, b, self.one, par);
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let (a, b) = (self.a.as_ref(), self.b.as_ref());
        let p = GemmParams::default();
        matmul(self.c.as_mut(), Accum::Replace, a, b, self.one, &exec, p);
    }
}

/// A factorization's input, its working copy, and scratch for both implementations.
struct Factor<T> {
    a: Mat<T>,
    work: Mat<T>,
    idx: Vec<usize>,
    idx2: Vec<usize>,
    buf: MemBuffer,
}

impl<T: ComplexField + Copy> Factor<T> {
    fn new(a: Mat<T>, scratch: faer::dyn_stack::StackReq) -> Self {
        let n = a.nrows();
        Factor {
            work: a.clone(),
            a,
            idx: vec![0; n],
            idx2: vec![0; n],
            buf: MemBuffer::new(scratch),
        }
    }
    fn prepare(&mut self) {
        self.work.copy_from(&self.a);
    }
}

struct Lu<T>(Factor<T>);

impl<T: ComplexField + Scalar + Send + Sync + Copy> Case for Lu<T> {
    fn prepare(&mut self) {
        self.0.prepare();
    }
    fn faer(&mut self, par: Par) {
        let f = &mut self.0;
        let stack = MemStack::new(&mut f.buf);
        let p = Default::default();
        lu_in_place::<usize, T>(f.work.as_mut(), &mut f.idx, &mut f.idx2, par, stack, p);
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let f = &mut self.0;
        let stack = MemStack::new(&mut f.buf);
        let p = LuParams {
            block_size: BLOCK.load(Relaxed),
            wide_size: WIDE.load(Relaxed),
            ..LuParams::default()
        };
        lu::lu_in_place(f.work.as_mut(), &mut f.idx, &exec, p, stack);
    }
}

struct Cholesky<T>(Factor<T>);

impl<T: ComplexField + Scalar + Send + Sync + Copy> Case for Cholesky<T> {
    fn prepare(&mut self) {
        self.0.prepare();
    }
    fn faer(&mut self, par: Par) {
        let f = &mut self.0;
        let stack = MemStack::new(&mut f.buf);
        let p = Default::default();
        cholesky_in_place(f.work.as_mut(), Default::default(), par, stack, p)
            .expect("positive definite");
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let f = &mut self.0;
        let stack = MemStack::new(&mut f.buf);
        let p = CholeskyParams {
            block_size: BLOCK.load(Relaxed),
            wide_size: WIDE.load(Relaxed),
            ..CholeskyParams::default()
        };
        cholesky::cholesky_in_place(f.work.as_mut(), &exec, p, stack).expect("positive definite");
    }
}

/// QR: faer's `qr_in_place` and the kernel, both with faer's block size, into one `H`.
struct Qr<T> {
    f: Factor<T>,
    h: Mat<T>,
    width: usize,
}

impl<T: ComplexField + Scalar + Send + Sync + Copy> Qr<T> {
    fn new(a: Mat<T>, width: usize) -> Self {
        let n = a.nrows();
        let bs = qr::block_size::<T>(n, n);
        let scratch = faer::dyn_stack::StackReq::any_of(&[
            faer_qr_scratch::<T>(n, n, bs, Par::rayon(width), Default::default()),
            qr::qr_in_place_scratch::<T>(n, n, bs, width),
        ]);
        Qr {
            f: Factor::new(a, scratch),
            h: Mat::zeros(bs, n),
            width,
        }
    }
}

impl<T: ComplexField + Scalar + Send + Sync + Copy> Case for Qr<T> {
    fn prepare(&mut self) {
        self.f.prepare();
    }
    fn faer(&mut self, par: Par) {
        let f = &mut self.f;
        let stack = MemStack::new(&mut f.buf);
        faer_qr(
            f.work.as_mut(),
            self.h.as_mut(),
            par,
            stack,
            Default::default(),
        );
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let f = &mut self.f;
        let stack = MemStack::new(&mut f.buf);
        let p = QrParams::default();
        qr::qr_in_place(
            f.work.as_mut(),
            self.h.as_mut(),
            &exec,
            p,
            self.width,
            stack,
        );
    }
}

/// SVD: faer's `svd` and the kernel (thin vectors, or values only), from the same matrix.
struct Svd<T: Rotate> {
    a: Mat<T>,
    s: Mat<T>,
    sr: Vec<<T as Rotate>::Real>,
    u: Mat<T>,
    v: Mat<T>,
    vectors: bool,
    buf: faer::dyn_stack::MemBuffer,
    ours: faer::dyn_stack::MemBuffer,
}

impl<T: ComplexField + Rotate> Svd<T> {
    fn new(a: Mat<T>, vectors: bool, width: usize) -> Self {
        let (m, n) = (a.nrows(), a.ncols());
        let k = m.min(n);
        let want = if vectors {
            ComputeSvdVectors::Thin
        } else {
            ComputeSvdVectors::No
        };
        let req = faer_svd_scratch::<T>(m, n, want, want, Par::rayon(width), Default::default());
        Svd {
            s: Mat::zeros(k, 1),
            sr: vec![<<T as Rotate>::Real as RealNumber>::ZERO; k],
            u: Mat::zeros(m, k),
            v: Mat::zeros(n, k),
            a,
            vectors,
            buf: faer::dyn_stack::MemBuffer::new(req),
            ours: faer::dyn_stack::MemBuffer::new(svd::svd_scratch::<T>(m, n, vectors)),
        }
    }
}

impl<T: ComplexField + Rotate> Case for Svd<T> {
    fn faer(&mut self, par: Par) {
        let (u, v) = if self.vectors {
            (Some(self.u.as_mut()), Some(self.v.as_mut()))
        } else {
            (None, None)
        };
        let s = self.s.as_mut().col_mut(0).as_diagonal_mut();
        let stack = MemStack::new(&mut self.buf);
        faer_svd(self.a.as_ref(), s, u, v, par, stack, Default::default()).expect("svd");
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        if OWNED.load(Relaxed) {
            // The owned facade form (its default path): input checked, outputs and scratch
            // allocated per call.
            if self.vectors {
                std::hint::black_box(teamalg::linalg::Svd::new(&self.a, exec).expect("svd"));
            } else {
                std::hint::black_box(teamalg::linalg::singular_values(&self.a, exec).expect("svd"));
            }
            return;
        }
        let (u, v) = if self.vectors {
            (Some(self.u.as_mut()), Some(self.v.as_mut()))
        } else {
            (None, None)
        };
        // teamalg's own path at every size (the default runs it only where it measured faster
        // than faer's serial SVD; `--svd-auto` runs the default), in scratch it holds, as
        // faer's arm does.
        let path = if SVD_AUTO.load(Relaxed) {
            SvdPath::Auto
        } else {
            SvdPath::Own
        };
        let p = SvdParams {
            path,
            ..SvdParams::default()
        };
        let stack = MemStack::new(&mut self.ours);
        svd::svd_with_scratch(self.a.as_ref(), &mut self.sr, u, v, &exec, p, stack).expect("svd");
    }
}

/// Self-adjoint EVD: faer's `self_adjoint_evd` and the kernel (vectors, or values only), from
/// the same Hermitian matrix, each in scratch it holds.
struct Evd<T: Rotate> {
    a: Mat<T>,
    s: Mat<T>,
    w: Vec<<T as Rotate>::Real>,
    u: Mat<T>,
    vectors: bool,
    buf: faer::dyn_stack::MemBuffer,
    ours: faer::dyn_stack::MemBuffer,
}

impl<T: ComplexField + Rotate> Evd<T> {
    fn new(b: Mat<T>, vectors: bool, width: usize) -> Self {
        let n = b.nrows();
        let a = Mat::from_fn(n, n, |i, j| {
            let (x, y) = (b[(i, j)].parts(), b[(j, i)].parts());
            T::from_parts(x.0 + y.0, x.1 - y.1)
        });
        let want = if vectors {
            ComputeEigenvectors::Yes
        } else {
            ComputeEigenvectors::No
        };
        let req = faer_evd_scratch::<T>(n, want, Par::rayon(width), Default::default());
        Evd {
            s: Mat::zeros(n, 1),
            w: vec![<<T as Rotate>::Real as RealNumber>::ZERO; n],
            u: Mat::zeros(n, n),
            a,
            vectors,
            buf: faer::dyn_stack::MemBuffer::new(req),
            ours: faer::dyn_stack::MemBuffer::new(evd::self_adjoint_evd_scratch::<T>(n, vectors)),
        }
    }
}

impl<T: ComplexField + Rotate> Case for Evd<T> {
    fn faer(&mut self, par: Par) {
        let u = self.vectors.then(|| self.u.as_mut());
        let s = self.s.as_mut().col_mut(0).as_diagonal_mut();
        let stack = MemStack::new(&mut self.buf);
        faer_evd(self.a.as_ref(), s, u, par, stack, Default::default()).expect("evd");
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        if OWNED.load(Relaxed) {
            // The owned facade form: input checked, outputs and scratch allocated per call.
            if self.vectors {
                std::hint::black_box(
                    teamalg::linalg::SelfAdjointEigen::new(&self.a, exec).expect("evd"),
                );
            } else {
                std::hint::black_box(
                    teamalg::linalg::self_adjoint_eigenvalues(&self.a, exec).expect("evd"),
                );
            }
            return;
        }
        let u = self.vectors.then(|| self.u.as_mut());
        let p = EvdParams::default();
        let stack = MemStack::new(&mut self.ours);
        evd::self_adjoint_evd_with_scratch(self.a.as_ref(), &mut self.w, u, &exec, p, stack)
            .expect("evd");
    }
}

/// The tridiagonalization alone: faer's `tridiag_in_place` and teamalg's, on the same
/// Hermitian matrix (given back before each call), each in scratch it holds.
struct Tridiag<T> {
    a: Mat<T>,
    work: Mat<T>,
    h: Mat<T>,
    buf: faer::dyn_stack::MemBuffer,
}

impl<T: ComplexField + Rotate> Tridiag<T> {
    fn new(b: Mat<T>, width: usize) -> Self {
        let n = b.nrows();
        let a = Mat::from_fn(n, n, |i, j| {
            let (x, y) = (b[(i, j)].parts(), b[(j, i)].parts());
            T::from_parts(x.0 + y.0, x.1 - y.1)
        });
        let bs = faer::linalg::qr::no_pivoting::factor::recommended_block_size::<T>(n, n);
        let req = faer::linalg::evd::tridiag::tridiag_in_place_scratch::<T>(
            n,
            Par::rayon(width),
            Default::default(),
        );
        Tridiag {
            work: a.clone(),
            a,
            h: Mat::zeros(bs, n - 1),
            buf: faer::dyn_stack::MemBuffer::new(req),
        }
    }
}

impl<T: ComplexField + Rotate> Case for Tridiag<T> {
    fn prepare(&mut self) {
        self.work.copy_from(&self.a);
    }
    fn faer(&mut self, par: Par) {
        let stack = MemStack::new(&mut self.buf);
        let (w, h) = (self.work.as_mut(), self.h.as_mut());
        faer::linalg::evd::tridiag::tridiag_in_place(w, h, par, stack, Default::default());
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let stack = MemStack::new(&mut self.buf);
        let (w, h) = (self.work.as_mut(), self.h.as_mut());
        tridiag::tridiag_in_place(w, h, &exec, None, stack);
    }
}

/// The bidiagonalization alone: faer's `bidiag_in_place` and teamalg's, on the same square
/// matrix (given back before each call), each in scratch it holds.
struct Bidiag<T> {
    a: Mat<T>,
    work: Mat<T>,
    hl: Mat<T>,
    hr: Mat<T>,
    buf: faer::dyn_stack::MemBuffer,
}

impl<T: ComplexField + Rotate> Bidiag<T> {
    fn new(a: Mat<T>) -> Self {
        let n = a.nrows();
        let bs = faer::linalg::qr::no_pivoting::factor::recommended_block_size::<T>(n, n);
        Bidiag {
            work: a.clone(),
            a,
            hl: Mat::zeros(bs, n),
            hr: Mat::zeros(bs, n - 1),
            buf: faer::dyn_stack::MemBuffer::new(bidiag::bidiag_in_place_scratch::<T>(n, n)),
        }
    }
}

impl<T: ComplexField + Rotate> Case for Bidiag<T> {
    fn prepare(&mut self) {
        self.work.copy_from(&self.a);
    }
    fn faer(&mut self, par: Par) {
        let stack = MemStack::new(&mut self.buf);
        let (w, hl, hr) = (self.work.as_mut(), self.hl.as_mut(), self.hr.as_mut());
        faer::linalg::svd::bidiag::bidiag_in_place(w, hl, hr, par, stack, Default::default());
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let stack = MemStack::new(&mut self.buf);
        let (w, hl, hr) = (self.work.as_mut(), self.hl.as_mut(), self.hr.as_mut());
        bidiag::bidiag_in_place(w, hl, hr, &exec, None, stack);
    }
}

/// Sparse times dense: the 2D Laplacian of an `s x s` grid (5 entries per column) times 64
/// dense columns.
struct SparseDense<T> {
    a: faer::sparse::SparseColMat<usize, T>,
    b: Mat<T>,
    c: Mat<T>,
    one: T,
}

impl<T: ComplexField + Scalar + Send + Sync + Copy> SparseDense<T> {
    fn laplacian(s: usize, one: T, f: impl Fn(usize, usize) -> T) -> Self {
        let n = s * s;
        let four = faer::traits::math_utils::from_f64::<T>(4.0);
        let minus = faer::traits::math_utils::neg(&one);
        let mut t = Vec::with_capacity(5 * n);
        for y in 0..s {
            for x in 0..s {
                let i = y * s + x;
                t.push(faer::sparse::Triplet::new(i, i, four));
                for (dx, dy) in [(1i64, 0i64), (-1, 0), (0, 1), (0, -1)] {
                    let (nx, ny) = (x as i64 + dx, y as i64 + dy);
                    if (0..s as i64).contains(&nx) && (0..s as i64).contains(&ny) {
                        t.push(faer::sparse::Triplet::new(
                            i,
                            ny as usize * s + nx as usize,
                            minus,
                        ));
                    }
                }
            }
        }
        let a =
            faer::sparse::SparseColMat::try_new_from_triplets(n, n, &t).expect("a valid matrix");
        SparseDense {
            a,
            b: Mat::from_fn(n, 64, f),
            c: Mat::zeros(n, 64),
            one,
        }
    }
}

impl<T: ComplexField + Scalar + Send + Sync + Copy> Case for SparseDense<T> {
    fn faer(&mut self, par: Par) {
        let (a, b) = (self.a.as_ref(), self.b.as_ref());
        faer_sparse_dense(self.c.as_mut(), Accum::Replace, a, b, self.one, par);
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let (a, b) = (self.a.as_ref(), self.b.as_ref());
        let p = SparseParams::default();
        sparse_dense_matmul(self.c.as_mut(), Accum::Replace, a, b, self.one, &exec, p);
    }
}

/// Sparse times sparse: a random `n x n` matrix with 10 entries per column times itself.
struct SparseSparse<T> {
    a: faer::sparse::SparseColMat<usize, T>,
    one: T,
}

impl<T: ComplexField + Scalar + Send + Sync + Copy> SparseSparse<T> {
    fn random(n: usize, one: T, f: impl Fn(usize, usize) -> T) -> Self {
        let mut t = Vec::with_capacity(10 * n);
        for j in 0..n {
            for e in 0..10u64 {
                let h = (j as u64 * 0x9e37_79b9_7f4a_7c15 + e * 0xbf58_476d_1ce4_e5b9) >> 17;
                let i = (h % n as u64) as usize;
                t.push(faer::sparse::Triplet::new(i, j, f(i, j)));
            }
        }
        let a =
            faer::sparse::SparseColMat::try_new_from_triplets(n, n, &t).expect("a valid matrix");
        SparseSparse { a, one }
    }
}

impl<T: ComplexField + Scalar + Send + Sync + Copy> Case for SparseSparse<T> {
    fn faer(&mut self, par: Par) {
        let a = self.a.as_ref();
        let r = faer::sparse::linalg::matmul::sparse_sparse_matmul(a, a, self.one, par);
        std::hint::black_box(r.expect("memory"));
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let a = self.a.as_ref();
        let p = SparseParams::default();
        let r = teamalg::kernels::sparse::sparse_sparse_matmul(a, a, self.one, &exec, p);
        std::hint::black_box(r.expect("memory"));
    }
}

/// Rounds of one call of each arm in turn, after an untimed `prepare` each, until `budget`
/// is spent (at least 7, at most 61 rounds, after one untimed round). Returns each arm's times.
fn rounds(
    mut prepare: impl FnMut(),
    arms: &mut [&mut dyn FnMut()],
    budget: Duration,
) -> Vec<Vec<f64>> {
    let mut times = vec![Vec::new(); arms.len()];
    let start = Instant::now();
    let phases = PHASES.get().copied();
    // With phases, as many rounds as `PHASE_CYCLES` on and off phases take.
    let (budget, most) = match phases {
        Some((on, off)) => ((on + off) * PHASE_CYCLES, 100_000),
        None => (budget, 62),
    };
    let mut starts = Vec::new();
    let mut round = 0;
    while round < 8 || (round < most && start.elapsed() < budget) {
        let began = Instant::now();
        for (k, arm) in arms.iter_mut().enumerate() {
            prepare();
            let t = Instant::now();
            arm();
            if round > 0 {
                times[k].push(t.elapsed().as_secs_f64());
            }
        }
        if round > 0 {
            starts.push(began);
        }
        round += 1;
    }
    if phases.is_some() {
        *ROUND_STARTS.lock().unwrap() = starts;
    }
    times
}

/// `--load-phases ON_MS:OFF_MS`, when set: a cell's rounds then run for this many cycles.
static PHASES: std::sync::OnceLock<(Duration, Duration)> = std::sync::OnceLock::new();
const PHASE_CYCLES: u32 = 6;
/// How soon after the load stops a cell must be back (the issue's goal: 50 ms).
const RECOVERY: Duration = Duration::from_millis(50);
/// When each timed round of the last cell began (with phases).
static ROUND_STARTS: std::sync::Mutex<Vec<Instant>> = std::sync::Mutex::new(Vec::new());

/// With phases: the ratio of `arm` to faer serial (`times[0]`) over the rounds of on phases,
/// of the first [`RECOVERY`] of off phases, and of the rest of off phases, and the worst off
/// phase's rest (its median over at least 3 rounds), each with its count of rounds.
fn phase_report(times: &[Vec<f64>], arm: usize) -> String {
    let starts = ROUND_STARTS.lock().unwrap().clone();
    let (mut on, mut early, mut late) = (Vec::new(), Vec::new(), Vec::new());
    let mut per_off: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
    for (i, &t) in starts.iter().enumerate() {
        let r = times[arm][i] / times[0][i];
        match load::phase_at(t) {
            Some((_, true, _)) => on.push(r),
            Some((_, false, d)) if d < RECOVERY => early.push(r),
            Some((p, false, _)) => {
                late.push(r);
                per_off.entry(p).or_default().push(r);
            }
            None => {}
        }
    }
    let worst = per_off
        .values()
        .filter(|v| v.len() >= 3)
        .map(|v| mid(v.clone()))
        .fold(None, |w: Option<f64>, m| Some(w.map_or(m, |w| w.max(m))));
    let cell = |v: &Vec<f64>| {
        if v.is_empty() {
            "-".to_string()
        } else {
            format!("{:.2} ({})", mid(v.clone()), v.len())
        }
    };
    format!(
        "on {}  off <50ms {}  off >=50ms {}  worst off phase {}",
        cell(&on),
        cell(&early),
        cell(&late),
        worst.map_or("-".into(), |w| format!("{w:.2}"))
    )
}

/// `--blocks PAUSE_MS:CALLS`: rounds of blocks instead of interleaved calls. In a round each
/// arm in turn sleeps `PAUSE_MS` (its threads and the arm's before it settle, as between a
/// program's phases) and then makes `CALLS` calls back to back; each call is timed. Call `i` of
/// an arm's block is compared with call `i` of faer serial's block in the same round.
fn block_rounds(
    mut prepare: impl FnMut(),
    arms: &mut [&mut dyn FnMut()],
    (pause, calls): (Duration, usize),
    budget: Duration,
) -> Vec<Vec<f64>> {
    let mut times = vec![Vec::new(); arms.len()];
    let start = Instant::now();
    let mut round = 0;
    while round < 4 || (round < 20 && start.elapsed() < budget) {
        for (k, arm) in arms.iter_mut().enumerate() {
            std::thread::sleep(pause);
            for _ in 0..calls {
                prepare();
                let t = Instant::now();
                arm();
                times[k].push(t.elapsed().as_secs_f64());
            }
        }
        round += 1;
    }
    times
}

/// `--blocks`: the pause and calls of each arm's block, when set.
static BLOCKS: std::sync::OnceLock<(Duration, usize)> = std::sync::OnceLock::new();

/// The median and 90th percentile of `v`.
fn stats(v: &[f64]) -> (f64, f64) {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.9))
}

/// Where `--csv` rows go.
/// `--block N`: the panel width of the LU and Cholesky arms (0: the kernels' own).
static BLOCK: AtomicUsize = AtomicUsize::new(0);

/// `--wide N`: the wide panel width of the LU and Cholesky arms (0: the kernels' own).
static WIDE: AtomicUsize = AtomicUsize::new(0);

/// `--svd-auto`: the SVD rows run the default path (`SvdPath::Auto`: teamalg's own path where
/// it measured faster, faer's serial SVD elsewhere) instead of the own path at every size.
static SVD_AUTO: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// `--owned`: the SVD and EVD rows time teamalg through the owned facade forms (`Svd::new`,
/// `singular_values`, `SelfAdjointEigen::new`, `self_adjoint_eigenvalues`), as most users call
/// them, against faer's serial call in scratch it holds.
static OWNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `--aspect X`: the SVD rows factor `round(X n) x n` matrices (tall) instead of square ones,
/// stored as the bits of an `f64`.
static ASPECT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The rows of an SVD row's matrix of `n` columns (`--aspect`).
fn svd_rows(n: usize) -> usize {
    match f64::from_bits(ASPECT.load(Relaxed)) {
        x if x > 0.0 => (x * n as f64).round() as usize,
        _ => n,
    }
}

static CSV: std::sync::OnceLock<std::sync::Mutex<Csv>> = std::sync::OnceLock::new();

/// Appends the arms of one interleaved cell to the `--csv` file, if any.
fn csv_rows(name: &str, n: usize, w: usize, times: &[Vec<f64>]) {
    let Some(csv) = CSV.get() else { return };
    let (kernel, scalar) = name.split_once(' ').unwrap_or((name, ""));
    let arms = ["faer_serial", "faer_rayon", "teamalg_team", "team_per_call"];
    let mut csv = csv.lock().unwrap();
    for (arm, t) in arms.iter().zip(times) {
        let (med, p90) = stats(t);
        let max = t.iter().copied().fold(0.0, f64::max);
        let r = ratio(t, &times[0]);
        let us = |x: f64| format!("{:.3}", x * 1e6);
        csv.row(&[
            kernel,
            scalar,
            &n.to_string(),
            &w.to_string(),
            arm,
            &us(med),
            &us(p90),
            &us(max),
            &format!("{r:.4}"),
        ]);
    }
}

/// The median over rounds of `num / den`.
fn ratio(num: &[f64], den: &[f64]) -> f64 {
    mid(num.iter().zip(den).map(|(a, b)| a / b).collect())
}

fn rows(
    name: &str,
    sizes: &[usize],
    w: usize,
    settled: bool,
    mut case: impl FnMut(usize) -> Box<dyn Case>,
) {
    let team = held_team(w);
    for &n in sizes {
        let c = std::cell::RefCell::new(case(n));
        let prepare = || c.borrow_mut().prepare();
        let budget = Duration::from_millis(600);
        let mut seq = || c.borrow_mut().faer(Par::Seq);
        let mut rayon = || c.borrow_mut().faer(Par::rayon(w));
        let mut held = || c.borrow_mut().teamalg(&team);
        // The pool and team are built and dropped inside the timed call.
        let mut per_call = || {
            let t = held_team(w);
            c.borrow_mut().teamalg(&t);
        };
        let us = |t: f64| t * 1e6;
        if settled {
            let settle = || std::thread::sleep(Duration::from_millis(50));
            let mut row = Vec::new();
            let mut t_seq = 0.0;
            for arm in [&mut rayon as &mut dyn FnMut(), &mut held, &mut per_call] {
                settle();
                let (tseq, tarm, r) = pairs(prepare, &mut seq, arm, budget);
                t_seq = tseq;
                row.push((tarm, r));
            }
            println!(
                "{name:<12} {n:>5} {:>10.1} {:>10.1} ({:>4.2}) {:>10.1} ({:>4.2}) {:>10.1} ({:>4.2})  settled",
                us(t_seq),
                us(row[0].0),
                row[0].1,
                us(row[1].0),
                row[1].1,
                us(row[2].0),
                row[2].1,
            );
            continue;
        }
        let arms: &mut [&mut dyn FnMut()] = &mut [&mut seq, &mut rayon, &mut held, &mut per_call];
        let t = match BLOCKS.get() {
            Some(&blocks) => block_rounds(prepare, arms, blocks, budget * 4),
            None => rounds(prepare, arms, budget),
        };
        csv_rows(name, n, w, &t);
        let (s, _) = stats(&t[0]);
        let (ray, held_t, fresh) = (stats(&t[1]).0, stats(&t[2]), stats(&t[3]));
        println!(
            "{name:<12} {n:>5} {:>10.1} {:>10.1} ({:>4.2}) {:>10.1} ({:>4.2}) {:>10.1} ({:>4.2}) {:>10.1} {:>8.2}",
            us(s),
            us(ray),
            ratio(&t[1], &t[0]),
            us(held_t.0),
            ratio(&t[2], &t[0]),
            us(fresh.0),
            ratio(&t[3], &t[0]),
            us(fresh.1),
            ratio(&t[3], &t[2]),
        );
        if PHASES.get().is_some() && BLOCKS.get().is_none() {
            println!("{:<18} phases, held team: {}", "", phase_report(&t, 2));
            println!("{:<18} phases, per call:  {}", "", phase_report(&t, 3));
        }
    }
}

/// `--sections`: where a factorization's time goes on a held team of `w`. Per call (the
/// median of 7, after 3 warm ones): the serial time outside sections (the first panel, the
/// last steps), the sections' wall time, and the busy and idle time of the lead (participant
/// 0, which also factors the next panel) and of participant 1, summed over the sections and
/// over the first, middle and last third of them.
fn section_trace(
    name: &str,
    sizes: &[usize],
    w: usize,
    mut case: impl FnMut(usize) -> Box<dyn Case>,
) {
    use teamalg::kernels::sections::{self, SectionTiming};
    let team = held_team(w);
    for &n in sizes {
        let mut c = case(n);
        for _ in 0..3 {
            c.prepare();
            c.teamalg(&team);
        }
        let mut calls: Vec<(Duration, Vec<SectionTiming>)> = (0..7)
            .map(|_| {
                c.prepare();
                let t = Instant::now();
                let ((), seen) = sections::collect(|| c.teamalg(&team));
                (t.elapsed(), seen)
            })
            .collect();
        calls.sort_by_key(|c| c.0);
        let (total, seen) = &calls[calls.len() / 2];
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let sum = |s: &[SectionTiming]| {
            s.iter()
                .fold((Duration::ZERO, Duration::ZERO, Duration::ZERO), |a, x| {
                    (a.0 + x.wall, a.1 + x.lead, a.2 + x.other)
                })
        };
        let (wall, lead, other) = sum(seen);
        let serial_sections = seen.iter().filter(|s| s.width < 2).count();
        println!(
            "{name:<12} {n:>5} call {:>8.2} ms: outside sections {:>6.2}, {} sections ({} serial) {:>8.2}; lead busy {:>8.2} idle {:>6.2}; member busy {:>8.2} idle {:>6.2}",
            ms(*total),
            ms(total.saturating_sub(wall)),
            seen.len(),
            serial_sections,
            ms(wall),
            ms(lead),
            ms(wall.saturating_sub(lead)),
            ms(other),
            ms(wall.saturating_sub(other)),
        );
        // Per site, in order of first appearance.
        let mut sites: Vec<&str> = Vec::new();
        for x in seen {
            if !sites.contains(&x.site) {
                sites.push(x.site);
            }
        }
        for site in sites {
            let mine: Vec<SectionTiming> =
                seen.iter().filter(|x| x.site == site).cloned().collect();
            let (wall, lead, other) = sum(&mine);
            println!(
                "{:<18} {site:<16} {:>5} sections wall {:>8.2}: lead busy {:>8.2}, member busy {:>8.2}",
                "",
                mine.len(),
                ms(wall),
                ms(lead),
                ms(other),
            );
        }
        let third = seen.len().div_ceil(3).max(1);
        for (part, chunk) in ["first", "middle", "last"].iter().zip(seen.chunks(third)) {
            let (wall, lead, other) = sum(chunk);
            println!(
                "{:<18} {part:>6} third ({:>3} sections) wall {:>8.2}: lead idle {:>6.2}, member idle {:>6.2}",
                "",
                chunk.len(),
                ms(wall),
                ms(wall.saturating_sub(lead)),
                ms(wall.saturating_sub(other)),
            );
        }
    }
}

/// A reproducible, well-conditioned entry (a slowly varying smooth part plus a hash).
fn re(i: usize, j: usize) -> f64 {
    let h = (i as u64 * 0x9e37_79b9 + j as u64 * 0x85eb_ca6b) % 1000;
    ((i * 7 + j * 3) as f64 * 0.01).sin() + h as f64 / 1000.0 - 0.5
}

fn cx(i: usize, j: usize) -> c64 {
    c64::new(re(i, j), re(j, i))
}

/// `B B^H + n I`: positive definite.
fn spd<T: ComplexField + Copy>(n: usize, f: impl Fn(usize, usize) -> T) -> Mat<T> {
    let b = Mat::<T>::from_fn(n, n, f);
    let mut a = Mat::<T>::zeros(n, n);
    faer_matmul(
        a.as_mut(),
        Accum::Replace,
        b.as_ref(),
        b.adjoint(),
        faer::traits::math_utils::one(),
        Par::Seq,
    );
    for i in 0..n {
        a[(i, i)] += faer::traits::math_utils::from_f64::<T>(n as f64);
    }
    a
}

/// Four rayon workers on this host's CPUs each run 8 GEMMs of 256 through plain tokens (budget
/// `w`) of one shared teamalg pool of `w`, against the same loop with serial tokens; rounds of
/// the two loops alternate. Prints each loop's median and p90 time and the median ratio.
/// `--finite-check`: what the facade's finiteness check costs. Per kernel and size, the facade
/// call with the check (the default) against the same call with `check_finite(false)`,
/// alternated call by call on a held team of `w`; prints both medians and the median ratio.
fn finite_check_cost(w: usize, sizes: &[usize]) {
    use teamalg::linalg::{self, Options};
    let team = held_team(w);
    let (on, off) = (Options::new(), Options::new().check_finite(false));
    println!("the finiteness check, held team of {w}; times in us, medians; ratio = checked / unchecked\n");
    println!(
        "{:<10} {:>5} {:>10} {:>10} {:>8}",
        "kernel", "n", "unchecked", "checked", "ratio"
    );
    for &n in sizes {
        let a = Mat::from_fn(n, n, re);
        let b = Mat::from_fn(n, n, |i, j| re(j, i));
        let spd = spd(n, re);
        let budget = Duration::from_millis(400);
        let c = std::cell::RefCell::new(Mat::<f64>::zeros(n, n));
        let work = std::cell::RefCell::new(a.clone());
        let mm = |o: &Options| {
            linalg::matmul_with(&mut *c.borrow_mut(), Accum::Replace, &a, &b, 1.0, &team, o)
                .unwrap()
        };
        let (t_off, t_on, r) = pairs(|| {}, || mm(&off), || mm(&on), budget);
        println!(
            "{:<10} {n:>5} {:>10.2} {:>10.2} {r:>8.3}",
            "gemm",
            t_off * 1e6,
            t_on * 1e6
        );
        let prep = || work.borrow_mut().copy_from(&a);
        let lu = |o: &Options| drop(linalg::lu_with(work.borrow_mut().as_mut(), &team, o).unwrap());
        let (t_off, t_on, r) = pairs(prep, || lu(&off), || lu(&on), budget);
        println!(
            "{:<10} {n:>5} {:>10.2} {:>10.2} {r:>8.3}",
            "lu",
            t_off * 1e6,
            t_on * 1e6
        );
        let prep = || work.borrow_mut().copy_from(&spd);
        let ch = |o: &Options| {
            drop(linalg::cholesky_with(work.borrow_mut().as_mut(), &team, o).unwrap())
        };
        let (t_off, t_on, r) = pairs(prep, || ch(&off), || ch(&on), budget);
        println!(
            "{:<10} {n:>5} {:>10.2} {:>10.2} {r:>8.3}",
            "cholesky",
            t_off * 1e6,
            t_on * 1e6
        );
    }
}

fn inside_rayon_pool(w: usize) {
    use rayon::prelude::*;
    let n = 256;
    let a = Mat::from_fn(n, n, re);
    let b = Mat::from_fn(n, n, |i, j| re(j, i));
    let pool = Pool::builder().threads(w).build().unwrap();
    let outer = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    let products = |tokens: bool| {
        outer.install(|| {
            (0..32).into_par_iter().for_each(|_| {
                let mut c = Mat::<f64>::zeros(n, n);
                let plain;
                let serial = teamalg::Exec::serial();
                let e: &dyn Executor = if tokens {
                    plain = teamalg::Exec::new(&pool, w).unwrap();
                    &plain
                } else {
                    &serial
                };
                let (a, b) = (a.as_ref(), b.as_ref());
                matmul(
                    c.as_mut(),
                    Accum::Replace,
                    a,
                    b,
                    1.0,
                    &e,
                    GemmParams::default(),
                );
            })
        })
    };
    let time = |f: &dyn Fn()| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64()
    };
    let (mut plain, mut serial) = (Vec::new(), Vec::new());
    time(&|| products(true));
    time(&|| products(false));
    for _ in 0..21 {
        plain.push(time(&|| products(true)));
        serial.push(time(&|| products(false)));
    }
    let ms = |t: f64| t * 1e3;
    let (p, s) = (stats(&plain), stats(&serial));
    println!(
        "32 GEMMs of {n} from 4 rayon workers on {} CPUs, teamalg pool of {w}; ms (median / p90)",
        teamalg::available_cpus()
    );
    println!(
        "plain tokens (budget {w}) {:>8.2} / {:>8.2}",
        ms(p.0),
        ms(p.1)
    );
    println!(
        "serial tokens            {:>8.2} / {:>8.2}",
        ms(s.0),
        ms(s.1)
    );
    println!(
        "plain / serial (median of rounds) {:.2}",
        ratio(&plain, &serial)
    );
}

fn main() {
    let mut sizes = vec![32, 64, 128, 256, 512, 1024, 2048];
    let mut kernels = vec![
        "gemm".to_string(),
        "lu".into(),
        "cholesky".into(),
        "qr".into(),
    ];
    let mut w = teamalg::available_cpus().max(2);
    let (mut settled, mut inside_rayon, mut audit) = (false, false, false);
    let mut finite_check = false;
    let mut trace_sections = false;
    let mut kernels_named = false;
    let mut load = load::LoadSpec::default();
    let mut args = std::env::args().skip(1);
    let list = |s: String| s.split(',').map(str::to_string).collect::<Vec<_>>();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--sizes" => {
                sizes = list(args.next().expect("--sizes"))
                    .iter()
                    .map(|s| s.parse().unwrap())
                    .collect()
            }
            "--kernels" => {
                kernels = list(args.next().expect("--kernels"));
                kernels_named = true;
            }
            "--audit" => audit = true,
            "--width" => w = args.next().expect("--width").parse().unwrap(),
            "--settled" => settled = true,
            "--inside-rayon" => inside_rayon = true,
            "--finite-check" => finite_check = true,
            "--sections" => trace_sections = true,
            "--block" => BLOCK.store(args.next().expect("--block N").parse().unwrap(), Relaxed),
            "--wide" => WIDE.store(args.next().expect("--wide N").parse().unwrap(), Relaxed),
            "--svd-auto" => SVD_AUTO.store(true, Relaxed),
            "--owned" => OWNED.store(true, Relaxed),
            "--load" => load.parse_load(&args.next().expect("--load N[:NICE]")),
            "--load-phases" => {
                load.parse_phases(&args.next().expect("--load-phases ON:OFF"));
                PHASES
                    .set(load.phases.expect("parsed"))
                    .expect("--load-phases once");
            }
            "--blocks" => {
                let v = args.next().expect("--blocks PAUSE_MS:CALLS");
                let (p, c) = v.split_once(':').expect("--blocks PAUSE_MS:CALLS");
                let pause = Duration::from_millis(p.parse().expect("--blocks PAUSE_MS"));
                BLOCKS
                    .set((pause, c.parse().expect("--blocks CALLS")))
                    .expect("--blocks once");
            }
            "--aspect" => {
                let x: f64 = args
                    .next()
                    .expect("--aspect X")
                    .parse()
                    .expect("--aspect X");
                assert!(x >= 1.0, "--aspect X: X >= 1 (tall)");
                ASPECT.store(x.to_bits(), Relaxed);
            }
            "--csv" => {
                let path = args.next().expect("--csv FILE");
                let header = "kernel,scalar,n,width,arm,median_us,p90_us,max_us,ratio_to_serial";
                let csv = Csv::append(&path, header).expect("--csv FILE: cannot open");
                CSV.set(std::sync::Mutex::new(csv)).ok();
            }
            "--bench" => {}
            other => panic!("unknown option {other}"),
        }
    }
    // The load runs for every mode below, until `main` returns.
    let _load = load.start();
    if load.processes > 0 {
        println!("load: {}", load.describe());
    }
    if inside_rayon {
        return inside_rayon_pool(w);
    }
    if finite_check {
        return finite_check_cost(w, &sizes);
    }
    if audit {
        if !kernels_named {
            kernels = ["gemm", "trsm", "lu", "cholesky"]
                .map(String::from)
                .to_vec();
        }
        return audit::run(&kernels, &sizes, w);
    }
    let factor_sizes: Vec<usize> = sizes.iter().copied().filter(|&n| n >= 64).collect();
    let lu_scratch = |n| {
        faer::dyn_stack::StackReq::any_of(&[
            lu_in_place_scratch::<usize, f64>(n, n, Par::rayon(w), Default::default()),
            lu::lu_in_place_scratch::<c64>(n, n),
        ])
    };
    let chol_scratch = |n| cholesky_in_place_scratch::<c64>(n, Par::rayon(w), Default::default());
    if trace_sections {
        println!("where the time goes, held team of {w}, f64 (median call of 7)\n");
        for k in &kernels {
            match k.as_str() {
                "lu" => section_trace("lu f64", &factor_sizes, w, |n| {
                    Box::new(Lu(Factor::new(Mat::from_fn(n, n, re), lu_scratch(n))))
                }),
                "cholesky" => section_trace("cholesky f64", &factor_sizes, w, |n| {
                    Box::new(Cholesky(Factor::new(spd(n, re), chol_scratch(n))))
                }),
                "qr" => section_trace("qr f64", &factor_sizes, w, |n| {
                    Box::new(Qr::new(Mat::from_fn(n, n, re), w))
                }),
                "svd" => section_trace("svd f64", &factor_sizes, w, |n| {
                    Box::new(Svd::new(Mat::from_fn(n, n, re), true, w))
                }),
                "bidiag" => section_trace("bidiag f64", &factor_sizes, w, |n| {
                    Box::new(Bidiag::new(Mat::from_fn(n, n, re)))
                }),
                _ => {}
            }
        }
        return;
    }
    let pattern = match (settled, BLOCKS.get()) {
        (true, _) => {
            "; each arm alone against faer serial after a 50 ms pause (settled)".to_string()
        }
        (false, Some((pause, calls))) => format!(
            "; blocks: each arm {calls} calls back to back after a {} ms pause, in turn",
            pause.as_millis()
        ),
        (false, None) => "; arms interleaved call by call, no pauses".to_string(),
    };
    println!(
        "kernels at width {w}, {} CPUs; times in us, medians (ratio to faer serial){pattern}\n",
        teamalg::available_cpus(),
    );
    if settled {
        println!(
            "{:<12} {:>5} {:>10} {:>17} {:>17} {:>17}",
            "kernel", "n", "faer seq", "faer rayon", "teamalg team", "team per call"
        );
    } else {
        println!(
            "{:<12} {:>5} {:>10} {:>17} {:>17} {:>17} {:>10} {:>8}",
            "kernel",
            "n",
            "faer seq",
            "faer rayon",
            "teamalg team",
            "team per call",
            "p90",
            "per/team"
        );
    }
    for k in &kernels {
        match k.as_str() {
            "gemm" => {
                rows("gemm f64", &sizes, w, settled, |n| {
                    let (a, b) = (Mat::from_fn(n, n, re), Mat::from_fn(n, n, |i, j| re(j, i)));
                    let c = Mat::zeros(n, n);
                    Box::new(Gemm { a, b, c, one: 1.0 })
                });
                rows("gemm c64", &sizes, w, settled, |n| {
                    let (a, b) = (Mat::from_fn(n, n, cx), Mat::from_fn(n, n, |i, j| cx(j, i)));
                    let c = Mat::zeros(n, n);
                    let one = c64::new(1.0, 0.0);
                    Box::new(Gemm { a, b, c, one })
                });
            }
            "lu" => {
                rows("lu f64", &factor_sizes, w, settled, |n| {
                    Box::new(Lu(Factor::new(Mat::from_fn(n, n, re), lu_scratch(n))))
                });
                rows("lu c64", &factor_sizes, w, settled, |n| {
                    Box::new(Lu(Factor::new(Mat::from_fn(n, n, cx), lu_scratch(n))))
                });
            }
            "cholesky" => {
                let scratch = chol_scratch;
                rows("cholesky f64", &factor_sizes, w, settled, |n| {
                    Box::new(Cholesky(Factor::new(spd(n, re), scratch(n))))
                });
                rows("cholesky c64", &factor_sizes, w, settled, |n| {
                    Box::new(Cholesky(Factor::new(spd(n, cx), scratch(n))))
                });
            }
            "qr" => {
                rows("qr f64", &factor_sizes, w, settled, |n| {
                    Box::new(Qr::new(Mat::from_fn(n, n, re), w))
                });
                rows("qr c64", &factor_sizes, w, settled, |n| {
                    Box::new(Qr::new(Mat::from_fn(n, n, cx), w))
                });
            }
            "svd" => {
                for (name, vectors) in [("svd f64", true), ("svd values f64", false)] {
                    rows(name, &factor_sizes, w, settled, |n| {
                        Box::new(Svd::new(Mat::from_fn(svd_rows(n), n, re), vectors, w))
                    });
                }
                rows("svd c64", &factor_sizes, w, settled, |n| {
                    Box::new(Svd::new(Mat::from_fn(svd_rows(n), n, cx), true, w))
                });
            }
            "evd" => {
                for (name, vectors) in [("evd f64", true), ("evd values f64", false)] {
                    rows(name, &factor_sizes, w, settled, |n| {
                        Box::new(Evd::new(Mat::from_fn(n, n, re), vectors, w))
                    });
                }
                rows("evd c64", &factor_sizes, w, settled, |n| {
                    Box::new(Evd::new(Mat::from_fn(n, n, cx), true, w))
                });
            }
            "tridiag" => {
                rows("tridiag f64", &factor_sizes, w, settled, |n| {
                    Box::new(Tridiag::new(Mat::from_fn(n, n, re), w))
                });
                rows("tridiag c64", &factor_sizes, w, settled, |n| {
                    Box::new(Tridiag::new(Mat::from_fn(n, n, cx), w))
                });
            }
            "bidiag" => {
                rows("bidiag f64", &factor_sizes, w, settled, |n| {
                    Box::new(Bidiag::new(Mat::from_fn(n, n, re)))
                });
                rows("bidiag c64", &factor_sizes, w, settled, |n| {
                    Box::new(Bidiag::new(Mat::from_fn(n, n, cx)))
                });
            }
            "sparse" => {
                // n is the side of the grid: s x s points, times 64 columns.
                let sides: Vec<usize> = sizes.iter().copied().filter(|&s| s >= 64).collect();
                rows("sparse f64", &sides, w, settled, |s| {
                    Box::new(SparseDense::laplacian(s, 1.0, re))
                });
                rows("sparse c64", &sides, w, settled, |s| {
                    Box::new(SparseDense::laplacian(s, c64::new(1.0, 0.0), cx))
                });
            }
            "sparse_sparse" => {
                // n is the order: n x n, 10 entries per column, times itself.
                rows("sp*sp f64", &sizes, w, settled, |n| {
                    Box::new(SparseSparse::random(n, 1.0, re))
                });
                rows("sp*sp c64", &sizes, w, settled, |n| {
                    Box::new(SparseSparse::random(n, c64::new(1.0, 0.0), cx))
                });
            }
            other => panic!("unknown kernel {other}"),
        }
    }
}
