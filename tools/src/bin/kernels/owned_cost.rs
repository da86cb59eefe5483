//! `--owned-cost`: what the owned facade forms cost beside the scratch forms.

use std::cell::RefCell;
use std::time::Duration;

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::Mat;
use teamalg::linalg::{self, Options};
use teamalg_tools::tour::team::held_team;

use crate::cases::{re, spd};
use crate::rounds::pairs;

/// `--owned-cost`: per family and size (f64), the owned facade form (`Lu::new`, `Svd::new_thin`,
/// `singular_values`, ...) against the `_with_scratch` form with scratch and outputs the
/// caller holds, alternated call by call on a held team of `w`; prints both medians and the
/// median ratio owned / scratch. A factorization's scratch arm copies `A` into held storage
/// first, in the timed part: a caller who keeps `A` pays that copy, as the owned form does.
pub(crate) fn run(w: usize, sizes: &[usize]) {
    let team = held_team(w);
    let o = Options::new();
    println!("owned forms against scratch forms, held team of {w}, f64; times in us, medians; ratio = owned / scratch\n");
    println!(
        "{:<12} {:>5} {:>11} {:>11} {:>7}",
        "kernel", "n", "scratch", "owned", "ratio"
    );
    let line = |name: &str, n: usize, (ts, to, r): (f64, f64, f64)| {
        println!(
            "{name:<12} {n:>5} {:>11.1} {:>11.1} {r:>7.3}",
            ts * 1e6,
            to * 1e6
        );
    };
    for &n in sizes {
        let a = Mat::from_fn(n, n, re);
        let h = spd(n, re);
        let budget = Duration::from_millis(1500);
        let work = RefCell::new(Mat::<f64>::zeros(n, n));
        let none = || {};

        let mut buf = MemBuffer::new(linalg::lu_scratch::<f64>(n, n));
        let buf_lu = RefCell::new(&mut buf);
        let scratch = || {
            let mut x = work.borrow_mut();
            x.copy_from(&a);
            let mut b = buf_lu.borrow_mut();
            drop(linalg::lu_with_scratch(x.as_mut(), &team, &o, MemStack::new(&mut b)).unwrap());
        };
        let owned = || drop(linalg::Lu::new(&a, &team).unwrap());
        line("lu", n, pairs(none, scratch, owned, budget));

        let mut buf = MemBuffer::new(linalg::cholesky_scratch::<f64>(n));
        let buf_ch = RefCell::new(&mut buf);
        let scratch = || {
            let mut x = work.borrow_mut();
            x.copy_from(&h);
            let mut b = buf_ch.borrow_mut();
            let st = MemStack::new(&mut b);
            drop(linalg::cholesky_with_scratch(x.as_mut(), &team, &o, st).unwrap());
        };
        let owned = || drop(linalg::Cholesky::new(&h, &team).unwrap());
        line("cholesky", n, pairs(none, scratch, owned, budget));

        let mut buf = MemBuffer::new(linalg::qr_scratch::<f64>(n, n, w));
        let buf_qr = RefCell::new(&mut buf);
        let scratch = || {
            let mut x = work.borrow_mut();
            x.copy_from(&a);
            let mut b = buf_qr.borrow_mut();
            drop(linalg::qr_with_scratch(x.as_mut(), &team, &o, MemStack::new(&mut b)).unwrap());
        };
        let owned = || drop(linalg::Qr::new(&a, &team).unwrap());
        line("qr", n, pairs(none, scratch, owned, budget));

        let mut buf = MemBuffer::new(linalg::col_piv_qr_scratch::<f64>(n, n));
        let buf_cp = RefCell::new(&mut buf);
        let scratch = || {
            let mut x = work.borrow_mut();
            x.copy_from(&a);
            let mut b = buf_cp.borrow_mut();
            let st = MemStack::new(&mut b);
            drop(linalg::col_piv_qr_with_scratch(x.as_mut(), &team, &o, st).unwrap());
        };
        let owned = || drop(linalg::ColPivQr::new(&a, &team).unwrap());
        line("col_piv_qr", n, pairs(none, scratch, owned, budget));

        for vectors in [true, false] {
            let mut buf = MemBuffer::new(linalg::svd_scratch::<f64>(n, n, vectors));
            let held = RefCell::new((&mut buf, vec![0.0; n], Mat::zeros(n, n), Mat::zeros(n, n)));
            let scratch = || {
                let (b, s, u, v) = &mut *held.borrow_mut();
                let (u, v) = match vectors {
                    true => (Some(u.as_mut()), Some(v.as_mut())),
                    false => (None, None),
                };
                let st = MemStack::new(b);
                linalg::svd_into_with_scratch(a.as_ref(), s, u, v, &team, &o, st).unwrap();
            };
            let owned = || match vectors {
                true => drop(linalg::Svd::new_thin(&a, &team).unwrap()),
                false => drop(linalg::singular_values(&a, &team).unwrap()),
            };
            let name = if vectors { "svd" } else { "svd values" };
            line(name, n, pairs(none, scratch, owned, budget));
        }

        for vectors in [true, false] {
            let mut buf = MemBuffer::new(linalg::self_adjoint_eigen_scratch::<f64>(n, vectors));
            let held = RefCell::new((&mut buf, vec![0.0; n], Mat::zeros(n, n)));
            let scratch = || {
                let (b, ww, u) = &mut *held.borrow_mut();
                let u = vectors.then(|| u.as_mut());
                let st = MemStack::new(b);
                linalg::self_adjoint_eigen_into_with_scratch(h.as_ref(), ww, u, &team, &o, st)
                    .unwrap();
            };
            let owned = || match vectors {
                true => drop(linalg::SelfAdjointEigen::new(&h, &team).unwrap()),
                false => drop(linalg::self_adjoint_eigenvalues(&h, &team).unwrap()),
            };
            let name = if vectors { "evd" } else { "evd values" };
            line(name, n, pairs(none, scratch, owned, budget));
        }
    }
}
