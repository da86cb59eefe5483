//! The owned forms' scratch, kept between calls.
//!
//! The `_with_scratch` forms take their workspace from the caller, who sizes it once and
//! reuses it, as LAPACK's callers do. The owned forms (`Lu::new`, `Svd::new_thin`,
//! `singular_values`, ...) have no caller's workspace, and a fresh one per call is not free:
//! the system allocator maps a large buffer (above 32 MiB with glibc) anew on every call, and
//! the kernel then pays a page fault for each page it touches (the owned EVD of order 1024
//! took 1.42 times the scratch form's time, `docs/perf/runs/kernels-log.md`). So the owned
//! forms take their scratch from a keep: buffers given back after each call and handed to the
//! next call that fits in one, as MKL keeps its buffers until `mkl_free_buffers`.
//!
//! The keep is process-wide and bounded: it holds at most [`scratch_limit`] bytes in all
//! (256 MiB unless [`set_scratch_limit`] says otherwise), dropping the buffers given back
//! longest ago first; a buffer larger than the limit is freed after its call.
//! [`release_scratch`] frees everything kept now. Each call holds its buffer alone, so calls
//! on many threads at once each take their own (more of them are kept, within the limit).
//!
//! The owned forms' results and copies are allocated here too ([`room`] and the helpers on it),
//! fallibly and before anything is read: an operand too large to hold is refused with
//! [`LinalgError::OutOfMemory`] at once, not after a scan of all its entries, and never by a
//! panic or an abort.

use std::sync::{Mutex, MutexGuard};

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::traits::math_utils::{conj, zero};
use faer::traits::{ComplexField, Conjugate};
use faer::{Mat, MatRef};

use super::LinalgError;

/// Room for an `m x n` matrix of `T`, allocated now and holding no entry yet: the one way the
/// owned forms allocate a matrix whose size an operand sets, so that a call sizes its result
/// before it scans or copies an entry. faer counts the bytes with checked arithmetic and asks
/// the allocator without aborting (`Mat::try_reserve`); its `Mat::from_fn`, `zeros` and
/// `to_owned` panic on the same failure instead. Errors: [`LinalgError::OutOfMemory`] (naming
/// `op`) when the bytes overflow `usize` or the allocator refuses them.
pub(crate) fn room<T>(op: &'static str, m: usize, n: usize) -> Result<Room<T>, LinalgError> {
    let mut x = Mat::new();
    x.try_reserve(m, n)
        .map_err(|_| LinalgError::OutOfMemory { op })?;
    Ok(Room { x, m, n })
}

/// An allocated, still empty `m x n` matrix ([`room`]); filling it allocates nothing.
#[derive(Debug)]
pub(crate) struct Room<T> {
    /// `0 x 0`, with the capacity of `m x n`.
    x: Mat<T>,
    m: usize,
    n: usize,
}

impl<T> Room<T> {
    /// The matrix of `f(i, j)`.
    pub(crate) fn fill(self, f: impl FnMut(usize, usize) -> T) -> Mat<T> {
        let Room { mut x, m, n } = self;
        if m == 0 || n == 0 {
            // faer's fill visits every column even with no row: a `0 x n` of huge `n` would
            // cost `n` steps over nothing.
            // SAFETY: `x` has the capacity of `m x n` (`room` reserved it; faer's `set_dims`
            // doc writes `<` for "at most", as its own `from_fn` leaves `nrows` equal to the row
            // capacity), and a shape with no entry has none to initialize.
            unsafe { x.set_dims(m, n) };
            return x;
        }
        x.resize_with(m, n, f);
        x
    }

    /// A copy of `a` (of the room's shape), conjugated when `a` is a conjugated view, as
    /// faer's `to_owned` makes it.
    pub(crate) fn fill_from<A: Conjugate<Canonical = T>>(self, a: MatRef<'_, A>) -> Mat<T>
    where
        T: ComplexField,
    {
        assert!(
            (a.nrows(), a.ncols()) == (self.m, self.n),
            "the room has a's shape"
        );
        let c = a.canonical();
        if A::IS_CANONICAL {
            self.fill(|i, j| c[(i, j)].clone())
        } else {
            self.fill(|i, j| conj(&c[(i, j)]))
        }
    }
}

/// A new `m x n` matrix of `f(i, j)`, allocated by [`room`] (its errors).
pub(crate) fn mat<T>(
    op: &'static str,
    m: usize,
    n: usize,
    f: impl FnMut(usize, usize) -> T,
) -> Result<Mat<T>, LinalgError> {
    Ok(room(op, m, n)?.fill(f))
}

/// A new `m x n` matrix of zeros, allocated by [`room`] (its errors).
pub(crate) fn zeros<T: ComplexField>(
    op: &'static str,
    m: usize,
    n: usize,
) -> Result<Mat<T>, LinalgError> {
    mat(op, m, n, |_, _| zero())
}

/// A copy of `a` as its canonical type (as faer's `to_owned`), allocated by [`room`] (its
/// errors) before any entry is read.
pub(crate) fn copy<A: Conjugate>(
    op: &'static str,
    a: MatRef<'_, A>,
) -> Result<Mat<A::Canonical>, LinalgError> {
    Ok(room(op, a.nrows(), a.ncols())?.fill_from(a))
}

/// A vector of `len` copies of `value`, allocated without aborting: `vec!` aborts the process
/// when the allocator refuses. Errors: [`LinalgError::OutOfMemory`] (naming `op`).
pub(crate) fn vec<T: Clone>(op: &'static str, len: usize, value: T) -> Result<Vec<T>, LinalgError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| LinalgError::OutOfMemory { op })?;
    v.resize(len, value);
    Ok(v)
}

/// The limit unless [`set_scratch_limit`] changes it: enough for the SVD of order 1024 in
/// `c64` (106 MiB) and the EVD of the same order (82 MiB) at once.
const DEFAULT_LIMIT: usize = 256 << 20;

/// The kept buffers, each with its size in bytes, given back longest ago first.
struct Keep {
    buffers: Vec<(usize, MemBuffer)>,
    limit: usize,
}

impl Keep {
    fn held(&self) -> usize {
        self.buffers.iter().map(|(bytes, _)| bytes).sum()
    }

    /// Drops the buffers given back longest ago until the keep is within its limit.
    fn trim(&mut self) {
        while self.held() > self.limit {
            self.buffers.remove(0);
        }
    }
}

static KEEP: Mutex<Keep> = Mutex::new(Keep {
    buffers: Vec::new(),
    limit: DEFAULT_LIMIT,
});

/// The keep; a panic while it was locked left no half-done change (every change is one
/// `Vec` operation), so a poisoned lock is still good.
fn keep() -> MutexGuard<'static, Keep> {
    KEEP.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` on scratch that holds `req`: a kept buffer when one fits (the smallest that does),
/// else a new one, kept after the call if the limit allows. Errors:
/// [`LinalgError::OutOfMemory`] (naming `op`) when a new buffer cannot be allocated.
pub(crate) fn with<R>(
    op: &'static str,
    req: StackReq,
    f: impl FnOnce(&mut MemStack) -> R,
) -> Result<R, LinalgError> {
    let taken = {
        let mut keep = keep();
        let mut best: Option<(usize, usize)> = None;
        for (i, (bytes, b)) in keep.buffers.iter_mut().enumerate() {
            if MemStack::new(b).can_hold(req) && best.is_none_or(|(_, least)| *bytes < least) {
                best = Some((i, *bytes));
            }
        }
        let best = best.map(|(i, _)| i);
        best.map(|i| keep.buffers.remove(i))
    };
    let (bytes, mut buf) = match taken {
        Some(kept) => kept,
        None => {
            let buf = MemBuffer::try_new(req).map_err(|_| LinalgError::OutOfMemory { op })?;
            (req.unaligned_bytes_required(), buf)
        }
    };
    let r = f(MemStack::new(&mut buf));
    let mut keep = keep();
    if bytes <= keep.limit {
        keep.buffers.push((bytes, buf));
        keep.trim();
    }
    Ok(r)
}

/// The most bytes of scratch the owned forms keep between calls, in all threads together
/// (256 MiB by default). See [`set_scratch_limit`].
pub fn scratch_limit() -> usize {
    keep().limit
}

/// Sets the most bytes of scratch the owned forms keep between calls (0 keeps none, so every
/// call allocates and frees its own), dropping kept buffers at once to meet it.
///
/// ```
/// use faer::Mat;
/// use teamalg::{linalg, Exec};
///
/// let a = Mat::<f64>::from_fn(200, 200, |i, j| ((i * 7 + j * 3) % 11) as f64);
/// linalg::singular_values(&a, &Exec::serial())?;
/// assert!(linalg::kept_scratch() > 0); // the SVD's scratch, for the next call
/// linalg::set_scratch_limit(1 << 20);
/// assert!(linalg::kept_scratch() <= 1 << 20);
/// linalg::release_scratch();
/// assert_eq!(linalg::kept_scratch(), 0);
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
pub fn set_scratch_limit(bytes: usize) {
    let mut keep = keep();
    keep.limit = bytes;
    keep.trim();
}

/// The bytes of scratch kept now.
pub fn kept_scratch() -> usize {
    keep().held()
}

/// Frees all the scratch kept now (the limit stays; later calls keep theirs again).
pub fn release_scratch() {
    keep().buffers.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One test for the process-wide keep, so no other test of this binary changes it
    /// meanwhile.
    #[test]
    fn the_keep_reuses_bounds_and_releases() {
        let req = |kib: usize| StackReq::new::<u8>(kib << 10);
        release_scratch();
        set_scratch_limit(1 << 20);
        // A call's buffer is kept, and the next call that fits takes the same one.
        let first = with("t", req(64), |s| s.as_ptr() as usize).unwrap();
        assert!(kept_scratch() >= 64 << 10);
        let again = with("t", req(32), |s| s.as_ptr() as usize).unwrap();
        assert_eq!(first, again, "a smaller request reuses the kept buffer");
        // A call inside another finds the keep empty and takes a buffer of its own.
        let (outer, inner) = with("t", req(64), |s| {
            let inner = with("t", req(64), |t| t.as_ptr() as usize).unwrap();
            (s.as_ptr() as usize, inner)
        })
        .unwrap();
        assert_ne!(outer, inner);
        assert!(kept_scratch() >= 128 << 10, "both given back");
        // The smallest buffer that fits is taken.
        with("t", req(512), |_| ()).unwrap();
        let small = with("t", req(16), |s| s.as_ptr() as usize).unwrap();
        assert!(small == outer || small == inner, "not the 512 KiB buffer");
        // Beyond the limit: the oldest go first; a buffer larger than the limit is not kept.
        with("t", req(2048), |_| ()).unwrap();
        assert!(kept_scratch() <= 1 << 20);
        set_scratch_limit(100 << 10);
        assert!(kept_scratch() <= 100 << 10);
        release_scratch();
        assert_eq!(kept_scratch(), 0);
        set_scratch_limit(DEFAULT_LIMIT);
        assert_eq!(scratch_limit(), DEFAULT_LIMIT);
    }
}
