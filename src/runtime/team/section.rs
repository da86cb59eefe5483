//! A section: one parallel region on a team, on its leader's stack.
//!
//! The leader publishes a section to the member slots it addresses (see `pool::publish`): each
//! member runs the closure as participant `i`, the leader as participant 0, then the leader
//! *joins*. Participants may meet at barriers any number of times.
//!
//! Protocol and who wakes whom:
//! - **Join.** `pending` starts at `width - 1`. A member's **final** access to the section is
//!   `pending.fetch_sub(1)`; it copies the leader's parker address first, and the member that
//!   takes `pending` to zero unparks the leader (parkers are never freed, so the address stays
//!   valid after the leader has returned). The leader returns once `pending == 0`.
//! - **Barrier** (sense by round number). `state` packs the round (upper bits), a CANCELLED bit
//!   and the number of participants asleep at the barrier (low 32 bits), so that every race
//!   below is decided by read-modify-writes on one location. A participant reads the round and
//!   adds one to `arrived`; the last arrival resets `arrived` and bumps the round with a
//!   `fetch_add` that returns the sleeper count as it was: if non-zero, it unparks every other
//!   participant. A waiter waits for the round to change; to sleep it adds itself to the sleeper
//!   count with a CAS that fails if the round moved (or the section was cancelled), and leaves
//!   the count after it wakes. Either the bump comes first (the CAS fails: no sleep) or the CAS
//!   does (the bump sees the sleeper and wakes it; the parker keeps an early wake).
//! - **Cancellation.** A panic in a share is caught and stored; the CANCELLED bit is set with a
//!   `fetch_or` that returns the sleeper count, and if it is non-zero every other participant is
//!   unparked. A barrier waiter that sees CANCELLED leaves its share by unwinding with a private
//!   marker (not recorded as a panic), so every participant finishes and the join completes.
//!   The first real panic resumes on the leader after the join.
//!
//! Checked by the loom models `section_*` in `tests/executor/loom.rs`.

// `pub` items here are reachable only from the loom models (`loom_api`).
#![allow(unreachable_pub)]

use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use crate::runtime::counters;
use crate::runtime::parker::Parker;
use crate::runtime::plain::fork::Panic;
use crate::runtime::sync::{AtomicU64, AtomicUsize, Mutex, Ordering::*, lock};
use crate::runtime::wait::{Crowd, Waiter, wait_staged};

/// Who the participants of a section are: the parker of participant `i` (0 is the leader).
pub trait Roster: Sync {
    /// The parker participant `i` sleeps on while it is in the section.
    fn parker(&self, i: usize) -> &Parker;
}

/// The sleeper count in `Section::state`.
const SLEEPERS: u64 = (1 << 32) - 1;
/// The CANCELLED bit in `Section::state`.
const CANCELLED: u64 = 1 << 32;
/// One round in `Section::state`.
const ROUND: u64 = 1 << 33;

/// The unwinding marker of a share left because its section was cancelled.
struct Cancelled;

/// See the module documentation.
pub struct Section<'a> {
    job: *const (dyn Fn(Participant<'_>) + Sync + 'a),
    roster: *const (dyn Roster + 'a),
    width: usize,
    pending: AtomicUsize,
    leader: *const Parker,
    panic: Mutex<Option<Panic>>,
    arrived: AtomicUsize,
    /// `round * ROUND | CANCELLED | sleepers`.
    state: AtomicU64,
    polls: u32,
    _borrows: PhantomData<&'a ()>,
}

// SAFETY: the job and roster are `Sync` and outlive the section; the leader's parker lives
// forever (or, under loom, as long as the model); every other field is an atomic or a mutex.
unsafe impl Sync for Section<'_> {}
// SAFETY: as above; a section never moves while shared (it stays on its leader's stack).
unsafe impl Send for Section<'_> {}

/// One participant's view of a section: its index, the width, and the barrier.
pub struct Participant<'s> {
    section: *const Section<'static>,
    index: usize,
    _section: PhantomData<&'s ()>,
}

impl std::fmt::Debug for Participant<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Participant")
            .field("index", &self.index)
            .field("width", &self.width())
            .finish()
    }
}

impl Participant<'_> {
    /// This participant's index: 0 is the leader, members are `1..width`.
    #[inline]
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of participants.
    #[inline]
    pub fn width(&self) -> usize {
        self.section().width
    }

    fn section(&self) -> &Section<'static> {
        // SAFETY: a participant exists only while its share runs, and the section outlives
        // every share (the leader joins before returning).
        unsafe { &*self.section }
    }

    /// Waits until every participant of the section has called `barrier` as many times as
    /// this one. Every participant must call it the same number of times.
    pub fn barrier(&self) {
        self.section().barrier(self.index);
    }
}

impl<'a> Section<'a> {
    /// A section of `width` participants running `job`. `leader` is the leader's parker;
    /// barrier waits spin `polls` polls before they yield and sleep.
    pub fn new(
        width: usize,
        job: &'a (dyn Fn(Participant<'_>) + Sync + 'a),
        roster: &'a (dyn Roster + 'a),
        leader: &Parker,
        polls: u32,
    ) -> Self {
        Section {
            job,
            roster,
            width,
            pending: AtomicUsize::new(width - 1),
            leader,
            panic: Mutex::new(None),
            arrived: AtomicUsize::new(0),
            state: AtomicU64::new(0),
            polls,
            _borrows: PhantomData,
        }
    }

    fn roster(&self) -> &(dyn Roster + 'a) {
        // SAFETY: the roster outlives the section.
        unsafe { &*self.roster }
    }

    /// Runs share `index` of the section, catching its panic.
    pub fn run_share(&self, index: usize) {
        let p = Participant {
            section: (self as *const Section<'a>).cast::<Section<'static>>(),
            index,
            _section: PhantomData,
        };
        // SAFETY: the job outlives the section.
        let job = unsafe { &*self.job };
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| job(p))) {
            if !payload.is::<Cancelled>() {
                self.cancel(index, payload);
            }
        }
    }

    /// A member runs its share and leaves. After this call the member must not touch the
    /// section: the leader may have returned.
    ///
    /// # Safety
    /// `this` points to a live section published to this member as participant `index`.
    pub unsafe fn run_member(this: *const Section<'_>, index: usize) {
        // SAFETY: published to us and not yet left, so the leader waits and the section lives.
        let s = unsafe { &*this };
        s.run_share(index);
        let leader = s.leader;
        if s.pending.fetch_sub(1, AcqRel) == 1 {
            // SAFETY: parkers outlive every waker.
            unsafe { (*leader).unpark() };
        }
    }

    /// The leader ran share `index` itself after claiming it from a member that had not
    /// started (see `Slot::steal`): it leaves for that member.
    pub fn run_stolen(&self, index: usize) {
        self.run_share(index);
        self.pending.fetch_sub(1, AcqRel);
    }

    /// Whether every member has left.
    #[inline]
    pub fn done(&self) -> bool {
        self.pending.load(Acquire) == 0
    }

    /// The leader waits until every member has left; `woke`: a member had to be woken, so the
    /// leader yields to it rather than spinning (the loom models' form of
    /// [`join_with`](Section::join_with)).
    #[cfg_attr(not(loom), allow(dead_code))]
    pub fn join(&self, leader: &Parker, woke: bool) {
        let crowd = if woke { Crowd::Yield } else { Crowd::Alone };
        self.join_with(leader, &mut || crowd);
    }

    /// The leader waits until every member has left. `crowd` says, every few polls, whether a
    /// member it waits for is (or may be) queued on the leader's own CPU: then the leader
    /// yields to it instead of spinning, and sleeps when the yields run out.
    pub(crate) fn join_with(&self, leader: &Parker, crowd: &mut dyn FnMut() -> Crowd) {
        struct Join<'s, 'a, 'c> {
            s: &'s Section<'a>,
            leader: &'s Parker,
            crowd: &'c mut dyn FnMut() -> Crowd,
        }
        impl Waiter for Join<'_, '_, '_> {
            #[inline]
            fn ready(&mut self) -> bool {
                self.s.done()
            }
            fn sleep(&mut self) {
                counters::record_join_sleep();
                self.leader.park();
            }
            fn crowd(&mut self) -> Crowd {
                (self.crowd)()
            }
        }
        wait_staged(
            self.polls,
            &mut Join {
                s: self,
                leader,
                crowd,
            },
        );
    }

    /// The first panic of a share, if any.
    pub fn take_panic(&self) -> Option<Panic> {
        lock(&self.panic).take()
    }

    /// Resumes the first panic of a share, if any (on the leader, after the join).
    pub fn resume_panic(&self) {
        if let Some(p) = self.take_panic() {
            resume_unwind(p);
        }
    }

    #[cold]
    fn cancel(&self, me: usize, payload: Panic) {
        {
            let mut slot = lock(&self.panic);
            if slot.is_none() {
                *slot = Some(payload);
            }
        }
        let old = self.state.fetch_or(CANCELLED, AcqRel);
        if old & SLEEPERS != 0 {
            self.wake_others(me); // cancellation wakes barrier sleepers
        }
    }

    fn wake_others(&self, me: usize) {
        let roster = self.roster();
        for i in (0..self.width).filter(|&i| i != me) {
            roster.parker(i).unpark();
        }
    }

    fn barrier(&self, me: usize) {
        if self.width == 1 {
            return;
        }
        let round = self.state.load(Acquire) / ROUND;
        if self.arrived.fetch_add(1, AcqRel) + 1 == self.width {
            self.arrived.store(0, Relaxed);
            // Release: the reset and every share's writes before the barrier.
            let old = self.state.fetch_add(ROUND, AcqRel);
            if old & SLEEPERS != 0 {
                self.wake_others(me); // the last arrival wakes the others
            }
            return;
        }
        struct Meet<'s, 'a> {
            s: &'s Section<'a>,
            round: u64,
            me: usize,
        }
        impl Meet<'_, '_> {
            /// The round moved on, or the section was cancelled.
            #[inline]
            fn over(&self, state: u64) -> bool {
                state / ROUND != self.round || state & CANCELLED != 0
            }
        }
        impl Waiter for Meet<'_, '_> {
            #[inline]
            fn ready(&mut self) -> bool {
                self.over(self.s.state.load(Acquire))
            }
            fn sleep(&mut self) {
                let state = &self.s.state;
                let mut cur = state.load(Acquire);
                loop {
                    if self.over(cur) {
                        return;
                    }
                    match state.compare_exchange_weak(cur, cur + 1, AcqRel, Acquire) {
                        Ok(_) => break,
                        Err(now) => cur = now,
                    }
                }
                counters::record_barrier_sleep();
                self.s.roster().parker(self.me).park();
                state.fetch_sub(1, AcqRel);
            }
        }
        wait_staged(self.polls, &mut Meet { s: self, round, me });
        if self.state.load(Acquire) / ROUND == round {
            // Cancelled: leave the share (the join still counts this participant out).
            resume_unwind(Box::new(Cancelled));
        }
    }
}
