//! The sparse cases: sparse times dense and sparse times sparse, each against faer's call;
//! with `--owned` teamalg's arm is the facade's checked product (`teamalg::linalg`), else the
//! kernel's. faer's arms are the same either way, as they already match the facade's forms:
//! sparse times dense is faer's `sparse_dense_matmul` into the case's `C` (teamalg's checked
//! product writes into the caller's `C` too, allocating nothing), sparse times sparse faer's
//! `sparse_sparse_matmul`, which allocates its result as teamalg's does (faer's operator form
//! `&a * &a` calls it with the global parallelism, and needs faer's `sparse` feature, which
//! this crate does not enable); both with the arm's `Par`.

use faer::sparse::linalg::matmul::sparse_dense_matmul as faer_sparse_dense;
use faer::traits::ComplexField;
use faer::{c64, Accum, Mat, Par};
use teamalg::gates::Scalar;
use teamalg::kernels::par::Executor;
use teamalg::kernels::sparse::{sparse_dense_matmul, SparseParams};
use teamalg::linalg::{self, Field};

use teamalg_tools::sparse_problems::{convection, laplacian, smoothing};

use super::{cx, re, Case, Row, Settings};

/// The rows of `kernel` (`sparse`, `sparse_sparse`), or `None` when it is not sparse.
pub(crate) fn rows<'a>(kernel: &str, s: &'a Settings) -> Option<Vec<Row<'a>>> {
    let (owned, nd) = (s.owned, s.dissection);
    Some(match kernel {
        "sparse" => {
            // n is the side of the grid: s x s points, times 64 columns.
            let sides: Vec<usize> = s.sizes.iter().copied().filter(|&s| s >= 64).collect();
            vec![
                Row::new("sparse f64", sides.clone(), move |s| {
                    Box::new(SparseDense::laplacian(s, 1.0, re, owned))
                }),
                Row::new("sparse c64", sides, move |s| {
                    Box::new(SparseDense::laplacian(s, c64::new(1.0, 0.0), cx, owned))
                }),
            ]
        }
        // n is the order: n x n, 10 entries per column, times itself.
        "sparse_sparse" => vec![
            Row::new("sp*sp f64", s.sizes.clone(), move |n| {
                Box::new(SparseSparse::random(n, 1.0, re, owned))
            }),
            Row::new("sp*sp c64", s.sizes.clone(), move |n| {
                Box::new(SparseSparse::random(n, c64::new(1.0, 0.0), cx, owned))
            }),
        ],
        // The problems, whatever the sizes: n is the grid's side, the 2D Laplacian
        // of n x n points (5-point) and the 3D one of n^3 (7-point), each analysed once.
        "sparse_cholesky" => vec![
            Row::new("spchol 2d f64", vec![100, 300, 700], move |n| {
                Box::new(SparseLlt::<f64>::laplacian(n, 2, owned, nd))
            }),
            Row::new("spchol 3d f64", vec![12, 20, 32], move |n| {
                Box::new(SparseLlt::<f64>::laplacian(n, 3, owned, nd))
            }),
            Row::new("spchol 3d c64", vec![20], move |n| {
                Box::new(SparseLlt::<c64>::laplacian(n, 3, owned, nd))
            }),
            // LDL^H of the 3D vector problem: 3 unknowns per node of an n^3 grid.
            Row::new("spldlt vec3d f64", vec![12, 20], move |n| {
                Box::new(SparseLlt::<f64>::new(vector3(n), true, owned, nd))
            }),
        ],
        // LU of the convection-diffusion operator of an n x n (2D) or n^3 (3D) grid, each
        // analysed once.
        "sparse_lu" => vec![
            Row::new("splu cd2d f64", vec![100, 300], move |n| {
                Box::new(SparseLuCase::<f64>::new(convection(n, 2), owned, nd))
            }),
            Row::new("splu cd3d f64", vec![12, 20, 30], move |n| {
                Box::new(SparseLuCase::<f64>::new(convection(n, 3), owned, nd))
            }),
            Row::new("splu cd3d c64", vec![20], move |n| {
                Box::new(SparseLuCase::<c64>::new(convection(n, 3), owned, nd))
            }),
        ],
        // Least squares of a smoothing problem on an n x n (2D) or n^3 (3D) grid: a data row
        // per node and a difference row per edge, about (1 + dim) n^dim rows.
        "sparse_qr" => vec![
            Row::new("spqr smooth2d f64", vec![100, 300], move |n| {
                Box::new(SparseQrCase::<f64>::new(smoothing(n, 2), owned, nd))
            }),
            Row::new("spqr smooth3d f64", vec![12, 20, 24], move |n| {
                Box::new(SparseQrCase::<f64>::new(smoothing(n, 3), owned, nd))
            }),
            Row::new("spqr smooth3d c64", vec![16], move |n| {
                Box::new(SparseQrCase::<c64>::new(smoothing(n, 3), owned, nd))
            }),
        ],
        _ => return None,
    })
}

/// Which graph a sparse row's ordering reads.
#[derive(Clone, Copy)]
enum Graphs {
    /// `A + A^H`'s, from the lower triangle (Cholesky, `LDL^H`).
    Symmetric,
    /// The columns' (LU, QR).
    Columns,
}

/// The analyses of `a`, printed before its row (the symbolic times apart from the numeric
/// ones the row times): faer's own symbolic call (`faer_symbolic`), teamalg's analysis with
/// AMD or COLAMD (`analyse(None)`: the tree and the factor's entries) and, with
/// `--dissection`, with METIS's order of `a`'s graph, which it returns (else `None`).
fn ordered(
    a: faer::sparse::SymbolicSparseColMatRef<'_, usize>,
    graph: Graphs,
    nd: bool,
    faer_symbolic: impl Fn(),
    analyse: impl Fn(Option<&[usize]>) -> (teamalg::kernels::drive::forest::Forest, usize),
) -> Option<Vec<usize>> {
    use teamalg::kernels::drive::forest::cut;
    let ms = |start: std::time::Instant| start.elapsed().as_secs_f64() * 1e3;
    let start = std::time::Instant::now();
    faer_symbolic();
    let mut line = format!(
        "analysis of {} x {}: faer {:.1} ms;",
        a.nrows(),
        a.ncols(),
        ms(start)
    );
    let describe =
        |name: &str, ms: f64, (forest, len): (teamalg::kernels::drive::forest::Forest, usize)| {
            let c = cut(&forest, 2);
            format!(
            " {name} {ms:.1} ms, {len} entries, work {:.3e}, top {:.2}, {} subtrees, heaviest {:.2};",
            forest.total_work(),
            1.0 - c.subtree_work / forest.total_work(),
            c.subtrees.len(),
            c.heaviest / c.subtree_work.max(f64::MIN_POSITIVE),
        )
        };
    let start = std::time::Instant::now();
    let own = analyse(None);
    line += &describe("teamalg AMD", ms(start), own);
    let order = nd.then(|| {
        #[cfg(feature = "metis")]
        {
            use teamalg::kernels::drive::ordering::{dissection, Graph};
            let start = std::time::Instant::now();
            let g = match graph {
                Graphs::Symmetric => Graph::symmetric(a, faer::Side::Lower),
                Graphs::Columns => Graph::columns(a).expect("a graph"),
            };
            let order = dissection(&g).expect("an ordering");
            let tree = analyse(Some(&order));
            line += &describe("teamalg dissection", ms(start), tree);
            order
        }
        #[cfg(not(feature = "metis"))]
        {
            let _ = graph;
            unreachable!("--dissection is refused without the feature `metis`")
        }
    });
    eprintln!("{line}");
    order
}

/// The facade's analysis with `order` (`None`: its default ordering).
fn facade_order<S>(
    order: &Option<Vec<usize>>,
    analyse: impl Fn(linalg::SparseOrdering<'_>) -> Result<S, linalg::LinalgError>,
) -> S {
    let r = match order {
        Some(fwd) => {
            let inv = teamalg::kernels::drive::ordering::inverse(fwd);
            let perm = faer::perm::PermRef::new_checked(fwd, &inv, fwd.len());
            analyse(linalg::SparseOrdering::Custom(perm))
        }
        None => analyse(linalg::SparseOrdering::Amd),
    };
    r.expect("an analysis")
}

/// The sparse QR's numeric factorization, its pattern analysed once (untimed): teamalg's
/// kernel (the fronts allocated per call: the factor's storage) beside faer's
/// `factorize_numeric_qr` into values and scratch kept by the case; `--owned` times the
/// facade's `SparseQr::new_with_symbolic` (checks, pattern match, rank) beside faer's call
/// with its values and scratch allocated per call.
struct SparseQrCase<T> {
    a: faer::sparse::SparseColMat<usize, T>,
    symbolic: linalg::SymbolicQr,
    analysis: teamalg::kernels::sparse_lu::Analysis,
    faer_symbolic: faer::sparse::linalg::qr::SymbolicQr<usize>,
    faer_indices: Vec<usize>,
    faer_values: Vec<T>,
    mem: faer::dyn_stack::MemBuffer,
    faer_mem: faer::dyn_stack::MemBuffer,
    owned: bool,
}

impl<T: Field + Copy> SparseQrCase<T> {
    fn new(a: faer::sparse::SparseColMat<usize, T>, owned: bool, nd: bool) -> Self {
        use teamalg::kernels::sparse_qr::{analyse_ordered, factor_scratch};
        let analyse =
            |order: Option<&[usize]>| analyse_ordered(a.symbolic(), order).expect("an analysis");
        let faer = || {
            let sym =
                faer::sparse::linalg::qr::factorize_symbolic_qr(a.symbolic(), Default::default());
            std::hint::black_box(sym.expect("faer's analysis"));
        };
        let order = ordered(a.symbolic(), Graphs::Columns, nd, faer, |order| {
            let an = analyse(order);
            (an.forest().clone(), an.len_values())
        });
        let symbolic = facade_order(&order, |o| linalg::SymbolicQr::new_ordered(a.symbolic(), o));
        let analysis = analyse(order.as_deref());
        let faer_symbolic =
            faer::sparse::linalg::qr::factorize_symbolic_qr(a.symbolic(), Default::default())
                .expect("faer's analysis");
        let faer_req =
            faer_symbolic.factorize_numeric_qr_scratch::<T>(Par::rayon(0), Default::default());
        let width = std::thread::available_parallelism()
            .map_or(2, |w| w.get())
            .max(16);
        SparseQrCase {
            mem: faer::dyn_stack::MemBuffer::new(factor_scratch::<T>(&analysis, width)),
            faer_mem: faer::dyn_stack::MemBuffer::new(faer_req),
            faer_indices: vec![0; faer_symbolic.len_idx()],
            faer_values: vec![T::zero_impl(); faer_symbolic.len_val()],
            a,
            symbolic,
            analysis,
            faer_symbolic,
            owned,
        }
    }
}

impl<T: Field + Copy> Case for SparseQrCase<T> {
    fn faer(&mut self, par: Par) {
        use faer::dyn_stack::{MemBuffer, MemStack};
        let (sym, a) = (&self.faer_symbolic, self.a.as_ref());
        if self.owned {
            let mut indices = vec![0usize; sym.len_idx()];
            let mut values = vec![T::zero_impl(); sym.len_val()];
            let mut mem =
                MemBuffer::new(sym.factorize_numeric_qr_scratch::<T>(par, Default::default()));
            let stack = MemStack::new(&mut mem);
            sym.factorize_numeric_qr(&mut indices, &mut values, a, par, stack, Default::default());
            std::hint::black_box((indices, values));
        } else {
            let stack = MemStack::new(&mut self.faer_mem);
            let (idx, val) = (&mut self.faer_indices, &mut self.faer_values);
            sym.factorize_numeric_qr(idx, val, a, par, stack, Default::default());
        }
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let a = self.a.as_ref();
        if self.owned {
            let f = linalg::SparseQr::new_with_symbolic(&self.symbolic, a, exec);
            std::hint::black_box(f.expect("a factor"));
            return;
        }
        let stack = faer::dyn_stack::MemStack::new(&mut self.mem);
        let p = teamalg::kernels::sparse_qr::SparseQrParams::default();
        let f = teamalg::kernels::sparse_qr::factor(&self.analysis, a.val(), &exec, p, stack);
        std::hint::black_box(f);
    }
}

/// The sparse LU's numeric factorization, its pattern analysed once (untimed). The scratch
/// form times teamalg's kernel (the fronts allocated per call: the factor's storage) beside
/// faer's `factorize_numeric_lu` into a factor and scratch kept by the case; `--owned` times
/// the facade's `SparseLu::new_with_symbolic` (checks, pattern match) beside faer's call with
/// its factor and scratch allocated per call.
struct SparseLuCase<T> {
    a: faer::sparse::SparseColMat<usize, T>,
    symbolic: linalg::SymbolicLu,
    analysis: teamalg::kernels::sparse_lu::Analysis,
    faer_symbolic: faer::sparse::linalg::lu::SymbolicLu<usize>,
    faer_numeric: faer::sparse::linalg::lu::NumericLu<usize, T>,
    mem: faer::dyn_stack::MemBuffer,
    faer_mem: faer::dyn_stack::MemBuffer,
    owned: bool,
}

impl<T: Field + Copy> SparseLuCase<T> {
    fn new(a: faer::sparse::SparseColMat<usize, T>, owned: bool, nd: bool) -> Self {
        use teamalg::kernels::sparse_lu::{factor_scratch, Analysis};
        let analyse =
            |order: Option<&[usize]>| Analysis::ordered(a.symbolic(), order).expect("an analysis");
        let faer = || {
            let sym =
                faer::sparse::linalg::lu::factorize_symbolic_lu(a.symbolic(), Default::default());
            std::hint::black_box(sym.expect("faer's analysis"));
        };
        let order = ordered(a.symbolic(), Graphs::Columns, nd, faer, |order| {
            let an = analyse(order);
            (an.forest().clone(), an.len_values())
        });
        let symbolic = facade_order(&order, |o| linalg::SymbolicLu::new_ordered(a.symbolic(), o));
        let analysis = analyse(order.as_deref());
        let faer_symbolic =
            faer::sparse::linalg::lu::factorize_symbolic_lu(a.symbolic(), Default::default())
                .expect("faer's analysis");
        let faer_req =
            faer_symbolic.factorize_numeric_lu_scratch::<T>(Par::rayon(0), Default::default());
        SparseLuCase {
            mem: faer::dyn_stack::MemBuffer::new(factor_scratch::<T>(&analysis)),
            faer_mem: faer::dyn_stack::MemBuffer::new(faer_req),
            a,
            symbolic,
            analysis,
            faer_symbolic,
            faer_numeric: faer::sparse::linalg::lu::NumericLu::new(),
            owned,
        }
    }
}

impl<T: Field + Copy> Case for SparseLuCase<T> {
    fn faer(&mut self, par: Par) {
        use faer::dyn_stack::{MemBuffer, MemStack};
        let (sym, a) = (&self.faer_symbolic, self.a.as_ref());
        if self.owned {
            let mut numeric = faer::sparse::linalg::lu::NumericLu::new();
            let mut mem =
                MemBuffer::new(sym.factorize_numeric_lu_scratch::<T>(par, Default::default()));
            let lu = sym.factorize_numeric_lu(
                &mut numeric,
                a,
                par,
                MemStack::new(&mut mem),
                Default::default(),
            );
            lu.expect("nonsingular");
            std::hint::black_box(numeric);
        } else {
            let stack = MemStack::new(&mut self.faer_mem);
            let lu =
                sym.factorize_numeric_lu(&mut self.faer_numeric, a, par, stack, Default::default());
            lu.expect("nonsingular");
        }
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let a = self.a.as_ref();
        if self.owned {
            let f = linalg::SparseLu::new_with_symbolic(&self.symbolic, a, exec);
            std::hint::black_box(f.expect("nonsingular"));
            return;
        }
        let stack = faer::dyn_stack::MemStack::new(&mut self.mem);
        let p = teamalg::kernels::sparse_lu::SparseLuParams::default();
        let f = teamalg::kernels::sparse_lu::factor(&self.analysis, a.val(), &exec, p, stack);
        std::hint::black_box(f.expect("nonsingular"));
    }
}

/// The lower triangle of a 3D vector problem on a grid of side `n` with 3 unknowns per node
/// (elasticity-like): each pair of neighbours coupled by minus a 3 x 3 positive definite block
/// that leans on the pair's axis, each node's diagonal block the sum of its couplings plus a
/// small shift. Symmetric positive definite, with dense 3 x 3 blocks.
#[allow(clippy::needless_range_loop)] // 3 x 3 blocks by row and column
pub(crate) fn vector3<T: ComplexField>(n: usize) -> faer::sparse::SparseColMat<usize, T> {
    let size = n * n * n;
    let at = |x: usize, y: usize, z: usize| (x * n + y) * n + z;
    let block = |axis: usize, r: usize, c: usize| -> f64 {
        let base = if r == c { 1.0 } else { 0.2 };
        if r == axis && c == axis {
            2.0
        } else {
            base
        }
    };
    let mut diag = vec![[[0.0f64; 3]; 3]; size];
    let mut t = Vec::new();
    for x in 0..n {
        for y in 0..n {
            for z in 0..n {
                let i = at(x, y, z);
                let next = [
                    (x + 1 < n).then(|| at(x + 1, y, z)),
                    (y + 1 < n).then(|| at(x, y + 1, z)),
                    (z + 1 < n).then(|| at(x, y, z + 1)),
                ];
                for (axis, j) in next.into_iter().enumerate() {
                    let Some(j) = j else { continue };
                    for r in 0..3 {
                        for c in 0..3 {
                            let v = block(axis, r, c);
                            diag[i][r][c] += v;
                            diag[j][r][c] += v;
                            // The lower triangle: row 3j + r > column 3i + c.
                            t.push(faer::sparse::Triplet::new(
                                3 * j + r,
                                3 * i + c,
                                faer::traits::math_utils::from_f64::<T>(-v),
                            ));
                        }
                    }
                }
            }
        }
    }
    for (i, d) in diag.iter().enumerate() {
        for r in 0..3 {
            for c in 0..=r {
                let v = d[r][c] + if r == c { 0.01 } else { 0.0 };
                t.push(faer::sparse::Triplet::new(
                    3 * i + r,
                    3 * i + c,
                    faer::traits::math_utils::from_f64::<T>(v),
                ));
            }
        }
    }
    faer::sparse::SparseColMat::try_new_from_triplets(3 * size, 3 * size, &t)
        .expect("a valid matrix")
}

/// The sparse Cholesky's numeric factorization, its pattern analysed once (untimed). The
/// scratch form times teamalg's kernel into the case's values, faer's `factorize_numeric_llt`
/// with the same analysis into its own; `--owned` times the facade's
/// `SparseCholesky::new_with_symbolic` (checks, values allocated per call) beside faer's
/// `factorize_numeric_llt` with its values and scratch allocated per call.
struct SparseLlt<T> {
    a: faer::sparse::SparseColMat<usize, T>,
    symbolic: linalg::SymbolicCholesky,
    analysis: teamalg::kernels::sparse_cholesky::Analysis,
    values: Vec<T>,
    /// faer's side: its AMD analysis (the same as teamalg's unless `--dissection`).
    faer_analysis: teamalg::kernels::sparse_cholesky::Analysis,
    faer_values: Vec<T>,
    mem: faer::dyn_stack::MemBuffer,
    faer_mem: faer::dyn_stack::MemBuffer,
    owned: bool,
    /// `LDL^H` (faer's `factorize_numeric_ldlt`, teamalg's `ldlt_in_place` and `SparseLdlt`)
    /// instead of `LL^H`.
    ldlt: bool,
}

impl<T: Field + Copy> SparseLlt<T> {
    fn laplacian(n: usize, dim: u32, owned: bool, nd: bool) -> Self {
        Self::new(laplacian::<T>(n, dim), false, owned, nd)
    }

    fn new(a: faer::sparse::SparseColMat<usize, T>, ldlt: bool, owned: bool, nd: bool) -> Self {
        use teamalg::kernels::sparse_cholesky::{llt_in_place_scratch, Analysis};
        let lower = faer::Side::Lower;
        let analyse = |order: Option<&[usize]>| {
            Analysis::ordered(a.symbolic(), lower, order).expect("an analysis")
        };
        let faer = || {
            use faer::sparse::linalg::cholesky::{factorize_symbolic_cholesky, SymmetricOrdering};
            let (amd, params) = (SymmetricOrdering::Amd, Default::default());
            let sym = factorize_symbolic_cholesky(a.symbolic(), lower, amd, params);
            std::hint::black_box(sym.expect("faer's analysis"));
        };
        let order = ordered(a.symbolic(), Graphs::Symmetric, nd, faer, |order| {
            let an = analyse(order);
            (an.forest().clone(), an.symbolic().len_val())
        });
        let symbolic = facade_order(&order, |o| {
            linalg::SymbolicCholesky::new_ordered(a.symbolic(), lower, o)
        });
        let analysis = analyse(order.as_deref());
        // faer's side: faer's own AMD order, as its users call it.
        let faer_analysis = Analysis::new(a.symbolic(), lower).expect("an analysis");
        let len = analysis.symbolic().len_val();
        let req = llt_in_place_scratch::<T>(&analysis);
        let faer_req = faer::dyn_stack::StackReq::any_of(&[
            faer_analysis
                .symbolic()
                .factorize_numeric_llt_scratch::<T>(Par::rayon(0), Default::default()),
            faer_analysis
                .symbolic()
                .factorize_numeric_ldlt_scratch::<T>(Par::rayon(0), Default::default()),
        ]);
        SparseLlt {
            a,
            symbolic,
            analysis,
            values: vec![T::zero_impl(); len],
            faer_values: vec![T::zero_impl(); faer_analysis.symbolic().len_val()],
            faer_analysis,
            mem: faer::dyn_stack::MemBuffer::new(req),
            faer_mem: faer::dyn_stack::MemBuffer::new(faer_req),
            owned,
            ldlt,
        }
    }
}

impl<T: Field + Copy> Case for SparseLlt<T> {
    fn faer(&mut self, par: Par) {
        use faer::dyn_stack::{MemBuffer, MemStack};
        let sym = self.faer_analysis.symbolic();
        let a = self.a.as_ref();
        let ldlt = self.ldlt;
        let factor = |values: &mut [T], stack: &mut MemStack| {
            let side = faer::Side::Lower;
            if ldlt {
                let (reg, spec) = (Default::default(), Default::default());
                let r = sym.factorize_numeric_ldlt(values, a, side, reg, par, stack, spec);
                r.expect("no zero pivot");
            } else {
                let (reg, spec) = (Default::default(), Default::default());
                let r = sym.factorize_numeric_llt(values, a, side, reg, par, stack, spec);
                r.expect("positive definite");
            }
        };
        if self.owned {
            // faer's values and scratch allocated for the call, as the owned forms do.
            let mut values = vec![T::zero_impl(); sym.len_val()];
            let mut mem = MemBuffer::new(if ldlt {
                sym.factorize_numeric_ldlt_scratch::<T>(par, Default::default())
            } else {
                sym.factorize_numeric_llt_scratch::<T>(par, Default::default())
            });
            factor(&mut values, MemStack::new(&mut mem));
            std::hint::black_box(values);
        } else {
            factor(&mut self.faer_values, MemStack::new(&mut self.faer_mem));
        }
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        use teamalg::kernels::sparse_cholesky::{ldlt_in_place, llt_in_place, SparseLltParams};
        let a = self.a.as_ref();
        if self.owned {
            if self.ldlt {
                let f = linalg::SparseLdlt::new_with_symbolic(&self.symbolic, a, exec);
                std::hint::black_box(f.expect("no zero pivot"));
            } else {
                let f = linalg::SparseCholesky::new_with_symbolic(&self.symbolic, a, exec);
                std::hint::black_box(f.expect("positive definite"));
            }
            return;
        }
        let stack = faer::dyn_stack::MemStack::new(&mut self.mem);
        let p = SparseLltParams::default();
        let side = faer::Side::Lower;
        let r = if self.ldlt {
            ldlt_in_place(&self.analysis, a, side, &mut self.values, &exec, p, stack)
        } else {
            llt_in_place(&self.analysis, a, side, &mut self.values, &exec, p, stack)
        };
        r.expect("a factorization");
    }
}

/// Sparse times dense: the 2D Laplacian of an `s x s` grid (5 entries per column) times 64
/// dense columns.
struct SparseDense<T> {
    a: faer::sparse::SparseColMat<usize, T>,
    b: Mat<T>,
    c: Mat<T>,
    one: T,
    /// `--owned`: the facade's checked `sparse_dense_matmul`, into `c`; faer's arm is faer's
    /// `sparse_dense_matmul` into `c` either way.
    owned: bool,
}

impl<T: ComplexField + Scalar + Send + Sync + Copy> SparseDense<T> {
    fn laplacian(s: usize, one: T, f: impl Fn(usize, usize) -> T, owned: bool) -> Self {
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
            owned,
        }
    }
}

impl<T: Field + Copy> Case for SparseDense<T> {
    fn faer(&mut self, par: Par) {
        let (a, b) = (self.a.as_ref(), self.b.as_ref());
        faer_sparse_dense(self.c.as_mut(), Accum::Replace, a, b, self.one, par);
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let (a, b) = (self.a.as_ref(), self.b.as_ref());
        if self.owned {
            let c = self.c.as_mut();
            linalg::sparse_dense_matmul(c, Accum::Replace, a, b, self.one, exec).expect("finite");
            return;
        }
        let p = SparseParams::default();
        sparse_dense_matmul(self.c.as_mut(), Accum::Replace, a, b, self.one, &exec, p);
    }
}

/// Sparse times sparse: a random `n x n` matrix with 10 entries per column times itself.
struct SparseSparse<T> {
    a: faer::sparse::SparseColMat<usize, T>,
    one: T,
    /// `--owned`: the facade's checked `sparse_sparse_matmul`; faer's arm is faer's
    /// `sparse_sparse_matmul` (its result allocated per call) either way.
    owned: bool,
}

impl<T: ComplexField + Scalar + Send + Sync + Copy> SparseSparse<T> {
    fn random(n: usize, one: T, f: impl Fn(usize, usize) -> T, owned: bool) -> Self {
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
        SparseSparse { a, one, owned }
    }
}

impl<T: Field + Copy> Case for SparseSparse<T> {
    fn faer(&mut self, par: Par) {
        // faer's owned product (a fresh matrix, as teamalg's), with or without `--owned`.
        let a = self.a.as_ref();
        let r = faer::sparse::linalg::matmul::sparse_sparse_matmul(a, a, self.one, par);
        std::hint::black_box(r.expect("memory"));
    }
    fn teamalg(&mut self, exec: &dyn Executor) {
        let a = self.a.as_ref();
        if self.owned {
            let r = linalg::sparse_sparse_matmul(a, a, self.one, exec);
            std::hint::black_box(r.expect("finite"));
            return;
        }
        let p = SparseParams::default();
        let r = teamalg::kernels::sparse::sparse_sparse_matmul(a, a, self.one, &exec, p);
        std::hint::black_box(r.expect("memory"));
    }
}
