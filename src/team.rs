//! Hot teams: a persistent reservation of pool workers (members) plus a leader thread, and the
//! sections they run.
//!
//! A team member is a worker whose slot is in the TEAM state: it waits for sections published to
//! its slot, spinning its full budget between them (then yielding, then sleeping), and serves no
//! queued work. A section lives on the leader's stack; see [`crate::runtime::team::section`] for the join,
//! barrier and cancellation protocols and [`crate::runtime::pool_shared`] for publishing. The design record is
//! `docs/waiting.md`.

use std::fmt;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering::*};
use std::time::Duration;

use teamalg_gates::{DispatchKind, Model};

use crate::error::{Error, Refused};
use crate::exec::Exec;
use crate::pool::Pool;
use crate::runtime::parker::{self, Parker};
use crate::runtime::team::dispatch::{
    acquire_members, run_alone, run_on, slot_buffer, split_on, Lead, Release, Shares, NO_MEMBERS,
};
use crate::runtime::team::section::Participant;
use crate::runtime::pool_shared::PoolShared;

/// The right to run sections on a set of reserved members, led by the calling thread.
///
/// Next to the others: a team token, as [`Exec`] is a plain one, for one scope; a [`Team`]
/// holds its members between calls and hands out such tokens. It is an
/// [`Executor`](crate::Executor).
///
/// Obtained from [`Exec::team`] (a scoped reservation), from a team token, or as a child of
/// [`TeamExec::split`].
pub struct TeamExec<'a> {
    pool: Option<&'a PoolShared>,
    members: &'a [usize],
    /// The team's claim word, shared by all its handles.
    lead: &'a AtomicUsize,
}

impl fmt::Debug for TeamExec<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TeamExec")
            .field("width", &self.width())
            .finish()
    }
}

impl<'a> TeamExec<'a> {
    pub(crate) fn new(
        pool: Option<&'a PoolShared>,
        members: &'a [usize],
        lead: &'a AtomicUsize,
    ) -> Self {
        TeamExec {
            pool,
            members,
            lead,
        }
    }

    /// The number of participants: the leader and its members.
    pub fn width(&self) -> usize {
        1 + self.members.len()
    }

    /// Runs `f` on every participant at once (the leader is participant 0) and returns when
    /// all are done. A panic in any share cancels the section (participants waiting at a
    /// barrier leave it) and resumes here once every participant is done.
    ///
    /// **One leader at a time.** A team leads one section at a time, whichever of its handles
    /// asks. When the team is already leading a section (on another thread that shares this
    /// handle, or on this one: `run` called from inside one of the team's own shares), this
    /// section runs on the calling thread alone, as participant 0 of width 1. Nothing waits
    /// for the other section, so nothing can hang; write shares that divide their work by
    /// [`Participant::width`].
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use teamalg::{Exec, Pool};
    ///
    /// let pool = Pool::builder().threads(2).build()?;
    /// let inner = AtomicUsize::new(0);
    /// Exec::new(&pool, 2)?.team(|t| {
    ///     t.run(|p| {
    ///         if p.index() == 0 {
    ///             // Nested in a section of the same team: runs here, alone.
    ///             t.run(|q| {
    ///                 inner.fetch_add(q.width(), Ordering::Relaxed);
    ///             });
    ///         }
    ///     })
    /// })?;
    /// assert_eq!(inner.into_inner(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use teamalg::{Exec, Pool};
    ///
    /// let pool = Pool::builder().threads(2).build()?;
    /// let hits = AtomicUsize::new(0);
    /// Exec::new(&pool, 2)?.team(|t| {
    ///     t.run(|p| {
    ///         hits.fetch_add(1, Ordering::Relaxed);
    ///         p.barrier(); // every participant has counted
    ///         assert_eq!(hits.load(Ordering::Relaxed), p.width());
    ///     })
    /// })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run<F>(&self, f: F)
    where
        F: Fn(Participant<'_>) + Sync,
    {
        if run_on(self.pool, self.members, self.lead, &f, Shares::AtOnce).is_err() {
            run_alone(&f);
        }
    }

    /// Runs child teams at once: child `i` has `sizes[i]` participants and its own leader
    /// (child 0 is led by this thread, the others by members). Returns when all are done.
    /// `sizes` must be non-empty, each at least 1, summing to at most the width; otherwise
    /// [`Error::InvalidSplit`]. When the team is already leading a section (see
    /// [`run`](TeamExec::run)), the children cannot have their members:
    /// [`Error::TeamBusy`], and `f` is not called.
    pub fn split<F>(&self, sizes: &[usize], f: F) -> Result<(), Error>
    where
        F: Fn(usize, TeamExec<'_>) + Sync,
    {
        let total = sizes
            .iter()
            .try_fold(0usize, |sum, &s| sum.checked_add(s))
            .filter(|&t| t <= self.width());
        let Some(total) = total.filter(|_| !sizes.is_empty() && !sizes.contains(&0)) else {
            return Err(Error::InvalidSplit {
                sizes: sizes.len(),
                total: sizes.iter().fold(0usize, |a, &s| a.saturating_add(s)),
                width: self.width(),
            });
        };
        debug_assert!(total <= self.width());
        let pool = self.pool;
        split_on(pool, self.members, self.lead, sizes, &|i, group, lead| {
            f(i, TeamExec::new(pool, group, lead))
        })
        .map_err(|_| Error::TeamBusy)
    }

    /// What this token's gates read: its pool's model.
    pub fn model(&self) -> &Model {
        match self.pool {
            Some(p) => &p.model,
            None => teamalg_kernels::families::host_model(),
        }
    }

    /// The cost of one section on this team at `width` (`Duration::MAX` below 2 or beyond
    /// the team's width).
    pub fn dispatch_cost(&self, width: usize) -> Duration {
        match self.pool {
            Some(pool) if width <= self.width() => pool.model.costs.cost(DispatchKind::Team, width),
            _ => Duration::MAX,
        }
    }

    /// What the next section would pay once to wake these members when they sleep.
    pub(crate) fn wake_cost(&self) -> Duration {
        self.pool
            .map_or(Duration::ZERO, |pool| pool.wake_cost(self.members))
    }

    /// What each section on these members loses now to late participants (the pool's live
    /// view).
    pub(crate) fn lateness(&self) -> Duration {
        self.pool
            .map_or(Duration::ZERO, |pool| pool.lateness(self.members.len()))
    }

    /// Whether a region of serial time `estimate` making `sections` sections pays at `width`:
    /// the same decision as [`Exec::pays`] (the wake and the live lateness included).
    pub fn pays(&self, estimate: Duration, sections: usize, width: usize) -> bool {
        self.token().pays(estimate, sections, width)
    }

    /// The width (at most this team's) at which such a region runs fastest, 1 when none pays:
    /// the same decision as [`Exec::width_for`].
    pub fn width_for(&self, estimate: Duration, sections: usize) -> NonZeroUsize {
        self.token().width_for(estimate, sections)
    }

    /// A token with this team's authority: `fork`, `for_ranges` and `broadcast` on it run as
    /// sections on these members, without the pool's queue.
    pub fn token(&self) -> Exec<'a> {
        Exec::for_team(self.pool, self.members, None, self.lead)
    }
}

/// The scoped team entry of a budget token: it lives with the team types it hands out.
impl Exec<'_> {
    /// Reserves the members of a team for the scope of `f`: up to `budget - 1` idle workers
    /// (waiting at most the pool's `acquire_timeout` for them), led by the calling thread.
    /// Refuses with [`Refused::Busy`] when they cannot all be reserved in time. On a team token
    /// it uses the token's members; on a serial token or a budget of one, `f` gets a team of
    /// width 1.
    pub fn team<R>(self, f: impl FnOnce(TeamExec<'_>) -> R) -> Result<R, Refused> {
        if let Some((pool, members, claim)) = self.team_members() {
            return Ok(f(TeamExec::new(Some(pool), members, claim)));
        }
        let Some(pool) = self.parallel_pool() else {
            return Ok(f(TeamExec::new(None, &[], &NO_MEMBERS)));
        };
        let want = self.budget() - 1;
        let mut slots = [0usize; 64];
        let mut many = Vec::new();
        let out = slot_buffer(want, &mut slots, &mut many);
        let got = acquire_members(pool, want, out, pool.acquire_timeout);
        let _release = Release(pool, &out[..got]);
        if got < want {
            return Err(Refused::Busy);
        }
        // The team's claim word lives as long as the reservation.
        let claim = AtomicUsize::new(0);
        Ok(f(TeamExec::new(Some(pool), out, &claim)))
    }
}

/// A hot team: a pool whose `width - 1` workers are reserved as members, led by whichever
/// thread holds the team's token. Sections on it cost about a microsecond.
///
/// Next to the others: a `Team` is held between calls (a [`TeamExec`] is one scope's team
/// token, an [`Exec`] one call's token); `&team` is an [`Executor`](crate::Executor), so it is
/// passed to every kernel as is.
///
/// ```
/// use teamalg::Pool;
///
/// let team = Pool::builder().threads(2).build()?.into_team(2)?;
/// let total = std::sync::atomic::AtomicU64::new(0);
/// team.exec(2).for_ranges(100, 1, |r| {
///     let s: u64 = r.map(|i| i as u64).sum();
///     total.fetch_add(s, std::sync::atomic::Ordering::Relaxed);
/// });
/// assert_eq!(total.into_inner(), 4950);
/// let pool = team.into_pool(); // members go back to the pool
/// # Ok::<(), teamalg::Error>(())
/// ```
pub struct Team {
    pool: Option<Pool>,
    members: Box<[usize]>,
    /// The thread holding the team's token (its parker's address), or 0.
    leader: AtomicUsize,
    /// The claim word of the team's sections (see `Leading`).
    section: AtomicUsize,
}

impl fmt::Debug for Team {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Team")
            .field("width", &self.width())
            .finish()
    }
}

/// `Pool::into_team` failed; the pool comes back in `pool`.
pub struct IntoTeamError {
    /// The pool, unchanged.
    pub pool: Pool,
    /// Why the team could not be formed.
    pub error: Error,
}

impl fmt::Debug for IntoTeamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntoTeamError")
            .field("error", &self.error)
            .finish()
    }
}

impl fmt::Display for IntoTeamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot form a team: {}", self.error)
    }
}

impl std::error::Error for IntoTeamError {}

/// `pool.into_team(w)?` in a function returning `Error`: the pool that came back is dropped.
impl From<IntoTeamError> for Error {
    fn from(e: IntoTeamError) -> Self {
        e.error
    }
}

/// The calling thread's identity for leadership: its parker's address (never 0).
fn this_thread() -> usize {
    parker::current() as *const Parker as usize
}

impl Pool {
    /// Turns the pool into a hot team of `width` participants: `width - 1` workers become
    /// members, the thread holding the team's token leads. Fails (giving the pool back) when
    /// `width` is 0, larger than the pool's threads, or when the members cannot be reserved
    /// within the pool's `acquire_timeout`.
    pub fn into_team(self, width: usize) -> Result<Team, IntoTeamError> {
        let error = if width == 0 {
            Some(Error::ZeroWidth)
        } else if width > self.threads() {
            Some(Error::TeamTooWide {
                width,
                threads: self.threads(),
            })
        } else {
            None
        };
        if let Some(error) = error {
            return Err(IntoTeamError { pool: self, error });
        }
        let mut members = vec![0; width - 1];
        let got = acquire_members(
            &self.shared,
            width - 1,
            &mut members,
            self.shared.acquire_timeout,
        );
        if got < width - 1 {
            self.shared.release(&members[..got]);
            return Err(IntoTeamError {
                pool: self,
                error: Error::MembersBusy,
            });
        }
        Ok(Team {
            pool: Some(self),
            members: members.into_boxed_slice(),
            leader: AtomicUsize::new(0),
            section: AtomicUsize::new(0),
        })
    }
}

impl Team {
    fn shared(&self) -> &PoolShared {
        &self.pool.as_ref().expect("a team holds its pool").shared
    }

    /// The number of participants (members and leader).
    pub fn width(&self) -> usize {
        1 + self.members.len()
    }

    /// A token with team authority for `budget` participants (clamped to `1..=width`).
    ///
    /// Like a lock: it waits while another thread holds a token of the team. Called where
    /// waiting could never end, it returns a serial token instead: on the thread that holds a
    /// token already (the members belong to that token), and on a member of this team (which
    /// is inside one of the team's sections, whose leader waits for it). A thread that a holder
    /// of the token waits for in some other way (one it spawned and joins, say) must use
    /// [`try_exec`](Team::try_exec), as it would `try_lock` a mutex its caller holds.
    pub fn exec(&self, budget: usize) -> Exec<'_> {
        let mut tries = 0u32;
        loop {
            if self.led_by_this_thread() || self.is_member_thread() {
                return Exec::serial();
            }
            if let Ok(e) = self.try_exec(budget) {
                return e;
            }
            tries += 1;
            if tries < 64 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }

    /// Like [`exec`](Team::exec), but refuses with [`Refused::Busy`] while any thread,
    /// the calling one included, leads the team.
    pub fn try_exec(&self, budget: usize) -> Result<Exec<'_>, Refused> {
        if self
            .leader
            .compare_exchange(0, this_thread(), Acquire, Relaxed)
            .is_err()
        {
            return Err(Refused::Busy);
        }
        let b = budget.clamp(1, self.width());
        Ok(Exec::for_team(
            Some(self.shared()),
            &self.members[..b - 1],
            Some(Lead(&self.leader)),
            &self.section,
        ))
    }

    /// Whether the calling thread is one of this team's members (so it runs a share of one of
    /// the team's sections right now).
    pub(crate) fn is_member_thread(&self) -> bool {
        crate::runtime::pool_shared::current_worker()
            .is_some_and(|(pool, k)| std::ptr::eq(pool, self.shared()) && self.members.contains(&k))
    }

    /// What the team's gates read: its pool's model.
    pub fn model(&self) -> &Model {
        &self.shared().model
    }

    /// The cost of one section of this team at `width` (`Duration::MAX` below 2 or beyond the
    /// team's width), as its tokens see it; needs no leadership.
    pub fn dispatch_cost(&self, width: usize) -> Duration {
        if width < 2 || width > self.width() {
            return Duration::MAX;
        }
        self.shared().model.costs.cost(DispatchKind::Team, width)
    }

    /// What the next section would pay once to wake the team's members when they sleep.
    pub(crate) fn wake_cost(&self) -> Duration {
        self.shared().wake_cost(&self.members)
    }

    /// The team's pool's shared state (for the kernels' executor).
    pub(crate) fn shared_pool(&self) -> &PoolShared {
        self.shared()
    }

    /// What each of the team's sections loses now to late members (the pool's live view).
    pub(crate) fn lateness(&self) -> Duration {
        self.shared().lateness(self.members.len())
    }

    /// How contended the CPUs of the team's members are now, for a region of serial time
    /// `estimate` (the contention signal: `docs/gates.md`, "Contention").
    pub(crate) fn contention(&self, estimate: Duration) -> teamalg_gates::Contention {
        self.shared().contention(self.members.len(), estimate)
    }

    /// Whether the calling thread leads the team through a token it holds.
    pub(crate) fn led_by_this_thread(&self) -> bool {
        self.leader.load(Relaxed) == this_thread()
    }

    /// Tells the members of the teams this thread led last (this one, when it led the last
    /// section here) that no section comes from it for a while: they stop spinning and sleep
    /// now instead of spending their spin budget (up to milliseconds of a CPU, which on a
    /// shared host may be the one this thread needs). The next section wakes them, at the
    /// cost of a wake (50 us to milliseconds on a small host; [`Team::warm`] pays it ahead).
    /// The reductions call this when they take their sections back to the caller.
    ///
    /// ```
    /// use teamalg::Pool;
    ///
    /// let team = Pool::builder().threads(2).build()?.into_team(2)?;
    /// team.exec(2).team(|t| t.run(|_| {}))?;
    /// team.rest(); // serial work follows; the member sleeps
    /// team.exec(2).team(|t| t.run(|_| {}))?; // woken by the section
    /// # Ok::<(), teamalg::Error>(())
    /// ```
    pub fn rest(&self) {
        crate::runtime::team::dispatch::rest();
    }

    /// Wakes the members a `width`-wide section would use, if they sleep, and returns how many
    /// it woke (see [`Exec::warm`]). Needs no leadership: a member woken while another thread
    /// leads only spins.
    pub fn warm(&self, width: usize) -> usize {
        let n = width.clamp(1, self.width()) - 1;
        let team = &self.section as *const AtomicUsize as usize;
        self.shared().wake_members(&self.members[..n], team)
    }

    /// Dissolves the team: members go back to being idle workers of the pool.
    pub fn into_pool(mut self) -> Pool {
        let pool = self.pool.take().expect("a team holds its pool");
        pool.shared.release(&self.members);
        pool
    }
}

impl Drop for Team {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            pool.shared.release(&self.members);
        }
    }
}
