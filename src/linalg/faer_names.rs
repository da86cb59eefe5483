//! faer's accessor names (`S()`, `U()`, `V()`, `L()`, `P()`, ...) beside teamalg's own, so code
//! ported from faer reads as it did. Each returns what teamalg's lower-case accessor returns:
//! singular values and eigenvalues as slices, factors as views (`docs/kernels.md`, "Coming from
//! faer").
#![allow(non_snake_case)] // faer's names are upper case: `S()`, `U()`, `L()`.

use faer::perm::PermRef;
use faer::MatRef;
use faer::complex::Complex;

use super::{
    Cholesky, ColPivQr, Eigen, Field, FullPivLu, Lblt, Ldlt, Lu, Qr, RealOf, SelfAdjointEigen,
    Svd, TriangularView,
};

/// One faer-named accessor that forwards to teamalg's.
macro_rules! faer_name {
    ($faer:ident => $ours:ident -> $ret:ty) => {
        #[doc = concat!("faer's name for [`Self::", stringify!($ours), "`].")]
        pub fn $faer(&self) -> $ret {
            self.$ours()
        }
    };
}

impl<T: Field> Lu<'_, T> {
    faer_name!(L => l -> TriangularView<'_, T>);
    faer_name!(U => u -> TriangularView<'_, T>);
    faer_name!(P => p -> PermRef<'_, usize>);
}

impl<T: Field> FullPivLu<T> {
    faer_name!(L => l -> TriangularView<'_, T>);
    faer_name!(U => u -> TriangularView<'_, T>);
    faer_name!(P => p -> PermRef<'_, usize>);
    faer_name!(Q => q -> PermRef<'_, usize>);
}

impl<T: Field> Cholesky<'_, T> {
    faer_name!(L => l -> TriangularView<'_, T>);
}

impl<T: Field> Ldlt<T> {
    faer_name!(L => l -> TriangularView<'_, T>);
    faer_name!(D => d -> Vec<T::Real>);
}

impl<T: Field> Lblt<T> {
    faer_name!(L => l -> TriangularView<'_, T>);
    faer_name!(P => p -> PermRef<'_, usize>);
}

impl<T: Field> Qr<'_, T> {
    faer_name!(R => r -> TriangularView<'_, T>);
}

impl<T: Field> ColPivQr<'_, T> {
    faer_name!(R => r -> TriangularView<'_, T>);
    faer_name!(P => p -> PermRef<'_, usize>);
}

impl<T: Field> Svd<T> {
    faer_name!(S => s -> &[RealOf<T>]);
    faer_name!(U => u -> MatRef<'_, T>);
    faer_name!(V => v -> MatRef<'_, T>);
}

impl<T: Field> SelfAdjointEigen<T> {
    faer_name!(S => w -> &[RealOf<T>]);
    faer_name!(U => u -> MatRef<'_, T>);
}

impl<T: Field> Eigen<T> {
    faer_name!(S => eigenvalues -> &[Complex<T::Real>]);
    faer_name!(U => eigenvectors -> MatRef<'_, Complex<T::Real>>);
}
