//! The complex Schur form on its own: teamalg's multishift sweeps serially and on a held team
//! of 2, against faer's eigenvalues-only call less its Hessenberg reduction (faer keeps its
//! Schur routine private), on the same Hessenberg matrix. `docs/general-evd.md`.
//!
//! ```text
//! schur_phases [SIZES...] [--shifts S] [--window W]
//!     # default 256 512; c64, median of 5 calls per arm; S and W override the tables
//! ```

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::{self, hessenberg};
use faer::{c64, Mat, Par};
use std::time::Instant;
use teamalg::kernels::evd::general::{complex_evd, GeneralEvdParams};
use teamalg::kernels::evd::schur::{schur_in_place, SchurParams};
use teamalg::kernels::par::Seq;
use teamalg::Pool;

/// The median of `f`'s times over 5 calls after one untimed, in ms.
fn median(mut f: impl FnMut()) -> f64 {
    f();
    let t: Vec<f64> = (0..5)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    teamalg_tools::stats::median(&t)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse::<usize>().ok())
    };
    let params = SchurParams {
        shifts: flag("--shifts"),
        window: flag("--window"),
        ..SchurParams::default()
    };
    let sizes: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || !args[i - 1].starts_with("--"))
        .filter_map(|(_, s)| s.parse().ok())
        .filter(|&n: &usize| n >= 2)
        .collect();
    let sizes = if sizes.is_empty() {
        vec![256, 512]
    } else {
        sizes
    };
    let team = Pool::builder()
        .threads(2)
        .build()
        .expect("pool")
        .into_team(2)
        .expect("team");
    println!("c64, ms, median of 5: faer's whole EVD with vectors, its values-only call, its Hessenberg reduction, the");
    println!(
        "difference (faer's Schur, no Z); teamalg's Schur without and with Z, serial / team of 2"
    );
    for n in sizes {
        let a = Mat::<c64>::from_fn(n, n, |i, j| {
            let x = ((i * 7919 + j * 104_729) % 1_000_003) as f64 / 1_000_003.0;
            let y = ((i * 104_729 + j * 7919) % 999_983) as f64 / 999_983.0;
            c64::new(x - 0.5 + if i == j { 1.0 } else { 0.0 }, y - 0.5)
        });
        let bs = faer::linalg::qr::no_pivoting::factor::recommended_block_size::<c64>(n - 1, n - 1);
        let mut mem = MemBuffer::new(
            hessenberg::hessenberg_in_place_scratch::<c64>(n, bs, Par::Seq, Default::default()).or(
                evd::evd_scratch::<c64>(
                    n,
                    evd::ComputeEigenvectors::No,
                    evd::ComputeEigenvectors::No,
                    Par::Seq,
                    Default::default(),
                ),
            ),
        );
        let mut h = a.clone();
        let mut hh = Mat::<c64>::zeros(bs, n - 1);
        let hess = median(|| {
            h.copy_from(&a);
            hessenberg::hessenberg_in_place(
                h.as_mut(),
                hh.as_mut(),
                Par::Seq,
                MemStack::new(&mut mem),
                Default::default(),
            );
        });
        let reduced = h.clone();
        let mut w = Mat::<c64>::zeros(n, 1);
        let mut mem_v = MemBuffer::new(evd::evd_scratch::<c64>(
            n,
            evd::ComputeEigenvectors::No,
            evd::ComputeEigenvectors::Yes,
            Par::Seq,
            Default::default(),
        ));
        let mut vecs = Mat::<c64>::zeros(n, n);
        let whole = median(|| {
            evd::evd_cplx(
                a.as_ref(),
                w.as_mut().col_mut(0).as_diagonal_mut(),
                None,
                Some(vecs.as_mut()),
                Par::Seq,
                MemStack::new(&mut mem_v),
                Default::default(),
            )
            .expect("converged");
        });
        let values = median(|| {
            evd::evd_cplx(
                a.as_ref(),
                w.as_mut().col_mut(0).as_diagonal_mut(),
                None,
                None,
                Par::Seq,
                MemStack::new(&mut mem),
                Default::default(),
            )
            .expect("converged");
        });
        let mut t = reduced.clone();
        let mut z = Mat::<c64>::identity(n, n);
        let mut ours = |vectors: bool, on_team: bool| {
            median(|| {
                t.copy_from(&reduced);
                z.fill(c64::new(0.0, 0.0));
                z.as_mut().diagonal_mut().fill(c64::new(1.0, 0.0));
                let zv = vectors.then_some(z.as_mut());
                if on_team {
                    schur_in_place(t.as_mut(), zv, &team, params)
                } else {
                    schur_in_place(t.as_mut(), zv, &Seq, params)
                }
                .expect("converged");
            })
        };
        let (s1, s2) = (ours(false, false), ours(false, true));
        let (v1, v2) = (ours(true, false), ours(true, true));
        let mut wv = vec![c64::new(0.0, 0.0); n];
        let gp = GeneralEvdParams {
            schur: params,
            ..GeneralEvdParams::default()
        };
        let e1 = median(|| {
            complex_evd(a.as_ref(), &mut wv, Some(vecs.as_mut()), &Seq, gp).expect("converged")
        });
        let e2 = median(|| {
            complex_evd(a.as_ref(), &mut wv, Some(vecs.as_mut()), &team, gp).expect("converged")
        });

        println!(
            "{n:4}  faer whole {whole:7.2}  values {values:7.2}  hessenberg {hess:6.2}  schur {:7.2} | teamalg no Z {s1:7.2} / {s2:7.2}  with Z {v1:7.2} / {v2:7.2} | EVD {e1:7.2} / {e2:7.2} ({:.2} / {:.2} of faer's)",
            values - hess,
            e1 / whole,
            e2 / whole
        );
    }
}
