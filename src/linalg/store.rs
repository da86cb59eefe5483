//! Where a factorization keeps its factors: in the caller's matrix (in place, [`InPlace`]) or
//! its own copy (owned, made by the types' owned constructors).

use faer::{Mat, MatMut, MatRef};

/// The storage of a factorization's factors.
#[derive(Debug)]
pub(crate) enum Store<'a, T> {
    /// The caller's matrix, factored in place.
    Borrowed(MatMut<'a, T>),
    /// A copy the factorization owns.
    Owned(Mat<T>),
}

impl<T> Store<'_, T> {
    pub(crate) fn as_ref(&self) -> MatRef<'_, T> {
        match self {
            Store::Borrowed(m) => m.as_ref(),
            Store::Owned(m) => m.as_ref(),
        }
    }

    pub(crate) fn as_mut(&mut self) -> MatMut<'_, T> {
        match self {
            Store::Borrowed(m) => m.as_mut(),
            Store::Owned(m) => m.as_mut(),
        }
    }
}

/// The owned constructors of a factorization type, `new` and `new_with`: they take any
/// `AsMatRef` input (conjugated views included), allocate its copy (refusing with
/// `OutOfMemory` naming `$op`), check the input with the type's `check`, then factor the
/// filled canonical copy with its `factor_copy`.
macro_rules! owned_constructors {
    // A square-only factorization: the shape is checked before anything is sized.
    ($ty:ident, $op:literal, square, $doc:literal) => {
        owned_constructors!(@ $ty, $op, true, $doc);
    };
    ($ty:ident, $op:literal, $doc:literal) => {
        owned_constructors!(@ $ty, $op, false, $doc);
    };
    (@ $ty:ident, $op:literal, $square:literal, $doc:literal) => {
        impl<T: Field> $ty<'_, T> {
            #[doc = $doc]
            #[doc = ""]
            #[doc = "[`LinalgError::OutOfMemory`] when the copy of `a` cannot be allocated: sized before any entry of `a` is read."]
            pub fn new<A: Conjugate<Canonical = T>>(
                a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
            ) -> Result<Self, LinalgError> {
                Self::new_with(a, exec, &Options::new())
            }

            #[doc = concat!("[`", stringify!($ty), "::new`] with the call's [`Options`] (which its solves keep).")]
            pub fn new_with<A: Conjugate<Canonical = T>>(
                a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
                exec: &(impl Executor + ?Sized),
                options: &Options,
            ) -> Result<Self, LinalgError> {
                let a = a.as_mat_ref();
                // The shape, then the size: an `a` too large to copy is refused before its
                // scan, and a misshapen one as misshapen, however large.
                if $square {
                    super::check::square($op, "A", a)?;
                }
                let room = super::scratch::room($op, a.nrows(), a.ncols())?;
                Self::check(a.canonical(), options)?;
                Self::factor_copy(room.fill_from(a), exec, options)
            }
        }
    };
}

pub(crate) use owned_constructors;

/// A matrix an in-place call factors and then borrows for `'a`: a `MatMut<'a, T>`, a `&'a mut
/// Mat<T>` or a `&'a mut MatMut<'_, T>` (so `lu(&mut a, ..)` works as `lu(a.as_mut(), ..)`
/// does). faer's `AsMatMut` cannot lend its matrix for longer than the call, which the
/// factorization object needs.
pub trait InPlace<'a, T> {
    /// The matrix, borrowed for `'a`.
    fn in_place(self) -> MatMut<'a, T>;
}

impl<'a, T> InPlace<'a, T> for MatMut<'a, T> {
    fn in_place(self) -> MatMut<'a, T> {
        self
    }
}

impl<'a, T> InPlace<'a, T> for &'a mut Mat<T> {
    fn in_place(self) -> MatMut<'a, T> {
        self.as_mut()
    }
}

impl<'a, T> InPlace<'a, T> for &'a mut MatMut<'_, T> {
    fn in_place(self) -> MatMut<'a, T> {
        use faer::reborrow::ReborrowMut;
        self.rb_mut()
    }
}
