//! The kernels' executor contract (`teamalg_kernels::par::Executor`) for teamalg's tokens and
//! teams, so one kernel code runs serially, on a plain token or on a team.

use std::time::Duration;

use teamalg_kernels::par::{Executor, Part};

use crate::exec::Exec;
use crate::team::{Team, TeamExec};

impl Executor for Exec<'_> {
    fn width(&self) -> usize {
        self.budget()
    }

    fn dispatch_cost(&self, width: usize) -> Duration {
        Exec::dispatch_cost(self, width)
    }

    fn run(&self, width: usize, f: &(dyn Fn(Part<'_>) + Sync)) {
        self.run_parts(width, f);
    }

    fn warm(&self, width: usize) {
        Exec::warm(self, width);
    }

    fn has_barrier(&self) -> bool {
        self.kind() == Some(teamalg_gates::DispatchKind::Team) || self.budget() == 1
    }
}

impl Executor for TeamExec<'_> {
    fn width(&self) -> usize {
        TeamExec::width(self)
    }

    fn dispatch_cost(&self, width: usize) -> Duration {
        TeamExec::dispatch_cost(self, width)
    }

    fn run(&self, width: usize, f: &(dyn Fn(Part<'_>) + Sync)) {
        self.token().limit(width).run_parts(width, f);
    }

    fn warm(&self, width: usize) {
        self.token().warm(width);
    }

    fn has_barrier(&self) -> bool {
        true
    }
}

/// A held team runs kernels as its leader: each section claims the team's leadership (waiting
/// while another thread leads).
impl Executor for Team {
    fn width(&self) -> usize {
        Team::width(self)
    }

    fn dispatch_cost(&self, width: usize) -> Duration {
        self.exec(self.width()).dispatch_cost(width)
    }

    fn run(&self, width: usize, f: &(dyn Fn(Part<'_>) + Sync)) {
        self.exec(width).run_parts(width, f);
    }

    fn warm(&self, width: usize) {
        Team::warm(self, width);
    }

    fn has_barrier(&self) -> bool {
        true
    }
}
