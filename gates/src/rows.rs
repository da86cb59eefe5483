//! A family's built-in rows: what the gates assume of a host that was not calibrated, its
//! serial rate and its split costs. Each kernel's folder holds its own family's rows
//! (`kernels/src/<decomposition>/cost.rs`) and the kernels' family list hands them over by
//! [`Family`] (a [`Catalogue`]); the gates turn them into a [`Model`](crate::Model)
//! ([`builtin_rate`], [`builtin_split`]) and name no decomposition. The provenance of the
//! numbers is the design record's (`docs/gates.md`, "Built-in rows").

use crate::costs::{CpuVendor, HostClass};
use crate::family::Family;
use crate::rate::{Rate, RateCurve};
use crate::split::{SplitCost, SplitCurve, Splits};

/// A rate curve's anchors as the rows write them: units, then ns per unit for `f64`, `c64`,
/// `f32` and `c32`.
pub type Anchors = [(f64, [f64; 4]); 4];

/// A family's serial rate on an Apple M5 core.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AppleRate {
    /// Measured there.
    Measured(Rate),
    /// Not measured there: the M5 GEMM rate times the ratio of this family to GEMM on the
    /// x86-64 host (the family must have x86-64 anchors).
    ScaledFromGemm,
}

/// A split at width 2, for real and complex scalars.
pub type SplitRow = (SplitCost, SplitCost);

/// A family's built-in rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rows {
    /// The rate curve measured on the x86-64 host (a 2-vCPU AMD EPYC with AVX-512), anchors at
    /// n = 32, 64, 128 and 256 of the family's square call; `None`: the Apple rate, flat.
    pub x86: Option<Anchors>,
    /// The rate on Apple hosts.
    pub apple: AppleRate,
    /// The split at width 2 on AMD CPUs; `None`: free (no cost beyond the dispatch).
    pub split_amd: Option<SplitRow>,
    /// The split at width 2 on every other CPU.
    pub split_other: Option<SplitRow>,
}

impl Rows {
    /// Rows of a family with one split on every CPU.
    pub const fn new(x86: Option<Anchors>, apple: AppleRate, split: Option<SplitRow>) -> Rows {
        Rows {
            x86,
            apple,
            split_amd: split,
            split_other: split,
        }
    }
}

/// Where the gates find every family's built-in rows: the kernels' family list
/// (`teamalg_kernels::families::rows`).
pub type Catalogue = fn(Family) -> Rows;

/// The built-in serial rate of `family` on a host of `class`, ns per unit, from `rows`: the
/// x86-64 anchors on every host but Apple's (the Apple rate, flat, for a family without
/// them), the Apple rate on Apple hosts.
///
/// x86-64 rows: measured by `teamalg calibrate` on a 2-vCPU AMD EPYC KVM guest with AVX-512
/// (2026-12-01, `docs/gates.md`, "Built-in rows"), medians of five calibrations (the runs
/// agreed within 1 to 20 % at n = 256, within 1 to 62 % at n = 32: the triangular solve's
/// small calls vary most). Apple rows: Apple M5, one thread (GEMM, triangular inverse and the
/// step families); the kernels' families that were not measured there take the M5 GEMM rate
/// times the ratio of that family to GEMM measured on the EPYC host
/// ([`AppleRate::ScaledFromGemm`]). Where single precision was not measured it takes half
/// ([`Rate::halved`]).
pub fn builtin_rate(family: Family, class: HostClass, rows: Catalogue) -> RateCurve {
    match class {
        HostClass::Aarch64Apple => RateCurve::flat(apple_rate(family, rows)),
        _ => x86_curve(family, rows).unwrap_or_else(|| RateCurve::flat(x86_rate(family, rows))),
    }
}

/// The x86-64 rate curve of `family`, when it has anchors.
fn x86_curve(family: Family, rows: Catalogue) -> Option<RateCurve> {
    let anchors = rows(family)
        .x86?
        .map(|(u, [real, cplx, real_single, cplx_single])| {
            (
                u,
                Rate {
                    real,
                    cplx,
                    real_single,
                    cplx_single,
                },
            )
        });
    Some(RateCurve::new(&anchors).expect("built-in curves are valid"))
}

/// The x86-64 rate at the last anchor, else the Apple rate.
fn x86_rate(family: Family, rows: Catalogue) -> Rate {
    match x86_curve(family, rows) {
        Some(c) => c.at(f64::INFINITY),
        None => apple_rate(family, rows),
    }
}

/// The Apple rate of `family`.
fn apple_rate(family: Family, rows: Catalogue) -> Rate {
    match rows(family).apple {
        AppleRate::Measured(r) => r,
        AppleRate::ScaledFromGemm => {
            let m5 = match rows(Family::Gemm).apple {
                AppleRate::Measured(r) => r,
                AppleRate::ScaledFromGemm => panic!("GEMM's Apple rate must be measured"),
            };
            let e = x86_curve(family, rows)
                .expect("a family scaled from GEMM has x86-64 anchors")
                .at(f64::INFINITY);
            let g = x86_rate(Family::Gemm, rows);
            Rate {
                real: m5.real * e.real / g.real,
                cplx: m5.cplx * e.cplx / g.cplx,
                real_single: m5.real_single * e.real_single / g.real_single,
                cplx_single: m5.cplx_single * e.cplx_single / g.cplx_single,
            }
        }
    }
}

/// The built-in split costs of `family` on a CPU of `vendor`, from `rows`: one anchor at width
/// 2 and the family's [`Family::decay`] beyond; free where the rows have none.
///
/// The kernels' rows were fitted by `teamalg calibrate` on the EPYC host of [`builtin_rate`]
/// (each value the median of five calibrations); the step families' by hand to their
/// benchmark rows. The tridiagonalization's and the bidiagonalization's steps are bound by the
/// memory system and split very differently on the two hosts measured, so their rows follow
/// the vendor: AMD takes the EPYC fit, every other CPU the fit from an Intel Xeon host. The
/// other families' rows are used on every host: no other host has been fitted.
pub fn builtin_split(family: Family, vendor: CpuVendor, rows: Catalogue) -> Splits {
    let r = rows(family);
    let row = if vendor == CpuVendor::Amd {
        r.split_amd
    } else {
        r.split_other
    };
    match row {
        Some((real, cplx)) => Splits {
            real: SplitCurve::single(real, family.decay()),
            cplx: SplitCurve::single(cplx, family.decay()),
        },
        None => Splits::FREE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GEMM: Rows = Rows::new(
        Some([
            (1.0, [4.0, 8.0, 2.0, 4.0]),
            (10.0, [2.0, 4.0, 1.0, 2.0]),
            (100.0, [1.0, 2.0, 0.5, 1.0]),
            (1000.0, [1.0, 2.0, 0.5, 1.0]),
        ]),
        AppleRate::Measured(Rate::halved(0.5, 1.0)),
        Some((SplitCost::new(100.0, 0.9), SplitCost::new(200.0, 0.8))),
    );

    /// GEMM, a family three times slower scaled from it, and one with a split per vendor.
    fn toy(family: Family) -> Rows {
        match family {
            Family::Gemm => GEMM,
            Family::LuPartial => Rows {
                x86: GEMM.x86.map(|a| a.map(|(u, r)| (u, r.map(|x| 3.0 * x)))),
                apple: AppleRate::ScaledFromGemm,
                ..GEMM
            },
            _ => Rows {
                x86: None,
                apple: AppleRate::Measured(Rate::halved(7.0, 9.0)),
                split_amd: None,
                split_other: Some((SplitCost::new(1.0, 0.5), SplitCost::new(2.0, 0.5))),
            },
        }
    }

    #[test]
    fn rates_come_from_the_rows() {
        let x86 = builtin_rate(Family::Gemm, HostClass::X86_64Avx2, toy);
        assert_eq!(x86.at(10.0).real, 2.0);
        // Apple: the measured rate; a family scaled from GEMM keeps its x86-64 ratio to it.
        let apple = |f| builtin_rate(f, HostClass::Aarch64Apple, toy).at(1e6);
        assert_eq!(apple(Family::Gemm).real, 0.5);
        assert_eq!(apple(Family::LuPartial).real, 1.5);
        assert_eq!(apple(Family::LuPartial).cplx_single, 1.5);
        // No x86-64 anchors: the Apple rate, flat, everywhere.
        let other = builtin_rate(Family::Qr, HostClass::X86_64Avx512, toy);
        assert_eq!(other.at(1.0).cplx, 9.0);
    }

    #[test]
    fn splits_follow_the_vendor_and_decay() {
        let lu = builtin_split(Family::LuPartial, CpuVendor::Amd, toy).real;
        assert_eq!(lu.at(2), SplitCost::new(100.0, 0.9));
        let g = Family::LuPartial.decay();
        assert!((lu.at(16).efficiency - 0.9 * 0.125f64.powf(g)).abs() < 1e-12);
        assert_eq!(builtin_split(Family::Qr, CpuVendor::Amd, toy), Splits::FREE);
        let intel = builtin_split(Family::Qr, CpuVendor::Intel, toy).cplx;
        assert_eq!(intel.at(2), SplitCost::new(2.0, 0.5));
    }
}
