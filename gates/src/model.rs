//! What the gates know of a host: its dispatch costs, the serial rate of each kernel family,
//! what splitting a family's regions costs beyond the dispatch, and the thresholds in force.

use std::sync::OnceLock;

use crate::costs::{CpuVendor, DispatchCosts, HostClass};
use crate::rate::{Family, Rate, RateCurve, FAMILIES};
use crate::split::{builtin_split, Splits};
use crate::thresholds::{ParThreshold, Source, Thresholds};

/// Everything a gate reads: dispatch costs, rates, split costs, thresholds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Model {
    /// The dispatch costs.
    pub costs: DispatchCosts,
    rates: [RateCurve; FAMILIES],
    splits: [Splits; FAMILIES],
    thresholds: Thresholds,
}

impl Model {
    /// The built-in model of a host class: its cost rows, its rates and split costs (those of
    /// the reduction steps for this machine's CPU vendor, [`builtin_split`]).
    pub fn for_class(class: HostClass) -> Model {
        Model {
            costs: DispatchCosts::for_class(class),
            rates: Family::ALL.map(|f| builtin_rate(f, class)),
            splits: Family::ALL.map(|f| builtin_split(f, CpuVendor::detect())),
            thresholds: Thresholds::new(),
        }
    }

    /// The built-in model of this machine's class, built once.
    pub fn host_default() -> &'static Model {
        static HOST: OnceLock<Model> = OnceLock::new();
        HOST.get_or_init(|| Model::for_class(HostClass::detect()))
    }

    /// The serial rate of `family` for a call of `units` units.
    #[inline]
    pub fn rate(&self, family: Family, units: f64) -> Rate {
        self.rates[family.index()].at(units)
    }

    /// The serial rate curve of `family`.
    pub fn curve(&self, family: Family) -> RateCurve {
        self.rates[family.index()]
    }

    /// The split costs of `family`.
    #[inline]
    pub fn split(&self, family: Family) -> Splits {
        self.splits[family.index()]
    }

    /// The threshold in force for `family` at this model's level, and its source.
    #[inline]
    pub fn threshold(&self, family: Family) -> (ParThreshold, Source) {
        self.thresholds.in_force(family)
    }

    /// The thresholds set on this model.
    pub fn thresholds(&self) -> Thresholds {
        self.thresholds
    }

    /// The same model with `family`'s rate curve replaced.
    pub fn with_rate(mut self, family: Family, rate: RateCurve) -> Model {
        self.rates[family.index()] = rate;
        self
    }

    /// The same model with `family`'s split costs replaced.
    pub fn with_split(mut self, family: Family, split: Splits) -> Model {
        self.splits[family.index()] = split;
        self
    }

    /// The same model with `thresholds` set over the ones it has (a family `thresholds` sets
    /// wins).
    pub fn with_thresholds(mut self, thresholds: Thresholds) -> Model {
        self.thresholds = thresholds.over(self.thresholds);
        self
    }

    /// The same model with other dispatch costs.
    pub fn with_costs(mut self, costs: DispatchCosts) -> Model {
        self.costs = costs;
        self
    }
}

/// The built-in serial rate of `family` on a host of `class`, ns per unit.
///
/// x86-64 classes: measured by `teamalg calibrate` on a 2-vCPU AMD EPYC KVM guest with
/// AVX-512 (2026-12-01, `docs/gates.md`, "Built-in rows"), medians of five calibrations
/// (the runs agreed within 1 to 20 % at n = 256, within 1 to 62 % at n = 32: the triangular
/// solve's small calls vary most). Apple:
/// Apple M5, one thread (GEMM, triangular inverse and the step families; `docs/gates.md`,
/// "Built-in rows"); the kernels' families that were not measured there take the M5 GEMM
/// rate times the ratio of that family to GEMM measured on the EPYC host. Other hosts take the
/// EPYC rows. Where single precision was not measured it takes half ([`Rate::halved`]).
pub fn builtin_rate(family: Family, class: HostClass) -> RateCurve {
    match class {
        HostClass::Aarch64Apple => RateCurve::flat(apple_rate(family)),
        _ => epyc_curve(family).unwrap_or_else(|| RateCurve::flat(epyc_rate(family))),
    }
}

/// The rate curves measured on the EPYC host (see [`builtin_rate`]): anchors at n = 32, 64,
/// 128 and 256 of the family's square call (units, then ns per unit for f64, c64, f32, c32).
fn epyc_curve(family: Family) -> Option<RateCurve> {
    let anchors: [(f64, [f64; 4]); 4] = match family {
        Family::Gemm => [
            (32768.0, [0.0419, 0.1534, 0.0223, 0.0755]),
            (262144.0, [0.0369, 0.1425, 0.0185, 0.0728]),
            (2097152.0, [0.0352, 0.1396, 0.0177, 0.0695]),
            (16777216.0, [0.0348, 0.1406, 0.0173, 0.0694]),
        ],
        Family::TriangularSolve => [
            (16384.0, [0.1033, 0.4016, 0.0954, 0.3527]),
            (131072.0, [0.0662, 0.2763, 0.0534, 0.2148]),
            (1048576.0, [0.0526, 0.2120, 0.0360, 0.1455]),
            (8388608.0, [0.0454, 0.1825, 0.0271, 0.1081]),
        ],
        Family::LuPartial => [
            (10923.0, [0.2732, 0.4502, 0.2980, 0.4933]),
            (87381.0, [0.1464, 0.2913, 0.1301, 0.2328]),
            (699051.0, [0.0866, 0.2152, 0.0673, 0.1399]),
            (5592405.0, [0.0620, 0.1864, 0.0403, 0.1032]),
        ],
        // LDL^H's and Bunch-Kaufman's updates are the Cholesky's (the same products on the
        // same triangle), so they take the Cholesky's rows until measured on their own.
        Family::Cholesky | Family::Ldlt | Family::Lblt => [
            (5461.0, [0.2054, 0.4547, 0.1523, 1.2010]),
            (43691.0, [0.1226, 0.3587, 0.0796, 0.8562]),
            (349525.0, [0.0780, 0.2729, 0.0479, 0.3370]),
            (2796203.0, [0.0578, 0.2214, 0.0330, 0.1731]),
        ],
        Family::Qr => [
            (21845.0, [0.5433, 0.9898, 0.4965, 0.8284]),
            (174763.0, [0.2683, 0.5637, 0.2430, 0.4035]),
            (1398101.0, [0.1235, 0.3168, 0.1090, 0.2052]),
            (11184811.0, [0.0748, 0.2334, 0.0515, 0.1350]),
        ],
        _ => return None,
    };
    let anchors = anchors.map(|(u, [real, cplx, real_single, cplx_single])| {
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

/// The EPYC host's rate at n = 256 (the last anchor of [`epyc_curve`]); the step families
/// take the Apple rows.
fn epyc_rate(family: Family) -> Rate {
    match epyc_curve(family) {
        Some(c) => c.at(f64::INFINITY),
        None => apple_rate(family),
    }
}

/// Apple M5 rates (see [`builtin_rate`]).
fn apple_rate(family: Family) -> Rate {
    let h = Rate::halved;
    // The M5 GEMM rate times the EPYC ratio of `family` to GEMM.
    let scaled = |f: Family| {
        let (e, g) = (epyc_rate(f), epyc_rate(Family::Gemm));
        let m5 = h(0.037, 0.165);
        Rate {
            real: m5.real * e.real / g.real,
            cplx: m5.cplx * e.cplx / g.cplx,
            real_single: m5.real_single * e.real_single / g.real_single,
            cplx_single: m5.cplx_single * e.cplx_single / g.cplx_single,
        }
    };
    match family {
        Family::Gemm => h(0.037, 0.165),
        Family::TriangularSolve
        | Family::LuPartial
        | Family::Cholesky
        | Family::Ldlt
        | Family::Lblt
        | Family::Qr => scaled(family),
        Family::LuFullStep => h(0.216, 0.600),
        Family::QrColPivStep => h(0.202, 0.713),
        Family::BidiagStep => h(0.480, 1.36),
        Family::TridiagStep => h(0.339, 1.16),
        Family::HouseholderRank1 => h(0.212, 0.725),
        // Complex not measured: a complex multiply-add is four real ones.
        Family::BidiagSvdDc => h(53.0, 53.0 * 4.0),
        Family::TridiagEvdDc => h(31.0, 31.0 * 4.0),
        Family::SparseProduct => h(1.5, 1.8),
    }
}
