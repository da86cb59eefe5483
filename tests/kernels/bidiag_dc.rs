//! The bidiagonal divide and conquer: `B = U diag(s) V^T` with `U` and `V` orthogonal to
//! `30 eps n`, its values against the bidiagonal QR's (and the Sturm oracle's, in norm), on
//! random, graded, rank-deficient, clustered, glued and scaled bidiagonals, at the leaf's edge
//! and above, on every executor (the top tear forced parallel or not).

use faer::Mat;
use faer::dyn_stack::{MemBuffer, MemStack};
use teamalg::gates::ParThreshold;
use teamalg::kernels::bidiag_dc::{Divide, LEAF, solve, solve_scratch};
use teamalg::kernels::bidiag_svd::bidiag_svd;
use teamalg::kernels::gemm::GemmParams;
use teamalg::kernels::par::{Executor, Seq};

use super::sample;
use sample::{every_executor, val};

fn bidiagonal(d: &[f64], e: &[f64]) -> Mat<f64> {
    let n = d.len();
    Mat::from_fn(n, n, |i, j| {
        if i == j {
            d[i]
        } else if j == i + 1 {
            e[i]
        } else {
            0.0
        }
    })
}

fn qr_values(d: &[f64], e: &[f64]) -> Vec<f64> {
    let (mut d, mut e) = (d.to_vec(), e.to_vec());
    bidiag_svd::<f64>(&mut d, &mut e, None, None, &Seq, Default::default()).unwrap();
    d
}

/// Runs the divide and conquer on `exec` (its top tear on `width` participants, its GEMMs
/// forced parallel when `force`) and checks the factorization, the orthogonality and the values.
fn check(d: &[f64], e: &[f64], exec: &dyn Executor, width: usize, force: bool, what: &str) {
    let n = d.len();
    let mut s = vec![0.0; n];
    let mut u = Mat::<f64>::zeros(n, n);
    let mut v = Mat::<f64>::zeros(n, n);
    let divide = Divide {
        width,
        gemm: GemmParams {
            threshold: force.then_some(ParThreshold::Fixed(0)),
        },
    };
    let mut buf = MemBuffer::new(solve_scratch::<f64>(n));
    let stack = MemStack::new(&mut buf);
    solve((d, e), &mut s, u.as_mut(), v.as_mut(), divide, exec, stack).unwrap();
    let b = bidiagonal(d, e);
    let norm = b.norm_l2().max(f64::MIN_POSITIVE);
    let tol = 30.0 * f64::EPSILON * n as f64;
    let sigma = Mat::from_fn(n, n, |i, j| if i == j { s[i] } else { 0.0 });
    let res = (&u * &sigma * v.transpose() - &b).norm_l2() / norm;
    assert!(res <= tol, "{what} n {n}: residual {res:e}");
    for q in [&u, &v] {
        let orth = (q.transpose() * q - Mat::<f64>::identity(n, n)).norm_l2();
        assert!(orth <= tol, "{what} n {n}: orthogonality {orth:e}");
    }
    assert!(
        s.windows(2).all(|w| w[0] >= w[1]) && s.iter().all(|&x| x >= 0.0),
        "{what} n {n}: values not non-negative and non-increasing"
    );
    let want = qr_values(d, e);
    let err = s
        .iter()
        .zip(&want)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(
        err <= tol * norm,
        "{what} n {n}: values differ from the QR's by {err:e}"
    );
}

fn random(n: usize, seed: f64) -> (Vec<f64>, Vec<f64>) {
    let d = (0..n).map(|i| val(i, 0, seed)).collect();
    let e = (0..n - 1).map(|i| val(i, 1, seed)).collect();
    (d, e)
}

fn graded(n: usize, orders: f64, seed: f64) -> (Vec<f64>, Vec<f64>) {
    let scale = |i: usize| 10f64.powf(-orders * i as f64 / (n - 1) as f64);
    let (d, e) = random(n, seed);
    (
        d.iter()
            .enumerate()
            .map(|(i, x)| scale(i) * (1.5 + x))
            .collect(),
        e.iter()
            .enumerate()
            .map(|(i, x)| scale(i) * (1.5 + x))
            .collect(),
    )
}

/// The hard inputs at order `n`.
fn cases(n: usize) -> Vec<(&'static str, Vec<f64>, Vec<f64>)> {
    let (rd, re) = random(n, 3.0);
    let mut out = vec![("random", rd.clone(), re.clone())];
    let (gd, ge) = graded(n, 30.0, 5.0);
    out.push(("graded", gd, ge));
    // Rank-deficient: every fifth diagonal entry zero.
    let zd = rd
        .iter()
        .enumerate()
        .map(|(i, &x)| if i % 5 == 2 { 0.0 } else { x })
        .collect();
    out.push(("rank-deficient", zd, re.clone()));
    // Clustered: the identity with tiny superdiagonal entries (every value near 1).
    let ce = re.iter().map(|x| 1e-13 * x).collect();
    out.push(("clustered", vec![1.0; n], ce));
    // Glued: two copies of one bidiagonal joined by a tiny entry (pairs of close values).
    let h = n / 2;
    let (hd, he) = random(n - h, 7.0);
    let gd: Vec<f64> = hd[..h].iter().chain(&hd).copied().collect();
    let mut ge: Vec<f64> = he[..h - 1].to_vec();
    ge.push(1e-14);
    ge.extend(&he);
    out.push(("glued", gd, ge));
    // A diagonal matrix (every z entry deflates) and one with repeated values.
    out.push(("diagonal", rd.clone(), vec![0.0; n - 1]));
    out.push(("ones", vec![1.0; n], vec![1.0; n - 1]));
    for (name, scale) in [("tiny", 1e-300), ("huge", 1e300)] {
        out.push((
            name,
            rd.iter().map(|x| x * scale).collect(),
            re.iter().map(|x| x * scale).collect(),
        ));
    }
    out
}

#[test]
fn hard_bidiagonals_at_the_leaf_edge_and_above() {
    for n in [1, 2, 3, LEAF, LEAF + 1, 2 * LEAF + 1, 100, 257] {
        if n < 3 {
            let (d, e) = random(n.max(1), 1.0);
            check(&d, &e[..n - 1], &Seq, 1, false, "small");
            continue;
        }
        for (what, d, e) in cases(n) {
            check(&d, &e, &Seq, 1, false, what);
        }
    }
}

#[test]
fn every_executor_solves_with_the_top_tear_parallel() {
    let cases = cases(200);
    let run = |exec: &dyn Executor, force: bool| {
        for (what, d, e) in &cases {
            check(d, e, exec, 2, force, what);
        }
    };
    every_executor(run);
}

/// Wider than two, a block from order 512 solves its two blocks one after the other, each torn
/// again with its merge on the team: at order 600 on four, each block of 300 runs its own
/// section of halves (one section at width 2, for the whole matrix).
#[test]
fn a_wide_team_tears_below_the_top() {
    let team = sample::team(4);
    for (what, d, e) in cases(600) {
        let ((), seen) =
            teamalg::kernels::sections::collect(|| check(&d, &e, &team, 4, true, what));
        let halves = seen.iter().filter(|s| s.site == "svd/halves").count();
        assert_eq!(halves, 2, "{what}: {halves} sections of halves");
    }
    // Two wide: one tear on the team, as before.
    let team = sample::team(2);
    let (d, e) = random(600, 3.0);
    let ((), seen) = teamalg::kernels::sections::collect(|| check(&d, &e, &team, 2, true, "two"));
    assert_eq!(seen.iter().filter(|s| s.site == "svd/halves").count(), 1);
}

/// A NaN or an infinity anywhere in the bidiagonal is refused before anything is written (it
/// once reached the sorts, which may panic on an order that is not total).
#[test]
fn non_finite_bidiagonals_are_refused() {
    use teamalg::kernels::bidiag_svd::BidiagSvdError;
    let n = 2 * LEAF + 1;
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for on_d in [true, false] {
            let (mut d, mut e) = random(n, 2.0);
            if on_d {
                d[n / 2] = bad;
            } else {
                e[n / 3] = bad;
            }
            let (mut s, mut u, mut v) = (vec![7.0; n], Mat::zeros(n, n), Mat::zeros(n, n));
            let mut buf = MemBuffer::new(solve_scratch::<f64>(n));
            let divide = Divide {
                width: 1,
                gemm: GemmParams::default(),
            };
            let r = solve(
                (&d, &e),
                &mut s,
                u.as_mut(),
                v.as_mut(),
                divide,
                &Seq,
                MemStack::new(&mut buf),
            );
            assert_eq!(r, Err(BidiagSvdError::NotFinite));
            assert!(s.iter().all(|&x| x == 7.0), "written before the refusal");
        }
    }
}
