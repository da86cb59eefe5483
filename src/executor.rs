//! The adapter: the kernels' executor contract (`teamalg_kernels::par::Executor`) on
//! teamalg's token ([`Exec`]), team token ([`TeamExec`]) and held team ([`Team`]), so one
//! kernel code runs serially, on a plain token or on a team. Each method only picks the token
//! and passes the region on to it (`exec/parts.rs`); a section never comes back here.

use std::time::Duration;

use teamalg_gates::{Contention, Model};
use teamalg_kernels::par::{answer_from, Answer, Executor, Part, Reads};

use crate::exec::parts::{run_parts_serially, team_chunks};
use crate::exec::Exec;
use crate::team::{Team, TeamExec};

// SAFETY: the rules of `Executor`'s safety section hold:
// 1. `run` is `run_parts`: the width is clamped to `1..=budget`; a team token runs one section
//    whose roster has each index `0..width` once and joins it before returning (or, when the
//    team is busy, runs the parts one after another on the caller); a plain token runs jobs
//    `0..width` of one fork, each once, and waits for the fork; a serial token runs the parts
//    in order. A panic in a part is resumed after the join.
// 2. `run_chunks_of` is `run_chunks_claimed`: each chunk `0..n` is taken once, from a counter
//    (`fetch_add` hands each value to one participant) or as one job of a fork, or in order
//    on the caller, and returns after the join.
// 3. The only barrier handed to a part is the team section's, which meets every participant.
unsafe impl Executor for Exec<'_> {
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

    fn contention(&self, estimate: Duration) -> Contention {
        Exec::contention(self, estimate)
    }

    fn probe(&self) {
        Exec::probe(self);
    }

    fn cpus(&self) -> Option<usize> {
        Exec::cpus(self)
    }
}

// SAFETY: `run` and `run_chunks_of` are the team token's `Exec` methods, limited to `width`:
// the rules hold as argued for `Exec` above.
unsafe impl Executor for TeamExec<'_> {
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

    fn contention(&self, estimate: Duration) -> Contention {
        self.token().contention(estimate)
    }

    fn probe(&self) {
        self.token().probe();
    }

    fn cpus(&self) -> Option<usize> {
        self.token().cpus()
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
// SAFETY: where the team's token can be had, `run` and `run_chunks_of` are its `Exec` methods
// (argued above); otherwise the parts `0..max(width, 1)` or the chunks `0..n` run once each, in
// order, on the caller, with no barrier.
unsafe impl Executor for Team {
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

    fn contention(&self, estimate: Duration) -> Contention {
        if Executor::width(self) == 1 {
            return Contention::NONE;
        }
        Team::contention(self, estimate)
    }

    fn probe(&self) {
        if Executor::width(self) > 1 && crate::runtime::contention::signal().probe_due() {
            Team::warm(self, Team::width(self));
        }
    }

    fn cpus(&self) -> Option<usize> {
        let pool = self.shared_pool();
        pool.live.map(|_| pool.usable_cpus)
    }

    // One answer: the team's width (which asks whether this thread leads it or is one of its
    // members) is read once, not again by each piece.
    fn question(
        &self,
        weigh: &dyn Fn(&Model) -> (Duration, bool),
        gave_up: bool,
        budget_of: &dyn Fn(usize, usize) -> usize,
    ) -> Answer<'_> {
        let model = Team::model(self);
        let weighed = weigh(model);
        let width = Executor::width(self);
        if width == 1 {
            // What the pieces answer for a busy team: no budget, nothing asleep, no view.
            let reads = Reads {
                cpus: || None,
                contention: |_| Contention::NONE,
                wake: || Duration::ZERO,
            };
            return answer_from(model, width, weighed, gave_up, budget_of, reads);
        }
        let pool = self.shared_pool();
        let reads = Reads {
            cpus: || pool.live.map(|_| pool.usable_cpus),
            contention: |estimate| Team::contention(self, estimate),
            wake: || Team::wake_cost(self),
        };
        answer_from(model, width, weighed, gave_up, budget_of, reads)
    }
}
