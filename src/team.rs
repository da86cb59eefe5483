//! Hot teams: a persistent reservation of pool workers (members) plus a leader thread, and the
//! sections they run.
//!
//! A team member is a worker whose slot is in the TEAM state: it waits for sections published to
//! its slot, spinning its full budget between them (then yielding, then sleeping), and serves no
//! queued work. A section lives on the leader's stack; see [`crate::section`] for the join,
//! barrier and cancellation protocols and [`crate::pool`] for publishing. The design record is
//! `docs/waiting.md`.

use std::fmt;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering::*};
use std::time::{Duration, Instant};

use teamalg_gates::{pays_at, width_for_by, DispatchKind, Model};

use crate::error::{Error, Refused};
use crate::exec::Exec;
use crate::handle::Pool;
use crate::parker::{self, Parker};
use crate::pool::PoolShared;
use crate::section::{Participant, Roster, Section};
use crate::sync::current_cpu;
use crate::wait::Crowd;

/// The participants of a section: the leader, then the workers of `slots`.
struct SlotRoster<'a> {
    pool: Option<&'a PoolShared>,
    leader: &'static Parker,
    slots: &'a [usize],
}

impl Roster for SlotRoster<'_> {
    fn parker(&self, i: usize) -> &Parker {
        match (i, self.pool) {
            (0, _) | (_, None) => self.leader,
            (i, Some(pool)) => pool.slot_parker(self.slots[i - 1]),
        }
    }
}

/// Whether the leader may run the share of a member that has not started (`Slot::steal`):
/// only for sections whose participants need not run at once. `TeamExec::run`, `split`,
/// `broadcast` and `fork` promise that every participant runs on its own thread at the same
/// time (their shares may wait for each other by any means), so they never do.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shares {
    /// Every share runs on its own participant's thread.
    AtOnce,
    /// A share whose member was asleep and has not started when the leader is done with its
    /// own may run on the leader (the kernels' sections).
    Independent,
}

/// The team's claim word is held: another thread leads a section on these members now, or
/// the calling thread does, in a section this call is nested in. Nothing was published.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TeamBusy;

/// The right to publish sections to a team's members, held for one section. A team's handles
/// (its `Team`, every `TeamExec` and team token of it) share one claim word: whoever takes it
/// with a CAS from 0 to its thread's parker address leads; the others find it taken and run
/// on their own thread instead (see `TeamExec::run`). So two threads never publish to one
/// member at once, and a member never claims one leader's share and reads another's section.
struct Leading<'a>(&'a AtomicUsize);

impl<'a> Leading<'a> {
    #[inline]
    fn claim(word: &'a AtomicUsize, me: &Parker) -> Option<Self> {
        let me = me as *const Parker as usize;
        // Acquire pairs with the previous leader's release: its sections are over.
        word.compare_exchange(0, me, Acquire, Relaxed)
            .ok()
            .map(|_| Leading(word))
    }
}

impl Drop for Leading<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.store(0, Release);
    }
}

/// A claim word for handles whose sections have no members (never taken).
pub(crate) static NO_MEMBERS: AtomicUsize = AtomicUsize::new(0);

/// Runs one section: the calling thread is participant 0, the workers of `slots` are
/// participants `1..=slots.len()`, led under the claim word `lead` (see [`Leading`]). Returns
/// after every participant is done; a panic in any share resumes here. Refuses with
/// [`TeamBusy`], publishing nothing, when the claim is held.
pub(crate) fn run_on(
    pool: Option<&PoolShared>,
    slots: &[usize],
    lead: &AtomicUsize,
    job: &(dyn Fn(Participant<'_>) + Sync),
    shares: Shares,
) -> Result<(), TeamBusy> {
    let leader = parker::current();
    let team = lead as *const AtomicUsize as usize;
    let _leading = match (pool, slots.is_empty()) {
        (Some(_), false) => {
            let leading = Leading::claim(lead, leader).ok_or(TeamBusy)?;
            leader.set_leading(team); // members of its other teams stop spinning
            Some(leading)
        }
        _ => None,
    };
    let roster = SlotRoster {
        pool,
        leader,
        slots,
    };
    let polls = pool.map_or(0, PoolShared::polls);
    let section = Section::new(1 + slots.len(), job, &roster, leader, polls);
    let here = current_cpu();
    // Members the publish had to wake (the first 64): until they start they may be queued on
    // this CPU, and in a kernel's section their shares may run here.
    let mut asleep = 0u64;
    if let Some(pool) = pool {
        let away = shares == Shares::Independent;
        for (i, &k) in slots.iter().enumerate() {
            if pool.publish(k, &section, i + 1, (leader, team, here), away) && i < 64 {
                asleep |= 1 << i;
            }
        }
    }
    section.run_share(0);
    if let Some(pool) = pool.filter(|_| shares == Shares::Independent) {
        // A member that has not started by now and is not known to be spinning (the publish had
        // to wake it, or it has reported no CPU since a warm-up woke it or a leader moved it:
        // waking costs 50 us to milliseconds on a small host) has its share run here instead
        // of being waited for. Spinning members report their CPU every few polls and are never
        // passed over, so a hot team keeps its parallelism.
        for (i, &k) in slots.iter().enumerate() {
            let asleep = i < 64 && asleep & (1 << i) != 0;
            if (asleep || pool.cpu_unknown(k)) && !section.done() && pool.steal(k) {
                section.run_stolen(i + 1);
            }
        }
    }
    // The first look is free: the members' slots are the cache lines they are writing now,
    // and a hot team's join is usually over within the first few polls.
    let mut looked = false;
    section.join_with(leader, &mut || match pool {
        Some(p) if looked => p.crowd(slots, asleep),
        _ => {
            looked = true;
            if asleep == 0 {
                Crowd::Alone
            } else {
                Crowd::Yield
            }
        }
    });
    section.resume_panic();
    Ok(())
}

/// The right to run sections on a set of reserved members, led by the calling thread.
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
        // Child i's participants are members[start(i) - 1 ..] (its leader first), child 0 has
        // this thread and members[.. sizes[0] - 1].
        let start = |i: usize| -> usize { sizes[..i].iter().sum() };
        let mut stack = [0usize; 64];
        let mut heap = Vec::new();
        let leaders = crate::exec::slot_buffer(sizes.len() - 1, &mut stack, &mut heap);
        for (i, l) in leaders.iter_mut().enumerate() {
            *l = self.members[start(i + 1) - 1];
        }
        let job = |p: Participant<'_>| {
            let i = p.index();
            let group = if i == 0 {
                &self.members[..sizes[0] - 1]
            } else {
                let s = start(i);
                &self.members[s..s + sizes[i] - 1]
            };
            // Each child team has a claim word of its own, on its leader's stack.
            let lead = AtomicUsize::new(0);
            f(i, TeamExec::new(self.pool, group, &lead));
        };
        run_on(self.pool, leaders, self.lead, &job, Shares::AtOnce).map_err(|_| Error::TeamBusy)
    }

    /// What this token's gates read: its pool's model.
    pub fn model(&self) -> &Model {
        match self.pool {
            Some(p) => &p.model,
            None => Model::host_default(),
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

    /// Whether a region of serial time `estimate` making `sections` sections pays at `width`.
    pub fn pays(&self, estimate: Duration, sections: usize, width: usize) -> bool {
        pays_at(estimate, sections, self.dispatch_cost(width))
    }

    /// The width (at most this team's) at which such a region runs fastest, 1 when none pays.
    pub fn width_for(&self, estimate: Duration, sections: usize) -> NonZeroUsize {
        let width = NonZeroUsize::new(self.width()).unwrap_or(NonZeroUsize::MIN);
        width_for_by(estimate, sections, width, |k| self.dispatch_cost(k.get()))
    }

    /// A token with this team's authority: `fork`, `for_ranges` and `broadcast` on it run as
    /// sections on these members, without the pool's queue.
    pub fn token(&self) -> Exec<'a> {
        Exec::for_team(self.pool, self.members, None, self.lead)
    }
}

/// Runs a section on the calling thread alone: participant 0 of width 1.
pub(crate) fn run_alone(job: &(dyn Fn(Participant<'_>) + Sync)) {
    run_on(None, &[], &NO_MEMBERS, job, Shares::AtOnce).expect("a section without members");
}

/// A hot team: a pool whose `width - 1` workers are reserved as members, led by whichever
/// thread holds the team's token. Sections on it cost about a microsecond.
///
/// ```
/// use teamalg::Pool;
///
/// let team = Pool::builder().threads(2).build()?.into_team(2).map_err(|e| e.error)?;
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

/// Reserves `n` idle slots as members, retrying until `timeout`. Returns how many it got.
pub(crate) fn acquire_members(
    pool: &PoolShared,
    n: usize,
    out: &mut [usize],
    timeout: Duration,
) -> usize {
    let mut got = pool.reserve_members(n, out);
    let start = Instant::now();
    while got < n && start.elapsed() < timeout {
        std::thread::sleep(Duration::from_micros(20));
        got += pool.reserve_members(n - got, &mut out[got..]);
    }
    got
}

/// Releases a leader's claim on a team when its token is dropped.
pub(crate) struct Lead<'a>(&'a AtomicUsize);

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        self.0.store(0, Release);
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
        crate::pool::current_worker()
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

    /// Whether the calling thread leads the team through a token it holds.
    pub(crate) fn led_by_this_thread(&self) -> bool {
        self.leader.load(Relaxed) == this_thread()
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
