//! `--finite-check`: what the facade's finiteness check costs.

use std::cell::RefCell;
use std::time::Duration;

use faer::{Accum, Mat};
use teamalg::linalg::{self, Options};
use teamalg_tools::tour::team::held_team;

use crate::cases::{re, spd};
use crate::rounds::pairs;

/// `--finite-check`: what the facade's finiteness check costs. Per kernel and size, the facade
/// call with the check (the default) against the same call with `check_finite(false)`,
/// alternated call by call on a held team of `w`; prints both medians and the median ratio.
pub(crate) fn run(w: usize, sizes: &[usize]) {
    let team = held_team(w);
    let (on, off) = (Options::new(), Options::new().check_finite(false));
    println!("the finiteness check, held team of {w}; times in us, medians; ratio = checked / unchecked\n");
    println!(
        "{:<10} {:>5} {:>10} {:>10} {:>8}",
        "kernel", "n", "unchecked", "checked", "ratio"
    );
    for &n in sizes {
        let a = Mat::from_fn(n, n, re);
        let b = Mat::from_fn(n, n, |i, j| re(j, i));
        let spd = spd(n, re);
        let budget = Duration::from_millis(400);
        let c = RefCell::new(Mat::<f64>::zeros(n, n));
        let work = RefCell::new(a.clone());
        let mm = |o: &Options| {
            linalg::matmul_with(&mut *c.borrow_mut(), Accum::Replace, &a, &b, 1.0, &team, o)
                .unwrap()
        };
        let (t_off, t_on, r) = pairs(|| {}, || mm(&off), || mm(&on), budget);
        println!(
            "{:<10} {n:>5} {:>10.2} {:>10.2} {r:>8.3}",
            "gemm",
            t_off * 1e6,
            t_on * 1e6
        );
        let prep = || work.borrow_mut().copy_from(&a);
        let lu = |o: &Options| drop(linalg::lu_with(work.borrow_mut().as_mut(), &team, o).unwrap());
        let (t_off, t_on, r) = pairs(prep, || lu(&off), || lu(&on), budget);
        println!(
            "{:<10} {n:>5} {:>10.2} {:>10.2} {r:>8.3}",
            "lu",
            t_off * 1e6,
            t_on * 1e6
        );
        let prep = || work.borrow_mut().copy_from(&spd);
        let ch = |o: &Options| {
            drop(linalg::cholesky_with(work.borrow_mut().as_mut(), &team, o).unwrap())
        };
        let (t_off, t_on, r) = pairs(prep, || ch(&off), || ch(&on), budget);
        println!(
            "{:<10} {n:>5} {:>10.2} {:>10.2} {r:>8.3}",
            "cholesky",
            t_off * 1e6,
            t_on * 1e6
        );
    }
}
