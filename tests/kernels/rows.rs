//! The built-in rows each decomposition's `cost.rs` holds, as the gates read them through the
//! kernels' family list (`teamalg::kernels::families`): rates by scalar type and size, and the
//! reductions' splits by CPU vendor.

use std::num::NonZeroUsize;
use std::time::Duration;

use faer::{c32 as Complex32, c64 as Complex64};
use teamalg::gates::{
    CpuVendor, DispatchCosts, DispatchKind, Family, HostClass, ParThreshold, builtin_rate,
    builtin_split, choose,
};
use teamalg::kernels::families::CATALOGUE;

#[test]
fn rates_by_scalar_type() {
    let apple = |f| builtin_rate(f, HostClass::Aarch64Apple, CATALOGUE).at(1e6);
    let g = apple(Family::Gemm);
    assert_eq!(g.of::<f64>(), 0.037);
    assert_eq!(g.of::<f32>(), 0.037 / 2.0);
    assert_eq!(g.of::<Complex64>(), 0.165);
    assert_eq!(g.of::<Complex32>(), 0.165 / 2.0);
    assert_eq!(apple(Family::TridiagStep).cplx, 1.16);
    assert_eq!(apple(Family::SparseProduct).real, 1.5);
    // Measured single precision on the x86 rows: not assumed to be half.
    let x86 = builtin_rate(Family::LuPartial, HostClass::X86_64Avx512, CATALOGUE).at(1e6);
    assert!(x86.real_single != x86.real / 2.0, "{x86:?}");
    assert_eq!(x86.of::<f32>(), x86.real_single);
    // Small calls run slower per unit: the curve says so, and interpolates between anchors.
    let lu = builtin_rate(Family::LuPartial, HostClass::X86_64Avx512, CATALOGUE);
    let (small, large) = (lu.at(1e3).real, lu.at(1e9).real);
    assert!(small > 2.0 * large, "{lu:?}");
    let mid = lu.at(2e5).real;
    assert!(mid < small && mid > large, "{mid}");
    let anchors: Vec<_> = lu.anchors().collect();
    assert_eq!(lu.at(anchors[1].0), anchors[1].1);
    // Every kernel family has its own rate, none borrowed from GEMM.
    for f in Family::KERNELS {
        if f != Family::Gemm {
            assert_ne!(
                builtin_rate(f, HostClass::X86_64Avx512, CATALOGUE),
                builtin_rate(Family::Gemm, HostClass::X86_64Avx512, CATALOGUE)
            );
        }
    }
    assert_eq!(ParThreshold::default(), ParThreshold::Derived);
}

/// The reductions' built-in splits follow the CPU vendor: on the AMD (EPYC) fit the
/// bidiagonalization of order 512 goes two wide (it measured 0.61x serial there) and that of
/// 128 stays serial; on the other (Intel Xeon) fit 512 stays serial (1.3x there) and 1024 goes
/// two wide. Estimates are the built-in rate times the call's units, sections `2 n`.
#[test]
fn reduction_splits_follow_the_vendor() {
    let class = HostClass::X86_64Avx512;
    let costs = DispatchCosts::for_class(class);
    let two = NonZeroUsize::new(2).unwrap();
    let width = |vendor: CpuVendor, n: usize| {
        let units: f64 = (0..n).map(|s| ((n - s - 1) * (n - s - 1)) as f64).sum();
        let rate = builtin_rate(Family::BidiagStep, class, CATALOGUE)
            .at(units)
            .real;
        let estimate = Duration::from_nanos((units * rate) as u64);
        let split = builtin_split(Family::BidiagStep, vendor, CATALOGUE).real;
        choose(estimate, 2 * n, two, &split, |k| {
            costs.cost(DispatchKind::Team, k.get())
        })
        .0
        .get()
    };
    assert_eq!(width(CpuVendor::Amd, 128), 1);
    assert_eq!(width(CpuVendor::Amd, 512), 2);
    assert_eq!(width(CpuVendor::Intel, 512), 1);
    assert_eq!(width(CpuVendor::Intel, 1024), 2);
    assert_eq!(width(CpuVendor::Other, 512), 1);
}
