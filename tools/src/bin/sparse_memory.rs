//! The sparse Cholesky's peak memory beside faer's: one numeric factorization per process (an
//! arm, the grid), after the matrix and its analysis are made, and the process's high water
//! mark (`VmHWM` of `/proc/self/status`) before and after it. Run each arm in its own process:
//!
//! ```text
//! sparse_memory faer 3 32; sparse_memory team 3 32; sparse_memory owned 3 32
//! sparse_memory lu-faer 3 30; sparse_memory lu-team 3 30
//! sparse_memory qr-faer 3 24; sparse_memory qr-team 3 24
//! ```
//!
//! `faer`: faer's `factorize_numeric_llt` with its values and scratch allocated for the call;
//! `team`: teamalg's kernel on a held team of 2, its values and scratch allocated for the call;
//! `owned`: the facade's `SparseCholesky::new_with_symbolic` on the team. The sparse LU of the
//! convection-diffusion operator of the same grid: `lu-faer` (faer's `factorize_numeric_lu`,
//! its factor and scratch allocated for the call) and `lu-team` (the facade's
//! `SparseLu::new_with_symbolic` on the team). The sparse QR of the smoothing least-squares
//! matrix of the grid (the kernel program's `smoothing`): `qr-faer` (faer's
//! `factorize_numeric_qr`, its values, indices and scratch allocated for the call) and
//! `qr-team` (the facade's `SparseQr::new_with_symbolic` on the team). A fourth argument `nd`
//! analyses the facade arms (`owned`, `lu-team`, `qr-team`) with METIS's nested dissection (a
//! build with the feature `metis`); faer's arms keep faer's own ordering:
//!
//! ```text
//! sparse_memory owned 3 32 nd; sparse_memory lu-team 3 30 nd; sparse_memory qr-team 3 24 nd
//! ```

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::{Par, Side};
use teamalg::kernels::sparse_cholesky::{llt_in_place, llt_in_place_scratch, Analysis};
use teamalg::linalg::{
    SparseCholesky, SparseLu, SparseOrdering, SparseQr, SymbolicCholesky, SymbolicLu, SymbolicQr,
};
use teamalg_tools::sparse_problems::{convection, laplacian, smoothing};

/// A held team of 2, made before the first reading.
fn team() -> teamalg::Team {
    teamalg::Pool::builder()
        .threads(2)
        .build()
        .expect("a pool")
        .into_team(2)
        .expect("a team")
}

/// Prints the high water mark's growth since `before` for one arm.
fn report(arm: &str, dim: u32, side: usize, before: u64) {
    let after = high_water();
    println!(
        "{arm} {dim}D {side}: high water {before} KiB before, {after} KiB after, {} KiB for the factorization",
        after.saturating_sub(before)
    );
}

/// The facade arms' ordering: nested dissection for `nd`, else the default.
fn ordering(nd: bool) -> SparseOrdering<'static> {
    if !nd {
        return SparseOrdering::Amd;
    }
    #[cfg(feature = "metis")]
    return SparseOrdering::NestedDissection;
    #[cfg(not(feature = "metis"))]
    {
        eprintln!("nd needs a build with the feature `metis`");
        std::process::exit(2)
    }
}

/// The high water mark of this process's resident memory, in KiB.
fn high_water() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// One LU arm: the analyses made first, then the factorization between two readings.
fn lu(arm: &str, dim: u32, side: usize, nd: bool) {
    let a = convection::<f64>(side, dim);
    let symbolic = SymbolicLu::new_ordered(a.symbolic(), ordering(nd)).expect("an analysis");
    let faer_symbolic =
        faer::sparse::linalg::lu::factorize_symbolic_lu(a.symbolic(), Default::default())
            .expect("faer's analysis");
    let team = team();
    let before = high_water();
    if arm == "lu-faer" {
        let mut numeric = faer::sparse::linalg::lu::NumericLu::new();
        let req = faer_symbolic.factorize_numeric_lu_scratch::<f64>(Par::Seq, Default::default());
        let mut mem = MemBuffer::new(req);
        let stack = MemStack::new(&mut mem);
        let r = faer_symbolic.factorize_numeric_lu(
            &mut numeric,
            a.as_ref(),
            Par::Seq,
            stack,
            Default::default(),
        );
        r.expect("nonsingular");
        std::hint::black_box(&numeric);
    } else {
        let lu = SparseLu::new_with_symbolic(&symbolic, a.as_ref(), &team);
        std::hint::black_box(lu.expect("nonsingular"));
    }
    report(arm, dim, side, before);
}

/// One QR arm: the analyses made first, then the factorization between two readings.
fn qr(arm: &str, dim: u32, side: usize, nd: bool) {
    let a = smoothing::<f64>(side, dim);
    let symbolic = SymbolicQr::new_ordered(a.symbolic(), ordering(nd)).expect("an analysis");
    let faer_symbolic =
        faer::sparse::linalg::qr::factorize_symbolic_qr(a.symbolic(), Default::default())
            .expect("faer's analysis");
    let team = team();
    let before = high_water();
    if arm == "qr-faer" {
        let sym = &faer_symbolic;
        let mut indices = vec![0usize; sym.len_idx()];
        let mut values = vec![0.0f64; sym.len_val()];
        let req = sym.factorize_numeric_qr_scratch::<f64>(Par::Seq, Default::default());
        let mut mem = MemBuffer::new(req);
        let stack = MemStack::new(&mut mem);
        let (idx, val) = (&mut indices, &mut values);
        sym.factorize_numeric_qr(idx, val, a.as_ref(), Par::Seq, stack, Default::default());
        std::hint::black_box((&indices, &values));
    } else {
        let qr = SparseQr::new_with_symbolic(&symbolic, a.as_ref(), &team);
        std::hint::black_box(qr.expect("a factor"));
    }
    report(arm, dim, side, before);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arm = args.get(1).map_or("faer", String::as_str).to_string();
    let dim: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    let side: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(32);
    let nd = args.get(4).is_some_and(|s| s == "nd");
    if arm.starts_with("lu-") {
        return lu(&arm, dim, side, nd);
    }
    if arm.starts_with("qr-") {
        return qr(&arm, dim, side, nd);
    }
    let a = laplacian::<f64>(side, dim);
    let symbolic = SymbolicCholesky::new_ordered(a.symbolic(), Side::Lower, ordering(nd))
        .expect("an analysis");
    let analysis = Analysis::new(a.symbolic(), Side::Lower).expect("an analysis");
    let team = team();
    let before = high_water();
    let sym = analysis.symbolic();
    match arm.as_str() {
        "faer" => {
            let mut values = vec![0.0f64; sym.len_val()];
            let req = sym.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default());
            let mut mem = MemBuffer::new(req);
            let stack = MemStack::new(&mut mem);
            let a = a.as_ref();
            let r = sym.factorize_numeric_llt(
                &mut values,
                a,
                Side::Lower,
                Default::default(),
                Par::Seq,
                stack,
                Default::default(),
            );
            r.expect("positive definite");
            std::hint::black_box(&values);
        }
        "team" => {
            let mut values = vec![0.0f64; sym.len_val()];
            let mut mem = MemBuffer::new(llt_in_place_scratch::<f64>(&analysis));
            let stack = MemStack::new(&mut mem);
            let p = Default::default();
            let a = a.as_ref();
            llt_in_place(&analysis, a, Side::Lower, &mut values, &team, p, stack)
                .expect("positive definite");
            std::hint::black_box(&values);
        }
        _ => {
            let chol = SparseCholesky::new_with_symbolic(&symbolic, a.as_ref(), &team);
            std::hint::black_box(chol.expect("positive definite"));
        }
    }
    report(&arm, dim, side, before);
}
