//! Budget tokens and their entries.
//!
//! An [`Exec`] is the right to use `budget` slots of a pool for one call. Every entry consumes
//! it; `fork` hands each job a child token whose budgets, over the jobs that can run at once,
//! sum to at most the parent's, so nested parallelism conserves threads at every depth.

use std::marker::PhantomData;
use std::num::NonZeroUsize;
use std::ops::Range;
use std::time::{Duration, Instant};

use std::panic::resume_unwind;
use std::sync::Arc;
use teamalg_gates::{decide, Ask, DispatchKind, Model, ParThreshold, SplitCost};
use teamalg_kernels::par::part_start;

use crate::error::{Error, Refused};
use crate::pool::Pool;
use crate::runtime::join::Settle;
use crate::runtime::ledger;
use crate::runtime::live::{Live, Sample};
use crate::runtime::parker;
use crate::runtime::plain::batch::Batch;
use crate::runtime::sync::{lock, Mutex};
use crate::runtime::sync::{AtomicUsize, Ordering::Relaxed};
use crate::runtime::team::dispatch::{run_on, slot_buffer, split_on, Lead, Release, Shares};
use crate::runtime::team::section::Participant;
use crate::runtime::worker::PoolShared;

enum PoolRef<'a> {
    Serial,
    Owned(Arc<PoolShared>),
    Borrowed(&'a PoolShared),
    /// Team authority over these reserved member slots, under the team's claim word.
    Team(&'a PoolShared, &'a [usize], &'a AtomicUsize),
}

/// A budget token: the right to run on up to `budget` slots of a pool.
///
/// Not `Clone`, not `Copy`: every entry consumes the token, and [`reborrow`](Exec::reborrow)
/// or [`limit`](Exec::limit) narrow it.
///
/// ```compile_fail
/// let pool = teamalg::Pool::builder().threads(2).build().unwrap();
/// let exec = teamalg::Exec::new(&pool, 2).unwrap();
/// let copy = exec.clone(); // Exec is not Clone
/// ```
///
/// ```compile_fail
/// let exec = teamalg::Exec::serial();
/// exec.for_ranges(10, 1, |_| {});
/// exec.for_ranges(10, 1, |_| {}); // used after move: Exec is not Copy
/// ```
///
/// A token stays on the thread that made it: it is not `Send` (it is `Sync`, so other threads
/// may borrow it, and its sections still have one leader at a time).
///
/// ```compile_fail
/// let team = teamalg::Pool::builder().threads(2).build().unwrap().into_team(2).unwrap();
/// let token = team.exec(2);
/// std::thread::scope(|s| {
///     s.spawn(move || token.for_ranges(10, 1, |_| {})); // Exec is not Send
/// });
/// ```
///
/// ```
/// use teamalg::{Exec, Pool};
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// let pool = Pool::builder().threads(2).build()?;
/// let sum = AtomicUsize::new(0);
/// Exec::new(&pool, 2)?.for_ranges(1000, 100, |r| {
///     sum.fetch_add(r.sum::<usize>(), Ordering::Relaxed);
/// });
/// assert_eq!(sum.into_inner(), 999 * 1000 / 2);
/// # Ok::<(), teamalg::Error>(())
/// ```
pub struct Exec<'a> {
    pool: PoolRef<'a>,
    budget: usize,
    root: usize,
    /// A root token (not a fork child): the caller itself counts in the ledger.
    is_root: bool,
    /// The claim on a team's leadership, released when the token is dropped.
    _lead: Option<Lead<'a>>,
    /// A token stays on the thread that made it (it is `Sync`, not `Send`): a team token's
    /// claim names that thread, so that `Team::exec` there returns a serial token instead of
    /// waiting for itself.
    _here: NotSend,
}

/// `Sync` but not `Send` (a `MutexGuard` is the standard type with exactly these bounds).
type NotSend = PhantomData<std::sync::MutexGuard<'static, ()>>;

impl std::fmt::Debug for Exec<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exec")
            .field("budget", &self.budget)
            .field("serial", &matches!(self.pool, PoolRef::Serial))
            .finish()
    }
}

impl Exec<'static> {
    /// A token for `budget` slots of `pool`, clamped to the pool's thread count.
    pub fn new(pool: &Pool, budget: usize) -> Result<Exec<'static>, Error> {
        if budget == 0 {
            return Err(Error::ZeroBudget);
        }
        Ok(Exec {
            budget: budget.min(pool.threads()),
            pool: PoolRef::Owned(pool.shared.clone()),
            root: ledger::register(),
            is_root: true,
            _lead: None,
            _here: PhantomData,
        })
    }

    /// A serial token: every entry runs inline on the caller.
    pub fn serial() -> Exec<'static> {
        Exec {
            pool: PoolRef::Serial,
            budget: 1,
            root: 0,
            is_root: true,
            _lead: None,
            _here: PhantomData,
        }
    }
}

impl<'a> Exec<'a> {
    /// A token with team authority over `members` (its budget is the team's width).
    pub(crate) fn for_team(
        pool: Option<&'a PoolShared>,
        members: &'a [usize],
        lead: Option<Lead<'a>>,
        claim: &'a AtomicUsize,
    ) -> Exec<'a> {
        match pool {
            Some(p) if !members.is_empty() => Exec {
                pool: PoolRef::Team(p, members, claim),
                budget: 1 + members.len(),
                root: 0,
                is_root: true,
                _lead: lead,
                _here: PhantomData,
            },
            _ => Exec {
                _lead: lead,
                ..Exec::serial()
            },
        }
    }
}

/// Budgets of the children of a `fork_sized` with fewer jobs than `budget`, into `out`: the
/// budget divided in proportion to `shares` (a share of 0 counts as 1), each child at least
/// one slot, summing to `budget`. Each child gets its quota rounded down (at least 1); slots
/// left over go to the children furthest below their quota, and slots taken back (when the
/// minimum of 1 overshot) from those furthest above it; ties go to the earlier child.
/// So `[1, 3]` on 4 gives `[1, 3]`, and every split that is exact in integers is kept exactly.
fn sized_budgets(budget: usize, shares: &[usize], out: &mut [usize]) {
    let n = shares.len();
    debug_assert!(n <= budget && out.len() == n);
    // Quotas in units of 1/total. Shares are scaled down to 32 bits so the sums and products
    // stay far inside i128.
    let top = shares.iter().copied().max().unwrap_or(1).max(1);
    let shift = (usize::BITS - top.leading_zeros()).saturating_sub(32);
    let weight = |j: usize| i128::from(((shares[j] >> shift).max(1)) as u64);
    let total: i128 = (0..n).map(weight).sum();
    let b = budget as i128;
    // How far child j's budget `a` lies above its quota, times `total`.
    let over = |j: usize, a: usize| a as i128 * total - b * weight(j);
    for (j, o) in out.iter_mut().enumerate() {
        *o = ((b * weight(j) / total) as usize).max(1);
    }
    let mut sum: usize = out.iter().sum();
    while sum > budget {
        let j = (0..n)
            .filter(|&j| out[j] > 1)
            .max_by_key(|&j| over(j, out[j]))
            .expect("n <= budget leaves a child above 1");
        out[j] -= 1;
        sum -= 1;
    }
    while sum < budget {
        let j = (0..n)
            .min_by_key(|&j| over(j, out[j]))
            .expect("at least one child");
        out[j] += 1;
        sum += 1;
    }
}

/// Budget of child `i` of `jobs` under `budget`: equal shares, the remainder to the first.
#[inline]
fn child_budget(budget: usize, jobs: usize, i: usize) -> usize {
    if jobs >= budget {
        1
    } else {
        budget / jobs + usize::from(i < budget % jobs)
    }
}

impl<'a> Exec<'a> {
    /// The slot ledger's id of this token's root (feature `ledger`), for the slot-conservation
    /// tests.
    #[cfg(feature = "ledger")]
    pub fn ledger_root(&self) -> usize {
        self.root
    }

    /// The number of slots this token may use at once (1 for a serial token).
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// A token for one entry that leaves this one usable afterwards.
    pub fn reborrow(&mut self) -> Exec<'_> {
        Exec {
            pool: match &self.pool {
                PoolRef::Serial => PoolRef::Serial,
                PoolRef::Owned(p) => PoolRef::Borrowed(p),
                PoolRef::Borrowed(p) => PoolRef::Borrowed(p),
                PoolRef::Team(p, m, c) => PoolRef::Team(p, m, c),
            },
            budget: self.budget,
            root: self.root,
            is_root: self.is_root,
            _lead: None,
            _here: PhantomData,
        }
    }

    /// The same token with its budget lowered to `n` (at least 1; never raised).
    pub fn limit(mut self, n: usize) -> Exec<'a> {
        self.budget = self.budget.min(n.max(1));
        if let PoolRef::Team(_, members, _) = &mut self.pool {
            *members = &members[..self.budget - 1];
        }
        self
    }

    /// The kind of dispatch an entry of this token makes from the calling thread: team
    /// authority, a worker of its own pool, or any other thread. `None` for a serial token.
    pub fn kind(&self) -> Option<DispatchKind> {
        match &self.pool {
            PoolRef::Serial => None,
            PoolRef::Team(..) => Some(DispatchKind::Team),
            PoolRef::Owned(p) if p.is_current_worker() => Some(DispatchKind::InPool),
            PoolRef::Borrowed(p) if p.is_current_worker() => Some(DispatchKind::InPool),
            _ => Some(DispatchKind::Outside),
        }
    }

    /// The cost of one section of this token at `width`, from the calling thread:
    /// `Duration::MAX` for a serial token, a width below 2, or a width beyond the budget (a
    /// token cannot run that wide, so [`pays`](Exec::pays) says no there).
    pub fn dispatch_cost(&self, width: usize) -> Duration {
        if width > self.budget {
            return Duration::MAX;
        }
        match (self.kind(), self.shared()) {
            (Some(kind), Some(pool)) => pool.model.costs.cost(kind, width),
            _ => Duration::MAX,
        }
    }

    /// What the next section would pay once to wake this team token's members when they
    /// sleep (see `Executor::wake_cost`); zero for other tokens.
    pub(crate) fn wake_cost(&self) -> Duration {
        self.team_members()
            .map_or(Duration::ZERO, |(pool, m, _)| pool.wake_cost(m))
    }

    /// What each section of this token loses now to late participants: its pool's live view
    /// (see `Executor::lateness`); zero for a serial token and on a quiet machine.
    pub(crate) fn lateness(&self) -> Duration {
        match (self.team_members(), self.parallel_pool()) {
            (Some((pool, members, _)), _) => pool.lateness(members.len()),
            (None, Some(pool)) => pool.lateness(self.budget - 1),
            _ => Duration::ZERO,
        }
    }

    /// Whether a region of serial time `estimate` making `sections` dispatches pays for going
    /// parallel at `width` with this token: the gate's one decision
    /// ([`gates::decide`](teamalg_gates::decide)) for a region of no family, at that width
    /// alone, with the wake of sleeping members and the pool's live lateness. The kernels'
    /// gate asks the same function.
    pub fn pays(&self, estimate: Duration, sections: usize, width: usize) -> bool {
        width >= 2
            && decide_plain(
                estimate,
                sections,
                width,
                (self.wake_cost(), self.lateness()),
                |k| match k {
                    k if k == width => self.dispatch_cost(k),
                    _ => Duration::MAX,
                },
            ) == width
    }

    /// The width (at most the budget) at which such a region runs fastest, 1 when no width
    /// pays: the same decision as [`pays`](Exec::pays), over every width of the budget.
    pub fn width_for(&self, estimate: Duration, sections: usize) -> NonZeroUsize {
        let w = decide_plain(
            estimate,
            sections,
            self.budget,
            (self.wake_cost(), self.lateness()),
            |k| self.dispatch_cost(k),
        );
        NonZeroUsize::new(w).unwrap_or(NonZeroUsize::MIN)
    }

    /// What this token's gates read: its pool's model, or the host's built-in one for a
    /// serial token.
    pub fn model(&self) -> &Model {
        match self.shared() {
            Some(p) => &p.model,
            None => Model::host_default(),
        }
    }

    pub(crate) fn shared(&self) -> Option<&PoolShared> {
        match &self.pool {
            PoolRef::Serial => None,
            PoolRef::Owned(p) => Some(p),
            PoolRef::Borrowed(p) => Some(p),
            PoolRef::Team(p, _, _) => Some(p),
        }
    }

    /// The members this team token may use, and the team's claim word, when it is one.
    #[inline]
    pub(crate) fn team_members(&self) -> Option<(&'a PoolShared, &'a [usize], &'a AtomicUsize)> {
        match self.pool {
            PoolRef::Team(p, m, c) => Some((p, m, c)),
            _ => None,
        }
    }

    /// The pool to run on, when this entry can go parallel at all.
    #[inline]
    pub(crate) fn parallel_pool(&self) -> Option<&PoolShared> {
        if self.budget < 2 {
            return None;
        }
        self.shared().filter(|p| !p.is_shut_down())
    }

    pub(crate) fn child<'s>(&self, pool: &'s PoolShared, budget: usize) -> Exec<'s> {
        Exec {
            pool: PoolRef::Borrowed(pool),
            budget,
            root: self.root,
            is_root: false,
            _lead: None,
            _here: PhantomData,
        }
    }

    fn serial_child(&self) -> Exec<'_> {
        match self.shared() {
            Some(p) => self.child(p, 1),
            None => Exec::serial(),
        }
    }

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
                    self.run_batch(pool, jobs, &job);
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
        self.run_batch(pool, jobs, &job);
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
                self.run_batch(pool, chunks, &job);
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

    /// Queues `jobs` jobs, works on them, joins, and resumes a panic.
    pub(crate) fn run_batch(&self, pool: &PoolShared, jobs: usize, job: &(dyn Fn(usize) + Sync)) {
        self.run_batch_width(pool, jobs, self.budget, None, job);
    }

    /// `run_batch` with at most `width` participants (the caller and `width - 1` helpers).
    /// A kernel's region passes its pool's live view: the caller then times its own jobs and
    /// the join, and records the batch as a section (`live.rs`): late when it waited for a
    /// helper, or ran every job itself while helpers were asked for, beyond the allowance.
    pub(crate) fn run_batch_width(
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
        let batch = Batch::new(jobs, helpers, parker::current(), job, self.root);
        // SAFETY: `settle` below unlinks the batch and waits until no helper holds it before
        // this frame (which owns `batch`) can end, also when unwinding.
        unsafe { pool.queue.push(&batch) };
        // Spinning idle workers will find the batch themselves. A wake missed because one of
        // them just went to sleep costs only parallelism: this caller runs unclaimed jobs.
        let woke = pool.wake_idle(helpers.saturating_sub(pool.spinning())) > 0;
        let start = live.map(|_| Instant::now());
        {
            let settle = Settle {
                pool,
                batch: &batch,
                woke,
                unlink: true,
            };
            let ran = batch.run_jobs();
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
        if let Some(p) = batch.take_panic() {
            resume_unwind(p);
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
        let batch = Batch::new(1, 1, parker::current(), &job, self.root);
        // SAFETY: as in `run_batch`; the owner claims no job, so a worker must run it, and
        // `Settle` waits until one has.
        unsafe { pool.queue.push(&batch) };
        pool.wake_idle(1);
        // Not unlinked by us: the worker that attaches takes the only helper place, which
        // unlinks it.
        drop(Settle {
            pool,
            batch: &batch,
            woke: false,
            unlink: false,
        });
        if let Some(p) = batch.take_panic() {
            resume_unwind(p);
        }
        let r = lock(&result).take();
        r.expect("the install job ran")
    }
}

/// The gate's one decision ([`teamalg_gates::decide`]) for a region of user code, which has no
/// family: no split cost, the derived rule, the wake of sleeping members and the pool's live
/// lateness `(wake, late)`, per-width section costs `cost`. Returns the width.
pub(crate) fn decide_plain(
    estimate: Duration,
    sections: usize,
    budget: usize,
    (wake, late): (Duration, Duration),
    cost: impl Fn(usize) -> Duration,
) -> usize {
    let ask = Ask {
        estimate,
        sections,
        budget,
        split: SplitCost::FREE,
        threshold: ParThreshold::Derived,
        call_units: 0.0,
        wake,
        late,
    };
    decide(ask, |k| cost(k.get())).0
}
