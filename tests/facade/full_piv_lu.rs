//! LU with full pivoting: `P A Q = L U` within the backward-error bound on every scalar type
//! and executor, `|L| <= 1`, faer's own factors on the serial path, one result on every width
//! of the parallel path, the rank of low-rank input, and its solves.

use faer::linalg::lu::full_pivoting::factor as faer_full;
use faer::{Mat, Par, c32, c64};
use teamalg::Exec;
use teamalg::gates::{Family, ParThreshold};
use teamalg::linalg::{FullPivLu, LinalgError, Options};

use super::sample;
use sample::{Sample, assert_backward, every_executor, mat, norm, team};

fn forced(on: bool) -> Options {
    if on {
        Options::new().threshold(Family::LuFullStep, ParThreshold::Fixed(0))
    } else {
        Options::new()
    }
}

fn case<T: Sample>() {
    every_executor(|exec, on| {
        for (m, n, r) in [
            (0, 0, 0),
            (1, 1, 1),
            (5, 3, 3),
            (3, 5, 3),
            (70, 70, 70),
            (80, 50, 20),
        ] {
            let a = if r < m.min(n) {
                mat::<T>(m, r, 0.3) * mat::<T>(r, n, 0.4)
            } else {
                mat::<T>(m, n, 0.3)
            };
            let f = FullPivLu::new_with(&a, exec, &forced(on)).unwrap();
            let what = format!("P A Q = L U, {m} x {n}");
            assert_backward::<T>(
                &what,
                (f.reconstruct() - &a).as_ref(),
                m.max(n),
                norm(a.as_ref()),
            );
            let l = f.l().to_mat();
            // The pivot is the largest in max(|re|, |im|): |l| <= 1, or sqrt(2) for complex.
            let most = if T::IS_REAL { 1.0 } else { 2f64.sqrt() };
            let l_max = sample::real_f64::<T>(l.norm_max());
            assert!(
                l_max <= most * (1.0 + 1e-6),
                "{what}: |L| = {l_max} > {most}"
            );
            assert_eq!(f.rank(None), r, "{what}: rank");
            if m == n && n > 0 {
                let b = mat::<T>(n, 2, 0.9);
                let x = f.solve(&b, exec).unwrap();
                let scale = norm(a.as_ref()) * norm(x.as_ref());
                assert_backward::<T>("A X = B", (&a * &x - &b).as_ref(), n, scale);
                let x = f.solve_adjoint(&b, exec).unwrap();
                let scale = norm(a.as_ref()) * norm(x.as_ref());
                assert_backward::<T>("A^H X = B", (a.adjoint() * &x - &b).as_ref(), n, scale);
            }
        }
    });
}

#[test]
fn full_pivoting_lu_factors_on_every_type_and_executor() {
    case::<f64>();
    case::<c64>();
    case::<f32>();
    case::<c32>();
}

#[test]
fn the_serial_path_is_faers() {
    let a = mat::<f64>(40, 30, 0.6);
    let f = FullPivLu::new(&a, &Exec::serial()).unwrap();
    let mut g = a.clone();
    let (mut rp, mut rpi, mut cp, mut cpi) = (vec![0; 40], vec![0; 40], vec![0; 30], vec![0; 30]);
    let mut buf = faer::dyn_stack::MemBuffer::new(faer_full::lu_in_place_scratch::<usize, f64>(
        40,
        30,
        Par::Seq,
        Default::default(),
    ));
    faer_full::lu_in_place(
        g.as_mut(),
        &mut rp,
        &mut rpi,
        &mut cp,
        &mut cpi,
        Par::Seq,
        faer::dyn_stack::MemStack::new(&mut buf),
        Default::default(),
    );
    assert!(f.factors() == g.as_ref());
    assert_eq!((f.p().arrays().0, f.q().arrays().0), (&rp[..], &cp[..]));
}

#[test]
fn the_parallel_path_gives_one_result_on_every_width() {
    let a = mat::<c64>(150, 140, 0.2);
    let two = FullPivLu::new_with(&a, &team(2), &forced(true)).unwrap();
    let three = FullPivLu::new_with(&a, &team(3), &forced(true)).unwrap();
    assert!(two.factors() == three.factors());
    assert_eq!(two.p().arrays().0, three.p().arrays().0);
}

#[test]
fn a_singular_matrix_is_factored_and_refused_by_the_solves() {
    let a = Mat::<f64>::from_fn(4, 4, |i, j| (i * 4 + j) as f64);
    let f = FullPivLu::new(&a, &Exec::serial()).unwrap();
    assert_eq!(f.rank(None), 2);
    let err = f
        .solve(&Mat::<f64>::ones(4, 1), &Exec::serial())
        .unwrap_err();
    // Its pivots after the second are rounding, not exactly zero: the solve refuses by rank.
    assert_eq!(
        err,
        LinalgError::RankDeficient {
            op: "solve",
            rank: 2,
            of: 4
        }
    );
    let exact = Mat::<f64>::from_fn(3, 3, |i, j| {
        if i == 2 || j == 2 {
            0.0
        } else {
            (i + j + 1) as f64
        }
    });
    let g = FullPivLu::new(&exact, &Exec::serial()).unwrap();
    assert!(g.is_singular());
    assert_eq!(g.slogdet().unwrap().1, f64::NEG_INFINITY);
}
