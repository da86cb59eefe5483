//! Column ranges of a trailing update, balanced by cost, with a lookahead lead.
//!
//! Participant 0 (the lead) owns the first `lead_min` columns (the next panel) and also does
//! `lead_extra` more work (factoring that panel); the others share the rest so that every
//! participant ends with about the same cost. [`LeadCost`] learns what the lead's extra work
//! costs from the sections already run.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// A split of `cols` columns across `width` participants. `prefix(c)` is the cost of the first
/// `c` columns: non-decreasing, `prefix(0) == 0`.
pub(crate) struct Split<F> {
    cols: usize,
    width: usize,
    lead_min: usize,
    lead_extra: f64,
    prefix: F,
    total: f64,
}

impl<F: Fn(usize) -> f64> Split<F> {
    pub(crate) fn new(
        cols: usize,
        width: usize,
        lead_min: usize,
        lead_extra: f64,
        prefix: F,
    ) -> Self {
        let total = prefix(cols) + lead_extra;
        Split {
            cols,
            width: width.max(1),
            lead_min: lead_min.min(cols),
            lead_extra,
            prefix,
            total,
        }
    }

    /// The cost of participant `i`'s columns (without the lead's extra work).
    pub(crate) fn cost(&self, i: usize) -> f64 {
        let (a, b) = self.range(i);
        (self.prefix)(b) - (self.prefix)(a)
    }

    /// The columns of participant `i`, as `start..end` offsets into the trailing columns.
    pub(crate) fn range(&self, i: usize) -> (usize, usize) {
        let start = if i == 0 { 0 } else { self.end(i - 1) };
        (start, self.end(i).max(start))
    }

    /// Where participant `i`'s columns end: the first column count whose cost (plus the lead's
    /// extra work) reaches its share of the total, never before `lead_min`.
    fn end(&self, i: usize) -> usize {
        if i + 1 >= self.width {
            return self.cols;
        }
        let target = self.total * (i + 1) as f64 / self.width as f64 - self.lead_extra;
        // Smallest c in 0..=cols with prefix(c) >= target.
        let (mut lo, mut hi) = (0, self.cols);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if (self.prefix)(mid) >= target {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo.max(self.lead_min)
    }
}

/// How much the lead's extra work costs per unit, against a unit of the update, learned from
/// the sections already run: the first guess is a constant, then each section's busy times
/// correct it. This also absorbs a participant that runs slower than the lead (a shared or
/// slower CPU): the lead then takes more columns.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LeadCost {
    factor: f64,
}

/// Busy times of a section's lead (participant 0) and participant 1, in nanoseconds.
#[derive(Debug, Default)]
pub(crate) struct Busy {
    lead: AtomicU64,
    other: AtomicU64,
}

impl Busy {
    /// The busy times of the lead and of participant 1.
    pub(crate) fn times(&self) -> (std::time::Duration, std::time::Duration) {
        let d = |a: &AtomicU64| std::time::Duration::from_nanos(a.load(Relaxed));
        (d(&self.lead), d(&self.other))
    }

    /// Times `f` as participant `i`'s work.
    pub(crate) fn time<R>(&self, i: usize, f: impl FnOnce() -> R) -> R {
        let start = Instant::now();
        let r = f();
        let ns = start.elapsed().as_nanos().min(u64::MAX as u128) as u64;
        match i {
            0 => self.lead.store(ns, Relaxed),
            1 => self.other.store(ns, Relaxed),
            _ => {}
        }
        r
    }
}

impl LeadCost {
    pub(crate) fn new(factor: f64) -> Self {
        LeadCost { factor }
    }

    /// The lead's extra work, in update units, for `units` of it.
    pub(crate) fn extra(&self, units: f64) -> f64 {
        self.factor * units
    }

    /// Learns from a section in which the lead did `lead_units` of update plus `extra_units` of
    /// extra work, and participant 1 did `other_units` of update, in the times `busy` records.
    pub(crate) fn learn(
        &mut self,
        busy: &Busy,
        lead_units: f64,
        extra_units: f64,
        other_units: f64,
    ) {
        let (t0, t1) = (
            busy.lead.load(Relaxed) as f64,
            busy.other.load(Relaxed) as f64,
        );
        if t0 <= 0.0 || t1 <= 0.0 || other_units <= 0.0 || extra_units <= 0.0 {
            return;
        }
        let per_unit = t1 / other_units;
        let measured = (t0 / per_unit - lead_units) / extra_units;
        // Smoothed, and kept in a sane range: one noisy section must not starve anybody.
        self.factor = (0.5 * self.factor + 0.5 * measured).clamp(0.25, 16.0);
    }
}

#[cfg(test)]
mod tests {
    use super::Split;

    fn ranges<F: Fn(usize) -> f64>(s: &Split<F>, w: usize) -> Vec<(usize, usize)> {
        (0..w).map(|i| s.range(i)).collect()
    }

    #[test]
    fn even_costs_split_evenly_and_cover_every_column() {
        let s = Split::new(100, 4, 0, 0.0, |c| c as f64);
        assert_eq!(ranges(&s, 4), vec![(0, 25), (25, 50), (50, 75), (75, 100)]);
    }

    #[test]
    fn the_lead_keeps_its_panel_and_takes_fewer_columns_for_its_extra_work() {
        // 100 columns of cost 1, the lead factors a panel worth 20: 120 / 2 = 60 each.
        let s = Split::new(100, 2, 10, 20.0, |c| c as f64);
        assert_eq!(ranges(&s, 2), vec![(0, 40), (40, 100)]);
        // Extra work larger than a share: the lead keeps only its panel.
        let s = Split::new(100, 2, 10, 500.0, |c| c as f64);
        assert_eq!(ranges(&s, 2), vec![(0, 10), (10, 100)]);
    }

    #[test]
    fn decreasing_costs_give_the_first_participants_fewer_columns() {
        // Column j costs 100 - j (a lower-triangular update).
        let s = Split::new(100, 2, 0, 0.0, |c| {
            (c * 100) as f64 - (c * c.saturating_sub(1)) as f64 / 2.0
        });
        let (a, b) = (s.range(0), s.range(1));
        assert_eq!(a.0, 0);
        assert_eq!(b.1, 100);
        assert!(a.1 < 50 && a.1 == b.0, "{a:?} {b:?}");
    }

    #[test]
    fn more_participants_than_columns_leaves_some_empty() {
        let s = Split::new(2, 4, 0, 0.0, |c| c as f64);
        let r = ranges(&s, 4);
        assert_eq!(r.iter().map(|(a, b)| b - a).sum::<usize>(), 2);
        assert_eq!(r.last().unwrap().1, 2);
    }
}
