//! Where faer's general (non-symmetric) EVD with right eigenvectors spends its time, phase by
//! phase, serially and on rayon(2): the Hessenberg reduction (`hessenberg_in_place`), forming
//! `Z` from its reflectors, the Schur form without `Z` (the eigenvalues-only call, `evd_real`
//! without vectors, less the reduction; faer keeps its Schur routine private), and the rest
//! of the call with vectors (`Z` accumulated through the Schur iterations, the eigenvectors
//! from the Schur form and their back-transformation). The plan of the general EVD on the team starts from it
//! (`docs/general-evd.md`).
//!
//! ```text
//! evd_phases [SIZES...]     # default 256 512; f64, median of 5 calls per phase and arm
//! ```

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::{self, hessenberg};
use faer::{Mat, Par};
use std::time::Instant;

/// The median of `f`'s times over 5 calls after one untimed, in ms.
fn median(mut f: impl FnMut()) -> f64 {
    f();
    let mut t: Vec<f64> = (0..5)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[2]
}

fn phases(n: usize, par: Par) -> [f64; 4] {
    // A damped oscillator chain's companion-like matrix would do; a fixed pseudo-random one
    // keeps complex pairs and a spread spectrum.
    let a = Mat::<f64>::from_fn(n, n, |i, j| {
        let x = ((i * 7919 + j * 104_729) % 1_000_003) as f64 / 1_000_003.0;
        x - 0.5 + if i == j { 1.0 } else { 0.0 }
    });
    let bs = faer::linalg::qr::no_pivoting::factor::recommended_block_size::<f64>(n - 1, n - 1);
    let mut mem = MemBuffer::new(
        hessenberg::hessenberg_in_place_scratch::<f64>(n, bs, par, Default::default())
            .or(
                faer::linalg::householder::apply_block_householder_sequence_on_the_right_in_place_scratch::<f64>(
                    n - 1,
                    bs,
                    n - 1,
                ),
            )
            .or(evd::evd_scratch::<f64>(
                n,
                evd::ComputeEigenvectors::No,
                evd::ComputeEigenvectors::Yes,
                par,
                Default::default(),
            )),
    );
    let mut h = a.clone();
    let mut hh = Mat::<f64>::zeros(bs, n - 1);
    let hess = median(|| {
        h.copy_from(&a);
        hessenberg::hessenberg_in_place(
            h.as_mut(),
            hh.as_mut(),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        );
    });
    let reduced = h.clone();
    let mut z = Mat::<f64>::identity(n, n);
    let form = median(|| {
        z.fill(0.0);
        z.as_mut().diagonal_mut().fill(1.0);
        faer::linalg::householder::apply_block_householder_sequence_on_the_right_in_place_with_conj(
            reduced.as_ref().submatrix(1, 0, n - 1, n - 1),
            hh.as_ref(),
            faer::Conj::No,
            z.as_mut().submatrix_mut(1, 1, n - 1, n - 1),
            par,
            MemStack::new(&mut mem),
        );
    });
    let (mut re, mut im) = (Mat::<f64>::zeros(n, 1), Mat::<f64>::zeros(n, 1));
    let mut u = Mat::<f64>::zeros(n, n);
    let mut call = |vectors: bool| {
        evd::evd_real(
            a.as_ref(),
            re.as_mut().col_mut(0).as_diagonal_mut(),
            im.as_mut().col_mut(0).as_diagonal_mut(),
            None,
            vectors.then_some(u.as_mut()),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .expect("converged");
    };
    let values = median(|| call(false));
    let whole = median(|| call(true));
    [hess, form, values - hess, whole]
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|s| s.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![256, 512]
    } else {
        sizes
    };
    println!("faer's general EVD (f64, right vectors), ms, median of 5; share of the whole call");
    println!(
        "   n  arm        hessenberg      form Z         schur, no Z    rest (vectors)   whole"
    );
    for n in sizes {
        for (name, par) in [("serial", Par::Seq), ("rayon(2)", Par::rayon(2))] {
            let [h, f, s, w] = phases(n, par);
            let rest = (w - h - f - s).max(0.0);
            let pct = |x: f64| 100.0 * x / w;
            println!(
                "{n:4}  {name:9} {h:7.2} ({:2.0} %) {f:7.2} ({:2.0} %) {s:7.2} ({:2.0} %) {rest:7.2} ({:2.0} %) {w:8.2}",
                pct(h),
                pct(f),
                pct(s),
                pct(rest)
            );
        }
    }
}
