//! A caller's join on its plain fork: the staged wait, serving its own pool meanwhile, and the
//! guard that settles the fork even when the caller unwinds.

use std::time::Duration;

use crate::runtime::counters;
use crate::runtime::ledger;
use crate::runtime::parker::{self, Parker};
use crate::runtime::plain::fork::Fork;
use crate::runtime::sync::{fence, Ordering::SeqCst};
use crate::runtime::wait::{join_after_wake, wait_staged, Waiter, THROTTLED_SPIN_POLLS};
use crate::runtime::pool_shared::{current_worker, PoolShared};

/// A caller's wait for its fork to settle. A worker keeps serving its own pool meanwhile.
pub(crate) struct JoinWait<'a, 'b> {
    pub(crate) fork: &'a Fork<'b>,
    pub(crate) parker: &'static Parker,
    /// Whether the caller woke a sleeping worker for this fork (then it naps, not spins).
    pub(crate) woke: bool,
    /// An `install` whose owner claims nothing: the pool it waits on, so it can take its job
    /// back when no worker of that pool can serve the queue (see `take_back_if_stuck`).
    pub(crate) install: Option<&'a PoolShared>,
}

/// How often an `install` owner that sleeps looks whether any worker could still take its job.
const INSTALL_CHECK: Duration = Duration::from_millis(1);

impl JoinWait<'_, '_> {
    /// An `install` whose job no worker has claimed while every slot of its pool is reserved
    /// (team members and `external`/`broadcast` reservations serve no queue; nested inside
    /// such a scope the caller would wait for ever) runs the job itself: it unlinks the fork
    /// and claims the job, which the fork protocol lets exactly one of it and a worker do.
    fn take_back_if_stuck(&self, pool: &PoolShared) {
        if !self.fork.settled() && !self.fork.claimed() && !pool.can_serve_queue() {
            pool.queue.unlink(self.fork);
            self.fork.run_jobs();
        }
    }
}

impl Waiter for JoinWait<'_, '_> {
    #[inline]
    fn ready(&mut self) -> bool {
        if self.fork.settled() {
            return true;
        }
        if let Some((pool, k)) = current_worker() {
            if pool.queue.has_work() {
                // A waiting parent holds no slot while it serves other work.
                ledger::exit(self.fork.root);
                pool.serve_queue_once(k);
                ledger::enter(self.fork.root);
            }
        }
        self.fork.settled()
    }

    fn sleep(&mut self) {
        counters::record_join_sleep();
        let own = current_worker();
        if let Some((pool, k)) = own {
            // Announce: new work in our own pool wakes us too (the fence pairs with the one
            // in `wake_idle`, as in `Slot::sleep`).
            pool.slots[k].expect_sleeper(&pool.sleepers);
            fence(SeqCst);
        }
        if !self.ready() {
            if let Some(pool) = self.install {
                self.parker.park_timeout(INSTALL_CHECK);
                self.take_back_if_stuck(pool);
            } else if self.woke {
                let fork = self.fork;
                join_after_wake(self.parker, || fork.settled());
            } else {
                self.parker.park();
            }
        }
        if let Some((pool, k)) = own {
            pool.slots[k].take_sleeper(&pool.sleepers);
        }
    }
}

/// Joins a fork the caller owns: unlinks it, then waits until it is settled. Runs on drop, so
/// the fork is settled before its stack frame goes away even if the caller unwinds.
pub(crate) struct Settle<'a, 'b> {
    pub(crate) pool: &'a PoolShared,
    pub(crate) fork: &'a Fork<'b>,
    pub(crate) woke: bool,
    /// Unlink before waiting (a fork whose owner works on it); `install` leaves it to the
    /// worker that takes its only job.
    pub(crate) unlink: bool,
}

impl Drop for Settle<'_, '_> {
    fn drop(&mut self) {
        if self.unlink {
            self.pool.queue.unlink(self.fork);
        }
        let polls = if self.woke {
            THROTTLED_SPIN_POLLS
        } else {
            self.pool.polls()
        };
        let mut join = JoinWait {
            fork: self.fork,
            parker: parker::current(),
            woke: self.woke,
            install: (!self.unlink).then_some(self.pool),
        };
        wait_staged(polls, &mut join);
    }
}
