//! Fingerprints of the facade's outputs: every family, `f64` and `c64`, a few sizes, on a
//! serial token, a plain token of 2 and a team of 2, every family forced to the executor's
//! width. One line per call: `family scalar n executor hash`, the hash of the `Debug` form of
//! every output (faer prints each entry in a form that reads back to the same bits).
//!
//! A change that must not change arithmetic (a move, a rename) is checked by running this
//! before and after it and comparing the files:
//!
//! ```text
//! TEAMALG_CONTENTION=off cargo run --release -p teamalg-tools --bin fingerprints > before.txt
//! ```
//!
//! At one width the parallel kernels' chunks depend on the width alone, so the lines are the
//! same from run to run on a quiet machine; a call that gave up midway (the bail-out) runs
//! its rest serially and may round differently, so run it twice and compare the stable lines.

use std::collections::hash_map::DefaultHasher;
use std::fmt::Debug;
use std::hash::{Hash, Hasher};

use faer::sparse::{SparseColMat, Triplet};
use faer::{c64, Accum, Mat, MatMut};
use teamalg::gates::{Family, ParThreshold};
use teamalg::kernels::par::Executor;
use teamalg::linalg::{
    self, batch, Cholesky, ColPivQr, Diag, Eigen, Field, FullPivLu, Lblt, Ldlt, Lu, Options, Qr,
    SelfAdjointEigen, SolveSide, Svd, SvdVectors, Triangle,
};
use teamalg::{Exec, Pool};

/// Every family forced to the executor's width from the first unit.
fn forced() -> Options {
    Family::ALL.into_iter().fold(Options::new(), |o, f| {
        o.threshold(f, ParThreshold::Fixed(0))
    })
}

/// A fixed, well-spread sample entry.
fn entry(i: usize, j: usize, salt: f64) -> f64 {
    let x = ((i * 7919 + j * 104_729) % 1009) as f64 / 1009.0;
    (x + salt).sin()
}

trait Sample: Field + Debug {
    const NAME: &'static str;
    fn at(i: usize, j: usize, salt: f64) -> Self;
    fn real(x: f64) -> Self;
    fn re(&self) -> f64;
}

impl Sample for f64 {
    const NAME: &'static str = "f64";
    fn at(i: usize, j: usize, salt: f64) -> Self {
        entry(i, j, salt)
    }
    fn real(x: f64) -> Self {
        x
    }
    fn re(&self) -> f64 {
        *self
    }
}

impl Sample for c64 {
    const NAME: &'static str = "c64";
    fn at(i: usize, j: usize, salt: f64) -> Self {
        c64::new(entry(i, j, salt), entry(j, i, salt + 0.5))
    }
    fn real(x: f64) -> Self {
        c64::new(x, 0.0)
    }
    fn re(&self) -> f64 {
        self.re
    }
}

fn mat<T: Sample>(m: usize, n: usize, salt: f64) -> Mat<T> {
    Mat::from_fn(m, n, |i, j| T::at(i, j, salt))
}

/// A Hermitian matrix (indefinite).
fn hermitian<T: Sample>(n: usize, salt: f64) -> Mat<T> {
    let a = mat::<T>(n, n, salt);
    Mat::from_fn(n, n, |i, j| {
        let x = a[(i.max(j), i.min(j))];
        if i == j {
            T::real(x.re())
        } else if i > j {
            x
        } else {
            faer::traits::math_utils::conj(&x)
        }
    })
}

/// A Hermitian positive definite matrix.
fn spd<T: Sample>(n: usize, salt: f64) -> Mat<T> {
    let h = hermitian::<T>(n, salt);
    Mat::from_fn(n, n, |i, j| {
        if i == j {
            h[(i, j)] + T::real(n as f64)
        } else {
            h[(i, j)]
        }
    })
}

fn hash(what: &impl Debug) -> u64 {
    let mut h = DefaultHasher::new();
    format!("{what:?}").hash(&mut h);
    h.finish()
}

fn line(family: &str, scalar: &str, n: usize, exec: &str, what: &impl Debug) {
    println!("{family}\t{scalar}\t{n}\t{exec}\t{:016x}", hash(what));
}

fn views<T>(v: &mut [Mat<T>]) -> Vec<MatMut<'_, T>> {
    v.iter_mut().map(|m| m.as_mut()).collect()
}

fn dense<T: Sample>(n: usize, exec: &dyn Executor, name: &str, o: &Options) {
    let s = T::NAME;
    let a = mat::<T>(n, n, 0.3);
    let b = mat::<T>(n, n, 0.7);
    let (h, p) = (hermitian::<T>(n, 0.25), spd::<T>(n, 0.15));
    let one = T::real(1.0);

    let mut c = Mat::<T>::zeros(n, n);
    linalg::matmul_with(&mut c, Accum::Replace, &a, &b, one, exec, o).unwrap();
    line("gemm", s, n, name, &c);

    let t = Mat::from_fn(n, n, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Less => T::real(0.0),
        std::cmp::Ordering::Equal => T::real(4.0),
        std::cmp::Ordering::Greater => a[(i, j)],
    });
    let mut x = b.clone();
    let (left, lower) = (SolveSide::Left, Triangle::Lower);
    linalg::solve_triangular_with(&t, &mut x, left, lower, Diag::NonUnit, exec, o).unwrap();
    line("trsm", s, n, name, &x);

    line("lu", s, n, name, &Lu::new_with(&a, exec, o).unwrap());
    line(
        "full_piv_lu",
        s,
        n,
        name,
        &FullPivLu::new_with(&a, exec, o).unwrap(),
    );
    line(
        "cholesky",
        s,
        n,
        name,
        &Cholesky::new_with(&p, exec, o).unwrap(),
    );
    line("ldlt", s, n, name, &Ldlt::new_with(&p, exec, o).unwrap());
    line("lblt", s, n, name, &Lblt::new_with(&h, exec, o).unwrap());
    line("qr", s, n, name, &Qr::new_with(&a, exec, o).unwrap());
    line(
        "col_piv_qr",
        s,
        n,
        name,
        &ColPivQr::new_with(&a, exec, o).unwrap(),
    );
}

fn spectral<T: Sample>(n: usize, exec: &dyn Executor, name: &str, o: &Options) {
    let s = T::NAME;
    let a = mat::<T>(n + n / 8, n, 0.55);
    let h = hermitian::<T>(n, 0.85);
    let svd = Svd::new_with(&a, SvdVectors::Thin, exec, o).unwrap();
    line("svd", s, n, name, &(svd.s(), svd.u(), svd.v()));
    line(
        "svd_values",
        s,
        n,
        name,
        &linalg::singular_values_with(&a, exec, o).unwrap(),
    );
    line(
        "evd",
        s,
        n,
        name,
        &SelfAdjointEigen::new_with(&h, exec, o).unwrap(),
    );
    let values = linalg::self_adjoint_eigenvalues_with(&h, exec, o).unwrap();
    line("evd_values", s, n, name, &values);
    let g = mat::<T>(n, n, 0.35);
    line("eigen", s, n, name, &Eigen::new_with(&g, exec, o).unwrap());
}

fn sparse<T: Sample>(n: usize, exec: &dyn Executor, name: &str, o: &Options) {
    let s = T::NAME;
    let triplets: Vec<_> = (0..n)
        .flat_map(|j| (0..6).map(move |k| (j, k)))
        .map(|(j, k)| {
            let i = (j * 31 + k * 977) % n;
            Triplet::new(i, j, T::at(i, j, 0.4 + k as f64))
        })
        .collect();
    let a = SparseColMat::<usize, T>::try_new_from_triplets(n, n, &triplets).unwrap();
    let b = mat::<T>(n, 64, 0.6);
    let mut c = Mat::<T>::zeros(n, 64);
    let one = T::real(1.0);
    linalg::sparse_dense_matmul_with(&mut c, Accum::Replace, a.as_ref(), &b, one, exec, o).unwrap();
    line("sparse_dense", s, n, name, &c);
    let p = linalg::sparse_sparse_matmul_with(a.as_ref(), a.as_ref(), one, exec, o).unwrap();
    line("sparse_sparse", s, n, name, &p);
}

fn batches<T: Sample>(n: usize, exec: &dyn Executor, name: &str, o: &Options) {
    let s = T::NAME;
    let count = 64;
    let a0: Vec<Mat<T>> = (0..count).map(|k| mat::<T>(n, n, k as f64)).collect();
    let p0: Vec<Mat<T>> = (0..count).map(|k| spd::<T>(n, k as f64)).collect();
    let b0: Vec<Mat<T>> = (0..count).map(|k| mat::<T>(n, 3, 0.5 + k as f64)).collect();
    let mut status = vec![Ok(()); count];

    let (mut a, mut b) = (a0.clone(), b0.clone());
    batch::lu_solve_with(&mut views(&mut a), &mut views(&mut b), &mut status, exec, o).unwrap();
    line("batch_lu", s, n, name, &(&a, &b));

    let (mut p, mut b) = (p0.clone(), b0.clone());
    batch::cholesky_solve_with(&mut views(&mut p), &mut views(&mut b), &mut status, exec, o)
        .unwrap();
    line("batch_cholesky", s, n, name, &(&p, &b));

    let (mut a, mut b) = (a0.clone(), b0.clone());
    batch::lstsq_with(&mut views(&mut a), &mut views(&mut b), &mut status, exec, o).unwrap();
    line("batch_lstsq", s, n, name, &(&a, &b));

    let mut c: Vec<Mat<T>> = (0..count).map(|_| Mat::zeros(n, 3)).collect();
    let a_ref: Vec<_> = a0.iter().map(|m| m.as_ref()).collect();
    let b_ref: Vec<_> = b0.iter().map(|m| m.as_ref()).collect();
    batch::matmul_with(
        &mut views(&mut c),
        Accum::Replace,
        &a_ref[..],
        &b_ref[..],
        T::real(1.0),
        &mut status,
        exec,
        o,
    )
    .unwrap();
    line("batch_matmul", s, n, name, &c);
}

fn main() {
    let pool = Pool::builder().threads(2).build().expect("pool");
    let team = Pool::builder()
        .threads(2)
        .build()
        .expect("pool")
        .into_team(2)
        .expect("team");
    let serial = Exec::serial();
    let token = Exec::new(&pool, 2).expect("token");
    let o = forced();
    let execs: [(&str, &dyn Executor); 3] =
        [("serial", &serial), ("plain2", &token), ("team2", &team)];
    for (name, exec) in execs {
        for n in [96, 256, 520] {
            dense::<f64>(n, exec, name, &o);
            dense::<c64>(n, exec, name, &o);
        }
        for n in [64, 200] {
            spectral::<f64>(n, exec, name, &o);
            spectral::<c64>(n, exec, name, &o);
        }
        for n in [500, 3000] {
            sparse::<f64>(n, exec, name, &o);
            sparse::<c64>(n, exec, name, &o);
        }
        for n in [8, 24] {
            batches::<f64>(n, exec, name, &o);
            batches::<c64>(n, exec, name, &o);
        }
    }
}
