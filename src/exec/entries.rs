//! The plain entries of a token: `fork`, `fork_sized`, `for_ranges`, `warm`, `broadcast`,
//! `external` and `install`.

use std::ops::Range;

use std::panic::resume_unwind;
use teamalg_kernels::par::part_start;

use crate::error::Refused;
use crate::runtime::join::Settle;
use crate::runtime::ledger;
use crate::runtime::parker;
use crate::runtime::plain::fork::Fork;
use crate::runtime::sync::{lock, Mutex};
use crate::runtime::sync::{AtomicUsize, Ordering::Relaxed};
use crate::runtime::team::dispatch::{run_on, slot_buffer, split_on, Release, Shares};
use crate::runtime::team::section::Participant;
use crate::runtime::pool_shared::PoolShared;

use super::budgets::{child_budget, sized_budgets};
use super::Exec;

impl<'a> Exec<'a> {
    /// Runs `f(i, child)` for every `i` in `0..jobs`, at most `budget` at once, and returns when
    /// all are done. Child tokens split the budget: with fewer jobs than slots each child gets an
    /// equal share (the remainder to the first), otherwise each gets one slot.
    ///
    /// A panic in any job cancels the jobs not yet started and resumes on the caller once the
    /// running ones are done; the pool stays usable.
    pub fn fork<F>(self, jobs: usize, f: F)
    where
        F: Fn(usize, Exec<'_>) + Sync,
    {
        if let (Some((pool, members, claim)), true) = (self.team_members(), jobs > 1) {
            return self.team_fork(pool, members, claim, jobs, None, &f);
        }
        match jobs {
            0 => {}
            1 => f(0, self),
            _ => match self.parallel_pool() {
                None => {
                    for i in 0..jobs {
                        f(i, self.serial_child());
                    }
                }
                Some(pool) => {
                    let budget = self.budget;
                    let job = |i: usize| f(i, self.child(pool, child_budget(budget, jobs, i)));
                    self.run_fork(pool, jobs, &job);
                }
            },
        }
    }

    /// Like [`fork`](Exec::fork), with the budget divided in proportion to `shares` (each child
    /// gets at least one slot; with more jobs than slots every child gets one).
    pub fn fork_sized<F>(self, shares: &[usize], f: F)
    where
        F: Fn(usize, Exec<'_>) + Sync,
    {
        let jobs = shares.len();
        if let (Some((pool, members, claim)), true) = (self.team_members(), jobs > 1) {
            return self.team_fork(pool, members, claim, jobs, Some(shares), &f);
        }
        if jobs <= 1 || self.parallel_pool().is_none() || jobs >= self.budget {
            return self.fork(jobs, f);
        }
        let pool = self.parallel_pool().expect("checked above");
        let mut stack = [0usize; 64];
        let mut heap = Vec::new();
        let budgets = slot_buffer(jobs, &mut stack, &mut heap);
        sized_budgets(self.budget, shares, budgets);
        let budgets = &*budgets;
        let job = |i: usize| f(i, self.child(pool, budgets[i]));
        self.run_fork(pool, jobs, &job);
    }

    /// `fork` / `fork_sized` on a team token: with at least as many jobs as participants, one
    /// section whose participants claim jobs (children get one slot each); with fewer, a split
    /// of the team into one child team per job.
    ///
    /// When the team is already leading a section (another thread shares the token, or this
    /// call is nested in one of the team's sections), the jobs run one after the other on the
    /// calling thread, as `fork` does on a budget of one.
    fn team_fork(
        &self,
        pool: &PoolShared,
        members: &[usize],
        claim: &AtomicUsize,
        jobs: usize,
        shares: Option<&[usize]>,
        f: &(dyn Fn(usize, Exec<'_>) + Sync),
    ) {
        let budget = self.budget;
        let ran = if jobs >= budget {
            let next = AtomicUsize::new(0);
            let job = |_: Participant<'_>| loop {
                let i = next.fetch_add(1, Relaxed);
                if i >= jobs {
                    return;
                }
                f(i, self.child(pool, 1));
            };
            run_on(Some(pool), members, claim, &job, Shares::AtOnce).is_ok()
        } else {
            let mut stack = [0usize; 64];
            let mut heap = Vec::new();
            let sizes = slot_buffer(jobs, &mut stack, &mut heap);
            match shares {
                Some(s) => sized_budgets(budget, s, sizes),
                None => {
                    for (i, size) in sizes.iter_mut().enumerate() {
                        *size = child_budget(budget, jobs, i);
                    }
                }
            }
            // The child budgets sum to the team's width, each at least 1.
            let child = |i: usize, group: &[usize], lead: &AtomicUsize| {
                f(i, Exec::for_team(Some(pool), group, None, lead))
            };
            split_on(Some(pool), members, claim, sizes, &child).is_ok()
        };
        if !ran {
            for i in 0..jobs {
                f(i, self.child(pool, 1));
            }
        }
    }

    /// Runs `f` over `0..len` split into at most `budget` contiguous ranges, each of at least
    /// `grain` elements (a `grain` of 0 counts as 1): a range shorter than `2 * grain` runs
    /// whole. An empty range runs nothing.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use teamalg::{Exec, Pool};
    ///
    /// let pool = Pool::builder().threads(3).build()?;
    /// let seen = Mutex::new(Vec::new());
    /// Exec::new(&pool, 3)?.for_ranges(7, 3, |r| seen.lock().unwrap().push(r));
    /// let mut seen = seen.into_inner().unwrap();
    /// seen.sort_by_key(|r| r.start);
    /// assert_eq!(seen, [0..3, 3..7]); // two ranges of at least 3, not three shorter ones
    /// # Ok::<(), teamalg::Error>(())
    /// ```
    pub fn for_ranges<F>(self, len: usize, grain: usize, f: F)
    where
        F: Fn(Range<usize>) + Sync,
    {
        if len == 0 {
            return;
        }
        let chunks = self.budget.min(len / grain.max(1)).max(1);
        if let (Some((pool, members, claim)), true) = (self.team_members(), chunks > 1) {
            let job = |p: Participant<'_>| {
                let i = p.index();
                f(part_start(i, len, chunks)..part_start(i + 1, len, chunks))
            };
            if run_on(
                Some(pool),
                &members[..chunks - 1],
                claim,
                &job,
                Shares::AtOnce,
            )
            .is_err()
            {
                f(0..len); // the team leads a section already: this call runs here
            }
            return;
        }
        match self.parallel_pool().filter(|_| chunks > 1) {
            None => f(0..len),
            Some(pool) => {
                let job =
                    |i: usize| f(part_start(i, len, chunks)..part_start(i + 1, len, chunks));
                self.run_fork(pool, chunks, &job);
            }
        }
    }

    /// Wakes the team members the next `width`-wide section would use, if they sleep, and
    /// returns how many it woke. A kernel calls this at entry, before its first serial step:
    /// waking a parked member costs 50 us to milliseconds on a small host, which the serial
    /// step then hides, and a woken member spins through the serial steps between sections.
    /// Tokens without members have nothing to wake.
    pub fn warm(&self, width: usize) -> usize {
        match self.team_members() {
            Some((pool, members, claim)) => {
                let n = width.clamp(1, self.budget) - 1;
                let team = claim as *const AtomicUsize as usize;
                pool.wake_members(&members[..n.min(members.len())], team)
            }
            None => 0,
        }
    }


    /// Runs `f(i)` for every `i` in `0..budget`, each on its own thread, all at once: the caller
    /// runs `f(0)` and idle workers, reserved for the call, run the others. Refuses when that
    /// cannot be guaranteed: on a fork child ([`Refused::Nested`]), when the caller is a worker
    /// of this pool ([`Refused::InPool`]), or when not enough workers are idle
    /// ([`Refused::Busy`]). A serial token or a budget of one runs `f(0)` inline.
    pub fn broadcast<F>(self, f: F) -> Result<(), Refused>
    where
        F: Fn(usize) + Sync,
    {
        let job = |p: Participant<'_>| f(p.index());
        if let Some((pool, members, claim)) = self.team_members() {
            // The team leads a section already: its members cannot all run at once now.
            return run_on(Some(pool), members, claim, &job, Shares::AtOnce)
                .map_err(|_| Refused::Busy);
        }
        let Some(pool) = self.parallel_pool() else {
            f(0);
            return Ok(());
        };
        if !self.is_root {
            return Err(Refused::Nested);
        }
        if pool.is_current_worker() {
            return Err(Refused::InPool);
        }
        let want = self.budget - 1;
        let mut slots = [0usize; 64];
        let mut many = Vec::new();
        let out = slot_buffer(want, &mut slots, &mut many);
        let got = pool.reserve_idle(want, out);
        let _release = Release(pool, &out[..got]);
        if got < want {
            return Err(Refused::Busy);
        }
        ledger::enter(self.root);
        // The slots are reserved for this call alone: its claim word is never contended.
        let claim = AtomicUsize::new(0);
        let ran = run_on(Some(pool), out, &claim, &job, Shares::AtOnce);
        ledger::exit(self.root);
        debug_assert!(ran.is_ok());
        Ok(())
    }

    /// Enters the pool once for an outside library that runs its own threads: holds up to
    /// `budget - 1` idle workers of this pool (they sleep, so they leave their CPUs to the
    /// library) and runs `f(width)` on the caller, where `width` is 1 plus the workers held.
    /// The library should use at most `width` threads. A serial token gives width 1.
    pub fn external<R>(self, f: impl FnOnce(usize) -> R) -> R {
        if self.team_members().is_some() {
            // The members are reserved already.
            return f(self.budget);
        }
        let Some(pool) = self.parallel_pool() else {
            return f(1);
        };
        let want = self.budget - 1;
        let mut slots = [0usize; 64];
        let mut many = Vec::new();
        let out = slot_buffer(want, &mut slots, &mut many);
        let got = pool.reserve_idle(want, out);
        let _release = Release(pool, &out[..got]);
        f(1 + got)
    }

    /// Runs `f` on a worker of the pool with a token of the same budget, and returns its
    /// result; from a worker of the same pool, a serial token or a shut-down pool it runs
    /// inline. Nested entries made inside `f` are in-pool entries, the cheapest kind.
    ///
    /// It never waits for ever: when no worker of the pool can take the job because every
    /// slot is reserved (team members, `external` or `broadcast`, for instance by scopes this
    /// call is nested in), `f` runs inline as well, with this token.
    pub fn install<R: Send>(self, f: impl FnOnce(Exec<'_>) -> R + Send) -> R {
        let pool = match self.shared() {
            Some(p)
                if !p.is_shut_down() && !p.is_current_worker() && self.team_members().is_none() =>
            {
                p
            }
            _ => return f(self),
        };
        if !pool.can_serve_queue() {
            // Every slot is reserved (by team or `external` scopes this call may be nested
            // in): no worker would take the job.
            return f(self);
        }
        let task = Mutex::new(Some(f));
        let result: Mutex<Option<R>> = Mutex::new(None);
        let budget = self.budget;
        let job = |_: usize| {
            let f = lock(&task).take().expect("an install job runs once");
            let r = f(self.child(pool, budget));
            *lock(&result) = Some(r);
        };
        let fork = Fork::new(1, 1, parker::current(), &job, self.root);
        // SAFETY: as in `run_fork`; the owner claims no job, so a worker must run it, and
        // `Settle` waits until one has.
        unsafe { pool.queue.push(&fork) };
        pool.wake_idle(1);
        // Not unlinked by us: the worker that attaches takes the only helper place, which
        // unlinks it.
        drop(Settle {
            pool,
            fork: &fork,
            woke: false,
            unlink: false,
        });
        if let Some(p) = fork.take_panic() {
            resume_unwind(p);
        }
        let r = lock(&result).take();
        r.expect("the install job ran")
    }
}
