//! A fork of jobs on a plain token: queue, work, join.

use std::time::Instant;

use std::panic::resume_unwind;

use crate::runtime::join::Settle;
use crate::runtime::ledger;
use crate::runtime::live::{Live, Sample};
use crate::runtime::parker;
use crate::runtime::plain::fork::Fork;
use crate::runtime::pool_shared::PoolShared;

use super::Exec;

impl Exec<'_> {
    /// Queues `jobs` jobs, works on them, joins, and resumes a panic.
    pub(crate) fn run_fork(&self, pool: &PoolShared, jobs: usize, job: &(dyn Fn(usize) + Sync)) {
        self.run_fork_width(pool, jobs, self.budget, None, job);
    }

    /// `run_fork` with at most `width` participants (the caller and `width - 1` helpers).
    /// A kernel's region passes its pool's live view: the caller then times its own jobs and
    /// the join, and records the fork as a section (`live.rs`): late when it waited for a
    /// helper, or ran every job itself while helpers were asked for, beyond the allowance.
    pub(crate) fn run_fork_width(
        &self,
        pool: &PoolShared,
        jobs: usize,
        width: usize,
        live: Option<&Live>,
        job: &(dyn Fn(usize) + Sync),
    ) {
        let helpers = jobs.min(width.min(self.budget)) - 1;
        let root = if self.is_root { self.root } else { 0 };
        ledger::enter(root);
        let fork = Fork::new(jobs, helpers, parker::current(), job, self.root);
        // SAFETY: `settle` below unlinks the fork and waits until no helper holds it before
        // this frame (which owns `fork`) can end, also when unwinding.
        unsafe { pool.queue.push(&fork) };
        // Spinning idle workers will find the fork themselves. A wake missed because one of
        // them just went to sleep costs only parallelism: this caller runs unclaimed jobs.
        let woke = pool.wake_idle(helpers.saturating_sub(pool.spinning())) > 0;
        let start = live.map(|_| Instant::now());
        {
            let settle = Settle {
                pool,
                fork: &fork,
                woke,
                unlink: true,
            };
            let ran = fork.run_jobs();
            let own = start.map(|s| s.elapsed());
            drop(settle);
            if let (Some(live), Some(start), Some(own)) = (live, start, own) {
                live.record(Sample {
                    own,
                    wait: start.elapsed().saturating_sub(own),
                    stole: helpers > 0 && ran == jobs,
                    woken: woke,
                    width: helpers + 1,
                });
            }
        }
        ledger::exit(root);
        if let Some(p) = fork.take_panic() {
            resume_unwind(p);
        }
    }
}
