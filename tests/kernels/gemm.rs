//! The GEMM kernel on every executor and scalar type, against faer's serial product.

use faer::linalg::matmul::matmul as faer_matmul;
use faer::{Accum, Mat, Par, c32, c64};
use teamalg::gates::ParThreshold;
use teamalg::kernels::gemm::{GemmParams, matmul};
use teamalg::kernels::par::{Executor, Seq};
use teamalg::{Exec, Pool};

use super::sample;
use sample::{Sample, mat, plain_tokens, serial_executors, team, team_executors};

/// Checks `C (accum)= A B` on `exec` against faer's serial result.
fn check<T: Sample>(exec: &dyn Executor, m: usize, n: usize, k: usize, accum: Accum, force: bool) {
    let (a, b) = (mat::<T>(m, k, 0.37), mat::<T>(k, n, 0.71));
    let c0 = mat::<T>(m, n, 0.13);
    let mut want = c0.clone();
    faer_matmul(
        want.as_mut(),
        accum,
        a.as_ref(),
        b.as_ref(),
        T::one(),
        Par::Seq,
    );
    let mut got = c0.clone();
    let params = GemmParams {
        threshold: if force {
            Some(ParThreshold::Fixed(0))
        } else {
            None
        },
    };
    matmul(
        got.as_mut(),
        accum,
        a.as_ref(),
        b.as_ref(),
        T::one(),
        exec,
        params,
    );
    for i in 0..m {
        for j in 0..n {
            let e = T::err(got[(i, j)], want[(i, j)]);
            assert!(e <= T::tol(k), "{m}x{n}x{k} at ({i},{j}): error {e}");
        }
    }
}

fn shapes() -> Vec<(usize, usize, usize)> {
    let mut v: Vec<_> = [0, 1, 2, 3, 127, 128, 129, 257]
        .iter()
        .map(|&n| (n, n, n))
        .collect();
    v.extend([
        (300, 5, 7),
        (5, 300, 7),
        (64, 64, 1),
        (1, 200, 50),
        (200, 1, 50),
        (3, 2, 0),
    ]);
    v
}

fn all_types(exec: &dyn Executor, force: bool) {
    for (m, n, k) in shapes() {
        for accum in [Accum::Replace, Accum::Add] {
            check::<f64>(exec, m, n, k, accum, force);
            check::<f32>(exec, m, n, k, accum, force);
            check::<c64>(exec, m, n, k, accum, force);
            check::<c32>(exec, m, n, k, accum, force);
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

#[test]
fn random_shapes_on_a_team() {
    let team = team(2);
    let mut x = 12345u64;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n) as usize
    };
    for _ in 0..60 {
        let (m, n, k) = (next(90), next(90), next(40));
        check::<f64>(&team, m, n, k, Accum::Add, next(2) == 0);
    }
}

#[test]
#[should_panic(expected = "matmul: C is 2x2")]
fn shape_mismatch_panics_in_the_kernel() {
    let (a, b) = (mat::<f64>(2, 3, 0.1), mat::<f64>(4, 2, 0.2));
    let mut c = Mat::<f64>::zeros(2, 2);
    matmul(
        c.as_mut(),
        Accum::Replace,
        a.as_ref(),
        b.as_ref(),
        1.0,
        &Seq,
        GemmParams::default(),
    );
}

#[test]
fn nan_in_gives_nan_out() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let mut a = mat::<f64>(64, 64, 0.3);
    a[(5, 7)] = f64::NAN;
    let b = mat::<f64>(64, 64, 0.4);
    let mut c = Mat::<f64>::zeros(64, 64);
    let force = GemmParams {
        threshold: Some(ParThreshold::Fixed(0)),
    };
    matmul(
        c.as_mut(),
        Accum::Replace,
        a.as_ref(),
        b.as_ref(),
        1.0,
        &Exec::new(&pool, 2).unwrap(),
        force,
    );
    assert!((0..64).all(|j| c[(5, j)].is_nan()));
    assert!(!c[(6, 0)].is_nan());
}
