//! Whether a contiguous run of scalars is all finite, at about the speed of reading it.
//!
//! `x - x` is `+0.0` for every finite `x` and NaN for an infinity or a NaN, so OR-ing the bits
//! of `x - x` over a run gives zero exactly when the run is finite. The loop has no branch and
//! its OR is an integer one, so the compiler vectorizes it; on x86-64 it is compiled a second and a
//! third time for AVX2 and AVX-512 and the widest the CPU has is picked at run time. GEMM of
//! 32 (f64) paid 30 % for a check by faer's column sums, and pays 10 % with this one
//! (`docs/perf/runs/kernels-log.md`, "What the finiteness check costs").

use teamalg_gates::{Scalar, ScalarKind};

/// Whether every entry of `s` is finite.
pub(crate) fn all_finite<T: Scalar>(s: &[T]) -> bool {
    match T::KIND {
        ScalarKind::F64 | ScalarKind::C64 => {
            let parts = if T::KIND == ScalarKind::F64 { 1 } else { 2 };
            assert_eq!(std::mem::size_of::<T>(), parts * std::mem::size_of::<f64>());
            // SAFETY: `Scalar` is sealed: a kind of F64 is `f64`, of C64 `Complex64`, which is
            // `#[repr(C)]` with two `f64` fields (the assert above checks the size). So `s` is
            // `s.len() * parts` initialized `f64`s, aligned as `f64`, borrowed as long as `s`.
            let f =
                unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<f64>(), s.len() * parts) };
            f64s(f)
        }
        ScalarKind::F32 | ScalarKind::C32 => {
            let parts = if T::KIND == ScalarKind::F32 { 1 } else { 2 };
            assert_eq!(std::mem::size_of::<T>(), parts * std::mem::size_of::<f32>());
            // SAFETY: as above, with `f32` and `Complex32`.
            let f =
                unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<f32>(), s.len() * parts) };
            f32s(f)
        }
    }
}

macro_rules! scan {
    ($name:ident, $float:ty, $bits:ty) => {
        /// The portable loop: the OR of the bits of `x - x` (an integer OR, which the compiler
        /// may reorder, so it vectorizes it).
        #[inline(always)]
        fn $name(s: &[$float]) -> bool {
            s.iter().fold(0 as $bits, |acc, x| acc | (x - x).to_bits()) == 0
        }
    };
}

scan!(f64s_portable, f64, u64);
scan!(f32s_portable, f32, u32);

#[cfg(target_arch = "x86_64")]
mod x86 {
    /// The portable loops compiled for AVX2 and for AVX-512.
    macro_rules! wide {
        ($name:ident, $feature:literal, $inner:path, $float:ty) => {
            /// # Safety
            /// The CPU must have the target feature.
            #[target_feature(enable = $feature)]
            pub(super) unsafe fn $name(s: &[$float]) -> bool {
                $inner(s)
            }
        };
    }
    wide!(f64s_avx2, "avx2", super::f64s_portable, f64);
    wide!(f64s_avx512, "avx512f", super::f64s_portable, f64);
    wide!(f32s_avx2, "avx2", super::f32s_portable, f32);
    wide!(f32s_avx512, "avx512f", super::f32s_portable, f32);
}

/// The run-time pick of the widest loop the CPU has, for one float type.
macro_rules! pick {
    ($name:ident, $float:ty, $portable:ident, $avx2:ident, $avx512:ident) => {
        fn $name(s: &[$float]) -> bool {
            #[cfg(target_arch = "x86_64")]
            {
                if std::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the CPU has AVX-512F (detected just above).
                    return unsafe { x86::$avx512(s) };
                }
                if std::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2 (detected just above).
                    return unsafe { x86::$avx2(s) };
                }
            }
            $portable(s)
        }
    };
}

pick!(f64s, f64, f64s_portable, f64s_avx2, f64s_avx512);
pick!(f32s, f32, f32s_portable, f32s_avx2, f32s_avx512);

#[cfg(test)]
mod tests {
    use super::*;
    use faer::{c32, c64};

    /// Every position of a run (the lanes, the remainder) and every kind of bad value.
    #[test]
    fn every_position_and_kind_is_found() {
        for len in [0usize, 1, 7, 8, 9, 31, 64, 100] {
            let good: Vec<f64> = (0..len).map(|i| (i as f64 - 50.0) * 1e300).collect();
            assert!(all_finite(&good), "{len}");
            assert!(f64s_portable(&good));
            for at in 0..len {
                for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                    let mut v = good.clone();
                    v[at] = bad;
                    assert!(!all_finite(&v), "{len} {at} {bad}");
                    assert!(!f64s_portable(&v), "{len} {at} {bad}");
                }
                let mut v: Vec<f32> = good.iter().map(|_| f32::MAX).collect();
                v[at] = f32::NAN;
                assert!(!all_finite(&v) && !f32s_portable(&v));
                v[at] = -0.0;
                assert!(all_finite(&v));
            }
        }
        let mut z = vec![c64::new(1.0, -1.0); 13];
        assert!(all_finite(&z));
        z[12] = c64::new(0.0, f64::INFINITY);
        assert!(!all_finite(&z));
        let mut w = vec![c32::new(1.0, -1.0); 13];
        w[3] = c32::new(f32::NAN, 0.0);
        assert!(!all_finite(&w));
    }
}
