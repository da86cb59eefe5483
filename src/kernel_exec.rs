//! The kernels' executor contract (`teamalg_kernels::par::Executor`) for teamalg's tokens and
//! teams, so one kernel code runs serially, on a plain token or on a team.

use std::time::Duration;

use teamalg_gates::Model;
use teamalg_kernels::par::{Executor, Part};

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use crate::exec::Exec;
use crate::runtime::worker::PoolShared;
use crate::runtime::team::dispatch::{run_on, Shares};
use crate::runtime::team::section::Participant;
use crate::team::{Team, TeamExec};

impl Executor for Exec<'_> {
    fn width(&self) -> usize {
        self.budget()
    }

    fn dispatch_cost(&self, width: usize) -> Duration {
        Exec::dispatch_cost(self, width)
    }

    fn model(&self) -> &Model {
        Exec::model(self)
    }

    fn run(&self, width: usize, f: &(dyn Fn(Part<'_>) + Sync)) {
        self.run_parts(width, f);
    }

    fn warm(&self, width: usize) {
        Exec::warm(self, width);
    }

    fn rest(&self) {
        crate::runtime::team::dispatch::rest();
    }

    fn has_barrier(&self) -> bool {
        self.kind() == Some(teamalg_gates::DispatchKind::Team) || self.budget() == 1
    }

    fn run_chunks_of(&self, width: usize, n: usize, f: &(dyn Fn(usize, usize) + Sync)) {
        self.run_chunks_claimed(width, n, f);
    }

    fn chunks(&self, width: usize) -> usize {
        self.chunk_count(width)
    }

    fn wake_cost(&self) -> Duration {
        Exec::wake_cost(self)
    }

    fn lateness(&self) -> Duration {
        Exec::lateness(self)
    }
}

impl Executor for TeamExec<'_> {
    fn width(&self) -> usize {
        TeamExec::width(self)
    }

    fn dispatch_cost(&self, width: usize) -> Duration {
        TeamExec::dispatch_cost(self, width)
    }

    fn model(&self) -> &Model {
        TeamExec::model(self)
    }

    fn run(&self, width: usize, f: &(dyn Fn(Part<'_>) + Sync)) {
        self.token().limit(width).run_parts(width, f);
    }

    fn warm(&self, width: usize) {
        self.token().warm(width);
    }

    fn rest(&self) {
        crate::runtime::team::dispatch::rest();
    }

    fn wake_cost(&self) -> Duration {
        TeamExec::wake_cost(self)
    }

    fn lateness(&self) -> Duration {
        TeamExec::lateness(self)
    }

    fn run_chunks_of(&self, width: usize, n: usize, f: &(dyn Fn(usize, usize) + Sync)) {
        self.token().limit(width).run_chunks_claimed(width, n, f);
    }

    fn chunks(&self, width: usize) -> usize {
        self.token().chunk_count(width)
    }

    fn has_barrier(&self) -> bool {
        true
    }
}

/// A held team runs kernels as its leader: each region takes the team's token for its section
/// when no other thread holds it. It never waits: where the team is busy (another thread holds
/// its token, or this thread does, or this thread is one of its members inside a section), the
/// region runs its parts one after another on the calling thread, and `width` says 1 up front
/// where that is known.
impl Executor for Team {
    fn width(&self) -> usize {
        if self.led_by_this_thread() || self.is_member_thread() {
            1
        } else {
            Team::width(self)
        }
    }

    fn dispatch_cost(&self, width: usize) -> Duration {
        if Executor::width(self) == 1 {
            return Duration::MAX;
        }
        Team::dispatch_cost(self, width)
    }

    fn model(&self) -> &Model {
        Team::model(self)
    }

    fn run(&self, width: usize, f: &(dyn Fn(Part<'_>) + Sync)) {
        if width > 1 && !self.is_member_thread() {
            if let Ok(token) = self.try_exec(width) {
                return token.run_parts(width, f);
            }
        }
        run_parts_serially(width.max(1), f);
    }

    fn has_barrier(&self) -> bool {
        false // a busy team runs the parts one after another
    }

    fn run_chunks_of(&self, width: usize, n: usize, f: &(dyn Fn(usize, usize) + Sync)) {
        if width > 1 && !self.is_member_thread() {
            if let Ok(token) = self.try_exec(width) {
                return token.run_chunks_claimed(width, n, f);
            }
        }
        (0..n).for_each(|c| f(c, n));
    }

    fn chunks(&self, width: usize) -> usize {
        match Executor::width(self) {
            1 => width.max(1),
            w => team_chunks(self.shared_pool(), width.clamp(1, w)),
        }
    }

    fn warm(&self, width: usize) {
        Team::warm(self, width);
    }

    fn rest(&self) {
        Team::rest(self);
    }

    fn wake_cost(&self) -> Duration {
        if Executor::width(self) == 1 {
            return Duration::ZERO;
        }
        Team::wake_cost(self)
    }

    fn lateness(&self) -> Duration {
        if Executor::width(self) == 1 {
            return Duration::ZERO;
        }
        Team::lateness(self)
    }
}

/// Chunks per participant of a kernel region on a plain token (`Exec::chunk_count`): with four,
/// a helper that falls a whole chunk behind costs the region a quarter of a share at most.
pub(crate) const CHUNKS_PER_HELPER: usize = 4;

/// Runs a kernel's `width` parts one after another on the calling thread, without a barrier.
pub(crate) fn run_parts_serially(width: usize, f: &(dyn Fn(Part<'_>) + Sync)) {
    for i in 0..width {
        f(Part::new(i, width, None));
    }
}

/// How a plain or team token runs a kernel's parts: the kernels' `Part` is converted here.
impl Exec<'_> {
    /// Runs `f` on `width` participants (at most the budget) for a kernel: a section on a team
    /// token (with barriers), jobs of a batch on a plain token (no barrier: participants are
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
                self.run_batch_width(pool, width, width, pool.live, &job);
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
    /// plain token they are the jobs of one batch (the caller and at most `width - 1`
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
                self.run_batch_width(pool, n, width, pool.live, &job);
            }
            None => (0..n).for_each(|c| f(c, n)),
        }
    }
}

/// Chunks of a `width`-wide region on a team of `pool`: one per participant, or
/// [`CHUNKS_PER_HELPER`] per participant while the pool's sections lose time to late members
/// (a member the OS has descheduled then holds up one small chunk, not a whole share).
fn team_chunks(pool: &PoolShared, width: usize) -> usize {
    if pool.contended() {
        width * CHUNKS_PER_HELPER
    } else {
        width
    }
}
