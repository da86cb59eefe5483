//! Triangular solve with many right-hand sides, in place: `op(T) X = B` (left) or
//! `X op(T) = B` (right), lower or upper, unit diagonal or not. One section: the right-hand
//! sides are split in chunks across the participants, each solved by faer's serial kernel.

pub mod cost;

use faer::linalg::triangular_solve as tri;
use faer::traits::ComplexField;
use faer::{MatMut, MatRef, Par};
use teamalg_gates::{Family, ParThreshold, Scalar};

use crate::exec::call;
use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::Executor;
use crate::exec::tiles::Tiles;

/// Which side of the unknown the triangular matrix stands on (LAPACK's `side`; named apart from
/// `faer::Side`, which says lower or upper, as [`Triangle`] does here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolveSide {
    /// `T X = B`.
    Left,
    /// `X T = B`.
    Right,
}

/// Which triangle of `T` is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Triangle {
    /// The lower triangle.
    Lower,
    /// The upper triangle.
    Upper,
}

/// Whether the diagonal of `T` is taken as ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Diag {
    /// Ones on the diagonal (not read).
    Unit,
    /// The stored diagonal.
    NonUnit,
}

/// Parameters of [`solve_in_place`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SolveParams {
    /// How the one region decides to go parallel; `None` leaves it to the executor's model
    /// (the pool's threshold for [`Family::TriangularSolve`], else the rule).
    pub threshold: Option<ParThreshold>,
}

/// The scratch [`solve_in_place`] needs: none.
pub fn solve_in_place_scratch() -> faer::dyn_stack::StackReq {
    faer::dyn_stack::StackReq::EMPTY
}

fn solve_left<T: ComplexField>(t: MatRef<'_, T>, b: MatMut<'_, T>, triangle: Triangle, diag: Diag) {
    match (triangle, diag) {
        (Triangle::Lower, Diag::NonUnit) => tri::solve_lower_triangular_in_place(t, b, Par::Seq),
        (Triangle::Lower, Diag::Unit) => tri::solve_unit_lower_triangular_in_place(t, b, Par::Seq),
        (Triangle::Upper, Diag::NonUnit) => tri::solve_upper_triangular_in_place(t, b, Par::Seq),
        (Triangle::Upper, Diag::Unit) => tri::solve_unit_upper_triangular_in_place(t, b, Par::Seq),
    }
}

/// Overwrites `B` with the solution `X` of `T X = B` (left) or `X T = B` (right).
///
/// # Panics
/// When `T` is not square or its size does not match `B` (`teamalg::linalg::solve_triangular`
/// checks them and returns an error).
pub fn solve_in_place<T>(
    t: MatRef<'_, T>,
    b: MatMut<'_, T>,
    side: SolveSide,
    triangle: Triangle,
    diag: Diag,
    exec: &(impl Executor + ?Sized),
    params: SolveParams,
) where
    T: ComplexField + Scalar + Send + Sync,
{
    let n = t.nrows();
    assert!(
        t.ncols() == n,
        "solve_in_place: T is {}x{}, not square",
        n,
        t.ncols()
    );
    // Right: X T = B  <=>  T^T X^T = B^T, with the other triangle.
    let (t, b, triangle) = match side {
        SolveSide::Left => (t, b, triangle),
        SolveSide::Right => (
            t.transpose(),
            b.transpose_mut(),
            match triangle {
                Triangle::Lower => Triangle::Upper,
                Triangle::Upper => Triangle::Lower,
            },
        ),
    };
    assert!(
        b.nrows() == n,
        "solve_in_place: T is {n}x{n} but B has {} rows on that side",
        b.nrows()
    );
    let k = b.ncols();
    let region = Region {
        site: "triangular_solve",
        dims: [n, k, 0],
        units: cost::solve(n, k),
        family: Family::TriangularSolve,
        sections: 1,
        scope: Scope::Call,
        call_units: cost::solve(n, k),
    };
    let call = gate::call::<T>(exec, region, params.threshold);
    let w = call.width().min(k);
    if w <= 1 {
        solve_left(t, b, triangle, diag);
        return;
    }
    let tiles = Tiles::new(b);
    // Column chunks claimed by the participants (see `gemm::matmul`), never thinner than one.
    call::chunks(exec, w, &|i: usize, chunks: usize| {
        let w = chunks.min(k);
        if i >= w {
            return;
        }
        let (c0, c1) = (i * k / w, (i + 1) * k / w);
        // SAFETY: chunk i owns columns c0..c1; the ranges partition 0..k.
        let bi = unsafe { tiles.tile(0, n, c0, c1) };
        solve_left(t, bi, triangle, diag);
    });
}
