//! The Cholesky kernel on every executor and scalar type: backward error of `A = L L^H`, the
//! upper triangle unread (NaN there changes nothing), the same factor on every executor, non-positive-definite and NaN
//! input.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::matmul::matmul as faer_matmul;
use faer::traits::math_utils::{from_f64, zero};
use faer::{Accum, Mat, Par, c32, c64};
use teamalg::gates::ParThreshold;
use teamalg::kernels::cholesky::{
    CholeskyParams, NonPositivePivot, cholesky_in_place, cholesky_in_place_scratch,
};
use teamalg::kernels::par::{Executor, Seq};

use super::sample;
use sample::{
    Sample, assert_backward, every_executor, norm, plain_tokens, serial_executors, team,
    team_executors,
};

/// The value the strict upper triangle holds: the kernel must not read it.
const UPPER: f64 = f64::NAN;

/// `B B^H + n I` in the lower triangle, `UPPER` above it.
fn spd<T: Sample>(n: usize, seed: f64) -> Mat<T> {
    let mut a = sample::spd::<T>(n, seed);
    for j in 0..n {
        for i in 0..j {
            a[(i, j)] = from_f64::<T>(UPPER);
        }
    }
    a
}

/// Factors `a` on `exec` with panels of `bs` in wide panels of `wide` (0: the defaults);
/// `force` sends every section to the full width.
fn factor<T: Sample>(
    exec: &dyn Executor,
    a: &Mat<T>,
    (bs, wide): (usize, usize),
    force: bool,
) -> (Mat<T>, Result<(), NonPositivePivot>) {
    let mut f = a.clone();
    let mut buf = MemBuffer::new(cholesky_in_place_scratch::<T>(a.nrows()));
    let params = CholeskyParams {
        block_size: bs,
        wide_size: wide,
        threshold: if force {
            Some(ParThreshold::Fixed(0))
        } else {
            None
        },
    };
    let r = cholesky_in_place(f.as_mut(), exec, params, MemStack::new(&mut buf));
    (f, r)
}

fn check<T: Sample>(exec: &dyn Executor, n: usize, (bs, wide): (usize, usize), force: bool) {
    let a = spd::<T>(n, 0.29);
    let (f, r) = factor(exec, &a, (bs, wide), force);
    assert_eq!(r, Ok(()), "{n}");
    let l = Mat::from_fn(n, n, |i, j| if i >= j { f[(i, j)] } else { zero() });
    let mut llh = Mat::<T>::zeros(n, n);
    faer_matmul(
        llh.as_mut(),
        Accum::Replace,
        l.as_ref(),
        l.adjoint(),
        T::one(),
        Par::Seq,
    );
    // The lower triangle of `L L^H - A` (the upper one holds NaN, unread), against the whole
    // Hermitian `A`.
    let res = Mat::from_fn(n, n, |i, j| {
        if i >= j {
            llh[(i, j)] - a[(i, j)]
        } else {
            zero()
        }
    });
    assert_backward::<T>(
        &format!("L L^H - A, {n} bs {bs} wide {wide}"),
        res.as_ref(),
        n,
        norm(sample::spd::<T>(n, 0.29).as_ref()),
    );
}

fn all_types(exec: &dyn Executor, force: bool) {
    // One level and two (wide panels of 3 and of 2 panels).
    for blocks @ (bs, _) in [(4, 0), (4, 12), (0, 0), (0, 128)] {
        let b = if bs == 0 { 64 } else { bs };
        for n in [0, 1, 2, 3, b - 1, b, b + 1, 127, 128, 129, 257] {
            check::<f64>(exec, n, blocks, force);
            check::<f32>(exec, n, blocks, force);
            check::<c64>(exec, n, blocks, force);
            check::<c32>(exec, n, blocks, force);
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
/// levels): the same factor to rounding.
#[test]
fn same_factor_on_every_executor() {
    let team = team(2);
    for n in [100, 257] {
        let a = spd::<c64>(n, 0.61);
        let (want, _) = factor(&Seq, &a, (16, 0), true);
        let lower =
            |f: &Mat<c64>| Mat::from_fn(n, n, |i, j| if i >= j { f[(i, j)] } else { zero() });
        let want = lower(&want);
        let same = |exec: &dyn Executor, force: bool, wide: usize| {
            let (f, r) = factor(exec, &a, (16, wide), force);
            assert_eq!(r, Ok(()));
            // The same arithmetic up to the order of sums: the factors differ by rounding,
            // within the backward-error bound of the factor's size.
            assert_backward::<c64>(
                &format!("factor against serial faer's, {n}"),
                (lower(&f) - &want).as_ref(),
                n,
                norm(want.as_ref()),
            );
        };
        every_executor(|exec, force| same(exec, force, 0));
        same(&team, true, 48);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Any size, any panel width, forced parallel or gated: `A = L L^H` to rounding on a team.
    #[test]
    fn any_size_factors_on_a_team(
        n in 0usize..150,
        bs in 1usize..25,
        wide in 0usize..80,
        force: bool,
    ) {
        TEAM.with(|team| check::<f64>(team, n, (bs, wide), force));
    }
}

thread_local! {
    /// One team per test thread for the property test's cases.
    static TEAM: teamalg::Team = team(2);
}

/// A matrix that stops being positive definite at column j reports j, on every executor and
/// also when the failing block is factored by the lookahead inside a section.
#[test]
fn not_positive_definite_reports_the_column() {
    let team = team(2);
    for j in [0, 3, 37, 99] {
        let mut a = spd::<f64>(100, 0.5);
        a[(j, j)] = -1e4;
        for (label, r) in [
            ("serial", factor(&Seq, &a, (8, 0), true).1),
            ("team", factor(&team, &a, (8, 0), true).1),
            ("team, two levels", factor(&team, &a, (8, 32), true).1),
            ("team default", factor(&team, &a, (0, 0), false).1),
        ] {
            assert_eq!(r, Err(NonPositivePivot { index: j }), "{label}");
        }
    }
}

/// NaN input ends without hanging: an error at the first column it reaches, or NaN out.
#[test]
fn nan_input_does_not_hang() {
    let team = team(2);
    let mut a = spd::<f64>(150, 0.3);
    a[(70, 3)] = f64::NAN;
    for (f, r) in [
        factor(&team, &a, (16, 32), true),
        factor(&Seq, &a, (16, 0), true),
    ] {
        match r {
            Err(NonPositivePivot { index }) => assert!(index >= 3, "{index}"),
            Ok(()) => assert!(f[(149, 149)].is_nan()),
        }
    }
}

#[test]
#[should_panic(expected = "A must be square")]
fn non_square_panics_in_the_kernel() {
    let mut a = Mat::<f64>::zeros(3, 4);
    let mut buf = MemBuffer::new(cholesky_in_place_scratch::<f64>(3));
    let _ = cholesky_in_place(
        a.as_mut(),
        &Seq,
        CholeskyParams::default(),
        MemStack::new(&mut buf),
    );
}
