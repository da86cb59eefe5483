//! The worker loop: run the section share published to the slot, else help a queued fork,
//! else wait (`idle.rs`), until the pool shuts down.

use std::sync::Arc;

use crate::runtime::cpus::{current_tid, CpuSet};
use crate::runtime::idle::IdleWait;
use crate::runtime::ledger;
use crate::runtime::parker;
use crate::runtime::plain::fork::Fork;
use crate::runtime::sync::{current_cpu, Ordering::*};
use crate::runtime::team::section::Section;
use crate::runtime::team::slot::{BUSY, IDLE, TEAM};
use crate::runtime::wait::wait_staged;
use crate::runtime::pool_shared::{set_current_worker, PoolShared, SERVING};

impl PoolShared {
    /// Runs a helper's part of a fork: claims and runs jobs, then detaches.
    fn help(&self, b: *const Fork<'static>) {
        // SAFETY: attached, so the fork is alive until `detach`.
        let root = unsafe { (*b).root };
        ledger::enter(root);
        // SAFETY: as above.
        unsafe { (*b).run_jobs() };
        ledger::exit(root);
        // SAFETY: attached by `Queue::attach`; this is our last access.
        unsafe { Fork::detach(b) };
    }

    /// Attaches slot `k`'s worker to one queued fork and helps it. Returns whether it did.
    pub(crate) fn serve_queue_once(&self, k: usize) -> bool {
        if !self.queue.has_work() {
            return false;
        }
        let slot = &self.slots[k];
        let state = slot.state.load(Relaxed);
        let was_busy = state == BUSY;
        if !was_busy
            && slot
                .state
                .compare_exchange(IDLE, BUSY, Acquire, Relaxed)
                .is_err()
        {
            return false;
        }
        match self.queue.attach() {
            Some(b) => {
                self.help(b);
                if !was_busy {
                    slot.state.store(IDLE, Release);
                }
                true
            }
            None => {
                if !was_busy {
                    slot.state.store(IDLE, Release);
                }
                false
            }
        }
    }

    /// Runs the section share published to slot `k` since generation `seen`, if any.
    fn serve_section(&self, k: usize, seen: &mut usize) -> bool {
        let slot = &self.slots[k];
        match slot.take_share(seen) {
            Some(Some((section, index))) => {
                // Where this member works, for a leader deciding whether to spin.
                slot.note_cpu(current_cpu());
                // SAFETY: published to this slot for this generation and claimed by us; the
                // leader waits for us.
                unsafe { Section::run_member(section, index) };
                true
            }
            // The leader ran it.
            Some(None) => true,
            None => false,
        }
    }

    /// The worker loop of slot `k`, until the pool shuts down. The thread then calls `leave`.
    /// `leased`: a worker of the reserve, which runs on the pool's CPU set (a dedicated worker
    /// runs where its start hook put it).
    pub(crate) fn serve(self: &Arc<Self>, k: usize, leased: bool) {
        let me = parker::current();
        let slot = &self.slots[k];
        // A leader may move this worker off its own CPU (within the pool's CPU set) only when
        // the worker runs on exactly that set: a start hook's own pinning is left alone.
        let home = if leased {
            self.cpus.clone()
        } else {
            CpuSet::current()
        };
        slot.set_tid(if home == self.cpus { current_tid() } else { 0 });
        slot.set_parker(me);
        slot.take_sleeper(&self.sleepers);
        let this: *const PoolShared = &**self;
        set_current_worker(this, k);
        SERVING.fetch_add(1, Relaxed);
        // Generations start at 0 and each slot has one worker for the pool's life: starting
        // from 0 runs a share published before this worker arrived.
        let mut seen = 0;
        loop {
            if slot.state.load(Relaxed) != TEAM && slot.set_narrowed(false) {
                home.apply(); // no longer a member: every CPU of the set again
            }
            if self.serve_section(k, &mut seen) || self.serve_queue_once(k) {
                continue;
            }
            if self.shutdown.load(Acquire) {
                break;
            }
            let mut idle = IdleWait::new(self, k, me, &home, seen, slot.state.load(Acquire));
            let polls = idle.polls();
            wait_staged(polls, &mut idle);
            idle.stop_spinning();
        }
        slot.set_tid(0);
        if slot.set_narrowed(false) {
            home.apply();
        }
        SERVING.fetch_sub(1, Relaxed);
        set_current_worker(std::ptr::null(), 0);
    }
}
