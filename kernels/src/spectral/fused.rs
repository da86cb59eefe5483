//! The fused single passes, with runtime SIMD dispatch (`pulp`, the crate faer itself uses).
//! The tridiagonalization's: over a band of columns, one read and one write of each matrix
//! entry applies the previous step's rank-two update and accumulates both halves of the next
//! Hermitian matrix-vector product (`docs/svd.md`, "The parallel tridiagonalization"). The
//! pivoted QR's: over a chunk of columns, one read and one write of each entry applies the
//! previous reflector's delayed rank-one update and accumulates the next reflector's product
//! (`docs/kernels.md`, "QR with column pivoting").

use faer::MatMut;
use num_complex::Complex;
use pulp::{Simd, WithSimd};

/// One band of the trailing matrix `B` (its lower triangle) and the vectors of one step, all
/// indexed from the band's first column `c0`: rows `c0..n` of `B` are rows `0..` here.
// `Send` and `Sync` are automatic and sound: a `MatMut` and slices, each band's own (the
// driver hands disjoint columns and partial vectors to the bands it runs at once).
#[derive(Debug)]
pub struct Band<'a, T> {
    /// Columns `c0..c1` of `B`, rows `c0..n`: column `j` is read from row `j` on.
    pub a: MatMut<'a, T>,
    /// The previous step's Householder vector and update vector (`B -= vp yp^H + yp vp^H`);
    /// `None` on the first step.
    pub pending: Option<(&'a [T], &'a [T])>,
    /// This step's Householder vector.
    pub v: &'a [T],
    /// Gets the band's part of the lower half of `B v` (rows `c0..n`); overwritten (the band's
    /// first column stores, the others accumulate).
    pub z: &'a mut [T],
    /// Gets, per column `j` of the band, the strict upper half of `(B v)_j`:
    /// `sum_{i > j} conj(b_ij) v_i`.
    pub upper: &'a mut [T],
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for num_complex::Complex<f32> {}
    impl Sealed for num_complex::Complex<f64> {}
}

/// The scalar types the fused pass runs on: `f32`, `f64`, `c32` and `c64` (sealed).
pub trait Fused: Copy + Send + Sync + Sized + sealed::Sealed {
    /// Runs the fused pass over `band`: for each column `j` and row `i >= j`,
    /// `b_ij -= vp_i conj(yp_j) + yp_i conj(vp_j)`, then `z_i += b_ij v_j` and, for `i > j`,
    /// `upper_j += conj(b_ij) v_i`.
    fn fused_band(band: Band<'_, Self>);

    /// The pivoted QR's pass over the columns of `cols`: with `pending = (vp, d)`, first
    /// `a_j += vp d_j` (the previous reflector's delayed update); then `acc_j = v^H a_j`.
    fn reflect_pass(
        cols: MatMut<'_, Self>,
        pending: Option<(&[Self], &[Self])>,
        v: &[Self],
        acc: &mut [Self],
    );
}

/// Column `j` of the column-major `a`, as a slice.
pub(crate) fn column<'s, T>(a: MatMut<'s, T>, j: usize) -> &'s mut [T] {
    a.col_mut(j)
        .try_as_col_major_mut()
        .expect("column-major")
        .as_slice_mut()
}

macro_rules! fused_impl {
    ($t:ty, $splat:ident, $as:ident, $as_mut:ident, $mul_add:ident,
     $conj_mul_add:ident, $add:ident, $reduce:ident, $zero:expr, $conj:expr) => {
        impl Fused for $t {
            fn fused_band(band: Band<'_, $t>) {
                struct Op<'a>(Band<'a, $t>);
                impl WithSimd for Op<'_> {
                    type Output = ();
                    #[inline(always)]
                    fn with_simd<S: Simd>(self, simd: S) {
                        let Band {
                            mut a,
                            pending,
                            v,
                            z,
                            upper,
                        } = self.0;
                        let conj: fn($t) -> $t = $conj;
                        let zero = simd.$splat($zero);
                        for j in 0..a.ncols() {
                            let first = j == 0;
                            let col = &mut column(a.as_mut(), j)[j..];
                            let (vj, z, vv) = (v[j], &mut z[j..], &v[j..]);
                            // Without a pending update, multipliers of zero on `v` itself.
                            let (vp, yp, cyp, cvp) = match pending {
                                Some((vp, yp)) => (&vp[j..], &yp[j..], -conj(yp[j]), -conj(vp[j])),
                                None => (vv, vv, $zero, $zero),
                            };
                            let (ncyp, ncvp, sv) = (simd.$splat(cyp), simd.$splat(cvp), simd.$splat(vj));
                            let (ah, at) = S::$as_mut(col);
                            let (zh, zt) = S::$as_mut(z);
                            let (vph, vpt) = S::$as(vp);
                            let (yph, ypt) = S::$as(yp);
                            let (vh, vt) = S::$as(vv);
                            let (mut acc0, mut acc1) = (zero, zero);
                            let len = ah.len();
                            let (zh, vph, yph, vh) = (&mut zh[..len], &vph[..len], &yph[..len], &vh[..len]);
                            let mut a2 = ah.chunks_exact_mut(2);
                            let mut z2 = zh.chunks_exact_mut(2);
                            let (mut vp2, mut yp2, mut v2) =
                                (vph.chunks_exact(2), yph.chunks_exact(2), vh.chunks_exact(2));
                            for ((((a, z), vp), yp), v) in (&mut a2).zip(&mut z2).zip(&mut vp2).zip(&mut yp2).zip(&mut v2) {
                                let mut x0 = simd.$mul_add(vp[0], ncyp, a[0]);
                                let mut x1 = simd.$mul_add(vp[1], ncyp, a[1]);
                                x0 = simd.$mul_add(yp[0], ncvp, x0);
                                x1 = simd.$mul_add(yp[1], ncvp, x1);
                                a[0] = x0;
                                a[1] = x1;
                                z[0] = simd.$mul_add(x0, sv, if first { zero } else { z[0] });
                                z[1] = simd.$mul_add(x1, sv, if first { zero } else { z[1] });
                                acc0 = simd.$conj_mul_add(x0, v[0], acc0);
                                acc1 = simd.$conj_mul_add(x1, v[1], acc1);
                            }
                            let rest = a2.into_remainder().iter_mut().zip(z2.into_remainder()).zip(vp2.remainder()).zip(yp2.remainder()).zip(v2.remainder());
                            for ((((a, z), vp), yp), v) in rest {
                                let mut x = simd.$mul_add(*vp, ncyp, *a);
                                x = simd.$mul_add(*yp, ncvp, x);
                                *a = x;
                                *z = simd.$mul_add(x, sv, if first { zero } else { *z });
                                acc0 = simd.$conj_mul_add(x, *v, acc0);
                            }
                            let mut sum = simd.$reduce(simd.$add(acc0, acc1));
                            for ((((a, z), vp), yp), v) in at.iter_mut().zip(zt).zip(vpt).zip(ypt).zip(vt) {
                                let x = *a + *vp * cyp + *yp * cvp;
                                *a = x;
                                *z = if first { x * vj } else { *z + x * vj };
                                sum += conj(x) * *v;
                            }
                            // The diagonal belongs to the lower half only.
                            let diag = column(a.as_mut(), j)[j];
                            upper[j] = sum - conj(diag) * vj;
                        }
                    }
                }
                pulp::Arch::new().dispatch(Op(band));
            }

            fn reflect_pass(
                cols: MatMut<'_, $t>,
                pending: Option<(&[$t], &[$t])>,
                v: &[$t],
                acc: &mut [$t],
            ) {
                assert_eq!(v.len(), cols.nrows(), "reflect_pass: v must have the columns' rows");
                assert_eq!(acc.len(), cols.ncols(), "reflect_pass: one product per column");
                if let Some((vp, d)) = pending {
                    assert_eq!(vp.len(), cols.nrows(), "reflect_pass: vp must have the columns' rows");
                    assert_eq!(d.len(), cols.ncols(), "reflect_pass: one coefficient per column");
                }
                struct Op<'a>(MatMut<'a, $t>, Option<(&'a [$t], &'a [$t])>, &'a [$t], &'a mut [$t]);
                impl WithSimd for Op<'_> {
                    type Output = ();
                    #[inline(always)]
                    fn with_simd<S: Simd>(self, simd: S) {
                        let Op(mut cols, pending, v, out) = self;
                        let conj: fn($t) -> $t = $conj;
                        let zero = simd.$splat($zero);
                        let (vh, vt) = S::$as(v);
                        for j in 0..cols.ncols() {
                            let col = column(cols.as_mut(), j);
                            let (ah, at) = S::$as_mut(col);
                            let (mut acc0, mut acc1) = (zero, zero);
                            match pending {
                                Some((vp, d)) => {
                                    let dj = d[j];
                                    let sd = simd.$splat(dj);
                                    let (vph, vpt) = S::$as(vp);
                                    let mut a2 = ah.chunks_exact_mut(2);
                                    let (mut vp2, mut v2) = (vph.chunks_exact(2), vh.chunks_exact(2));
                                    for ((a, vp), v) in (&mut a2).zip(&mut vp2).zip(&mut v2) {
                                        let x0 = simd.$mul_add(vp[0], sd, a[0]);
                                        let x1 = simd.$mul_add(vp[1], sd, a[1]);
                                        a[0] = x0;
                                        a[1] = x1;
                                        acc0 = simd.$conj_mul_add(v[0], x0, acc0);
                                        acc1 = simd.$conj_mul_add(v[1], x1, acc1);
                                    }
                                    for ((a, vp), v) in a2.into_remainder().iter_mut().zip(vp2.remainder()).zip(v2.remainder()) {
                                        let x = simd.$mul_add(*vp, sd, *a);
                                        *a = x;
                                        acc0 = simd.$conj_mul_add(*v, x, acc0);
                                    }
                                    let mut sum = simd.$reduce(simd.$add(acc0, acc1));
                                    for ((a, vp), v) in at.iter_mut().zip(vpt).zip(vt) {
                                        let x = *a + *vp * dj;
                                        *a = x;
                                        sum += conj(*v) * x;
                                    }
                                    out[j] = sum;
                                }
                                None => {
                                    let mut a2 = ah.chunks_exact(2);
                                    let mut v2 = vh.chunks_exact(2);
                                    for (a, v) in (&mut a2).zip(&mut v2) {
                                        acc0 = simd.$conj_mul_add(v[0], a[0], acc0);
                                        acc1 = simd.$conj_mul_add(v[1], a[1], acc1);
                                    }
                                    for (a, v) in a2.remainder().iter().zip(v2.remainder()) {
                                        acc0 = simd.$conj_mul_add(*v, *a, acc0);
                                    }
                                    let mut sum = simd.$reduce(simd.$add(acc0, acc1));
                                    for (a, v) in at.iter().zip(vt) {
                                        sum += conj(*v) * *a;
                                    }
                                    out[j] = sum;
                                }
                            }
                        }
                    }
                }
                pulp::Arch::new().dispatch(Op(cols, pending, v, acc));
            }

        }
    };
}

fused_impl!(
    f64,
    splat_f64s,
    as_simd_f64s,
    as_mut_simd_f64s,
    mul_add_f64s,
    mul_add_f64s,
    add_f64s,
    reduce_sum_f64s,
    0.0,
    |x| x
);
fused_impl!(
    f32,
    splat_f32s,
    as_simd_f32s,
    as_mut_simd_f32s,
    mul_add_f32s,
    mul_add_f32s,
    add_f32s,
    reduce_sum_f32s,
    0.0,
    |x| x
);
fused_impl!(
    Complex<f64>,
    splat_c64s,
    as_simd_c64s,
    as_mut_simd_c64s,
    mul_add_c64s,
    conj_mul_add_c64s,
    add_c64s,
    reduce_sum_c64s,
    Complex::new(0.0, 0.0),
    |x: Complex<f64>| x.conj()
);
fused_impl!(
    Complex<f32>,
    splat_c32s,
    as_simd_c32s,
    as_mut_simd_c32s,
    mul_add_c32s,
    conj_mul_add_c32s,
    add_c32s,
    reduce_sum_c32s,
    Complex::new(0.0, 0.0),
    |x: Complex<f32>| x.conj()
);
