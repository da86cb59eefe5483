//! The LU kernel on every executor and scalar type: backward error of `P A = L U`, the same
//! factors on every executor, singular and NaN input.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::matmul::matmul as faer_matmul;
use faer::{Accum, Mat, Par, c32, c64};
use teamalg::gates::ParThreshold;
use teamalg::kernels::lu::{LuInfo, LuParams, lu_in_place, lu_in_place_scratch};
use teamalg::kernels::par::{Executor, Seq};

use super::sample;
use sample::{
    Sample, assert_backward, every_executor, mat, norm, plain_tokens, serial_executors, team,
    team_executors,
};

/// Factors `a` on `exec` with panels of `bs` in wide panels of `wide` (0: the defaults);
/// `force` sends every section to the full width.
fn factor<T: Sample>(
    exec: &dyn Executor,
    a: &Mat<T>,
    (bs, wide): (usize, usize),
    force: bool,
) -> (Mat<T>, Vec<usize>, LuInfo) {
    let (m, n) = (a.nrows(), a.ncols());
    let mut f = a.clone();
    let mut swaps = vec![usize::MAX; m.min(n)];
    let mut buf = MemBuffer::new(lu_in_place_scratch::<T>(m, n));
    let params = LuParams {
        block_size: bs,
        wide_size: wide,
        threshold: if force {
            Some(ParThreshold::Fixed(0))
        } else {
            None
        },
        ..LuParams::default()
    };
    let info = lu_in_place(
        f.as_mut(),
        &mut swaps,
        exec,
        params,
        MemStack::new(&mut buf),
    );
    (f, swaps, info)
}

/// `P A - L U`.
fn residual<T: Sample>(a: &Mat<T>, f: &Mat<T>, swaps: &[usize]) -> Mat<T> {
    let (m, n, s) = (a.nrows(), a.ncols(), swaps.len());
    let mut pa = a.clone();
    for (j, &t) in swaps.iter().enumerate() {
        assert!(t >= j && t < m, "swap {j} -> {t} out of range");
        for c in 0..n {
            let x = pa[(j, c)];
            pa[(j, c)] = pa[(t, c)];
            pa[(t, c)] = x;
        }
    }
    let l = Mat::from_fn(m, s, |i, j| {
        if i == j {
            T::one()
        } else if i > j {
            f[(i, j)]
        } else {
            faer::traits::math_utils::zero()
        }
    });
    let u = Mat::from_fn(s, n, |i, j| {
        if i <= j {
            f[(i, j)]
        } else {
            faer::traits::math_utils::zero()
        }
    });
    let mut lu = Mat::<T>::zeros(m, n);
    faer_matmul(
        lu.as_mut(),
        Accum::Replace,
        l.as_ref(),
        u.as_ref(),
        T::one(),
        Par::Seq,
    );
    pa - lu
}

fn check<T: Sample>(
    exec: &dyn Executor,
    m: usize,
    n: usize,
    (bs, wide): (usize, usize),
    force: bool,
) {
    let a = mat::<T>(m, n, 0.37);
    let (f, swaps, info) = factor(exec, &a, (bs, wide), force);
    assert_eq!(info.zero_pivot, None, "{m}x{n}");
    assert_eq!(
        info.transpositions,
        swaps.iter().enumerate().filter(|&(j, &t)| t != j).count()
    );
    assert_backward::<T>(
        &format!("P A - L U, {m}x{n} bs {bs} wide {wide}"),
        residual(&a, &f, &swaps).as_ref(),
        m.max(n),
        norm(a.as_ref()),
    );
}

fn shapes(bs: usize) -> Vec<(usize, usize)> {
    let mut v: Vec<_> = [0, 1, 2, 3, bs - 1, bs, bs + 1, 127, 128, 129, 257]
        .iter()
        .map(|&n| (n, n))
        .collect();
    v.extend([(300, 40), (40, 300), (129, 7), (7, 129), (65, 64), (64, 65)]);
    v
}

fn all_types(exec: &dyn Executor, force: bool) {
    // One level and two (wide panels of 3 and of 2 panels).
    for blocks @ (bs, _) in [(4, 0), (4, 12), (0, 0), (0, 128)] {
        for (m, n) in shapes(if bs == 0 { 64 } else { bs }) {
            check::<f64>(exec, m, n, blocks, force);
            check::<f32>(exec, m, n, blocks, force);
            check::<c64>(exec, m, n, blocks, force);
            check::<c32>(exec, m, n, blocks, force);
        }
    }
}

#[test]
fn serial() {
    serial_executors(all_types);
}

#[test]
fn plain_token() {
    plain_tokens(all_types);
}

#[test]
fn team_and_team_token() {
    team_executors(all_types);
}

/// Serial faer against the blocked kernel on every executor (and a team with two blocking
/// levels): the same pivots and the same factors to rounding.
#[test]
fn same_factors_on_every_executor() {
    let team = team(2);
    for (m, n) in [(200, 200), (257, 130), (130, 257)] {
        let a = mat::<f64>(m, n, 0.91);
        let (want, want_swaps, _) = factor(&Seq, &a, (16, 0), true);
        let same = |exec: &dyn Executor, force: bool, wide: usize| {
            let (f, swaps, _) = factor(exec, &a, (16, wide), force);
            assert_eq!(swaps, want_swaps, "{m}x{n}");
            // The same pivots and the same arithmetic up to the order of sums: the factors
            // differ by rounding, within the backward-error bound of the factors' size.
            assert_backward::<f64>(
                &format!("factors against serial faer's, {m}x{n}"),
                (&f - &want).as_ref(),
                m.max(n),
                norm(want.as_ref()),
            );
        };
        every_executor(|exec, force| same(exec, force, 0));
        same(&team, true, 48);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Any shape, any panel width, forced parallel or gated: `P A = L U` to rounding on a
    /// team.
    #[test]
    fn any_shape_factors_on_a_team(
        m in 0usize..120,
        n in 0usize..120,
        bs in 1usize..21,
        wide in 0usize..70,
        force: bool,
    ) {
        TEAM.with(|team| check::<f64>(team, m, n, (bs, wide), force));
    }
}

thread_local! {
    /// One team per test thread for the property test's cases.
    static TEAM: teamalg::Team = team(2);
}

/// A matrix with an exact zero pivot reports its first one, on every executor, also when the
/// singular panel is factored by the lookahead inside a section.
#[test]
fn singular_input_reports_the_first_zero_pivot() {
    let team = team(2);
    for zero_col in [0, 2, 37, 99] {
        let mut a = mat::<f64>(100, 100, 0.5);
        for i in 0..100 {
            a[(i, zero_col)] = 0.0;
        }
        for (label, info) in [
            ("serial", factor(&Seq, &a, (8, 0), true).2),
            ("team", factor(&team, &a, (8, 0), true).2),
            ("team, two levels", factor(&team, &a, (8, 32), true).2),
            ("team default", factor(&team, &a, (0, 0), false).2),
        ] {
            assert_eq!(info.zero_pivot, Some(zero_col), "{label}");
        }
    }
    // Rank 1, with multipliers that are powers of two, so the elimination is exact and the
    // second pivot is exactly zero.
    let a = Mat::from_fn(50, 50, |i, j| (1 << (i % 4)) as f64 * (j + 1) as f64);
    assert_eq!(factor(&team, &a, (8, 24), true).2.zero_pivot, Some(1));
}

#[test]
fn nan_in_gives_nan_out_without_hanging() {
    let team = team(2);
    let mut a = mat::<f64>(150, 150, 0.3);
    a[(70, 3)] = f64::NAN;
    let (f, _, _) = factor(&team, &a, (16, 32), true);
    assert!(f[(149, 149)].is_nan());
    let (f, _, _) = factor(&Seq, &a, (16, 0), true);
    assert!(f[(149, 149)].is_nan());
}

#[test]
#[should_panic(expected = "swaps must hold min(m, n)")]
fn wrong_swap_length_panics_in_the_kernel() {
    let a = mat::<f64>(4, 4, 0.1);
    let mut f = a.clone();
    let mut buf = MemBuffer::new(lu_in_place_scratch::<f64>(4, 4));
    lu_in_place(
        f.as_mut(),
        &mut [0; 3],
        &Seq,
        LuParams::default(),
        MemStack::new(&mut buf),
    );
}
