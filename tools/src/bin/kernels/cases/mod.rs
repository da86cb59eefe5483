//! The benchmark's cases: one kernel at one size, its faer call and its teamalg call, one file
//! per family; and the fixtures they share.

use faer::linalg::matmul::matmul as faer_matmul;
use faer::traits::ComplexField;
use faer::{c64, Accum, Mat, Par};
use teamalg::kernels::par::Executor;

pub(crate) mod dense;
pub(crate) mod sparse;
pub(crate) mod spectral;

/// One kernel at one size: the faer call and the teamalg call, each after `prepare` (untimed:
/// a factorization gets its input back).
pub(crate) trait Case {
    fn prepare(&mut self) {}
    fn faer(&mut self, par: Par);
    fn teamalg(&mut self, exec: &dyn Executor);
}

/// What the cases read from the command line.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// The width of the parallel arms.
    pub(crate) width: usize,
    /// The sizes (`n`).
    pub(crate) sizes: Vec<usize>,
    /// `--block`: LU's and Cholesky's panel width (0: the kernels' own).
    pub(crate) block: usize,
    /// `--wide`: their wide panel width (0: the kernels' own).
    pub(crate) wide: usize,
    /// `--svd-auto`: the SVD rows run the default path instead of teamalg's own at every size.
    pub(crate) svd_auto: bool,
    /// `--owned`: every row times teamalg through the facade (`teamalg::linalg`): the owned
    /// forms of the factorizations (`Lu::new`, ..., input checked, outputs and scratch
    /// allocated per call), the checked `matmul`, `solve_triangular` and sparse products; the
    /// form most users call. faer's arms then call faer's owned forms of the same operations
    /// (`Mat::partial_piv_lu`, `llt`, `qr`, ..., `thin_svd`, `self_adjoint_eigen`, ...: outputs
    /// and scratch allocated per call) under [`with_faer_par`], so that both sides allocate.
    /// The products keep faer's `matmul` and `sparse_dense_matmul` (into the case's `C`, as
    /// teamalg's) and `sparse_sparse_matmul` (its result allocated, as teamalg's), with the
    /// arm's `Par`; the triangular solve is faer's `MatRef::solve_lower_triangular_in_place`
    /// (in place, as teamalg's).
    pub(crate) owned: bool,
    /// `--aspect X`: the SVD rows factor `round(X n) x n` matrices.
    pub(crate) aspect: Option<f64>,
    /// `--dissection`: the sparse factorizations' teamalg side ordered by nested dissection.
    pub(crate) dissection: bool,
}

impl Settings {
    /// The factorizations' sizes: from 64 on.
    pub(crate) fn factor_sizes(&self) -> Vec<usize> {
        self.sizes.iter().copied().filter(|&n| n >= 64).collect()
    }

    /// The rows of an SVD row's matrix of `n` columns (`--aspect`).
    pub(crate) fn svd_rows(&self, n: usize) -> usize {
        self.aspect.map_or(n, |x| (x * n as f64).round() as usize)
    }
}

/// One row of the table: a name (`"lu f64"`), its sizes, and its case at a size.
pub(crate) struct Row<'a> {
    pub(crate) name: &'static str,
    pub(crate) sizes: Vec<usize>,
    pub(crate) case: Box<dyn Fn(usize) -> Box<dyn Case> + 'a>,
}

impl<'a> Row<'a> {
    fn new(
        name: &'static str,
        sizes: Vec<usize>,
        case: impl Fn(usize) -> Box<dyn Case> + 'a,
    ) -> Self {
        Row {
            name,
            sizes,
            case: Box::new(case),
        }
    }
}

/// The rows of `kernel`, in the family that has it.
///
/// # Panics
/// On a kernel no family has.
pub(crate) fn rows<'a>(kernel: &str, s: &'a Settings) -> Vec<Row<'a>> {
    dense::rows(kernel, s)
        .or_else(|| spectral::rows(kernel, s))
        .or_else(|| sparse::rows(kernel, s))
        .unwrap_or_else(|| panic!("unknown kernel {kernel}"))
}

/// Runs `f` (a faer call through its high-level API, which reads faer's global parallelism
/// rather than taking a `Par`) with the global parallelism set to `par`, and restores it: the
/// faer serial and rayon arms of the rows that have no lower-level faer call with a `Par`
/// (`full_piv_lu`, `eigen`), and of every row that calls faer's owned forms under `--owned`.
pub(crate) fn with_faer_par<R>(par: Par, f: impl FnOnce() -> R) -> R {
    let before = faer::get_global_parallelism();
    faer::set_global_parallelism(par);
    let r = f();
    faer::set_global_parallelism(before);
    r
}

/// A reproducible, well-conditioned entry (a slowly varying smooth part plus a hash).
pub(crate) fn re(i: usize, j: usize) -> f64 {
    let h = (i as u64 * 0x9e37_79b9 + j as u64 * 0x85eb_ca6b) % 1000;
    ((i * 7 + j * 3) as f64 * 0.01).sin() + h as f64 / 1000.0 - 0.5
}

pub(crate) fn cx(i: usize, j: usize) -> c64 {
    c64::new(re(i, j), re(j, i))
}

/// `B B^H + n I`: positive definite.
pub(crate) fn spd<T: ComplexField + Copy>(n: usize, f: impl Fn(usize, usize) -> T) -> Mat<T> {
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
