//! The executor contract: what a kernel needs from whoever runs it.

use std::time::Duration;

/// One participant of a section.
pub struct Part<'a> {
    index: usize,
    width: usize,
    barrier: Option<&'a dyn Fn()>,
}

impl<'a> Part<'a> {
    /// Participant `index` of `width`, with the executor's barrier when it has one.
    pub fn new(index: usize, width: usize, barrier: Option<&'a dyn Fn()>) -> Self {
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
pub trait Executor: Sync {
    /// The most participants a section may have.
    fn width(&self) -> usize;

    /// The cost of one section at `width` (`Duration::MAX` when none can be dispatched).
    fn dispatch_cost(&self, width: usize) -> Duration;

    /// Runs `f` on `width` participants (at most [`Executor::width`]) and returns when all are
    /// done. A panic in any participant resumes here.
    fn run(&self, width: usize, f: &(dyn Fn(Part<'_>) + Sync));

    /// Whether [`Part::barrier`] meets the other participants.
    fn has_barrier(&self) -> bool;

    /// Wakes the participants a `width`-wide section would use, so that they spin through the
    /// serial work the kernel does before its first section. Called at kernel entry by kernels
    /// that will go parallel; executors with nothing to wake do nothing.
    fn warm(&self, width: usize) {
        let _ = width;
    }
}

/// Serial execution: width 1, nothing dispatches.
#[derive(Debug, Clone, Copy, Default)]
pub struct Seq;

impl Executor for Seq {
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

impl<E: Executor + ?Sized> Executor for &E {
    fn width(&self) -> usize {
        (**self).width()
    }
    fn dispatch_cost(&self, width: usize) -> Duration {
        (**self).dispatch_cost(width)
    }
    fn run(&self, width: usize, f: &(dyn Fn(Part<'_>) + Sync)) {
        (**self).run(width, f)
    }
    fn has_barrier(&self) -> bool {
        (**self).has_barrier()
    }
    fn warm(&self, width: usize) {
        (**self).warm(width)
    }
}
