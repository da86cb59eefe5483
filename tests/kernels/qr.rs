//! The QR kernel on every executor and scalar type: backward error of `A = Q R`, `Q` unitary,
//! the same factors on every executor, rank-deficient input.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::householder::{
    apply_block_householder_sequence_on_the_left_in_place_scratch as seq_scratch,
    apply_block_householder_sequence_on_the_left_in_place_with_conj as apply_seq,
};
use faer::linalg::matmul::matmul as faer_matmul;
use faer::traits::math_utils::zero;
use faer::{Accum, Conj, Mat, Par, c32, c64};
use teamalg::gates::ParThreshold;
use teamalg::kernels::par::{Executor, Seq};
use teamalg::kernels::qr::{QrParams, block_size, qr_in_place, qr_in_place_scratch};

use super::sample;
use sample::{
    Sample, assert_backward, backward_bound, every_executor, mat, norm, plain_tokens,
    serial_executors, team, team_executors,
};

/// Factors `a` on `exec` in blocks of `bs` (0: the default); `force` sends every section to
/// the full width. Returns the factors and `H`.
fn factor<T: Sample>(exec: &dyn Executor, a: &Mat<T>, bs: usize, force: bool) -> (Mat<T>, Mat<T>) {
    let (m, n) = (a.nrows(), a.ncols());
    let bs = if bs == 0 { block_size::<T>(m, n) } else { bs };
    let mut f = a.clone();
    let mut h = Mat::<T>::zeros(bs, m.min(n));
    let width = exec.width();
    let mut buf = MemBuffer::new(qr_in_place_scratch::<T>(m, n, bs, width));
    let params = QrParams {
        threshold: force.then_some(ParThreshold::Fixed(0)),
    };
    qr_in_place(
        f.as_mut(),
        h.as_mut(),
        exec,
        params,
        width,
        MemStack::new(&mut buf),
    );
    (f, h)
}

/// `Q` (`m x m`), formed by applying the reflectors to the identity.
fn form_q<T: Sample>(f: &Mat<T>, h: &Mat<T>) -> Mat<T> {
    let m = f.nrows();
    let s = h.ncols();
    let mut q = Mat::<T>::identity(m, m);
    let mut buf = MemBuffer::new(seq_scratch::<T>(m, h.nrows(), m));
    apply_seq(
        f.as_ref().subcols(0, s),
        h.as_ref(),
        Conj::No,
        q.as_mut(),
        Par::Seq,
        MemStack::new(&mut buf),
    );
    q
}

/// `||A - Q R||_F` and `||Q^H Q - I||_F`.
fn residuals<T: Sample>(a: &Mat<T>, f: &Mat<T>, h: &Mat<T>) -> (f64, f64) {
    let (m, n) = (a.nrows(), a.ncols());
    let s = m.min(n);
    let q = form_q(f, h);
    let r = Mat::from_fn(s, n, |i, j| if i <= j { f[(i, j)] } else { zero() });
    let mut qr = Mat::<T>::zeros(m, n);
    faer_matmul(
        qr.as_mut(),
        Accum::Replace,
        q.as_ref().subcols(0, s),
        r.as_ref(),
        T::one(),
        Par::Seq,
    );
    let mut qq = Mat::<T>::zeros(m, m);
    faer_matmul(
        qq.as_mut(),
        Accum::Replace,
        q.adjoint(),
        q.as_ref(),
        T::one(),
        Par::Seq,
    );
    (
        norm((qr - a).as_ref()),
        norm((qq - Mat::<T>::identity(m, m)).as_ref()),
    )
}

/// `A = Q R` and `Q^H Q = I` within the backward-error bounds: `C u n ||A||` and `C u n`.
fn assert_qr<T: Sample>(a: &Mat<T>, f: &Mat<T>, h: &Mat<T>, what: &str) {
    let (m, n) = (a.nrows(), a.ncols());
    let (r, q) = residuals(a, f, h);
    let (rb, qb) = (
        backward_bound::<T>(m.max(n), norm(a.as_ref())),
        backward_bound::<T>(m.max(n), 1.0),
    );
    assert!(r <= rb, "{what} {m}x{n}: ||A - QR|| = {r:e} > {rb:e}");
    assert!(q <= qb, "{what} {m}x{n}: ||Q^H Q - I|| = {q:e} > {qb:e}");
}

fn check<T: Sample>(exec: &dyn Executor, m: usize, n: usize, bs: usize, force: bool) {
    let a = mat::<T>(m, n, 0.37);
    let (f, h) = factor(exec, &a, bs, force);
    assert_qr(&a, &f, &h, &format!("bs {bs}"));
}

fn shapes(bs: usize) -> Vec<(usize, usize)> {
    let mut v: Vec<_> = [0, 1, 2, 3, bs - 1, bs, bs + 1, 2 * bs + 1, 127, 128, 129]
        .iter()
        .map(|&n| (n, n))
        .collect();
    v.extend([(300, 40), (40, 300), (129, 7), (7, 129), (65, 64), (64, 65)]);
    v
}

fn all_types(exec: &dyn Executor, force: bool) {
    for bs in [4, 0] {
        for (m, n) in shapes(if bs == 0 { 32 } else { bs }) {
            check::<f64>(exec, m, n, bs, force);
            check::<f32>(exec, m, n, bs, force);
            check::<c64>(exec, m, n, bs, force);
            check::<c32>(exec, m, n, bs, force);
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

/// faer's serial QR (the kernel's serial path) against the blocked kernel on every executor:
/// the same factors and `H` to rounding.
#[test]
fn same_factors_on_every_executor() {
    for (m, n) in [(200, 200), (257, 130), (130, 257)] {
        let a = mat::<f64>(m, n, 0.91);
        let (want, want_h) = factor(&Seq, &a, 16, true);
        every_executor(|exec, force| {
            let (f, h) = factor(exec, &a, 16, force);
            // The same arithmetic up to the order of sums: the factors and the block factors
            // differ by rounding, within the backward-error bound of their size (an identity
            // reflector's infinite factor must match exactly).
            for (got, want, what) in [(&f, &want, "factors"), (&h, &want_h, "H")] {
                let finite = |x: &Mat<f64>| {
                    Mat::from_fn(x.nrows(), x.ncols(), |i, j| {
                        if want[(i, j)].is_finite() {
                            x[(i, j)]
                        } else {
                            assert_eq!(got[(i, j)], want[(i, j)], "{m}x{n} {what} ({i},{j})");
                            0.0
                        }
                    })
                };
                let want_f = finite(want);
                assert_backward::<f64>(
                    &format!("{what} against serial faer's, {m}x{n}"),
                    (finite(got) - &want_f).as_ref(),
                    m.max(n),
                    norm(want_f.as_ref()),
                );
            }
        });
    }
}

/// Rank-deficient input (zero columns, repeated columns, a rank-1 block) on a forced team:
/// still `A = Q R` with `Q` unitary, and `R`'s diagonal is zero to rounding where a column
/// adds nothing new.
#[test]
fn rank_deficient_input_factors() {
    let team = team(2);
    for (m, n) in [(120, 90), (90, 120), (100, 100)] {
        let base = mat::<f64>(m, n, 0.25);
        // Column j % 5 == 0 is zero, == 2 repeats the one before, == 4 combines two earlier.
        let col = |i: usize, j: usize| match j % 5 {
            0 => 0.0,
            2 => base[(i, j - 1)],
            4 => base[(i, j - 1)] + 2.0 * base[(i, j - 3)],
            _ => base[(i, j)],
        };
        let a = Mat::from_fn(m, n, col);
        for bs in [4, 16] {
            let (f, h) = factor(&team, &a, bs, true);
            assert_qr(&a, &f, &h, &format!("rank-deficient, bs {bs}"));
        }
        let (f, _) = factor(&team, &a, 16, true);
        // Column 0 is zero: nothing of it remains.
        assert_eq!(f[(0, 0)], 0.0);
    }
    // A rank-1 matrix: every diagonal entry of R after the first is zero to rounding.
    let (m, n) = (150, 150);
    let u = mat::<f64>(m, 1, 0.5);
    let v = mat::<f64>(1, n, 0.75);
    let a = Mat::from_fn(m, n, |i, j| u[(i, 0)] * v[(0, j)]);
    let (f, h) = factor(&team, &a, 16, true);
    assert_qr(&a, &f, &h, "rank 1");
    // R's trailing block is the rounding of a zero block: within the backward bound.
    let bound = backward_bound::<f64>(n, norm(a.as_ref()));
    for i in 1..n {
        assert!(
            f[(i, i)].abs() <= bound,
            "R[{i},{i}] = {} > {bound:e}",
            f[(i, i)]
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Any shape, any block size, forced parallel or gated: `A = Q R` and `Q` unitary to
    /// rounding on a team.
    #[test]
    fn any_shape_factors_on_a_team(
        m in 0usize..120,
        n in 0usize..120,
        bs in 1usize..21,
        force: bool,
    ) {
        TEAM.with(|team| check::<f64>(team, m, n, bs, force));
    }
}

thread_local! {
    /// One team per test thread for the property test's cases.
    static TEAM: teamalg::Team = team(2);
}

/// Peak memory: beyond the matrix and `H` (which faer's QR has too), the kernel's scratch is
/// faer serial's plus at most one block row (`bs x n`, a panel's worth when square) per
/// participant, measured as the bytes its `StackReq` asks for.
#[test]
fn scratch_is_faers_plus_one_block_row_per_participant() {
    use faer::linalg::qr::no_pivoting::factor::qr_in_place_scratch as faer_scratch;
    for n in [256, 512, 2048] {
        let bs = block_size::<f64>(n, n);
        let faer = faer_scratch::<f64>(n, n, bs, Par::Seq, Default::default());
        let panel = (bs * n * 8) as f64;
        for w in [1, 2, 4, 16] {
            let ours = qr_in_place_scratch::<f64>(n, n, bs, w).unaligned_bytes_required() as f64;
            let allowed = 1.1 * faer.unaligned_bytes_required() as f64 + w as f64 * panel;
            assert!(ours <= allowed, "n {n} w {w}: {ours} > {allowed}");
        }
    }
}
