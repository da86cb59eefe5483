//! Columns of a trailing update claimed in chunks by whichever participant is free (guided
//! self-scheduling): each claim takes a share of what is left (`left / (2 w)`, at least `min`
//! columns), so the first chunks are large (few claims) and the last ones small (the
//! participants finish within a small chunk of each other). A participant that falls behind
//! (the lead factoring the next panel, a member on a busy CPU) simply claims less; no cost
//! model has to guess its speed.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The narrowest chunk worth claiming: a GEMM update of 16 columns still runs at nearly the
/// speed of a wide one, and the last chunks stay small enough to even out the participants.
pub(crate) const MIN_COLS: usize = 16;

/// The columns `start..end` of a section, handed out in chunks.
#[derive(Debug)]
pub(crate) struct Claims {
    next: AtomicUsize,
    end: usize,
    width: usize,
    min: usize,
}

impl Claims {
    /// Columns `start..end` for `width` participants, chunks of at least `min` columns.
    pub(crate) fn new(start: usize, end: usize, width: usize, min: usize) -> Self {
        Claims {
            next: AtomicUsize::new(start),
            end,
            width: width.max(1),
            min: min.max(1),
        }
    }

    /// The next chunk, `c0..c1`, or `None` when every column is taken. Each column is handed
    /// out exactly once: the compare-exchange makes the claims disjoint, and `Relaxed` is
    /// enough because the columns' data is published by the section's end, not by the claim.
    pub(crate) fn claim(&self) -> Option<(usize, usize)> {
        let mut start = self.next.load(Relaxed);
        loop {
            if start >= self.end {
                return None;
            }
            let left = self.end - start;
            let size = (left / (2 * self.width)).max(self.min).min(left);
            match self
                .next
                .compare_exchange_weak(start, start + size, Relaxed, Relaxed)
            {
                Ok(_) => return Some((start, start + size)),
                Err(now) => start = now,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Claims;

    #[test]
    fn one_claimer_gets_shrinking_chunks_that_cover_the_range() {
        let c = Claims::new(10, 210, 2, 8);
        let mut got = Vec::new();
        while let Some(r) = c.claim() {
            got.push(r);
        }
        assert_eq!(got[0], (10, 60)); // 200 / 4
        assert_eq!(got.last().unwrap().1, 210);
        for w in got.windows(2) {
            assert_eq!(w[0].1, w[1].0, "contiguous");
            assert!(w[1].1 - w[1].0 <= w[0].1 - w[0].0, "never growing");
        }
        assert!(got.iter().all(|&(a, b)| b - a >= 8 || b == 210));
    }

    #[test]
    fn concurrent_claimers_take_every_column_once() {
        let c = Claims::new(0, 100_000, 4, 3);
        let taken: Vec<Vec<(usize, usize)>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        let mut mine = Vec::new();
                        while let Some(r) = c.claim() {
                            mine.push(r);
                        }
                        mine
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut all: Vec<_> = taken.into_iter().flatten().collect();
        all.sort();
        assert_eq!(all[0].0, 0);
        assert_eq!(all.last().unwrap().1, 100_000);
        for w in all.windows(2) {
            assert_eq!(w[0].1, w[1].0, "no gap, no overlap");
        }
    }

    #[test]
    fn an_empty_range_hands_out_nothing() {
        assert_eq!(Claims::new(5, 5, 2, 4).claim(), None);
        assert_eq!(Claims::new(7, 5, 2, 4).claim(), None);
    }
}
