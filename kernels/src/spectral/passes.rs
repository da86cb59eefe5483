//! How one reduction runs its passes: on `exec`, at most `width` participants, each pass gated
//! by `threshold`. One bundle, since every pass of a step takes all three. A call whose
//! sections lose more than going parallel was expected to gain runs its later passes on the
//! caller, over the same bands, so the results keep their bits (the bail-out of the kernel
//! execution layer, `exec/call.rs`; `docs/svd.md`, "The bail-out").

use teamalg_gates::ParThreshold;

use crate::exec::par::Executor;

pub(crate) struct Passes<'a, E: Executor + ?Sized> {
    pub(crate) exec: &'a E,
    pub(crate) width: usize,
    pub(crate) threshold: Option<ParThreshold>,
}

// A derive would ask `E: Copy`; the bundle holds only references and plain values.
impl<E: Executor + ?Sized> Clone for Passes<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E: Executor + ?Sized> Copy for Passes<'_, E> {}
