//! What the gates know of a host: its dispatch costs, the serial rate of each kernel family,
//! what splitting a family's regions costs beyond the dispatch, and the thresholds in force.

use crate::costs::{CpuVendor, DispatchCosts, HostClass};
use crate::family::{Family, FAMILIES};
use crate::rate::{Rate, RateCurve};
use crate::rows::{builtin_rate, builtin_split, Catalogue};
use crate::split::Splits;
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
    /// The built-in model of a host class: its cost rows, and the rates and split costs of
    /// `rows` (the kernels' family list: `teamalg_kernels::families::model` builds it), the
    /// split costs for this machine's CPU vendor.
    pub fn for_class(class: HostClass, rows: Catalogue) -> Model {
        Model {
            costs: DispatchCosts::for_class(class),
            rates: Family::ALL.map(|f| builtin_rate(f, class, rows)),
            splits: Family::ALL.map(|f| builtin_split(f, CpuVendor::detect(), rows)),
            thresholds: Thresholds::new(),
        }
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
