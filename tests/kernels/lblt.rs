//! The Bunch-Kaufman kernel on every executor and scalar type, with panels from 2 columns up:
//! backward error of `P A P^T = L B L^H`, the upper triangle unread, pivots of order 2 at
//! every panel edge (a zero diagonal forces them), singular input, and the same factors on
//! every executor.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::traits::math_utils::{conj, from_f64, zero};
use faer::{Mat, c32, c64};
use teamalg::gates::ParThreshold;
use teamalg::kernels::lblt::{LbltParams, lblt_in_place, lblt_in_place_scratch};
use teamalg::kernels::par::Executor;

use super::sample;
use sample::{Sample, assert_backward, every_executor, norm};

struct Factors<T> {
    f: Mat<T>,
    subdiag: Vec<T>,
    swaps: Vec<usize>,
}

fn factor<T: Sample>(exec: &dyn Executor, a: &Mat<T>, bs: usize, force: bool) -> Factors<T> {
    let n = a.nrows();
    let mut f = a.clone();
    // The kernel reads the lower triangle only.
    for j in 0..n {
        for i in 0..j {
            f[(i, j)] = from_f64::<T>(f64::NAN);
        }
    }
    let params = LbltParams {
        block_size: bs,
        threshold: force.then_some(ParThreshold::Fixed(0)),
    };
    let (mut subdiag, mut swaps) = (vec![zero::<T>(); n], vec![0; n]);
    let mut buf = MemBuffer::new(lblt_in_place_scratch::<T>(n, params));
    lblt_in_place(
        f.as_mut(),
        &mut subdiag,
        &mut swaps,
        exec,
        params,
        MemStack::new(&mut buf),
    );
    Factors { f, subdiag, swaps }
}

/// `P^T L B L^H P`, from the factors.
fn rebuild<T: Sample>(x: &Factors<T>) -> Mat<T> {
    let n = x.f.nrows();
    let l = Mat::<T>::from_fn(n, n, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => x.f[(i, j)],
        std::cmp::Ordering::Equal => T::one(),
        std::cmp::Ordering::Less => zero(),
    });
    let mut b = Mat::<T>::zeros(n, n);
    for i in 0..n {
        b[(i, i)] = x.f[(i, i)];
        if i + 1 < n && x.subdiag[i] != zero::<T>() {
            b[(i + 1, i)] = x.subdiag[i];
            b[(i, i + 1)] = conj(&x.subdiag[i]);
        }
    }
    let pap = &l * &b * l.adjoint();
    let mut fwd: Vec<usize> = (0..n).collect();
    for (i, &p) in x.swaps.iter().enumerate() {
        assert!(p >= i && p < n, "swap {i} -> {p}");
        fwd.swap(i, p);
    }
    let mut a = Mat::<T>::zeros(n, n);
    for i in 0..n {
        for j in 0..n {
            a[(fwd[i], fwd[j])] = pap[(i, j)];
        }
    }
    a
}

/// A Hermitian matrix with a zero diagonal: every first pivot test fails, so the pivots
/// are of order 2 wherever the off-diagonal allows.
fn hollow<T: Sample>(n: usize) -> Mat<T> {
    let mut a = sample::hermitian::<T>(n, 0.35);
    for i in 0..n {
        a[(i, i)] = zero();
    }
    a
}

fn check<T: Sample>(exec: &dyn Executor, a: &Mat<T>, bs: usize, force: bool) -> Factors<T> {
    let n = a.nrows();
    let x = factor(exec, a, bs, force);
    assert_backward::<T>(
        &format!("P^T L B L^H P, n = {n}, bs = {bs}"),
        (rebuild(&x) - a).as_ref(),
        n,
        norm(a.as_ref()),
    );
    x
}

fn cases<T: Sample>() {
    every_executor(|exec, force| {
        for n in [0, 1, 2, 3, 17, 64, 131] {
            for bs in [2, 3, 4, 7, 32] {
                check(exec, &sample::hermitian::<T>(n, 0.6), bs, force);
                let x = check(exec, &hollow::<T>(n), bs, force);
                if n >= 2 {
                    let pairs = x.subdiag.iter().filter(|s| **s != zero::<T>()).count();
                    assert!(pairs > 0, "a zero diagonal takes pivots of order 2");
                }
            }
        }
    });
}

#[test]
fn factors_back_on_every_type_executor_and_panel() {
    cases::<f32>();
    cases::<f64>();
    cases::<c32>();
    cases::<c64>();
}

#[test]
fn singular_input_factors_back() {
    // Rank 2: u u^H - v v^H, order 40, on a team with every section parallel.
    let (u, v) = (
        sample::mat::<f64>(40, 1, 0.2),
        sample::mat::<f64>(40, 1, 0.9),
    );
    let a = &u * u.transpose() - &v * v.transpose();
    let team = sample::team(2);
    check(&team, &a, 4, true);
    // Rows and columns 5 and 30 zero: exactly two zeros in B, and the rest factors back.
    let mut a = sample::hermitian::<f64>(40, 0.4);
    for k in [5, 30] {
        for j in 0..40 {
            a[(k, j)] = 0.0;
            a[(j, k)] = 0.0;
        }
    }
    let x = check(&team, &a, 4, true);
    let zeros = (0..40).filter(|&i| x.f[(i, i)] == 0.0).count();
    assert_eq!(zeros, 2, "a zero row and column give a zero in B");
}

#[test]
fn every_executor_gives_the_same_factors() {
    let a = hollow::<c64>(150);
    let serial = factor(&teamalg::kernels::par::Seq, &a, 8, false);
    for width in [2, 3] {
        let team = sample::team(width);
        let x = factor(&team, &a, 8, true);
        assert_eq!(x.swaps, serial.swaps, "width {width}");
        let diff = (&x.f - &serial.f).norm_max();
        // The pivots agree exactly; the chunked update rounds differently from the serial one.
        assert!(diff <= 1e-12 * a.norm_max(), "width {width}: {diff:e}");
    }
}
