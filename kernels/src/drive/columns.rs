//! The solves' column split, which every sparse factorization's solve shares: the columns of
//! the right-hand sides are solved apart, so a call asks the gate once and, when parallel
//! pays, hands each participant a chunk of columns. A column's result does not depend on who
//! solves it.

use faer::traits::ComplexField;
use faer::MatMut;
use teamalg_gates::{Family, ParThreshold, Scalar};

use crate::exec::call;
use crate::exec::par::part_start;
use crate::exec::tiles::Tiles;
use crate::gate::{self, Region, Scope};
use crate::par::Executor;

/// Solves `rhs` by columns on `exec`: one gate question (`site`, `family`, `units`
/// multiply-adds for all the columns); serial, `serial(rhs)` on the caller; parallel, the
/// participants' chunks of columns, each `chunk(columns)`.
#[allow(clippy::too_many_arguments)]
pub fn by_columns<T, E>(
    exec: &E,
    site: &'static str,
    family: Family,
    units: f64,
    threshold: Option<ParThreshold>,
    rhs: MatMut<'_, T>,
    serial: impl FnOnce(MatMut<'_, T>),
    chunk: &(dyn Fn(MatMut<'_, T>) + Sync),
) where
    T: ComplexField + Scalar + Send + Sync,
    E: Executor + ?Sized,
{
    let (n, k) = (rhs.nrows(), rhs.ncols());
    let region = Region {
        site,
        dims: [n, k, 0],
        units,
        family,
        sections: 1,
        scope: Scope::Call,
        call_units: units,
    };
    let call = gate::call::<T>(exec, region, threshold);
    let width = call.width().min(k);
    if width <= 1 {
        return serial(rhs);
    }
    let tiles = Tiles::new(rhs);
    call::chunks_of(exec, width, width, &|c, w| {
        let (c0, c1) = (part_start(c, k, w), part_start(c + 1, k, w));
        // SAFETY: chunk `c` owns columns `c0..c1`; the chunks partition the columns, and the
        // executor runs each chunk once.
        let cols = unsafe { tiles.tile(0, n, c0, c1) };
        chunk(cols);
    });
}
