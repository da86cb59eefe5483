//! The dense cases: GEMM, the triangular solve, LU (partial and full pivoting), Cholesky,
//! `LDL^H`, Bunch-Kaufman, Householder QR and QR with column pivoting, each against faer's
//! call.
//!
//! Without `--owned` both sides call their scratch forms: faer's in-place kernels
//! (`lu_in_place`, `cholesky_in_place`, ...) and teamalg's, in scratch and outputs the case
//! holds. With `--owned` both sides call their owned high-level forms, as users do: teamalg's
//! facade (`teamalg::linalg`: `Lu::new`, `Cholesky::new`, ..., input checked, outputs and
//! scratch allocated per call) against faer's `Mat` methods (`partial_piv_lu`,
//! `llt(Side::Lower)`, `qr`, `col_piv_qr`, `ldlt(Side::Lower)`, `lblt(Side::Lower)`: input
//! copied, outputs and scratch allocated per call), faer's global parallelism set to the arm's
//! `Par` around the call ([`with_faer_par`]). The products and the solve write into the
//! case's `C` or right-hand side on both sides, as teamalg's checked `matmul` and
//! `solve_triangular` do: faer's `matmul` (with the arm's `Par`, under `--owned` too) and
//! `MatRef::solve_lower_triangular_in_place` (under `--owned`; its kernel with a `Par`
//! without). Full pivoting LU has the owned forms on both sides (`FullPivLu::new`, faer's
//! `Mat::full_piv_lu`) either way.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::lblt::factor::{
    cholesky_in_place as faer_lblt, cholesky_in_place_scratch as faer_lblt_scratch,
    LbltParams as FaerLbltParams, PivotingStrategy,
};
use faer::linalg::cholesky::ldlt::factor::{
    cholesky_in_place as faer_ldlt, cholesky_in_place_scratch as faer_ldlt_scratch,
};
use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::linalg::lu::partial_pivoting::factor::{lu_in_place, lu_in_place_scratch};
use faer::linalg::matmul::matmul as faer_matmul;
use faer::linalg::qr::col_pivoting::factor as faer_cp;
use faer::linalg::qr::no_pivoting::factor::{
    qr_in_place as faer_qr, qr_in_place_scratch as faer_qr_scratch,
};
use faer::linalg::triangular_solve::solve_lower_triangular_in_place as faer_trsm;
use faer::traits::ComplexField;
use faer::{c64, Accum, Mat, Par, Side};
use teamalg::gates::Scalar;
use teamalg::kernels::cholesky::{self, CholeskyParams};
use teamalg::kernels::col_piv_qr::{self, ColPivQrParams};
use teamalg::kernels::gemm::{matmul, GemmParams};
use teamalg::kernels::lblt::{self, LbltParams};
use teamalg::kernels::ldlt;
use teamalg::kernels::lu::{self, LuParams};
use teamalg::kernels::par::Executor;
use teamalg::kernels::qr::{self, QrParams};
use teamalg::kernels::triangular::{self, SolveParams};
use teamalg::linalg::{self, Diag, Field, SolveSide, Triangle};

use super::{cx, re, spd, with_faer_par, Case, Row, Settings};

/// The rows of `kernel` (`gemm`, `trsm`, `lu`, `full_piv_lu`, `cholesky`, `ldlt`, `lblt`, `qr`,
/// `col_piv_qr`), or `None` when it is not dense.
pub(crate) fn rows<'a>(kernel: &str, s: &'a Settings) -> Option<Vec<Row<'a>>> {
    let (w, sizes, factor_sizes) = (s.width, s.sizes.clone(), s.factor_sizes());
    let owned = s.owned;
    let lu_p = LuParams {
        block_size: s.block,
        wide_size: s.wide,
        ..LuParams::default()
    };
    let chol_p = CholeskyParams {
        block_size: s.block,
        wide_size: s.wide,
        ..CholeskyParams::default()
    };
    let lu_scratch = move |n| {
        StackReq::any_of(&[
            lu_in_place_scratch::<usize, f64>(n, n, Par::rayon(w), Default::default()),
            lu::lu_in_place_scratch::<c64>(n, n),
        ])
    };
    let chol_scratch =
        move |n| cholesky_in_place_scratch::<c64>(n, Par::rayon(w), Default::default());
    Some(match kernel {
        "gemm" => vec![
            Row::new("gemm f64", sizes.clone(), move |n| {
                let (a, b) = (Mat::from_fn(n, n, re), Mat::from_fn(n, n, |i, j| re(j, i)));
                let c = Mat::zeros(n, n);
                Box::new(Gemm {
                    a,
                    b,
                    c,
                    one: 1.0,
                    owned,
                })
            }),
            Row::new("gemm c64", sizes.clone(), move |n| {
                let (a, b) = (Mat::from_fn(n, n, cx), Mat::from_fn(n, n, |i, j| cx(j, i)));
                let c = Mat::zeros(n, n);
                let one = c64::new(1.0, 0.0);
                Box::new(Gemm {
                    a,
                    b,
                    c,
                    one,
                    owned,
                })
            }),
        ],
        // n x n lower triangular times n right-hand sides.
        "trsm" => vec![
            Row::new("trsm f64", sizes.clone(), move |n| {
                Box::new(Trsm::new(lower(n, re, n as f64), owned))
            }),
            Row::new("trsm c64", sizes, move |n| {
                Box::new(Trsm::new(lower(n, cx, c64::new(n as f64, 0.0)), owned))
            }),
        ],
        "full_piv_lu" => vec![
            Row::new("full_piv_lu f64", factor_sizes.clone(), |n| {
                Box::new(FullPivLu(Mat::from_fn(n, n, re)))
            }),
            Row::new("full_piv_lu c64", factor_sizes.clone(), |n| {
                Box::new(FullPivLu(Mat::from_fn(n, n, cx)))
            }),
        ],
        "lu" => vec![
            Row::new("lu f64", factor_sizes.clone(), move |n| {
                Box::new(Lu(
                    Factor::new(Mat::from_fn(n, n, re), lu_scratch(n), owned),
                    lu_p,
                ))
            }),
            Row::new("lu c64", factor_sizes, move |n| {
                Box::new(Lu(
                    Factor::new(Mat::from_fn(n, n, cx), lu_scratch(n), owned),
                    lu_p,
                ))
            }),
        ],
        "cholesky" => vec![
            Row::new("cholesky f64", factor_sizes.clone(), move |n| {
                Box::new(Cholesky(
                    Factor::new(spd(n, re), chol_scratch(n), owned),
                    chol_p,
                ))
            }),
            Row::new("cholesky c64", factor_sizes, move |n| {
                Box::new(Cholesky(
                    Factor::new(spd(n, cx), chol_scratch(n), owned),
                    chol_p,
                ))
            }),
        ],
        "ldlt" => vec![
            Row::new("ldlt f64", factor_sizes.clone(), move |n| {
                Box::new(Ldlt(Factor::new(
                    spd(n, re),
                    sym_scratch::<f64>(n, w),
                    owned,
                )))
            }),
            Row::new("ldlt c64", factor_sizes.clone(), move |n| {
                Box::new(Ldlt(Factor::new(
                    spd(n, cx),
                    sym_scratch::<c64>(n, w),
                    owned,
                )))
            }),
        ],
        "lblt" => vec![
            Row::new("lblt f64", factor_sizes.clone(), move |n| {
                Box::new(Lblt::new(
                    Mat::from_fn(n, n, |i, j| re(i, j) + re(j, i)),
                    w,
                    owned,
                ))
            }),
            Row::new("lblt c64", factor_sizes.clone(), move |n| {
                Box::new(Lblt::new(
                    Mat::from_fn(n, n, |i, j| cx(i, j) + cx(j, i).conj()),
                    w,
                    owned,
                ))
            }),
        ],
        "qr" => vec![
            Row::new("qr f64", factor_sizes.clone(), move |n| {
                Box::new(Qr::new(Mat::from_fn(n, n, re), w, owned))
            }),
            Row::new("qr c64", factor_sizes, move |n| {
                Box::new(Qr::new(Mat::from_fn(n, n, cx), w, owned))
            }),
        ],
        "col_piv_qr" => vec![
            Row::new("col_piv_qr f64", factor_sizes.clone(), move |n| {
                Box::new(ColPivQr::new(Mat::from_fn(n, n, re), owned))
            }),
            Row::new("col_piv_qr c64", factor_sizes, move |n| {
                Box::new(ColPivQr::new(Mat::from_fn(n, n, cx), owned))
            }),
        ],
        _ => return None,
    })
}

/// `C = A B`, `n x n x n`.
struct Gemm<T> {
    a: Mat<T>,
    b: Mat<T>,
    c: Mat<T>,
    one: T,
    /// `--owned`: teamalg through the facade's checked `matmul`, into `c` as here; faer's arm
    /// is faer's `matmul` into `c` either way (its user-facing product into a given `C`).
    owned: bool,
}

impl<T: Field + Copy> Case for Gemm<T> {
    fn faer(&mut self, par: Par) {
        // Into the held `C` under `--owned` too: teamalg's checked `matmul` writes into the
        // caller's `C` and allocates nothing, so `&a * &b` (a fresh `Mat`) would not match.
        let (a, b) = (self.a.as_ref(), self.b.as_ref());
        faer_matmul(self.c.as_mut(), Accum::Replace, a, b, self.one, par);
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let (a, b) = (self.a.as_ref(), self.b.as_ref());
        if self.owned {
            let c = self.c.as_mut();
            linalg::matmul(c, Accum::Replace, a, b, self.one, exec).expect("finite");
            return;
        }
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
    /// `--owned`: both arms through their owned forms, from `a`: teamalg's facade
    /// (`linalg::Lu::new`, ...) and faer's `Mat` methods (`partial_piv_lu`, ...), with faer's
    /// global parallelism set to the arm's `Par` (the working copy, the pivots and the scratch
    /// are theirs, allocated per call).
    owned: bool,
}

impl<T: ComplexField + Copy> Factor<T> {
    fn new(a: Mat<T>, scratch: StackReq, owned: bool) -> Self {
        let n = a.nrows();
        Factor {
            work: a.clone(),
            a,
            idx: vec![0; n],
            idx2: vec![0; n],
            buf: MemBuffer::new(scratch),
            owned,
        }
    }
    fn prepare(&mut self) {
        self.work.copy_from(&self.a);
    }
}

/// LU with partial pivoting; the kernel's panel widths from `--block` and `--wide`.
struct Lu<T>(Factor<T>, LuParams);

impl<T: Field + Copy> Case for Lu<T> {
    fn prepare(&mut self) {
        self.0.prepare();
    }
    fn faer(&mut self, par: Par) {
        let f = &mut self.0;
        if f.owned {
            std::hint::black_box(with_faer_par(par, || f.a.partial_piv_lu()));
            return;
        }
        let stack = MemStack::new(&mut f.buf);
        let p = Default::default();
        lu_in_place::<usize, T>(f.work.as_mut(), &mut f.idx, &mut f.idx2, par, stack, p);
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let f = &mut self.0;
        if f.owned {
            std::hint::black_box(linalg::Lu::new(&f.a, exec).expect("finite"));
            return;
        }
        let stack = MemStack::new(&mut f.buf);
        lu::lu_in_place(f.work.as_mut(), &mut f.idx, &exec, self.1, stack);
    }
}

/// Cholesky; the kernel's panel widths from `--block` and `--wide`.
struct Cholesky<T>(Factor<T>, CholeskyParams);

impl<T: Field + Copy> Case for Cholesky<T> {
    fn prepare(&mut self) {
        self.0.prepare();
    }
    fn faer(&mut self, par: Par) {
        let f = &mut self.0;
        if f.owned {
            let c = with_faer_par(par, || f.a.llt(Side::Lower)).expect("positive definite");
            std::hint::black_box(c);
            return;
        }
        let stack = MemStack::new(&mut f.buf);
        let p = Default::default();
        cholesky_in_place(f.work.as_mut(), Default::default(), par, stack, p)
            .expect("positive definite");
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let f = &mut self.0;
        if f.owned {
            let c = linalg::Cholesky::new(&f.a, exec).expect("positive definite");
            std::hint::black_box(c);
            return;
        }
        let stack = MemStack::new(&mut f.buf);
        cholesky::cholesky_in_place(f.work.as_mut(), &exec, self.1, stack)
            .expect("positive definite");
    }
}

/// QR: faer's `qr_in_place` and the kernel, both with faer's block size, into one `H`; with
/// `--owned`, faer's `Mat::qr` and the facade's `Qr::new`.
struct Qr<T> {
    f: Factor<T>,
    h: Mat<T>,
    width: usize,
}

impl<T: ComplexField + Scalar + Send + Sync + Copy> Qr<T> {
    fn new(a: Mat<T>, width: usize, owned: bool) -> Self {
        let n = a.nrows();
        let bs = qr::block_size::<T>(n, n);
        let scratch = StackReq::any_of(&[
            faer_qr_scratch::<T>(n, n, bs, Par::rayon(width), Default::default()),
            qr::qr_in_place_scratch::<T>(n, n, bs, width),
        ]);
        Qr {
            f: Factor::new(a, scratch, owned),
            h: Mat::zeros(bs, n),
            width,
        }
    }
}

impl<T: Field + Copy> Case for Qr<T> {
    fn prepare(&mut self) {
        self.f.prepare();
    }
    fn faer(&mut self, par: Par) {
        let f = &mut self.f;
        if f.owned {
            std::hint::black_box(with_faer_par(par, || f.a.qr()));
            return;
        }
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
        if f.owned {
            std::hint::black_box(linalg::Qr::new(&f.a, exec).expect("finite"));
            return;
        }
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

/// QR with column pivoting: faer's `col_pivoting::qr_in_place` and the kernel, with faer's
/// block size, into one `H`; with `--owned`, faer's `Mat::col_piv_qr` and the facade's
/// `ColPivQr::new`.
struct ColPivQr<T> {
    f: Factor<T>,
    h: Mat<T>,
}

impl<T: ComplexField + Scalar + Send + Sync + Copy> ColPivQr<T> {
    fn new(a: Mat<T>, owned: bool) -> Self {
        let n = a.nrows();
        let bs = qr::block_size::<T>(n, n);
        let scratch = StackReq::any_of(&[
            faer_cp::qr_in_place_scratch::<usize, T>(n, n, bs, Par::Seq, Default::default()),
            col_piv_qr::col_piv_qr_in_place_scratch::<T>(n, n),
        ]);
        ColPivQr {
            f: Factor::new(a, scratch, owned),
            h: Mat::zeros(bs, n),
        }
    }
}

impl<T: Field + Copy> Case for ColPivQr<T> {
    fn prepare(&mut self) {
        self.f.prepare();
    }
    fn faer(&mut self, par: Par) {
        let f = &mut self.f;
        if f.owned {
            std::hint::black_box(with_faer_par(par, || f.a.col_piv_qr()));
            return;
        }
        let stack = MemStack::new(&mut f.buf);
        let (w, h) = (f.work.as_mut(), self.h.as_mut());
        faer_cp::qr_in_place(
            w,
            h,
            &mut f.idx,
            &mut f.idx2,
            par,
            stack,
            Default::default(),
        );
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let f = &mut self.f;
        if f.owned {
            std::hint::black_box(linalg::ColPivQr::new(&f.a, exec).expect("finite"));
            return;
        }
        let stack = MemStack::new(&mut f.buf);
        let (w, h) = (f.work.as_mut(), self.h.as_mut());
        let p = ColPivQrParams::default();
        col_piv_qr::col_piv_qr_in_place(w, h, &mut f.idx, &mut f.idx2, &exec, p, stack);
    }
}

/// The scratch of faer's `LDL^H` and Bunch-Kaufman and the kernels' for order `n`.
fn sym_scratch<T: ComplexField>(n: usize, width: usize) -> StackReq {
    let par = Par::rayon(width);
    StackReq::any_of(&[
        faer_ldlt_scratch::<T>(n, par, Default::default()),
        ldlt::ldlt_in_place_scratch::<T>(n),
        faer_lblt_scratch::<usize, T>(n, par, Default::default()),
        lblt::lblt_in_place_scratch::<T>(n, LbltParams::default()),
    ])
}

/// `LDL^H` without pivoting of a positive definite matrix; with `--owned`, faer's
/// `Mat::ldlt(Side::Lower)` and the facade's `Ldlt::new`.
struct Ldlt<T>(Factor<T>);

impl<T: Field + Copy> Case for Ldlt<T> {
    fn prepare(&mut self) {
        self.0.prepare();
    }
    fn faer(&mut self, par: Par) {
        let f = &mut self.0;
        if f.owned {
            let l = with_faer_par(par, || f.a.ldlt(Side::Lower)).expect("nonzero pivots");
            std::hint::black_box(l);
            return;
        }
        let stack = MemStack::new(&mut f.buf);
        faer_ldlt(
            f.work.as_mut(),
            Default::default(),
            par,
            stack,
            Default::default(),
        )
        .expect("nonzero pivots");
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let f = &mut self.0;
        if f.owned {
            std::hint::black_box(linalg::Ldlt::new(&f.a, exec).expect("nonzero pivots"));
            return;
        }
        let stack = MemStack::new(&mut f.buf);
        ldlt::ldlt_in_place(f.work.as_mut(), &exec, Default::default(), stack)
            .expect("nonzero pivots");
    }
}

/// Bunch-Kaufman (partial pivoting, faer's and the kernel's) of a symmetric indefinite
/// matrix. With `--owned`, faer's `Mat::lblt(Side::Lower)` and the facade's `Lblt::new`;
/// faer's owned form takes no parameters and pivots with its default strategy,
/// `PartialDiag` (the column and the diagonal's tail searched), not `Partial` as here and in
/// teamalg's.
struct Lblt<T> {
    f: Factor<T>,
    subdiag: Vec<T>,
}

impl<T: ComplexField + Scalar + Send + Sync + Copy> Lblt<T> {
    fn new(a: Mat<T>, width: usize, owned: bool) -> Self {
        let n = a.nrows();
        Lblt {
            f: Factor::new(a, sym_scratch::<T>(n, width), owned),
            subdiag: vec![faer::traits::math_utils::zero(); n],
        }
    }
}

impl<T: Field + Copy> Case for Lblt<T> {
    fn prepare(&mut self) {
        self.f.prepare();
    }
    fn faer(&mut self, par: Par) {
        let f = &mut self.f;
        if f.owned {
            std::hint::black_box(with_faer_par(par, || f.a.lblt(Side::Lower)));
            return;
        }
        let stack = MemStack::new(&mut f.buf);
        let mut params: FaerLbltParams = faer::auto!(T);
        params.pivoting = PivotingStrategy::Partial;
        let mut sub = Mat::<T>::zeros(f.a.nrows(), 1);
        let diag = sub.as_mut().col_mut(0).as_diagonal_mut();
        faer_lblt(
            f.work.as_mut(),
            diag,
            &mut f.idx,
            &mut f.idx2,
            par,
            stack,
            params.into(),
        );
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let f = &mut self.f;
        if f.owned {
            std::hint::black_box(linalg::Lblt::new(&f.a, exec).expect("finite"));
            return;
        }
        let stack = MemStack::new(&mut f.buf);
        let p = LbltParams::default();
        lblt::lblt_in_place(
            f.work.as_mut(),
            &mut self.subdiag,
            &mut f.idx,
            &exec,
            p,
            stack,
        );
    }
}

/// An `n x n` lower triangular matrix with `diag` on the diagonal and `f` below it (well
/// conditioned for `diag = n`); above it `f` too, which no solve reads.
fn lower<T: Copy>(n: usize, f: impl Fn(usize, usize) -> T, diag: T) -> Mat<T> {
    Mat::from_fn(n, n, |i, j| if i == j { diag } else { f(i, j) })
}

/// The triangular solve `L X = B`, `L` lower `n x n`, `B` `n x n` (given back before each
/// call), in place on both sides: faer's `solve_lower_triangular_in_place` kernel (with a
/// `Par`) against teamalg's kernel, or with `--owned` faer's
/// `MatRef::solve_lower_triangular_in_place` (the global parallelism set to the arm's `Par`)
/// against the facade's checked `solve_triangular`. Neither owned form clones `B`.
struct Trsm<T> {
    l: Mat<T>,
    b: Mat<T>,
    work: Mat<T>,
    owned: bool,
}

impl<T: Field + Copy> Trsm<T> {
    fn new(l: Mat<T>, owned: bool) -> Self {
        let n = l.nrows();
        let b = Mat::from_fn(n, n, |i, j| l[((i + j) % n, j)]);
        Trsm {
            work: b.clone(),
            b,
            l,
            owned,
        }
    }
}

impl<T: Field + Copy> Case for Trsm<T> {
    fn prepare(&mut self) {
        self.work.copy_from(&self.b);
    }
    fn faer(&mut self, par: Par) {
        if self.owned {
            let (l, b) = (self.l.as_ref(), self.work.as_mut());
            with_faer_par(par, || l.solve_lower_triangular_in_place(b));
            return;
        }
        faer_trsm(self.l.as_ref(), self.work.as_mut(), par);
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let (l, b) = (self.l.as_ref(), self.work.as_mut());
        let (side, lower, diag) = (SolveSide::Left, Triangle::Lower, Diag::NonUnit);
        if self.owned {
            linalg::solve_triangular(l, b, side, lower, diag, exec).expect("nonsingular");
        } else {
            let p = SolveParams::default();
            triangular::solve_in_place(l, b, side, lower, diag, &exec, p);
        }
    }
}

/// LU with full pivoting through the owned forms on both sides (`FullPivLu::new`, faer's
/// `Mat::full_piv_lu`), whatever `--owned` says: the facade has no form with the caller's
/// scratch, so the owned forms are the calls users have.
struct FullPivLu<T>(Mat<T>);

impl<T: Field + Copy> Case for FullPivLu<T> {
    fn faer(&mut self, par: Par) {
        std::hint::black_box(with_faer_par(par, || self.0.full_piv_lu()));
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        std::hint::black_box(linalg::FullPivLu::new(&self.0, exec).expect("finite"));
    }
}
