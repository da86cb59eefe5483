//! Many independent problems in one call: products, triangular solves, LU and Cholesky with
//! their solves, QR least squares, the SVD and the self-adjoint EVD (`docs/batch.md`).
//!
//! A batch takes its problems as slices of faer views, one entry per problem, of one size or
//! of many. It writes each result into the caller's storage and each problem's outcome into
//! `status` (one `Result` per problem). One singular, non-finite or misshapen problem gets its
//! own typed error and the others are solved all the same. The call itself fails only when the
//! slices do not hold one entry per problem ([`LinalgError::BatchLength`], before anything is
//! read) or scratch cannot be allocated.
//!
//! How it goes parallel is the gate's choice ([`BatchRun`] reports it): small problems are
//! spread over the participants, each solved serially by faer's own kernel, claimed in chunks
//! so that uneven sizes balance; a problem large enough to be a participant's whole share,
//! whose single call pays going parallel, runs on the whole executor, one at a time. A spread
//! problem's result is bit for bit that of faer's serial call (`Par::Seq`, default
//! parameters), whatever the width. Each participant reuses one buffer of scratch for all its
//! problems, from the keep the owned forms use, so a warm batch allocates nothing.
//!
//! ```
//! use faer::Mat;
//! use teamalg::linalg::{batch, LinalgError};
//! use teamalg::Pool;
//!
//! let team = Pool::builder().threads(2).build()?.into_team(2)?;
//! // 1000 systems of order 8, one of them singular.
//! let mut a: Vec<Mat<f64>> = (0..1000)
//!     .map(|k| Mat::from_fn(8, 8, |i, j| if i == j { 10.0 + k as f64 } else { 1.0 / (1 + i + j) as f64 }))
//!     .collect();
//! a[17] = Mat::zeros(8, 8);
//! let mut b: Vec<Mat<f64>> = (0..1000).map(|_| Mat::ones(8, 1)).collect();
//! let mut status = vec![Ok(()); 1000];
//!
//! let mut av: Vec<_> = a.iter_mut().map(|m| m.as_mut()).collect();
//! let mut bv: Vec<_> = b.iter_mut().map(|m| m.as_mut()).collect();
//! let run = batch::lu_solve(&mut av, &mut bv, &mut status, &team)?;
//! assert_eq!(run.failed, 1);
//! assert!(matches!(status[17], Err(LinalgError::Singular { .. })));
//! assert!(status.iter().enumerate().all(|(k, s)| k == 17 || s.is_ok()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use faer::dyn_stack::{MemStack, StackReq};
use std::sync::Mutex;
use std::time::Duration;

use teamalg_gates::{Family, Model};
use teamalg_kernels::batch::{Claims, Estimator, Plan, Tally};
use teamalg_kernels::call::{self, Call};
use teamalg_kernels::par::{Executor, Part};

use super::{scratch, Field, LinalgError, Options};

mod cholesky;
mod evd;
mod lu;
mod matmul;
mod operands;
mod qr;
mod slots;
mod svd;
mod systems;
mod triangular;

pub use cholesky::{cholesky_solve, cholesky_solve_with};
pub use evd::{self_adjoint_eigen, self_adjoint_eigen_with};
pub use operands::{BatchMut, BatchRef};
pub use lu::{lu_solve, lu_solve_with};
pub use matmul::{matmul, matmul_with};
pub use qr::{lstsq, lstsq_with};
pub use svd::{svd, svd_with};
pub use triangular::{solve_triangular, solve_triangular_with};

use operands::Shared;
use slots::Slots;

/// One problem's outcome.
pub type Status = Result<(), LinalgError>;

/// What a batch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchRun {
    /// Problems in the batch.
    pub problems: usize,
    /// Problems whose `status` is an error.
    pub failed: usize,
    /// Problems run one at a time on the whole executor.
    pub on_team: usize,
    /// The width the other problems were spread over (1: on the caller, in order).
    pub spread_width: usize,
}

/// `slice` must hold one entry per problem.
fn length(
    op: &'static str,
    operand: &'static str,
    problems: usize,
    found: usize,
) -> Result<(), LinalgError> {
    if found == problems {
        return Ok(());
    }
    Err(LinalgError::BatchLength {
        op,
        operand,
        expected: problems,
        found,
    })
}

/// What a family gives the batch driver about its problems.
trait Problems<T: Field>: Sync {
    /// The operation, for errors (`"batch::lu_solve"`).
    const OP: &'static str;
    /// The spread region's site in the trace.
    const SITE: &'static str;
    /// The family whose threshold and gate apply.
    const FAMILY: Family;
    /// The family whose serial rate prices [`Problems::units`].
    const RATE: Family = Self::FAMILY;

    /// How many problems.
    fn count(&self) -> usize;
    /// What problem `i`'s units and scratch depend on (its operands' dimensions, `usize::MAX`
    /// for an operand not given, zeros after the last): problems of one key
    /// have the same [`Problems::units`] and [`Problems::scratch`], which the batch then reads
    /// once per run of equal keys.
    ///
    /// # Safety
    ///
    /// As [`Problems::serial`]: it reads problem `i`'s operands, which may be views the
    /// batch holds mutably, so the caller owns index `i` (it runs alone, or claimed `i`).
    unsafe fn key(&self, i: usize) -> [usize; 8];
    /// Problem `i`'s units of work, as its single call counts them (0 for one whose shapes
    /// are wrong: it fails at once).
    ///
    /// # Safety
    ///
    /// As [`Problems::key`].
    unsafe fn units(&self, i: usize) -> f64;
    /// The scratch problem `i` needs when solved serially.
    ///
    /// # Safety
    ///
    /// As [`Problems::key`].
    unsafe fn scratch(&self, i: usize) -> StackReq;
    /// Solves problem `i` serially with `stack` (at least [`Problems::scratch`]).
    ///
    /// # Safety
    ///
    /// The caller owns index `i`: no other call for `i` runs at the same time.
    unsafe fn serial(&self, i: usize, stack: &mut MemStack) -> Status;
    /// Solves problem `i` on the whole of `exec`.
    ///
    /// # Safety
    ///
    /// As [`Problems::serial`].
    unsafe fn on_team(&self, i: usize, exec: &(impl Executor + ?Sized)) -> Status;
}

/// Runs a batch: the plan, the problems that go on the whole executor one at a time, then one
/// section in which the participants claim the others, each with one buffer of scratch.
fn drive<T: Field, P: Problems<T>>(
    problems: &P,
    status: &mut [Status],
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<BatchRun, LinalgError> {
    let count = problems.count();
    length(P::OP, "status", count, status.len())?;
    let model = exec.model();
    // One pass for the plan and the scratch; a second only when a problem may go on the team.
    // A run of problems of one shape reads their units, estimate and scratch once.
    let mut estimate = Estimator::<T>::new(model, P::RATE);
    let (mut all, mut req, mut last) = (Tally::default(), StackReq::EMPTY, None);
    for i in 0..count {
        // SAFETY: the sizing passes run on the caller before the section and before any
        // problem is solved: the caller owns every index.
        let (units, ns, r, new) = unsafe { size(problems, &mut estimate, i, &mut last) };
        all.add(units, ns);
        if new {
            req = req.or(r);
        }
    }
    let plan = Plan::new::<T>(
        exec,
        P::SITE,
        P::FAMILY,
        all,
        |plan| {
            let (mut rest, mut spread_req, mut last) = (Tally::default(), StackReq::EMPTY, None);
            for i in 0..count {
                // SAFETY: as the first sizing pass: on the caller, before the section.
                let (units, ns, r, _) = unsafe { size(problems, &mut estimate, i, &mut last) };
                if !plan.on_team(ns) {
                    rest.add(units, ns);
                    spread_req = spread_req.or(r);
                }
            }
            req = spread_req;
            rest
        },
        options.get(P::FAMILY),
    );
    let slots = Slots::new(status);
    // One watch for the whole batch (`teamalg_kernels::call`): the problems on the whole
    // executor and the spread add their gains and losses, and once they lost more than they
    // were to gain, the rest of the batch runs on the caller.
    let _batch = Call::open(exec, 1, Duration::ZERO, plan.forced);
    if plan.on_team > 0 {
        for i in 0..count {
            // SAFETY: one problem at a time, before the section: the caller owns every index.
            unsafe {
                if goes_on_team(problems, &plan, model, i) {
                    *slots.get(i) = problems.on_team(i, exec);
                }
            }
        }
    }
    let width = plan.spread_width;
    // The caller's buffer is taken before the section: when it cannot be had, nothing was
    // spread yet; a member that cannot have one claims nothing, and the others take its share.
    scratch::with(P::OP, req, |lead| {
        let work = |stack: &mut MemStack, claims: &Claims| {
            while let Some(range) = claims.claim() {
                for i in range {
                    // SAFETY: index `i` was claimed by this participant alone (`Claims`).
                    unsafe {
                        if !goes_on_team(problems, &plan, model, i) {
                            *slots.get(i) = problems.serial(i, stack);
                        }
                    }
                }
            }
        };
        let claims = if plan.contended {
            Claims::one_at_a_time(count)
        } else {
            Claims::new(count, width)
        };
        if width < 2 {
            work(lead, &claims);
            return;
        }
        let lead = Mutex::new(lead);
        // The spread is one section of the kernel execution layer: timed for the watch, and
        // on the caller alone once the batch gave up.
        let _call = Call::open(exec, width, plan.spread_gain, plan.forced);
        call::run(exec, width, &|part: Part<'_>| {
            if part.index() == 0 {
                // Only participant 0 takes it; a panic elsewhere cannot poison it.
                let mut lead = lead.lock().unwrap_or_else(|e| e.into_inner());
                work(&mut lead, &claims);
            } else {
                let _ = scratch::with(P::OP, req, |stack| work(stack, &claims));
            }
        });
    })?;
    Ok(BatchRun {
        problems: count,
        failed: status.iter().filter(|s| s.is_err()).count(),
        on_team: plan.on_team,
        spread_width: width,
    })
}

/// What the plan reads of a key's first problem: its units, estimate and scratch.
type Size = (f64, f64, StackReq);

/// Problem `i`'s units, estimated nanoseconds and scratch, and whether it starts a run of
/// problems of one key (whose scratch then counts once): a run of equal keys is read once,
/// through `last`.
///
/// # Safety
///
/// The caller owns index `i` (as [`Problems::key`]).
unsafe fn size<T: Field, P: Problems<T>>(
    problems: &P,
    estimate: &mut Estimator<'_, T>,
    i: usize,
    last: &mut Option<([usize; 8], Size)>,
) -> (f64, f64, StackReq, bool) {
    // SAFETY: the caller owns `i`.
    let key = unsafe { problems.key(i) };
    match *last {
        Some((k, (units, ns, req))) if k == key => (units, ns, req, false),
        _ => {
            // SAFETY: as above.
            let (units, req) = unsafe { (problems.units(i), problems.scratch(i)) };
            let ns = estimate.ns(units);
            *last = Some((key, (units, ns, req)));
            (units, ns, req, true)
        }
    }
}

/// Whether problem `i` goes on the whole executor.
///
/// # Safety
///
/// The caller owns index `i` (as [`Problems::units`]).
unsafe fn goes_on_team<T: Field, P: Problems<T>>(
    problems: &P,
    plan: &Plan,
    model: &Model,
    i: usize,
) -> bool {
    plan.on_team > 0 && {
        // SAFETY: the caller owns `i`.
        let units = unsafe { problems.units(i) };
        plan.on_team(Estimator::<T>::new(model, P::RATE).ns(units))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_length_error_names_the_operand() {
        let e = length("batch::lu_solve", "b", 3, 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            "batch::lu_solve: b has 2 entries, one per problem (3) expected"
        );
        assert!(length("batch::lu_solve", "b", 3, 3).is_ok());
    }
}
