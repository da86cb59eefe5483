//! The parallel bidiagonalization: backward stable (`A = U B V^H` within `C u n ||A||`, the
//! factors formed in faer's layout), the packed matrix and the block factors equal to faer's
//! serial `bidiag_in_place` to rounding (so faer's layout holds, entry by entry), for every scalar
//! type, tall, square and wide shapes, block edges and columns already reduced; a
//! rank-deficient matrix by its singular values; and its passes ran as sections.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::householder::{
    apply_block_householder_sequence_on_the_left_in_place_scratch as seq_scratch,
    apply_block_householder_sequence_on_the_left_in_place_with_conj as apply_seq,
};
use faer::linalg::qr::no_pivoting::factor::recommended_block_size;
use faer::linalg::svd::bidiag::bidiag_in_place as faer_bidiag;
use faer::traits::math_utils::{from_real, zero};
use faer::{Conj, Mat, Par, c32, c64};
use teamalg::gates::ParThreshold;
use teamalg::kernels::bidiag::{bidiag_in_place, bidiag_in_place_scratch};
use teamalg::kernels::par::Executor;

use super::sample;
use sample::{Sample, assert_backward, backward_bound, mat, norm, plain_tokens, team_executors};

struct Packed<T> {
    a: Mat<T>,
    hl: Mat<T>,
    hr: Mat<T>,
}

fn packed<T: Sample>(a: &Mat<T>) -> Packed<T> {
    let (m, n) = (a.nrows(), a.ncols());
    let size = m.min(n);
    let bs = recommended_block_size::<T>(m, n);
    Packed {
        a: a.clone(),
        hl: Mat::zeros(bs, size),
        hr: Mat::zeros(bs, size.saturating_sub(1)),
    }
}

fn faer_reference<T: Sample>(a: &Mat<T>) -> Packed<T> {
    let (m, n) = (a.nrows(), a.ncols());
    let mut p = packed(a);
    let mut buf = MemBuffer::new(bidiag_in_place_scratch::<T>(m, n));
    faer_bidiag(
        p.a.as_mut(),
        p.hl.as_mut(),
        p.hr.as_mut(),
        Par::Seq,
        MemStack::new(&mut buf),
        Default::default(),
    );
    p
}

fn ours<T: Sample>(a: &Mat<T>, exec: &dyn Executor, force: bool) -> Packed<T> {
    let (m, n) = (a.nrows(), a.ncols());
    let mut p = packed(a);
    let mut buf = MemBuffer::new(bidiag_in_place_scratch::<T>(m, n));
    bidiag_in_place(
        p.a.as_mut(),
        p.hl.as_mut(),
        p.hr.as_mut(),
        exec,
        force.then_some(ParThreshold::Fixed(0)),
        MemStack::new(&mut buf),
    );
    p
}

/// Entry `(i, j)` of `x` against `y`, scaled by `scale`; non-finite entries (the `tau` of a
/// column already reduced) must match in kind.
fn close<T: Sample>(x: T, y: T, scale: f64, tol: f64, what: &str) {
    // inf - inf is NaN.
    let finite = |v: T| T::err(v, v) == 0.0;
    match (finite(x), finite(y)) {
        (true, true) => assert!(
            T::err(x, y) <= tol * scale,
            "{what}: {x:?} {y:?} scale {scale} tol {tol}"
        ),
        (a, b) => assert_eq!(a, b, "{what}: finite against non-finite"),
    }
}

/// `U` (`m x m`) and `V` (`n x n`) of a packed bidiagonalization `A = U B V^H`, formed in faer's
/// layout: the left reflectors below the diagonal with `hl`, the right ones right of the
/// superdiagonal with `hr` (applied conjugated to the trailing `n - 1` rows, as faer's SVD
/// does).
fn factors<T: Sample>(p: &Packed<T>) -> (Mat<T>, Mat<T>) {
    let (m, n) = (p.a.nrows(), p.a.ncols());
    let size = m.min(n);
    let mut u = Mat::<T>::identity(m, m);
    let mut v = Mat::<T>::identity(n, n);
    if size == 0 {
        return (u, v);
    }
    let bs = p.hl.nrows().max(1);
    let mut buf = MemBuffer::new(seq_scratch::<T>(m.max(n), bs, m.max(n)));
    apply_seq(
        p.a.as_ref().subcols(0, size),
        p.hl.as_ref(),
        Conj::No,
        u.as_mut(),
        Par::Seq,
        MemStack::new(&mut buf),
    );
    if size > 1 {
        let w =
            p.a.as_ref()
                .submatrix(0, 1, size - 1, n - 1)
                .transpose()
                .to_owned();
        apply_seq(
            w.as_ref(),
            p.hr.as_ref(),
            Conj::Yes,
            v.as_mut().submatrix_mut(1, 1, n - 1, n - 1),
            Par::Seq,
            MemStack::new(&mut buf),
        );
    }
    (u, v)
}

/// The accuracy of a bidiagonalization of a matrix at least as tall as wide (the SVDs, faer's
/// and teamalg's, transpose wide ones first, and a wide matrix's packed form is not an upper
/// bidiagonal `B`): `A = U B V^H` within `C u n ||A||`, `U` and `V` unitary within `C u n`,
/// `B` the packed diagonal and superdiagonal.
fn assert_backward_stable<T: Sample>(a: &Mat<T>, p: &Packed<T>, what: &str) {
    let (m, n) = (a.nrows(), a.ncols());
    let (u, v) = factors(p);
    let b = Mat::from_fn(m, n, |i, j| {
        if j == i || j == i + 1 {
            p.a[(i, j)]
        } else {
            zero()
        }
    });
    let k = m.max(n);
    assert_backward::<T>(
        &format!("{what}: A - U B V^H"),
        (&u * &b * v.adjoint() - a).as_ref(),
        k,
        norm(a.as_ref()),
    );
    for (name, q) in [("U", &u), ("V", &v)] {
        let size = q.nrows();
        assert_backward::<T>(
            &format!("{what}: {name}^H {name} - I"),
            (q.adjoint() * q - Mat::<T>::identity(size, size)).as_ref(),
            k,
            1.0,
        );
    }
}

/// Ours against faer's: every entry of the packed matrix, and the upper triangle of every
/// block of the factors. A check of the layout (the same reflectors in the same places), not
/// of accuracy: the reflectors are a forward quantity, and two reductions that sum in another
/// order differ by more than the backward error where a step is ill-conditioned (up to
/// `10 tol(n)` here); accuracy is [`assert_backward_stable`]'s.
fn compare<T: Sample>(ours: &Packed<T>, faer: &Packed<T>, label: &str) {
    let (m, n) = (faer.a.nrows(), faer.a.ncols());
    let scale = (0..m)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .map(|(i, j)| T::err(faer.a[(i, j)], zero()))
        .fold(1.0f64, f64::max);
    let tol = T::tol(m.max(n)) * 10.0;
    for j in 0..n {
        for i in 0..m {
            close(
                ours.a[(i, j)],
                faer.a[(i, j)],
                scale,
                tol,
                &format!("{label}: a[{i}, {j}]"),
            );
        }
    }
    for (name, x, y) in [("hl", &ours.hl, &faer.hl), ("hr", &ours.hr, &faer.hr)] {
        let bs = y.nrows();
        for j in 0..y.ncols() {
            let block = j / bs * bs;
            for i in 0..bs.min(j - block + 1) {
                close(
                    x[(i, j)],
                    y[(i, j)],
                    scale.max(1.0),
                    tol,
                    &format!("{label}: {name}[{i}, {j}]"),
                );
            }
        }
    }
}

const SHAPES: [(usize, usize); 11] = [
    (3, 3),
    (5, 3),
    (3, 5),
    (40, 40),
    (70, 33),
    (33, 70),
    (130, 97),
    (97, 130),
    (150, 150),
    // Three bands of rows on a team of three (f64 and c64 only: in single precision a head
    // of rounding size can take the other sign in one reduction, and both are right).
    (300, 260),
    (260, 300),
];

fn matches_faer<T: Sample>(shapes: usize) {
    for &(m, n) in &SHAPES[..shapes] {
        let a = mat::<T>(m, n, 3.0);
        let reference = faer_reference(&a);
        let check = |exec: &dyn Executor, force: bool| {
            let p = ours(&a, exec, force);
            if m >= n {
                assert_backward_stable(&a, &p, &format!("{m}x{n}"));
            }
            compare(&p, &reference, &format!("{m}x{n}"));
        };
        team_executors(check);
        plain_tokens(check);
    }
    // Columns already reduced (an infinite tau, no reflection): a diagonal matrix and one with
    // zero columns.
    let diag = Mat::from_fn(
        64,
        48,
        |i, j| {
            if i == j { T::sample(i, j, 5.0) } else { zero() }
        },
    );
    let mut holes = mat::<T>(80, 64, 7.0);
    for j in [0, 5, 6, 40] {
        for i in 0..80 {
            holes[(i, j)] = zero();
        }
    }
    let team = sample::team(2);
    compare(
        &ours(&diag, &team, true),
        &faer_reference(&diag),
        "diagonal",
    );
    // Rank-deficient: the steps after a bidiagonal entry of rounding size reduce noise, whose
    // reflectors depend on the rounding, so the bidiagonal is checked by its singular values,
    // against those of `A`.
    let x = ours(&holes, &team, true);
    assert_backward_stable(&holes, &x, "zero columns");
    assert_backward_stable(&diag, &ours(&diag, &team, true), "diagonal");
    let b = Mat::from_fn(64, 64, |i, j| {
        if j == i || j == i + 1 {
            x.a[(i, j)]
        } else {
            zero()
        }
    });
    let (sb, sa) = (
        b.singular_values().unwrap(),
        holes.singular_values().unwrap(),
    );
    let abs = |x: &T::Real| T::err(from_real::<T>(x), zero());
    // Weyl: a backward error E moves each singular value by at most ||E||_2 <= ||E||_F.
    let bound = backward_bound::<T>(80, norm(holes.as_ref()));
    for (p, q) in sb.iter().zip(&sa) {
        let (p, q) = (abs(p), abs(q));
        assert!(
            (p - q).abs() <= bound,
            "zero columns: singular value {p} against {q} (bound {bound:e})"
        );
    }
}

#[test]
fn matches_faer_f64() {
    matches_faer::<f64>(SHAPES.len());
}

#[test]
fn matches_faer_f32() {
    matches_faer::<f32>(9);
}

#[test]
fn matches_faer_c64() {
    matches_faer::<c64>(SHAPES.len());
}

#[test]
fn matches_faer_c32() {
    matches_faer::<c32>(9);
}

/// Forced on a team of two, the steps' two passes run as sections of two (the panels' updates
/// too, `bidiag::tests`; here the call's watch may take them to the caller when the tests
/// around it keep the member busy); the gate keeps a small call on faer's serial reduction.
#[test]
fn passes_run_on_the_team() {
    let team = sample::team(2);
    let a = mat::<f64>(200, 150, 9.0);
    let (_, seen) = teamalg::kernels::sections::collect(|| ours(&a, &team, true));
    for site in ["bidiag/left", "bidiag/right"] {
        assert!(
            seen.iter().any(|s| s.site == site && s.width == 2),
            "{site}"
        );
    }
    let small = mat::<f64>(8, 8, 9.0);
    let (_, seen) = teamalg::kernels::sections::collect(|| ours(&small, &team, false));
    assert!(seen.is_empty());
}

/// Teams of four and eight (oversubscribed here) share out a step's columns in as many chunks
/// and give faer's reduction to rounding, backward stable.
#[test]
fn wide_teams_match_faer() {
    for w in [4, 8] {
        let team = sample::team(w);
        for (m, n) in [(300, 260), (520, 520)] {
            let a = mat::<f64>(m, n, 3.0);
            let (p, seen) = teamalg::kernels::sections::collect(|| ours(&a, &team, true));
            assert!(
                seen.iter().any(|s| s.site == "bidiag/left" && s.width == w),
                "{m}x{n} at {w}"
            );
            assert_backward_stable(&a, &p, &format!("{m}x{n} at {w}"));
            compare(&p, &faer_reference(&a), &format!("{m}x{n} at {w}"));
        }
    }
}
