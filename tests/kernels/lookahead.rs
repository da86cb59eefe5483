//! The lookahead driver that LU, Cholesky and QR share: which participant updates which
//! columns is decided at run time (claims), so the factors must not depend on it. The chunks'
//! bounds depend on the width alone (faer's products may round a column differently in a
//! chunk of another width), so at one width every executor and every run gives the same bits:
//! a team of 2, a plain token of 2, a token of 2 on a team of 3, and the same team again, for
//! every forced-parallel factorization, panels with and without a second blocking level.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::{Mat, c64};
use teamalg::gates::ParThreshold;
use teamalg::kernels::cholesky::{CholeskyParams, cholesky_in_place, cholesky_in_place_scratch};
use teamalg::kernels::lu::{LuInfo, LuParams, lu_in_place, lu_in_place_scratch};
use teamalg::kernels::par::Executor;
use teamalg::kernels::qr::{QrParams, qr_in_place, qr_in_place_scratch};
use teamalg::kernels::sections;
use teamalg::{Exec, Pool};

use super::sample;
use sample::{Sample, mat, spd, team};

const FORCE: Option<ParThreshold> = Some(ParThreshold::Fixed(0));

/// The bits of every entry, column by column (`f64` and `c64` both end in `f64` parts).
fn bits<T: Sample>(a: &Mat<T>) -> Vec<u64> {
    let mut out = Vec::new();
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            let x = a[(i, j)];
            // SAFETY: `T` is `f64` or `c64`, plain `f64` parts without padding.
            let parts = unsafe {
                std::slice::from_raw_parts(
                    &x as *const T as *const f64,
                    std::mem::size_of::<T>() / 8,
                )
            };
            out.extend(parts.iter().map(|p| p.to_bits()));
        }
    }
    out
}

/// What one executor produced: the bits of every output, LU's swaps and findings, and how
/// many parallel sections ran (so the comparison is not between serial runs).
struct Run {
    outputs: Vec<Vec<u64>>,
    pivots: Vec<(Vec<usize>, LuInfo)>,
    parallel: usize,
}

/// A forced LU, Cholesky and QR of a few shapes on `exec`.
fn run<T: Sample>(exec: &dyn Executor) -> Run {
    let mut out = Vec::new();
    let mut pivots = Vec::new();
    let ((), seen) = sections::collect(|| {
        for (m, n, bs, wide) in [(200, 200, 16, 0), (257, 130, 16, 0), (130, 257, 16, 48)] {
            let a = mat::<T>(m, n, 0.91);
            let mut f = a.clone();
            let mut swaps = vec![0; m.min(n)];
            let mut buf = MemBuffer::new(lu_in_place_scratch::<T>(m, n));
            let params = LuParams {
                block_size: bs,
                wide_size: wide,
                threshold: FORCE,
                ..LuParams::default()
            };
            let info = lu_in_place(
                f.as_mut(),
                &mut swaps,
                exec,
                params,
                MemStack::new(&mut buf),
            );
            out.push(bits(&f));
            pivots.push((swaps, info));

            let mut h = Mat::<T>::zeros(bs, m.min(n));
            let mut f = a.clone();
            let mut buf = MemBuffer::new(qr_in_place_scratch::<T>(m, n, bs, 3));
            let params = QrParams { threshold: FORCE };
            qr_in_place(
                f.as_mut(),
                h.as_mut(),
                exec,
                params,
                3,
                MemStack::new(&mut buf),
            );
            out.push(bits(&f));
            out.push(bits(&h));

            let mut s = spd::<T>(m, 0.37);
            let mut buf = MemBuffer::new(cholesky_in_place_scratch::<T>(m));
            let params = CholeskyParams {
                block_size: bs,
                wide_size: wide,
                threshold: FORCE,
            };
            cholesky_in_place(s.as_mut(), exec, params, MemStack::new(&mut buf)).unwrap();
            let lower = Mat::from_fn(m, m, |i, j| if i >= j { s[(i, j)] } else { T::one() });
            out.push(bits(&lower));
        }
    });
    Run {
        outputs: out,
        pivots,
        parallel: seen.iter().filter(|s| s.width > 1).count(),
    }
}

fn same_bits_everywhere<T: Sample>() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let two = team(2);
    let three = team(3);
    let token = Exec::new(&pool, 2).unwrap();
    let want = run::<T>(&two);
    assert!(want.parallel > 50, "parallel sections: {}", want.parallel);
    for (name, exec) in [
        (
            "a token of 2 on a team of 3",
            &three.exec(2) as &dyn Executor,
        ),
        ("a plain token of 2", &token),
        ("the same team again", &two),
    ] {
        let got = run::<T>(exec);
        assert_eq!(got.pivots, want.pivots, "LU pivots on {name}");
        for (k, (g, w)) in got.outputs.iter().zip(&want.outputs).enumerate() {
            let at = g.iter().zip(w).position(|(a, b)| a != b);
            assert_eq!(at, None, "output {k} on {name}: first differing entry");
        }
    }
}

#[test]
fn forced_factors_have_the_same_bits_on_every_executor_of_one_width_f64() {
    same_bits_everywhere::<f64>();
}

#[test]
fn forced_factors_have_the_same_bits_on_every_executor_of_one_width_c64() {
    same_bits_everywhere::<c64>();
}
