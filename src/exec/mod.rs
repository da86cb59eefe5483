//! Budget tokens and their entries.
//!
//! An [`Exec`] is the right to use `budget` slots of a pool for one call. Every entry consumes
//! it; `fork` hands each job a child token whose budgets, over the jobs that can run at once,
//! sum to at most the parent's, so nested parallelism conserves threads at every depth.

use std::marker::PhantomData;
use std::num::NonZeroUsize;
use std::time::Duration;

use std::sync::Arc;
use teamalg_gates::{decide, Ask, Contention, DispatchKind, Model, ParThreshold, SplitCurve};

use crate::error::Error;
use crate::pool::Pool;
use crate::runtime::ledger;
use crate::runtime::sync::AtomicUsize;
use crate::runtime::team::dispatch::Lead;
use crate::runtime::pool_shared::PoolShared;

mod fork;
mod budgets;
mod entries;
pub(crate) mod parts;

enum PoolRef<'a> {
    Serial,
    Owned(Arc<PoolShared>),
    Borrowed(&'a PoolShared),
    /// Team authority over these reserved member slots, under the team's claim word.
    Team(&'a PoolShared, &'a [usize], &'a AtomicUsize),
}

/// A budget token: the right to run on up to `budget` slots of a pool.
///
/// Next to the others: an `Exec` is one call's right (plain, on a pool's queue, or a team
/// token from [`Team::exec`](crate::Team::exec)); a [`TeamExec`](crate::TeamExec) is a
/// reserved team's token; a [`Team`](crate::Team) is a team held between calls; each of them
/// is an [`Executor`](crate::Executor), the contract the kernels take. `Exec::serial()` is the
/// serial token (the kernels' `Seq`, for code that names no pool).
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
        self.contention(Duration::ZERO).late
    }

    /// How contended the CPUs this token's participants would use are now, for a region of
    /// serial time `estimate` (the contention signal: `docs/gates.md`, "Contention");
    /// nothing for a serial token.
    pub(crate) fn contention(&self, estimate: Duration) -> Contention {
        match (self.team_members(), self.parallel_pool()) {
            (Some((pool, members, _)), _) => pool.contention(members.len(), estimate),
            (None, Some(pool)) => pool.contention(self.budget - 1, estimate),
            _ => Contention::NONE,
        }
    }

    /// Asks this token's members for a run-queue reading (`Executor::probe`): wakes them to
    /// spin, at most every `PROBE_GAP` process-wide.
    pub(crate) fn probe(&self) {
        if self.team_members().is_some() && crate::runtime::contention::signal().probe_due() {
            self.warm(self.budget);
        }
    }

    /// The CPUs this token's parallel calls count against (`Executor::cpus`): its pool's,
    /// none for a pool without a live view (its decisions depend on the model alone), the
    /// process's for a serial token.
    pub(crate) fn cpus(&self) -> Option<usize> {
        match self.shared() {
            Some(p) => p.live.map(|_| p.usable_cpus),
            None => Some(crate::runtime::cpus::available_cpus()),
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
                (self.wake_cost(), self.contention(estimate).late),
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
            (self.wake_cost(), self.contention(estimate).late),
            |k| self.dispatch_cost(k),
        );
        NonZeroUsize::new(w).unwrap_or(NonZeroUsize::MIN)
    }

    /// What this token's gates read: its pool's model, or the host's built-in one for a
    /// serial token.
    pub fn model(&self) -> &Model {
        match self.shared() {
            Some(p) => &p.model,
            None => teamalg_kernels::families::host_model(),
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
        split: SplitCurve::FREE,
        threshold: ParThreshold::Derived,
        call_units: 0.0,
        wake,
        late,
    };
    decide(ask, |k| cost(k.get())).0
}