//! What the gates know of a host: its dispatch costs, the serial rate of each kernel family,
//! what splitting a family's regions costs beyond the dispatch, and the thresholds in force.

use std::sync::OnceLock;

use crate::costs::{DispatchCosts, HostClass};
use crate::rate::{Family, Rate, ScalarKind, FAMILIES};
use crate::thresholds::{ParThreshold, Source, Thresholds};

/// What running a family's region on several participants costs beyond the dispatch: a fixed
/// `overhead` per section (the lead's panel work the others wait for, imbalance, the first
/// touches of a member's cache) and an `efficiency` (the serial time over the summed
/// participant times, below 1 when halved products run slower than whole ones).
///
/// The gate models a region of serial time `S`, lead part `L` (work one participant must do
/// alone) and `s` sections at width `k` as
/// `s * (D(k) + overhead) + max(L, S / k) / efficiency`. `teamalg calibrate` fits both from
/// two-wide runs of each kernel against its serial run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitCost {
    /// Nanoseconds per section beyond the dispatch cost.
    pub overhead_ns: f64,
    /// Serial time over summed participant time, in `(0, 1]`.
    pub efficiency: f64,
}

impl SplitCost {
    /// No cost beyond the dispatch: the rule as it stands.
    pub const FREE: SplitCost = SplitCost {
        overhead_ns: 0.0,
        efficiency: 1.0,
    };

    /// Whether the values can be used (finite, overhead at least 0, efficiency in `(0, 1]`).
    pub fn is_valid(&self) -> bool {
        self.overhead_ns.is_finite()
            && self.overhead_ns >= 0.0
            && self.efficiency.is_finite()
            && self.efficiency > 0.0
            && self.efficiency <= 1.0
    }
}

/// A family's split costs for real (`f32`, `f64`) and complex (`c32`, `c64`) scalars.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Splits {
    /// Real scalars.
    pub real: SplitCost,
    /// Complex scalars.
    pub cplx: SplitCost,
}

impl Splits {
    /// Free for both.
    pub const FREE: Splits = Splits {
        real: SplitCost::FREE,
        cplx: SplitCost::FREE,
    };

    /// The cost for a scalar kind.
    pub fn for_kind(&self, kind: ScalarKind) -> SplitCost {
        match kind {
            ScalarKind::F32 | ScalarKind::F64 => self.real,
            ScalarKind::C32 | ScalarKind::C64 => self.cplx,
        }
    }
}

/// Everything a gate reads: dispatch costs, rates, split costs, thresholds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Model {
    /// The dispatch costs.
    pub costs: DispatchCosts,
    rates: [Rate; FAMILIES],
    splits: [Splits; FAMILIES],
    thresholds: Thresholds,
}

impl Model {
    /// The built-in model of a host class: its cost rows, its rates and split costs.
    pub fn for_class(class: HostClass) -> Model {
        Model {
            costs: DispatchCosts::for_class(class),
            rates: Family::ALL.map(|f| builtin_rate(f, class)),
            splits: Family::ALL.map(builtin_split),
            thresholds: Thresholds::new(),
        }
    }

    /// The built-in model of this machine's class, built once.
    pub fn host_default() -> &'static Model {
        static HOST: OnceLock<Model> = OnceLock::new();
        HOST.get_or_init(|| Model::for_class(HostClass::detect()))
    }

    /// The serial rate of `family`.
    #[inline]
    pub fn rate(&self, family: Family) -> Rate {
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

    /// The same model with `family`'s rate replaced.
    pub fn with_rate(mut self, family: Family, rate: Rate) -> Model {
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
/// (the runs agreed within 2 %). Apple:
/// Apple M5, one thread (GEMM, triangular inverse and the step families as published by the
/// project's design notes); the kernels' families that were not measured there take the M5 GEMM
/// rate times the ratio of that family to GEMM measured on the EPYC host. Other hosts take the
/// EPYC rows. Where single precision was not measured it takes half ([`Rate::halved`]).
pub fn builtin_rate(family: Family, class: HostClass) -> Rate {
    match class {
        HostClass::Aarch64Apple => apple_rate(family),
        _ => epyc_rate(family),
    }
}

/// Rates measured on the EPYC host (see [`builtin_rate`]).
fn epyc_rate(family: Family) -> Rate {
    let r = |real, cplx, real_single, cplx_single| Rate {
        real,
        cplx,
        real_single,
        cplx_single,
    };
    match family {
        Family::Gemm => r(0.0350, 0.1416, 0.0174, 0.0700),
        Family::TriangularSolve => r(0.0466, 0.1851, 0.0277, 0.1093),
        Family::LuPartial => r(0.0632, 0.1916, 0.0405, 0.1043),
        Family::Cholesky => r(0.0623, 0.2305, 0.0348, 0.1776),
        Family::Qr => r(0.0758, 0.2356, 0.0510, 0.1364),
        other => apple_rate(other),
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
        Family::TriangularSolve | Family::LuPartial | Family::Cholesky | Family::Qr => {
            scaled(family)
        }
        Family::LuFullStep => h(0.216, 0.600),
        Family::QrColPivStep => h(0.202, 0.713),
        Family::BidiagStep => h(0.480, 1.36),
        Family::HessenbergStep => h(0.451, 1.57),
        Family::TridiagStep => h(0.339, 1.16),
        Family::Matvec => h(0.100, 0.340),
        Family::HouseholderRank1 => h(0.212, 0.725),
        // Complex not measured: a complex multiply-add is four real ones.
        Family::BidiagSvdDc => h(53.0, 53.0 * 4.0),
        Family::TridiagEvdDc => h(31.0, 31.0 * 4.0),
        Family::TriangularInverse => h(0.0096, 0.0344),
        Family::SparseProduct => h(1.5, 1.8),
        // Complex not measured: a complex swap moves twice the bytes.
        Family::RowSwap => h(0.55, 0.55 * 2.0),
    }
}

/// The built-in split costs of `family`: fitted by `teamalg calibrate` on the EPYC host of
/// [`builtin_rate`] (each value the median of five calibrations); free for families no kernel
/// gates yet (QR's is fitted once its kernel exists). Used on every host class: no other host
/// has been fitted.
pub fn builtin_split(family: Family) -> Splits {
    let s = |overhead_ns, efficiency| SplitCost {
        overhead_ns,
        efficiency,
    };
    let f = |real: SplitCost, cplx: SplitCost| Splits { real, cplx };
    match family {
        Family::Gemm => f(s(550.0, 0.936), s(600.0, 0.967)),
        Family::TriangularSolve => f(s(1890.0, 0.648), s(4070.0, 0.756)),
        Family::LuPartial => f(s(8540.0, 1.0), s(8590.0, 0.826)),
        Family::Cholesky => f(s(3730.0, 0.783), s(11630.0, 0.897)),
        _ => Splits::FREE,
    }
}
