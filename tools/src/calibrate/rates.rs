//! The serial rate of each kernel family, timed exactly as the kernels call it when the gate
//! says serial.

use super::*;

/// The sizes (n of a square call) at which rates are timed.
pub const RATE_SIZES: [usize; 4] = [32, 64, 128, 256];

/// Median of five timings by `time` (ns), after one unmeasured run; repeated until two
/// medians agree within 5 % (at most four times).
fn stable_ns(mut time: impl FnMut() -> f64) -> f64 {
    time();
    let mut once = || {
        let v: Vec<f64> = (0..5).map(|_| time()).collect();
        median(&v)
    };
    let mut prev = once();
    for _ in 0..3 {
        let next = once();
        let agree = (next / prev - 1.0).abs() <= 0.05;
        prev = prev.min(next);
        if agree {
            break;
        }
    }
    prev
}

/// A scalar type calibration can make test matrices of.
pub trait Sample: ComplexField + Scalar + Send + Sync + Copy {
    /// A value from two reals.
    fn make(re: f64, im: f64) -> Self;
}

impl Sample for f64 {
    fn make(re: f64, _: f64) -> Self {
        re
    }
}
impl Sample for f32 {
    fn make(re: f64, _: f64) -> Self {
        re as f32
    }
}
impl Sample for c64 {
    fn make(re: f64, im: f64) -> Self {
        c64::new(re, im)
    }
}
impl Sample for c32 {
    fn make(re: f64, im: f64) -> Self {
        c32::new(re as f32, im as f32)
    }
}

/// An `n x n` matrix with pseudo-random entries in (-1, 1) (full rank: QR stops at the rank)
/// and `diag` added on the diagonal.
fn matrix<T: Sample>(n: usize, seed: f64, diag: f64) -> Mat<T> {
    let mut state = seed.to_bits() | 1;
    let mut next = move || {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let x = state.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (x >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    };
    let mut m = Mat::zeros(n, n);
    for j in 0..n {
        for i in 0..n {
            let (re, im) = (next(), next());
            m[(i, j)] = T::make(re + if i == j { diag } else { 0.0 }, im);
        }
    }
    m
}

/// A Hermitian positive definite `n x n` matrix (lower triangle read).
fn spd<T: Sample>(n: usize) -> Mat<T> {
    let a = matrix::<T>(n, 0.37, 0.0);
    Mat::from_fn(n, n, |i, j| {
        let (r, c) = (i.max(j), i.min(j));
        let v = a[(r, c)];
        if i == j {
            T::make(2.0 * n as f64, 0.0)
        } else if i > j {
            v
        } else {
            faer::traits::math_utils::conj(&v)
        }
    })
}

/// One call of `family`'s kernel on `n x n` data, on `exec`, with the call threshold `t`.
/// Returns the work in the family's unit.
pub(super) struct Workload<T: Sample> {
    family: Family,
    n: usize,
    a: Mat<T>,
    b: Mat<T>,
    c: Mat<T>,
    swaps: Vec<usize>,
    /// QR's Householder factors (allocated once, outside the timed call).
    householder: Mat<T>,
    buf: MemBuffer,
}

impl<T: Sample> Workload<T> {
    pub(super) fn new(family: Family, n: usize) -> Self {
        let a = match family {
            Family::Cholesky => spd::<T>(n),
            Family::TriangularSolve | Family::LuPartial => matrix::<T>(n, 0.31, n as f64),
            _ => matrix::<T>(n, 0.31, 0.0),
        };
        let stack = match family {
            Family::LuPartial => lu_in_place_scratch::<T>(n, n),
            Family::Cholesky => cholesky_in_place_scratch::<T>(n),
            Family::Qr => {
                let bs = faer::linalg::qr::no_pivoting::factor::recommended_block_size::<T>(n, n);
                faer::linalg::qr::no_pivoting::factor::qr_in_place_scratch::<T>(
                    n,
                    n,
                    bs,
                    Par::Seq,
                    Default::default(),
                )
            }
            _ => faer::dyn_stack::StackReq::EMPTY,
        };
        Workload {
            family,
            n,
            b: matrix::<T>(n, 0.57, 0.0),
            c: Mat::zeros(n, n),
            a,
            swaps: vec![0; n],
            householder: Mat::zeros(
                faer::linalg::qr::no_pivoting::factor::recommended_block_size::<T>(n, n),
                n,
            ),
            buf: MemBuffer::new(stack),
        }
    }

    /// Multiply-adds of one call.
    pub(super) fn units(&self) -> f64 {
        let n = self.n as f64;
        match self.family {
            Family::Gemm => n * n * n,
            Family::TriangularSolve => n * n * n / 2.0,
            Family::LuPartial => n * n * n / 3.0,
            Family::Cholesky => n * n * n / 6.0,
            Family::Qr => n * n * n * 2.0 / 3.0,
            other => unreachable!("no workload for {}", other.name()),
        }
    }

    /// Restores the input a call overwrites (not timed: the copy is no part of the kernel).
    pub(super) fn prepare(&mut self) {
        match self.family {
            Family::Gemm => {}
            Family::TriangularSolve => self.c.copy_from(&self.b),
            _ => self.c.copy_from(&self.a),
        }
    }

    /// One call, after [`Workload::prepare`], in ns.
    pub(super) fn time(&mut self, exec: &(impl Executor + ?Sized), t: Option<ParThreshold>) -> f64 {
        self.prepare();
        let start = Instant::now();
        self.call(exec, t);
        start.elapsed().as_nanos() as f64
    }

    /// One call on the prepared input.
    pub(super) fn call(&mut self, exec: &(impl Executor + ?Sized), t: Option<ParThreshold>) {
        match self.family {
            Family::Gemm => matmul(
                self.c.as_mut(),
                Accum::Replace,
                self.a.as_ref(),
                self.b.as_ref(),
                T::make(1.0, 0.0),
                exec,
                GemmParams { threshold: t },
            ),
            Family::TriangularSolve => {
                solve_in_place(
                    self.a.as_ref(),
                    self.c.as_mut(),
                    SolveSide::Left,
                    Triangle::Lower,
                    Diag::NonUnit,
                    exec,
                    SolveParams { threshold: t },
                );
            }
            Family::LuPartial => {
                let params = LuParams {
                    threshold: t,
                    ..LuParams::default()
                };
                let stack = MemStack::new(&mut self.buf);
                lu_in_place(self.c.as_mut(), &mut self.swaps, exec, params, stack);
            }
            Family::Cholesky => {
                let params = CholeskyParams {
                    threshold: t,
                    ..CholeskyParams::default()
                };
                let stack = MemStack::new(&mut self.buf);
                let _ = cholesky_in_place(self.c.as_mut(), exec, params, stack);
            }
            Family::Qr => {
                use faer::linalg::qr::no_pivoting::factor::qr_in_place;
                let stack = MemStack::new(&mut self.buf);
                qr_in_place(
                    self.c.as_mut(),
                    self.householder.as_mut(),
                    Par::Seq,
                    stack,
                    Default::default(),
                );
            }
            other => unreachable!("no workload for {}", other.name()),
        }
        std::hint::black_box(&self.c);
    }
}

/// ns per unit of `family`'s serial path at size `n` for scalar `T`, one thread, and the
/// units of that call.
fn rate_of<T: Sample>(family: Family, n: usize) -> (f64, f64) {
    let mut w = Workload::<T>::new(family, n);
    let units = w.units();
    (stable_ns(|| w.time(&Seq, None)) / units, units)
}

/// The serial rate curve of `family` for `f64`, `c64`, `f32` and `c32` on this machine, one
/// thread, anchored at [`RATE_SIZES`].
pub fn measure_rate(family: Family) -> RateCurve {
    let anchors: Vec<(f64, Rate)> = RATE_SIZES
        .iter()
        .map(|&n| {
            let (real, units) = rate_of::<f64>(family, n);
            let rate = Rate {
                real,
                cplx: rate_of::<c64>(family, n).0,
                real_single: rate_of::<f32>(family, n).0,
                cplx_single: rate_of::<c32>(family, n).0,
            };
            (units, rate)
        })
        .collect();
    RateCurve::new(&anchors).expect("units grow with n and rates are positive")
}
