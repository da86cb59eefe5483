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
/// while another thread leads). On the thread that already leads it through a token, the team
/// is serial (width 1): its members belong to that token.
impl Executor for Team {
    fn width(&self) -> usize {
        if self.led_by_this_thread() {
            1
        } else {
            Team::width(self)
        }
    }

    fn dispatch_cost(&self, width: usize) -> Duration {
        if self.led_by_this_thread() {
            return Duration::MAX;
        }
        Team::dispatch_cost(self, width)
    }

    fn run(&self, width: usize, f: &(dyn Fn(Part<'_>) + Sync)) {
        if width <= 1 || self.led_by_this_thread() {
            for i in 0..width.max(1) {
                f(Part::new(i, width.max(1), None));
            }
            return;
        }
        self.exec(width).run_parts(width, f);
    }

    fn has_barrier(&self) -> bool {
        !self.led_by_this_thread()
    }

    fn warm(&self, width: usize) {
        Team::warm(self, width);
    }
}
