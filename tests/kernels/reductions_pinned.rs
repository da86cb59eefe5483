//! The reductions' bail-out (the call's watch, `kernels/src/exec/call.rs`), in a process pinned
//! to one CPU: a team of two there has its member answer only when the lead gives up the CPU,
//! so every parallel section loses to the lead working alone, as on a host whose second vCPU
//! is taken. Forced parallel, the call must still give up after its first losing sections and
//! take them to the caller, and the result must still be right. (Its own
//! binary: the pin holds for every thread spawned after it, pools' workers included; each test
//! pins its own thread to the same CPU.)

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::tridiag::tridiag_in_place as faer_tridiag;
use faer::linalg::qr::no_pivoting::factor::recommended_block_size;
use faer::linalg::svd::bidiag::bidiag_in_place as faer_bidiag;
use faer::{Mat, Par};
use teamalg::gates::ParThreshold;
use teamalg::kernels::bidiag::{bidiag_in_place, bidiag_in_place_scratch};
use teamalg::kernels::sections;
use teamalg::kernels::tridiag::{tridiag_in_place, tridiag_in_place_scratch};

#[path = "../common/sample.rs"]
mod sample;

#[path = "../common/pin.rs"]
mod pin;
#[cfg(target_os = "linux")]
use pin::pin_to_one_cpu;

/// The sections (forced parallel) from the first step with two bands on: after the call's
/// watch saw twelve losing sections (a forced width's `call::LOSING_FORCED`), all on the caller.
fn assert_the_watch_decided(sections: &[&sections::SectionTiming]) {
    let first_alone = sections.iter().position(|s| s.width == 1);
    assert!(
        matches!(first_alone, Some(i) if i >= 12),
        "the watch did not decide after twelve losing sections: {first_alone:?}"
    );
    assert!(sections[first_alone.unwrap()..]
        .iter()
        .all(|s| s.width == 1));
}

fn reduce(a: &Mat<f64>, parallel: Option<&teamalg::Team>) -> Mat<f64> {
    let (m, n) = (a.nrows(), a.ncols());
    let bs = recommended_block_size::<f64>(m, n);
    let (mut a, mut hl, mut hr) = (a.clone(), Mat::zeros(bs, n), Mat::zeros(bs, n - 1));
    let mut buf = MemBuffer::new(bidiag_in_place_scratch::<f64>(m, n));
    let stack = MemStack::new(&mut buf);
    match parallel {
        Some(team) => bidiag_in_place(
            a.as_mut(),
            hl.as_mut(),
            hr.as_mut(),
            team,
            Some(ParThreshold::Fixed(0)),
            stack,
        ),
        None => faer_bidiag(
            a.as_mut(),
            hl.as_mut(),
            hr.as_mut(),
            Par::Seq,
            stack,
            Default::default(),
        ),
    }
    a
}

#[cfg(target_os = "linux")]
#[test]
fn a_member_that_cannot_run_sends_the_sections_to_the_caller() {
    pin_to_one_cpu();
    assert_eq!(teamalg::available_cpus(), 1);
    let team = sample::team(2);
    let n = 400;
    let a = sample::mat::<f64>(n, n, 3.0);
    let (ours, seen) = sections::collect(|| reduce(&a, Some(&team)));
    // Forced parallel, every step with at least two bands of 64 rows would run two wide.
    let two_bands: Vec<_> = seen.iter().filter(|s| s.k + 1 + 128 <= n).collect();
    assert_the_watch_decided(&two_bands);
    let want = reduce(&a, None);
    let scale = want.norm_max();
    let err = (&ours - &want).norm_max();
    assert!(err <= 1e-12 * n as f64 * scale, "error {err:e}");
}

fn tridiagonal(a: &Mat<f64>, parallel: Option<&teamalg::Team>) -> Mat<f64> {
    let n = a.nrows();
    let bs = recommended_block_size::<f64>(n - 1, n - 1);
    let (mut a, mut h) = (a.clone(), Mat::zeros(bs, n - 1));
    let mut buf = MemBuffer::new(tridiag_in_place_scratch::<f64>(n));
    let stack = MemStack::new(&mut buf);
    match parallel {
        Some(team) => tridiag_in_place(
            a.as_mut(),
            h.as_mut(),
            team,
            Some(ParThreshold::Fixed(0)),
            stack,
        ),
        None => faer_tridiag(a.as_mut(), h.as_mut(), Par::Seq, stack, Default::default()),
    }
    // The lower triangle holds the result.
    Mat::from_fn(n, n, |i, j| if i >= j { a[(i, j)] } else { 0.0 })
}

#[cfg(target_os = "linux")]
#[test]
fn the_tridiagonalization_watches_too() {
    pin_to_one_cpu();
    let team = sample::team(2);
    let n = 400;
    let b = sample::mat::<f64>(n, n, 5.0);
    let a = &b + b.transpose();
    let (ours, seen) = sections::collect(|| tridiagonal(&a, Some(&team)));
    // Two bands from 128 trailing columns on.
    let two_bands: Vec<_> = seen.iter().filter(|s| s.k + 1 + 128 <= n).collect();
    assert_the_watch_decided(&two_bands);
    let want = tridiagonal(&a, None);
    let err = (&ours - &want).norm_max();
    assert!(err <= 1e-12 * n as f64 * want.norm_max(), "error {err:e}");
}
