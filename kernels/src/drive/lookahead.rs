//! The one driver of the right-looking factorizations with lookahead (LU, Cholesky, QR).
//!
//! Each factorization feeds it three pieces of work: its first panel, the lead's work of a
//! section (update the next panel's columns and factor that panel) and the update of a chunk
//! of claimed columns. The driver owns everything around them, once: the warm-up of the
//! participants, the sections of the blocking levels (`levels.rs`), the gate before each later
//! section, the lead's mutex, the claims (`claims.rs`), the busy timing of the section
//! recorder (`sections.rs`) and the stop after a section whose lead failed. A participant that
//! falls behind (the lead factoring, a member on a CPU the OS gave to someone else) simply
//! claims less, so what balances a section is written here alone.
//!
//! The gate at entry and the serial fallback stay with each kernel: going serial means handing
//! the whole matrix to faer's serial kernel of that factorization, before any scratch is laid
//! out for sections. Design record: `docs/kernels.md`, "The lookahead driver".

use std::sync::Mutex;

use teamalg_gates::{ParThreshold, Scalar};

use crate::drive::levels::{Levels, Panel};
use crate::exec::claims::{Claims, MIN_COLS};
use crate::exec::gate::{self, Region};
use crate::exec::par::{Executor, Part};
use crate::exec::sections::{self, Busy};

/// A blocked right-looking factorization, as the driver runs it after the gate at entry said
/// it goes parallel.
pub(crate) trait Factorization {
    /// The kernel's name in traces and section records (`"lu"`).
    const SITE: &'static str;
    /// What stops the factorization after a section (Cholesky's failing pivot).
    type Error;
    /// What the lead (participant 0) alone writes during a section: the next panel's
    /// findings. The driver holds it behind a mutex, so the section stays `Sync`.
    type Lead<'s>: Send
    where
        Self: 's;
    /// The section's shared work.
    type Step<'s>: Step<Self::Lead<'s>>
    where
        Self: 's;

    /// Factors the first panel, on the calling thread, before the first section.
    fn first_panel(&mut self) -> Result<(), Self::Error>;

    /// The gate's region of section `p` (after the first, whose width is the call's); `None`
    /// when it has nothing to share.
    fn region(&self, p: &Panel) -> Option<Region>;

    /// Work on the calling thread before section `p` (LU's swaps of a wide panel's source).
    fn before(&mut self, _p: &Panel) {}

    /// Section `p`'s work and its lead's state, borrowed for the section.
    fn section(&mut self, p: &Panel) -> (Self::Step<'_>, Self::Lead<'_>);

    /// After each section: the error its lead found, which ends the factorization.
    fn after(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }

    /// After the last section (LU's last panel's swaps to the columns left of it).
    fn finish(&mut self) {}
}

/// The shared work of one section: what each participant runs.
pub(crate) trait Step<L>: Sync {
    /// Participant `i` of `width`'s own work before it claims (LU's swaps of its share of the
    /// columns left of the panel).
    fn own(&self, _i: usize, _width: usize) {}

    /// The lookahead, on participant 0 when the section has a next panel: update the next
    /// panel's columns, then factor it.
    fn lead(&self, lead: &mut L);

    /// Participant `i` updates the claimed target columns `c0..c1` (counted from the first
    /// column after the panel, `Panel::k2`).
    fn update(&self, i: usize, c0: usize, c1: usize);
}

/// Runs the factorization `f` in the sections of `levels` on `exec`: the first section on
/// `w0` participants (the call's width, decided at entry), each later one on what the gate
/// says, at most `max_width`. Returns the first error a section's [`Factorization::after`]
/// reports, at the end of that section.
pub(crate) fn drive<T: Scalar, F: Factorization>(
    exec: &(impl Executor + ?Sized),
    f: &mut F,
    levels: &Levels,
    w0: usize,
    threshold: Option<ParThreshold>,
    max_width: usize,
) -> Result<(), F::Error> {
    exec.warm(w0);
    f.first_panel()?;
    for p in levels.sections() {
        f.before(&p);
        let w = if p.k == 0 {
            w0
        } else {
            f.region(&p)
                .map_or(1, |r| gate::width::<T>(exec, r, threshold))
                .min(max_width)
        };
        {
            let (step, lead) = f.section(&p);
            let lead = Mutex::new(lead);
            let claims = Claims::new(p.b2, p.end - p.k2, w, MIN_COLS);
            let busy = Busy::default();
            let body = |part: Part<'_>| {
                let i = part.index();
                busy.time(i, || {
                    step.own(i, part.width());
                    if i == 0 && p.b2 > 0 {
                        step.lead(&mut lead.lock().unwrap_or_else(|e| e.into_inner()));
                    }
                    while let Some((c0, c1)) = claims.claim() {
                        step.update(i, c0, c1);
                    }
                })
            };
            sections::run(exec, F::SITE, p.k, w, &busy, &body);
        }
        f.after()?;
    }
    f.finish();
    Ok(())
}
