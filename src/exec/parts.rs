//! A kernel's region on a token: its parts as a team section (with barriers), as the jobs of a
//! fork on a plain token (no barrier), or one after another on a serial token; and its chunks,
//! claimed one at a time by whichever participant is free.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use teamalg_kernels::par::Part;

use super::Exec;
use crate::runtime::team::dispatch::{run_on, Shares};
use crate::runtime::team::section::Participant;
use crate::runtime::pool_shared::PoolShared;

/// Chunks per participant of a kernel region on a plain token (`Exec::chunk_count`): with four,
/// a helper that falls a whole chunk behind costs the region a quarter of a share at most.
pub(crate) const CHUNKS_PER_HELPER: usize = 4;

/// Runs a kernel's `width` parts one after another on the calling thread, without a barrier.
pub(crate) fn run_parts_serially(width: usize, f: &(dyn Fn(Part<'_>) + Sync)) {
    for i in 0..width {
        f(Part::new(i, width, None));
    }
}

impl Exec<'_> {
    /// Runs `f` on `width` participants (at most the budget) for a kernel: a section on a team
    /// token (with barriers), jobs of a fork on a plain token (no barrier: participants are
    /// not guaranteed to run at once), inline on a serial token.
    pub(crate) fn run_parts(&self, width: usize, f: &(dyn Fn(Part<'_>) + Sync)) {
        let width = width.clamp(1, self.budget());
        if let Some((pool, members, claim)) = self.team_members() {
            let job = |p: Participant<'_>| {
                let meet = || p.barrier();
                f(Part::new(p.index(), p.width(), Some(&meet)));
            };
            if run_on(
                Some(pool),
                &members[..width - 1],
                claim,
                &job,
                Shares::Independent,
            )
            .is_err()
            {
                // The team leads a section already: the parts run here, one after another.
                run_parts_serially(width, f);
            }
            return;
        }
        match self.parallel_pool().filter(|_| width > 1) {
            None => run_parts_serially(width, f),
            Some(pool) => {
                let job = |i: usize| f(Part::new(i, width, None));
                self.run_fork_width(pool, width, width, pool.live, &job);
            }
        }
    }

    /// How many chunks a kernel's `width`-wide region is cut into on this token
    /// (`Executor::run_chunks`): one per participant on a serial token and on a team token of
    /// a quiet pool (its members run at once), [`CHUNKS_PER_HELPER`] per participant on a
    /// team token while its pool's sections lose time to late members (`Live::contended`)
    /// and on a plain token, whose helpers are idle workers that may fall behind on a busy
    /// host.
    pub(crate) fn chunk_count(&self, width: usize) -> usize {
        let width = width.clamp(1, self.budget());
        match (self.team_members(), self.parallel_pool()) {
            _ if width < 2 => width,
            (Some((pool, _, _)), _) => team_chunks(pool, width),
            (None, Some(_)) => width * CHUNKS_PER_HELPER,
            (None, None) => width,
        }
    }

    /// `Executor::run_chunks_of`: the chunks are claimed one at a time by whichever
    /// participant is free, so one that falls behind leaves its chunks to the others: on a
    /// plain token they are the jobs of one fork (the caller and at most `width - 1`
    /// helpers); on a team token the participants of one section claim them from a counter.
    pub(crate) fn run_chunks_claimed(
        &self,
        width: usize,
        n: usize,
        f: &(dyn Fn(usize, usize) + Sync),
    ) {
        let width = width.clamp(1, self.budget());
        if width < 2 || n < 2 {
            return (0..n).for_each(|c| f(c, n));
        }
        if self.team_members().is_some() {
            // Relaxed: a chunk's data is published by the section's join, not by the claim.
            let next = AtomicUsize::new(0);
            return self.run_parts(width, &|_: Part<'_>| loop {
                let c = next.fetch_add(1, Relaxed);
                if c >= n {
                    break;
                }
                f(c, n);
            });
        }
        match self.parallel_pool() {
            Some(pool) => {
                let job = |c: usize| f(c, n);
                self.run_fork_width(pool, n, width, pool.live, &job);
            }
            None => (0..n).for_each(|c| f(c, n)),
        }
    }
}

/// Chunks of a `width`-wide region on a team of `pool`: one per participant, or
/// [`CHUNKS_PER_HELPER`] per participant while the pool's sections lose time to late members
/// (a member the OS has descheduled then holds up one small chunk, not a whole share).
pub(crate) fn team_chunks(pool: &PoolShared, width: usize) -> usize {
    if pool.contended() {
        width * CHUNKS_PER_HELPER
    } else {
        width
    }
}
