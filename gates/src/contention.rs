//! What a region reads of how contended the CPUs it would use are now: what each section is
//! expected to lose to participants that run late, and which source said so. The executor
//! computes it (teamalg's: `src/runtime/contention.rs`); the rule adds `late` to every
//! section's dispatch cost; the trace names the source. Design record: `docs/gates.md`,
//! "Contention: one signal, read before waiting".

use std::time::Duration;

/// Which source set a [`Contention`], in the order they are asked (the first that knows wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Signal {
    /// Nothing was read or nothing knew: the model alone (an executor without a view, a
    /// region too small to read, a source missing).
    #[default]
    None,
    /// The runnable threads fit the CPUs with room for the region's members: quiet.
    Room,
    /// The process's own sections lost time lately (the live view).
    Measured,
    /// The team's own threads waited in the run queue lately (their schedstat).
    RunQueue,
    /// Some task waited for a CPU lately, machine-wide (`/proc/pressure/cpu`).
    Pressure,
    /// More runnable threads than CPUs, and nothing measured yet: the prior.
    Count,
}

impl Signal {
    /// The source in one word, for tables.
    pub fn name(self) -> &'static str {
        match self {
            Signal::None => "-",
            Signal::Room => "room",
            Signal::Measured => "measured",
            Signal::RunQueue => "run queue",
            Signal::Pressure => "pressure",
            Signal::Count => "count",
        }
    }
}

/// How contended the CPUs are now, as a region's gate weighs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Contention {
    /// What each section is expected to lose to late participants (zero: quiet).
    pub late: Duration,
    /// Which source said so.
    pub signal: Signal,
}

impl Contention {
    /// Quiet, as far as anyone knows: the model alone.
    pub const NONE: Contention = Contention {
        late: Duration::ZERO,
        signal: Signal::None,
    };

    /// Whether the reading found the CPUs free for the region's participants: room by the
    /// runnable count, or a crowd seen only now and not yet believed (threads spinning a
    /// moment before they sleep). A steady competitor reads otherwise. For a region whose
    /// parallel path is slower than the serial alternative on one thread, which only a team
    /// at full speed repays.
    ///
    /// ```
    /// use std::time::Duration;
    /// use teamalg_gates::{Contention, Signal};
    ///
    /// let room = Contention { late: Duration::ZERO, signal: Signal::Room };
    /// let crowd = Contention { late: Duration::from_millis(1), signal: Signal::Count };
    /// assert!(room.found_room() && !crowd.found_room() && !Contention::NONE.found_room());
    /// ```
    pub fn found_room(&self) -> bool {
        match self.signal {
            Signal::Room => true,
            Signal::Count => self.late.is_zero(),
            _ => false,
        }
    }
}

/// Lost time below this is timer noise and a participant's first cache misses, not lateness.
pub const LATE_FLOOR: Duration = Duration::from_micros(20);

/// What a participant still waking may take beyond a section's allowance before it counts as
/// late: on the 2-vCPU hosts the first section after a wake took 190 to 260 us for a GEMM of
/// 128 (75 us serial), the member starting 75 to 250 us after its wake on a cold cache; a
/// member the OS has descheduled costs a time slice (3 ms and more).
pub const WAKE_SLACK: Duration = Duration::from_micros(500);

/// What a section may spend beyond `own` (the leader's share, or an even share of the work)
/// before the rest counts as lost to late participants: a quarter of it (shares differ a
/// little: a static split, a cold cache), [`LATE_FLOOR`], and `wake` while a participant is
/// still waking.
///
/// ```
/// use std::time::Duration;
/// use teamalg_gates::contention::{allowance, LATE_FLOOR};
///
/// let us = Duration::from_micros;
/// assert_eq!(allowance(us(400), Duration::ZERO), us(100) + LATE_FLOOR);
/// ```
pub fn allowance(own: Duration, wake: Duration) -> Duration {
    own / 4 + LATE_FLOOR + wake
}
