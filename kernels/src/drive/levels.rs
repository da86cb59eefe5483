//! Two blocking levels for the right-looking factorizations (LU, Cholesky).
//!
//! Panels of `bs` columns are factored one at a time, as before, but they are grouped into
//! wide panels of `wide` columns. After a panel inside a wide panel, the section updates only
//! the rest of that wide panel (rank `bs`); after the last panel of a wide panel, the section
//! updates every trailing column with the whole wide panel at once (rank `wide`). So the
//! trailing matrix is streamed once per `wide` columns instead of once per `bs`, while the
//! serial part stays one `bs`-wide panel, factored by the lead during a section (lookahead).
//! With `wide == bs` this is the one-level algorithm. Design record: `docs/kernels.md`.

/// One section of a two-level factorization: what it updates, with what, and which panel the
/// lead factors during it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Panel {
    /// The panel just factored: columns `k..k2`.
    pub(crate) k: usize,
    pub(crate) k2: usize,
    /// The next panel's width (its columns `k2..k2 + b2`, the lead's); 0 after the last.
    pub(crate) b2: usize,
    /// The update's source: the factored columns `src..k2` (`k` inside a wide panel, the
    /// wide panel's first column after its last panel).
    pub(crate) src: usize,
    /// The update's targets: columns `k2..end`.
    pub(crate) end: usize,
}

/// The sections of a factorization of `size = min(m, n)` pivots and `n` columns.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Levels {
    bs: usize,
    wide: usize,
    size: usize,
    n: usize,
}

impl Levels {
    /// Panels of `bs` (at least 1) in wide panels of `wide`, rounded down to a multiple of
    /// `bs` (at least `bs`).
    pub(crate) fn new(bs: usize, wide: usize, size: usize, n: usize) -> Self {
        let bs = bs.max(1);
        let wide = (wide / bs).max(1) * bs;
        Levels { bs, wide, size, n }
    }

    /// The section after the panel that starts at `k`; `None` when that panel has no columns
    /// after it (the last panel of a matrix with `n <= m`) or `k` is past the end.
    pub(crate) fn after(&self, k: usize) -> Option<Panel> {
        if k >= self.size {
            return None;
        }
        let k2 = (k + self.bs).min(self.size);
        if k2 >= self.n {
            return None;
        }
        let ks = k / self.wide * self.wide;
        let e = (ks + self.wide).min(self.size);
        let b2 = self.bs.min(self.size - k2);
        let (src, end) = if k2 >= e { (ks, self.n) } else { (k, e) };
        Some(Panel {
            k,
            k2,
            b2,
            src,
            end,
        })
    }

    /// The wide panel width.
    pub(crate) fn wide(&self) -> usize {
        self.wide
    }

    /// The first column of the wide panel that holds column `c`.
    pub(crate) fn wide_start(&self, c: usize) -> usize {
        c / self.wide * self.wide
    }

    /// The column after the wide panel that holds column `c` (at most `size`).
    pub(crate) fn wide_end(&self, c: usize) -> usize {
        (self.wide_start(c) + self.wide).min(self.size)
    }

    /// Every section, in order.
    pub(crate) fn sections(&self) -> impl Iterator<Item = Panel> + '_ {
        (0..self.size)
            .step_by(self.bs)
            .filter_map(|k| self.after(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every trailing column gets every pivot's update exactly once, in order, and the lead's
    /// next panel is always inside the targets.
    fn check(bs: usize, wide: usize, m: usize, n: usize) {
        let size = m.min(n);
        let l = Levels::new(bs, wide, size, n);
        // done[j]: the pivots whose update column j has received.
        let mut done = vec![0usize; n];
        // The first panel is factored as a whole.
        for (j, d) in done.iter_mut().enumerate().take(bs.min(size)) {
            *d = j;
        }
        let mut last_k = None;
        for p in l.sections() {
            assert!(p.k2 > p.k && p.src <= p.k && p.end <= n && p.k2 <= p.end);
            assert!(p.b2 <= p.end - p.k2, "{p:?}");
            for (j, d) in done.iter_mut().enumerate().take(p.end).skip(p.k2) {
                assert_eq!(*d, p.src, "column {j} in {p:?} with bs {bs} wide {wide}");
                *d = p.k2;
            }
            // The next panel is complete: it has every update before it.
            for d in &done[p.k2..p.k2 + p.b2] {
                assert_eq!(*d, p.k2, "{p:?}");
            }
            last_k = Some(p.k);
        }
        // Every column past the pivots has every pivot's update.
        for (j, d) in done.iter().enumerate().skip(size) {
            assert_eq!(*d, size, "column {j}");
        }
        if n > bs.min(size) && size > 0 {
            assert!(last_k.is_some());
        }
    }

    #[test]
    fn every_column_gets_every_update_once() {
        for &(m, n) in &[
            (1, 1),
            (5, 5),
            (64, 64),
            (100, 100),
            (256, 256),
            (300, 300),
            (300, 100),
            (100, 300),
            (513, 513),
            (1000, 999),
        ] {
            for bs in [1, 8, 32, 64] {
                for wide in [0, 1, bs, 2 * bs, 3 * bs + 1, 4 * bs, 1 << 20] {
                    check(bs, wide, m, n);
                }
            }
        }
    }

    #[test]
    fn one_level_when_wide_is_one_panel() {
        let l = Levels::new(64, 64, 512, 512);
        assert!(l.sections().all(|p| p.src == p.k && p.end == 512));
        assert_eq!(l.sections().count(), 7);
    }

    #[test]
    fn wide_panels_close_with_a_wide_update() {
        let l = Levels::new(64, 256, 1024, 1024);
        let s: Vec<_> = l.sections().collect();
        assert_eq!(s.len(), 15);
        assert_eq!((s[0].src, s[0].end), (0, 256));
        assert_eq!((s[2].src, s[2].end), (128, 256));
        assert_eq!((s[3].src, s[3].end), (0, 1024));
        assert_eq!((s[4].src, s[4].end), (256, 512));
    }
}
