//! The executor contract: what a kernel needs from whoever runs it.

use std::time::Duration;

use teamalg_gates::{Contention, Model, Signal};

/// One participant of a section.
pub struct Part<'a> {
    index: usize,
    width: usize,
    barrier: Option<&'a dyn Fn()>,
}

impl std::fmt::Debug for Part<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Part")
            .field("index", &self.index)
            .field("width", &self.width)
            .field("barrier", &self.barrier.is_some())
            .finish()
    }
}

impl<'a> Part<'a> {
    /// Participant `index` of `width`, with the executor's barrier when it has one.
    ///
    /// # Panics
    ///
    /// When `index >= width`: kernels cut their work by `index` and `width`, so a part
    /// outside `0..width` would reach past the work it owns.
    pub fn new(index: usize, width: usize, barrier: Option<&'a dyn Fn()>) -> Self {
        assert!(index < width, "participant {index} of a section of {width}");
        Part {
            index,
            width,
            barrier,
        }
    }

    /// This participant's index in `0..width`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of participants.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Meets the other participants, when the executor offers a barrier (a team does; a plain
    /// token does not). Returns whether it did.
    pub fn barrier(&self) -> bool {
        match self.barrier {
            Some(b) => {
                b();
                true
            }
            None => false,
        }
    }
}

/// What runs a kernel's parallel regions.
///
/// Next to the others: the contract, not a handle. teamalg's `Exec` (a call's token),
/// `TeamExec` (a scope's team token) and `Team` (a team held between calls) implement it, and
/// so does [`Seq`], the serial executor of code that names no pool (`Exec::serial()` is the
/// same for users).
///
/// # Safety
///
/// The kernels hand each participant, and each chunk, a disjoint part of a matrix through raw
/// pointers, trusting the executor to run every part exactly once. An implementation must
/// keep these rules; breaking any of them lets two threads write one entry.
///
/// 1. [`Executor::run`]`(width, f)` calls `f` exactly once for each index `i` in `0..k`, with
///    a [`Part`] of index `i` and width `k`, for one `k` with `1 <= k <= max(width, 1)` (the same `k`
///    for every call of that run), and returns only after every call of `f` has returned (or
///    resumes the panic of one that did not).
/// 2. [`Executor::run_chunks_of`]`(width, n, f)` and [`Executor::run_chunks`] call `f(c, n)`
///    exactly once for each `c` in `0..n` (with the `n` the kernel passed, and for
///    `run_chunks`, `n = chunks(width)`), and return only after every call has returned. The
///    provided methods keep this when rule 1 holds.
/// 3. A barrier handed to [`Part::new`] returns in a participant only once every
///    participant of that run has called it as often, so [`Part::barrier`] answering `true`
///    means the others have arrived: a kernel may write before a barrier what others read
///    after it (one that gets `false` must not rely on the others).
///
/// The other methods (costs, the model, `has_barrier`, `warm`, `rest`, `identity`) steer only
/// how fast a kernel runs, never what it computes: a wrong answer there is slow, not unsound.
///
/// A safe `impl` does not compile, since the kernels cannot check these rules:
///
/// ```compile_fail,E0200
/// use std::time::Duration;
/// use teamalg_kernels::par::{Executor, Part};
///
/// /// Runs participant 0 twice, on two threads: two writers of one tile.
/// struct Rogue;
///
/// impl Executor for Rogue {
///     fn width(&self) -> usize { 2 }
///     fn dispatch_cost(&self, _: usize) -> Duration { Duration::ZERO }
///     fn has_barrier(&self) -> bool { false }
///     fn run(&self, width: usize, f: &(dyn Fn(Part<'_>) + Sync)) {
///         std::thread::scope(|s| {
///             s.spawn(|| f(Part::new(0, width, None)));
///             f(Part::new(0, width, None));
///         });
///     }
/// }
/// ```
///
/// teamalg's tokens, team tokens and held teams ([`Seq`] too) keep the rules; a kernel test
/// that needs its own executor writes `unsafe impl` with an argument for each rule.
pub unsafe trait Executor: Sync {
    /// The most participants a section may have.
    fn width(&self) -> usize;

    /// The cost of one section at `width` (`Duration::MAX` when none can be dispatched).
    fn dispatch_cost(&self, width: usize) -> Duration;

    /// What the gates read besides the dispatch cost: rates, split costs and thresholds (a
    /// pool's model for teamalg's tokens and teams; the host's built-in one by default).
    fn model(&self) -> &Model {
        crate::families::host_model()
    }

    /// Runs `f` on `width` participants (at most [`Executor::width`]) and returns when all are
    /// done. A panic in any participant resumes here.
    fn run(&self, width: usize, f: &(dyn Fn(Part<'_>) + Sync));

    /// Whether [`Part::barrier`] meets the other participants.
    fn has_barrier(&self) -> bool;

    /// Runs `f(c, n)` for every chunk `c` of the region cut into `n` chunks, on at most `width`
    /// participants (at most [`Executor::width`]), and returns when all are done. `n` is this
    /// executor's choice, at least `width` ([`Executor::chunks`], read once per call): see
    /// [`Executor::run_chunks_of`].
    fn run_chunks(&self, width: usize, f: &(dyn Fn(usize, usize) + Sync)) {
        self.run_chunks_of(width, self.chunks(width), f);
    }

    /// Runs `f(c, n)` for every chunk `c` in `0..n` on at most `width` participants, and
    /// returns when all are done: for a kernel that sized per-chunk storage from
    /// [`Executor::chunks`] beforehand (the count may change between two calls of `chunks`
    /// on an executor that watches its participants). By default participant `i` of `width`
    /// runs its contiguous share of the chunks; an executor whose participants may fall
    /// behind (a plain token's helpers on a busy host, a team's members on a busy machine)
    /// lets them claim chunks one at a time instead, so a late one leaves its chunks to the
    /// others.
    fn run_chunks_of(&self, width: usize, n: usize, f: &(dyn Fn(usize, usize) + Sync)) {
        self.run(width, &|p: Part<'_>| {
            let (i, w) = (p.index(), p.width());
            for c in part_start(i, n, w)..part_start(i + 1, n, w) {
                f(c, n);
            }
        });
    }

    /// How many chunks [`Executor::run_chunks`] cuts a `width`-wide region into: `width` by
    /// default (one per participant).
    fn chunks(&self, width: usize) -> usize {
        width
    }

    /// What the next parallel region would pay once, beyond its dispatch cost, because
    /// participants it needs sleep now and must be woken: zero for executors with nothing
    /// asleep. A kernel weighs it against the work of its whole call (`gate::width`), since a
    /// wake is paid once per call, not per section.
    fn wake_cost(&self) -> Duration {
        Duration::ZERO
    }

    /// What each section loses now, beyond its dispatch cost, to participants that run late
    /// on a busy machine (the executor's live view: `docs/gates.md`, "The live view"); zero on
    /// a quiet machine and for executors that keep no such view. The gate adds it to the
    /// dispatch cost of every section it weighs.
    fn lateness(&self) -> Duration {
        Duration::ZERO
    }

    /// How contended the CPUs a parallel region would use are now, for a region whose serial
    /// estimate is `estimate` (the executor may read sources that cost microseconds only for
    /// a region large enough to pay for the read): what each section is expected to lose, and
    /// which source said so (`docs/gates.md`, "Contention"). By default the live
    /// [`lateness`](Executor::lateness) alone.
    fn contention(&self, estimate: Duration) -> Contention {
        let _ = estimate;
        let late = self.lateness();
        Contention {
            late,
            signal: if late.is_zero() {
                Signal::None
            } else {
                Signal::Measured
            },
        }
    }

    /// Asks the participants for a reading of their own run-queue delay (they spin a little
    /// and report whether the CPUs they would use are given to them): called by a gate that
    /// went serial on a count of runnable threads alone, which cannot tell an equal
    /// competitor from a niced one. Executors without such participants do nothing.
    fn probe(&self) {}

    /// The CPUs this executor's parallel calls count against: a parallel call holds its
    /// width of them, and a region of another thread's call gets only what the others leave
    /// (`occupancy`). `None` for an executor whose decisions must not depend on other calls
    /// (a pool built without a live view: audits, tests of the model). By default the CPUs
    /// the process may use.
    fn cpus(&self) -> Option<usize> {
        Some(crate::exec::occupancy::process_cpus())
    }

    /// Everything the gate weighs for one decision but the dispatch row, in one answer
    /// (`docs/executor.md`, "One gate question"): the model; from it, through `weigh`, the
    /// region's serial estimate and whether the derived rule decides (the caller set no
    /// threshold of its own); the width; and, for a decision the derived rule makes while its
    /// call has not given up (`gave_up`), the budget `budget_of(width, cpus)` leaves of the
    /// width (what the process's other calls hold) and, where it is at least 2, the wake and
    /// the contention. By default composed of the methods above ([`answer_from`]); an
    /// executor whose pieces share a lookup answers it at once.
    fn question(
        &self,
        weigh: &dyn Fn(&Model) -> (Duration, bool),
        gave_up: bool,
        budget_of: &dyn Fn(usize, usize) -> usize,
    ) -> Answer<'_> {
        let model = self.model();
        let weighed = weigh(model);
        let reads = Reads {
            cpus: || self.cpus(),
            contention: |estimate| self.contention(estimate),
            wake: || self.wake_cost(),
        };
        answer_from(model, self.width(), weighed, gave_up, budget_of, reads)
    }

    /// Which executor this is, to tell one executor's calls from another's (a stream of calls
    /// on one team, `wakes.rs`): by default the address of the executor itself, which a
    /// reference to it forwards to (the address of a reference would name the reference).
    fn identity(&self) -> usize {
        self as *const Self as *const () as usize
    }

    /// Tells the participants waiting for this thread's next section that none comes for a
    /// while, so that they sleep now instead of spinning through their budget: called by a
    /// kernel call that gave up and runs its sections on the caller (`call.rs`). The next
    /// section wakes them. Executors with nothing that spins do nothing.
    fn rest(&self) {}

    /// Wakes the participants a `width`-wide section would use, so that they spin through the
    /// serial work the kernel does before its first section. Called at kernel entry by kernels
    /// that will go parallel; executors with nothing to wake do nothing.
    fn warm(&self, width: usize) {
        let _ = width;
    }
}

/// What an executor answers the gate ([`Executor::question`]).
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    /// The model: rates, split costs, thresholds.
    pub model: &'a Model,
    /// The region's serial estimate under the model.
    pub estimate: Duration,
    /// The most participants a section may have ([`Executor::width`]).
    pub width: usize,
    /// Whether the derived rule decides (the width is at least 2 and the caller set no
    /// threshold).
    pub derived: bool,
    /// The participants the decision may use: the width, or what the process's other calls
    /// leave of it.
    pub budget: usize,
    /// The wake the decision pays ([`Executor::wake_cost`], at least the contention's
    /// lateness where there is one).
    pub wake: Duration,
    /// The contention read ([`Contention::NONE`] when none was read).
    pub contention: Contention,
}

/// The pieces of an answer an executor reads on demand: only a decision the derived rule
/// makes reads them, and the contention and the wake only where the budget is at least 2.
#[derive(Debug, Clone, Copy)]
pub struct Reads<C, N, W> {
    /// [`Executor::cpus`].
    pub cpus: C,
    /// [`Executor::contention`].
    pub contention: N,
    /// [`Executor::wake_cost`].
    pub wake: W,
}

/// [`Executor::question`]'s answer, for an executor of `width` whose model is `model`, a
/// region of serial time `estimate` that the derived rule decides when `derived` (and the width
/// is at least 2), the executor's pieces read through `reads`. The one place the rule's
/// machine inputs are put together.
pub fn answer_from<'a>(
    model: &'a Model,
    width: usize,
    (estimate, derived): (Duration, bool),
    gave_up: bool,
    budget_of: &dyn Fn(usize, usize) -> usize,
    reads: Reads<
        impl FnOnce() -> Option<usize>,
        impl FnOnce(Duration) -> Contention,
        impl FnOnce() -> Duration,
    >,
) -> Answer<'a> {
    let derived = width >= 2 && derived;
    let budget = match derived.then(reads.cpus).flatten() {
        Some(cpus) => budget_of(width, cpus),
        None => width,
    };
    // None is asked of a serial executor (a busy team's `width` is 1).
    let (wake, contention) = if !derived || budget < 2 || gave_up {
        (Duration::ZERO, Contention::NONE)
    } else {
        let contention = (reads.contention)(estimate);
        // A member woken on a busy machine starts no sooner than a member there answers late:
        // a pool built per call beside two busy processes waited a time slice for its first
        // section (`docs/perf/busy.md`).
        let wake = match (reads.wake)() {
            w if w.is_zero() => w,
            w => w.max(contention.late),
        };
        (wake, contention)
    };
    Answer {
        model,
        estimate,
        width,
        derived,
        budget,
        wake,
        contention,
    }
}

/// Serial execution: width 1, nothing dispatches. The kernels' spelling of what users write as
/// `Exec::serial()`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Seq;

// SAFETY: `run` calls `f` once, with part 0 of 1 (rule 1); the provided chunk methods run
// on it (rule 2); its one participant meets itself (rule 3).
unsafe impl Executor for Seq {
    fn width(&self) -> usize {
        1
    }

    fn dispatch_cost(&self, _: usize) -> Duration {
        Duration::MAX
    }

    fn run(&self, width: usize, f: &(dyn Fn(Part<'_>) + Sync)) {
        assert!(width <= 1, "a serial executor runs one participant");
        f(Part::new(0, 1, None));
    }

    fn has_barrier(&self) -> bool {
        true // trivially: one participant meets itself
    }
}

// SAFETY: every method forwards to `E`'s, which keeps the rules.
unsafe impl<E: Executor + ?Sized> Executor for &E {
    fn width(&self) -> usize {
        (**self).width()
    }
    fn dispatch_cost(&self, width: usize) -> Duration {
        (**self).dispatch_cost(width)
    }
    fn model(&self) -> &Model {
        (**self).model()
    }
    fn question(
        &self,
        weigh: &dyn Fn(&Model) -> (Duration, bool),
        gave_up: bool,
        budget_of: &dyn Fn(usize, usize) -> usize,
    ) -> Answer<'_> {
        (**self).question(weigh, gave_up, budget_of)
    }
    fn run(&self, width: usize, f: &(dyn Fn(Part<'_>) + Sync)) {
        (**self).run(width, f)
    }
    fn has_barrier(&self) -> bool {
        (**self).has_barrier()
    }
    fn rest(&self) {
        (**self).rest()
    }
    fn warm(&self, width: usize) {
        (**self).warm(width)
    }
    fn run_chunks(&self, width: usize, f: &(dyn Fn(usize, usize) + Sync)) {
        (**self).run_chunks(width, f)
    }
    fn run_chunks_of(&self, width: usize, n: usize, f: &(dyn Fn(usize, usize) + Sync)) {
        (**self).run_chunks_of(width, n, f)
    }
    fn chunks(&self, width: usize) -> usize {
        (**self).chunks(width)
    }
    fn wake_cost(&self) -> Duration {
        (**self).wake_cost()
    }
    fn lateness(&self) -> Duration {
        (**self).lateness()
    }
    fn contention(&self, estimate: Duration) -> Contention {
        (**self).contention(estimate)
    }
    fn probe(&self) {
        (**self).probe()
    }
    fn cpus(&self) -> Option<usize> {
        (**self).cpus()
    }
    fn identity(&self) -> usize {
        (**self).identity()
    }
}

/// Where part `i` of `len` items cut into `parts` near-equal contiguous parts starts:
/// `floor(i * len / parts)`, computed without forming `i * len`, which overflows a 32-bit
/// `usize` from `len` above `2^32 / parts`. Exact for `i <= parts` (part `parts` starts at
/// `len`): `i * len / parts = i * q + i * r / parts` with `len = q * parts + r`, and
/// `i * q <= len`, `i * r < parts^2`.
///
/// ```
/// use teamalg_kernels::par::part_start;
/// assert_eq!((0..=3).map(|i| part_start(i, 10, 3)).collect::<Vec<_>>(), [0, 3, 6, 10]);
/// // Where `i * len` would overflow:
/// assert_eq!(part_start(3, usize::MAX, 4), usize::MAX / 4 * 3 + 2);
/// ```
#[inline]
pub fn part_start(i: usize, len: usize, parts: usize) -> usize {
    debug_assert!(i <= parts && parts > 0);
    i * (len / parts) + i * (len % parts) / parts
}

#[cfg(test)]
mod tests {
    use super::{part_start, Part};

    #[test]
    #[should_panic(expected = "participant 2 of a section of 2")]
    fn a_part_outside_its_section_is_refused() {
        let _ = Part::new(2, 2, None);
    }

    #[test]
    fn part_start_is_the_exact_floor_and_never_overflows() {
        for len in [
            0usize,
            1,
            7,
            1000,
            usize::MAX / 3,
            usize::MAX - 1,
            usize::MAX,
        ] {
            for parts in [1usize, 2, 3, 7, 16, 64] {
                let mut prev = 0;
                for i in 0..=parts {
                    let exact = (i as u128 * len as u128 / parts as u128) as usize;
                    let s = part_start(i, len, parts);
                    assert_eq!(s, exact, "i {i} len {len} parts {parts}");
                    assert!(s >= prev);
                    prev = s;
                }
                assert_eq!(prev, len);
            }
        }
    }
}
