//! Column ranges of a trailing update, balanced by cost, with a lookahead lead.
//!
//! Participant 0 (the lead) owns the first `lead_min` columns (the next panel) and also does
//! `lead_extra` more work (factoring that panel); the others share the rest so that every
//! participant ends with about the same cost.

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
