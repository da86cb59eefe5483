//! The SVD and self-adjoint EVD cases, and their reductions alone (tridiagonal, bidiagonal),
//! each against faer's call; and the general (non-Hermitian) EVD, through the owned forms on
//! both sides.
//!
//! The SVD and EVD rows: without `--owned` both sides call their scratch forms (faer's `svd`
//! and `self_adjoint_evd` kernels, teamalg's, in scratch and outputs the case holds); with
//! `--owned` both sides call their owned high-level forms, as users do: teamalg's facade
//! (`Svd::new_thin`, `singular_values`, `SelfAdjointEigen::new`, `self_adjoint_eigenvalues`:
//! input checked, outputs and scratch allocated per call) against faer's `Mat` methods
//! (`thin_svd`, `singular_values`, `self_adjoint_eigen(Side::Lower)`,
//! `self_adjoint_eigenvalues(Side::Lower)`: outputs and scratch allocated per call), faer's
//! global parallelism set to the arm's `Par` around the call ([`with_faer_par`]). The
//! reductions alone have no owned form on either side: their rows are the scratch forms
//! whatever `--owned` says.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::{
    self_adjoint_evd as faer_evd, self_adjoint_evd_scratch as faer_evd_scratch, ComputeEigenvectors,
};
use faer::linalg::svd::{svd as faer_svd, svd_scratch as faer_svd_scratch, ComputeSvdVectors};
use faer::{Mat, Par, Side};
use teamalg::kernels::bidiag;
use teamalg::kernels::bidiag_svd::{Real as RealNumber, Rotate};
use teamalg::kernels::evd::{self, EvdParams};
use teamalg::kernels::par::Executor;
use teamalg::kernels::svd::{self, SvdParams, SvdPath};
use teamalg::kernels::tridiag;

use super::{cx, re, with_faer_par, Case, Row, Settings};

/// The rows of `kernel` (`svd`, `evd`, `evd_spectra`, `eigen`, `tridiag`, `bidiag`), or `None`
/// when it is not one of them.
pub(crate) fn rows<'a>(kernel: &str, s: &'a Settings) -> Option<Vec<Row<'a>>> {
    let (w, sizes) = (s.width, s.factor_sizes());
    // teamalg's own SVD path at every size (the default runs it only where it measured faster
    // than faer's serial SVD; `--svd-auto` runs the default).
    let path = if s.svd_auto {
        SvdPath::Auto
    } else {
        SvdPath::Own
    };
    let owned = s.owned;
    let rows = move |n: usize| s.svd_rows(n);
    Some(match kernel {
        "svd" => vec![
            Row::new("svd f64", sizes.clone(), move |n| {
                Box::new(Svd::new(Mat::from_fn(rows(n), n, re), true, w, path, owned))
            }),
            Row::new("svd values f64", sizes.clone(), move |n| {
                Box::new(Svd::new(
                    Mat::from_fn(rows(n), n, re),
                    false,
                    w,
                    path,
                    owned,
                ))
            }),
            Row::new("svd c64", sizes.clone(), move |n| {
                Box::new(Svd::new(Mat::from_fn(rows(n), n, cx), true, w, path, owned))
            }),
            Row::new("svd values c64", sizes, move |n| {
                Box::new(Svd::new(
                    Mat::from_fn(rows(n), n, cx),
                    false,
                    w,
                    path,
                    owned,
                ))
            }),
        ],
        "evd" => vec![
            Row::new("evd f64", sizes.clone(), move |n| {
                Box::new(Evd::new(Mat::from_fn(n, n, re), true, w, owned))
            }),
            Row::new("evd values f64", sizes.clone(), move |n| {
                Box::new(Evd::new(Mat::from_fn(n, n, re), false, w, owned))
            }),
            Row::new("evd c64", sizes.clone(), move |n| {
                Box::new(Evd::new(Mat::from_fn(n, n, cx), true, w, owned))
            }),
            Row::new("evd values c64", sizes.clone(), move |n| {
                Box::new(Evd::new(Mat::from_fn(n, n, cx), false, w, owned))
            }),
        ],
        // The general EVD with vectors, of a non-symmetric matrix.
        "eigen" => vec![
            Row::new("eigen f64", sizes.clone(), |n| {
                Box::new(Eigen(Mat::from_fn(n, n, re)))
            }),
            Row::new("eigen c64", sizes.clone(), |n| {
                Box::new(Eigen(Mat::from_fn(n, n, cx)))
            }),
        ],
        // The EVD with vectors (f64) on five spectra: random symmetric, `G^T G + n I`, graded
        // over 10 decades, clustered, and the `evd` rows' own input.
        "evd_spectra" => vec![
            Row::new("evd f64 random", sizes.clone(), move |n| {
                Box::new(Evd::hermitian(random_symmetric(n), true, w, owned))
            }),
            Row::new("evd f64 gram", sizes.clone(), move |n| {
                Box::new(Evd::hermitian(gram(n), true, w, owned))
            }),
            Row::new("evd f64 graded", sizes.clone(), move |n| {
                let last = (n.max(2) - 1) as f64;
                let w_of = move |i: usize| 10f64.powf(-10.0 * i as f64 / last);
                Box::new(Evd::hermitian(with_spectrum(n, w_of), true, w, owned))
            }),
            Row::new("evd f64 clustered", sizes.clone(), move |n| {
                // Four clusters of n / 4 eigenvalues each, spread by 1e-10 within a cluster.
                let w_of = move |i: usize| (1 + 4 * i / n) as f64 + 1e-10 * i as f64;
                Box::new(Evd::hermitian(with_spectrum(n, w_of), true, w, owned))
            }),
            Row::new("evd f64 bench", sizes.clone(), move |n| {
                Box::new(Evd::new(Mat::from_fn(n, n, re), true, w, owned))
            }),
        ],
        "tridiag" => vec![
            Row::new("tridiag f64", sizes.clone(), move |n| {
                Box::new(Tridiag::new(Mat::from_fn(n, n, re), w))
            }),
            Row::new("tridiag c64", sizes, move |n| {
                Box::new(Tridiag::new(Mat::from_fn(n, n, cx), w))
            }),
        ],
        "bidiag" => vec![
            Row::new("bidiag f64", sizes.clone(), |n| {
                Box::new(Bidiag::new(Mat::from_fn(n, n, re)))
            }),
            Row::new("bidiag c64", sizes, |n| {
                Box::new(Bidiag::new(Mat::from_fn(n, n, cx)))
            }),
        ],
        _ => return None,
    })
}

/// SVD: faer's `svd` and the kernel (thin vectors, or values only), from the same matrix;
/// with `--owned`, faer's `Mat::thin_svd` or `Mat::singular_values` and the facade's
/// `Svd::new_thin` or `singular_values`.
struct Svd<T: Rotate> {
    a: Mat<T>,
    s: Mat<T>,
    sr: Vec<<T as Rotate>::RealPart>,
    u: Mat<T>,
    v: Mat<T>,
    vectors: bool,
    path: SvdPath,
    /// `--owned`: both arms through their owned forms: teamalg's facade (`Svd::new_thin`,
    /// `singular_values`), faer's `Mat::thin_svd`, `Mat::singular_values`.
    owned: bool,
    buf: MemBuffer,
    ours: MemBuffer,
}

impl<T: teamalg::linalg::Field> Svd<T> {
    fn new(a: Mat<T>, vectors: bool, width: usize, path: SvdPath, owned: bool) -> Self {
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
            sr: vec![<<T as Rotate>::RealPart as RealNumber>::ZERO; k],
            u: Mat::zeros(m, k),
            v: Mat::zeros(n, k),
            a,
            vectors,
            path,
            owned,
            buf: MemBuffer::new(req),
            ours: MemBuffer::new(svd::svd_scratch::<T>(m, n, vectors)),
        }
    }
}

impl<T: teamalg::linalg::Field> Case for Svd<T> {
    fn faer(&mut self, par: Par) {
        if self.owned {
            // faer's owned forms: outputs and scratch allocated per call.
            if self.vectors {
                let svd = with_faer_par(par, || self.a.thin_svd()).expect("svd");
                std::hint::black_box(svd);
            } else {
                let s = with_faer_par(par, || self.a.singular_values()).expect("svd");
                std::hint::black_box(s);
            }
            return;
        }
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
        if self.owned {
            // The owned facade form (its default path): input checked, outputs and scratch
            // allocated per call.
            if self.vectors {
                std::hint::black_box(teamalg::linalg::Svd::new_thin(&self.a, exec).expect("svd"));
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
        // In scratch it holds, as faer's arm does.
        let p = SvdParams {
            path: self.path,
            ..SvdParams::default()
        };
        let stack = MemStack::new(&mut self.ours);
        svd::svd_with_scratch(self.a.as_ref(), &mut self.sr, u, v, &exec, p, stack).expect("svd");
    }
}

/// Self-adjoint EVD: faer's `self_adjoint_evd` and the kernel (vectors, or values only), from
/// the same Hermitian matrix, each in scratch it holds; with `--owned`, faer's
/// `Mat::self_adjoint_eigen` or `Mat::self_adjoint_eigenvalues` (the lower triangle) and the
/// facade's `SelfAdjointEigen::new` or `self_adjoint_eigenvalues`.
struct Evd<T: Rotate> {
    a: Mat<T>,
    s: Mat<T>,
    w: Vec<<T as Rotate>::RealPart>,
    u: Mat<T>,
    vectors: bool,
    /// `--owned`: both arms through their owned forms: teamalg's facade
    /// (`SelfAdjointEigen::new`, `self_adjoint_eigenvalues`), faer's
    /// `Mat::self_adjoint_eigen(Side::Lower)`, `Mat::self_adjoint_eigenvalues(Side::Lower)`.
    owned: bool,
    buf: MemBuffer,
    ours: MemBuffer,
}

impl<T: teamalg::linalg::Field> Evd<T> {
    /// The EVD of `b + b^H`.
    fn new(b: Mat<T>, vectors: bool, width: usize, owned: bool) -> Self {
        let n = b.nrows();
        let a = Mat::from_fn(n, n, |i, j| {
            let (x, y) = (b[(i, j)].parts(), b[(j, i)].parts());
            T::from_parts(x.0 + y.0, x.1 - y.1)
        });
        Self::hermitian(a, vectors, width, owned)
    }

    /// The EVD of the Hermitian `a`.
    fn hermitian(a: Mat<T>, vectors: bool, width: usize, owned: bool) -> Self {
        let n = a.nrows();
        let want = if vectors {
            ComputeEigenvectors::Yes
        } else {
            ComputeEigenvectors::No
        };
        let req = faer_evd_scratch::<T>(n, want, Par::rayon(width), Default::default());
        Evd {
            s: Mat::zeros(n, 1),
            w: vec![<<T as Rotate>::RealPart as RealNumber>::ZERO; n],
            u: Mat::zeros(n, n),
            a,
            vectors,
            owned,
            buf: MemBuffer::new(req),
            ours: MemBuffer::new(evd::self_adjoint_evd_scratch::<T>(n, vectors)),
        }
    }
}

impl<T: teamalg::linalg::Field> Case for Evd<T> {
    fn faer(&mut self, par: Par) {
        if self.owned {
            // faer's owned forms, reading the lower triangle as the facade does.
            let a = &self.a;
            if self.vectors {
                let e = with_faer_par(par, || a.self_adjoint_eigen(Side::Lower)).expect("evd");
                std::hint::black_box(e);
            } else {
                let w =
                    with_faer_par(par, || a.self_adjoint_eigenvalues(Side::Lower)).expect("evd");
                std::hint::black_box(w);
            }
            return;
        }
        let u = self.vectors.then(|| self.u.as_mut());
        let s = self.s.as_mut().col_mut(0).as_diagonal_mut();
        let stack = MemStack::new(&mut self.buf);
        faer_evd(self.a.as_ref(), s, u, par, stack, Default::default()).expect("evd");
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        if self.owned {
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

/// The general EVD with vectors through the owned forms on both sides (`Eigen::new`, faer's
/// `Mat::eigen`), whatever `--owned` says: the facade has only the owned form. teamalg's runs
/// faer's serial EVD on the calling thread (its Hessenberg reduction on a team is not built),
/// so its arms measure what the facade adds: the finiteness check, the vectors' scaling, and
/// the executor's own cost.
struct Eigen<T>(Mat<T>);

impl<T: teamalg::linalg::Field> Case for Eigen<T> {
    fn faer(&mut self, par: Par) {
        let e = with_faer_par(par, || self.0.eigen().expect("evd"));
        std::hint::black_box(e);
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        std::hint::black_box(teamalg::linalg::Eigen::new(&self.0, exec).expect("evd"));
    }
}

/// The tridiagonalization alone: faer's `tridiag_in_place` and teamalg's, on the same
/// Hermitian matrix (given back before each call), each in scratch it holds.
struct Tridiag<T> {
    a: Mat<T>,
    work: Mat<T>,
    h: Mat<T>,
    buf: MemBuffer,
}

impl<T: teamalg::linalg::Field> Tridiag<T> {
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
            buf: MemBuffer::new(req),
        }
    }
}

impl<T: teamalg::linalg::Field> Case for Tridiag<T> {
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
    buf: MemBuffer,
}

impl<T: teamalg::linalg::Field> Bidiag<T> {
    fn new(a: Mat<T>) -> Self {
        let n = a.nrows();
        let bs = faer::linalg::qr::no_pivoting::factor::recommended_block_size::<T>(n, n);
        Bidiag {
            work: a.clone(),
            a,
            hl: Mat::zeros(bs, n),
            hr: Mat::zeros(bs, n - 1),
            buf: MemBuffer::new(bidiag::bidiag_in_place_scratch::<T>(n, n)),
        }
    }
}

impl<T: teamalg::linalg::Field> Case for Bidiag<T> {
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

/// A uniform hash in `[-0.5, 0.5)` of `(i, j, salt)`, unlike [`re`]'s smooth part.
fn uniform(i: usize, j: usize, salt: u64) -> f64 {
    let mut x = (i as u64) ^ ((j as u64) << 21) ^ (salt << 42);
    x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^= x >> 31;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 29;
    (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5
}

/// A random symmetric matrix: uniform entries, mirrored.
fn random_symmetric(n: usize) -> Mat<f64> {
    Mat::from_fn(n, n, |i, j| uniform(i.min(j), i.max(j), 1))
}

/// `G^T G + n I` for a uniform `G`: positive definite, eigenvalues from `n` up.
fn gram(n: usize) -> Mat<f64> {
    let g = Mat::from_fn(n, n, |i, j| uniform(i, j, 2));
    let mut a = g.transpose() * &g;
    for i in 0..n {
        a[(i, i)] += n as f64;
    }
    a
}

/// `Q diag(w) Q^T` with `w[i] = w_of(i)` and `Q` the orthogonal factor of a uniform matrix.
fn with_spectrum(n: usize, w_of: impl Fn(usize) -> f64) -> Mat<f64> {
    let q = Mat::from_fn(n, n, |i, j| uniform(i, j, 3)).qr().compute_Q();
    let qw = Mat::from_fn(n, n, |i, j| q[(i, j)] * w_of(j));
    let a = &qw * q.transpose();
    // Exactly symmetric, as the EVD reads one triangle.
    Mat::from_fn(n, n, |i, j| if i >= j { a[(i, j)] } else { a[(j, i)] })
}
