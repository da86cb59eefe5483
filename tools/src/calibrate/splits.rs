//! The split costs: each gated family's kernel on a held team of one width, forced serial
//! against forced parallel, and the least-squares fit of what going parallel costs beyond
//! dispatch at that width.

use super::*;

/// The sizes at which `family`'s split is fitted: around where its decision turns.
fn split_sizes(family: Family) -> &'static [usize] {
    match family {
        Family::Gemm | Family::TriangularSolve => &[32, 48, 64, 96, 128, 192],
        _ => &[64, 96, 128, 192, 256, 384],
    }
}

/// One timed size: serial and forced-parallel medians and the parallel run's regions.
struct Point {
    n: usize,
    serial: f64,
    parallel: f64,
    /// Sections dispatched.
    sections: f64,
    /// Their dispatch costs, summed, ns.
    dispatch: f64,
    /// The serial time split `width` ways, ns.
    work: f64,
}

/// Times `family` at each size on `team`, serial and forced parallel, in blocks, and fits its
/// split cost at the team's width.
pub(super) fn fit_split<T: Sample>(family: Family, team: &teamalg::Team) -> SplitFit {
    let width = team.width();
    let mut points = Vec::new();
    for &n in split_sizes(family) {
        let mut w = Workload::<T>::new(family, n);
        let forced = Some(ParThreshold::Fixed(0));
        let never = Some(ParThreshold::Never);
        w.time(team, forced);
        w.time(team, never);
        // Each arm in a block of back-to-back calls, as a caller repeating one call runs it:
        // interleaved, every serial call would first pull the matrix back from the member's
        // cache, which a serial caller does not pay (and the rates were not timed with).
        let reps = if n <= 128 { 15 } else { 7 };
        let mut block = |t: Option<ParThreshold>| {
            let v: Vec<f64> = (0..reps).map(|_| w.time(team, t)).collect();
            median(&v)
        };
        let mut s = Vec::new();
        let mut p = Vec::new();
        for _ in 0..2 {
            s.push(block(never));
            p.push(block(forced));
        }
        // The call's own decision comes first: how many sections it makes, at what cost.
        w.prepare();
        let ((), seen) = trace::collect(|| w.call(team, forced));
        let Some(call) = seen.first().filter(|d| d.parallel()) else {
            continue;
        };
        let serial = s.iter().copied().fold(f64::MAX, f64::min);
        points.push(Point {
            n,
            serial,
            parallel: p.iter().copied().fold(f64::MAX, f64::min),
            sections: call.sections as f64,
            dispatch: call.sections as f64 * call.dispatch_cost.as_nanos() as f64,
            work: serial / width as f64,
        });
    }
    let cost = fit(&points);
    let timed = points
        .iter()
        .map(|q| Timed {
            n: q.n,
            sections: q.sections as usize,
            serial_ns: q.serial,
            parallel_ns: q.parallel,
            model_ns: q.dispatch + q.sections * cost.overhead_ns + q.work / cost.efficiency,
        })
        .collect();
    let worst_error = points
        .iter()
        .map(|q| {
            let model = q.dispatch + q.sections * cost.overhead_ns + q.work / cost.efficiency;
            (model / q.parallel - 1.0).abs()
        })
        .fold(0.0, f64::max);
    SplitFit {
        family,
        complex: matches!(T::KIND, teamalg::gates::ScalarKind::C64),
        width,
        cost,
        worst_error,
        points: timed,
    }
}

/// Least squares of `parallel - dispatch = sections * c + work * a` (each point weighted by
/// its serial time, so small sizes count as much as large ones), `c >= 0`, efficiency `1 / a`
/// in `[0.05, 1]`.
fn fit(points: &[Point]) -> SplitCost {
    let rows: Vec<(f64, f64, f64)> = points
        .iter()
        .filter(|q| q.sections > 0.0 && q.serial > 0.0)
        .map(|q| {
            let w = 1.0 / q.serial;
            (q.sections * w, q.work * w, (q.parallel - q.dispatch) * w)
        })
        .collect();
    if rows.is_empty() {
        return SplitCost::FREE;
    }
    let (mut sxx, mut sxy, mut syy, mut sxz, mut syz) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(x, y, z) in &rows {
        sxx += x * x;
        sxy += x * y;
        syy += y * y;
        sxz += x * z;
        syz += y * z;
    }
    let det = sxx * syy - sxy * sxy;
    let (mut c, mut a) = if det.abs() > 1e-12 * sxx * syy {
        ((sxz * syy - syz * sxy) / det, (sxx * syz - sxy * sxz) / det)
    } else {
        (0.0, syz / syy)
    };
    if c < 0.0 {
        c = 0.0;
        a = syz / syy;
    }
    let a = a.max(1.0);
    if a > 20.0 {
        return SplitCost {
            overhead_ns: c,
            efficiency: 0.05,
        };
    }
    SplitCost {
        overhead_ns: c,
        efficiency: 1.0 / a,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_recovers_a_known_split() {
        // parallel = dispatch + sections * 3000 + work / 0.8
        let points: Vec<Point> = [(1.0, 20_000.0), (2.0, 50_000.0), (4.0, 300_000.0)]
            .iter()
            .map(|&(s, work)| Point {
                n: 0,
                serial: 2.0 * work,
                parallel: 500.0 * s + s * 3000.0 + work / 0.8,
                sections: s,
                dispatch: 500.0 * s,
                work,
            })
            .collect();
        let f = fit(&points);
        assert!((f.overhead_ns - 3000.0).abs() < 1.0, "{f:?}");
        assert!((f.efficiency - 0.8).abs() < 1e-6, "{f:?}");
    }
}
