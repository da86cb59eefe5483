//! Medians and percentiles: one rule for every program of the tools crate (nearest rank,
//! rounded; the median is the upper middle entry of an even sample).

/// The index of quantile `q` (0 to 1) in a sorted sample of `len` entries (`len > 0`).
pub fn quantile_index(len: usize, q: f64) -> usize {
    ((len - 1) as f64 * q).round() as usize
}

/// Quantile `q` of `sorted`; 0 when it is empty.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => 0.0,
        len => sorted[quantile_index(len, q)],
    }
}

/// The median of `v` (in any order); 0 when it is empty.
pub fn median(v: &[f64]) -> f64 {
    median_p90(v).0
}

/// The median and 90th percentile of `v` (in any order); 0 when it is empty.
pub fn median_p90(v: &[f64]) -> (f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    (percentile(&s, 0.5), percentile(&s, 0.9))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_is_the_upper_middle_and_p90_the_nearest_rank() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 3.0);
        let v: Vec<f64> = (1..=21).rev().map(f64::from).collect();
        assert_eq!(median_p90(&v), (11.0, 19.0));
        assert_eq!(median(&[]), 0.0);
    }
}
