//! Serial rates: nanoseconds per unit of work, one thread, per kernel family.

use crate::scalar::{Scalar, ScalarKind};

/// The serial rate of a kernel family: nanoseconds per unit, one thread, per scalar type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// ns per unit, `f64`.
    pub real: f64,
    /// ns per unit, `c64`.
    pub cplx: f64,
    /// ns per unit, `f32`.
    pub real_single: f64,
    /// ns per unit, `c32`.
    pub cplx_single: f64,
}

impl Rate {
    /// A rate whose single-precision types take half the time of the double ones (twice the
    /// lanes per vector): the assumption for rows where single precision was not measured.
    pub const fn halved(real: f64, cplx: f64) -> Rate {
        Rate {
            real,
            cplx,
            real_single: real / 2.0,
            cplx_single: cplx / 2.0,
        }
    }

    /// ns per unit for scalar type `T`.
    #[inline]
    pub fn of<T: Scalar>(&self) -> f64 {
        self.for_kind(T::KIND)
    }

    /// ns per unit for a scalar kind.
    #[inline]
    pub fn for_kind(&self, kind: ScalarKind) -> f64 {
        match kind {
            ScalarKind::F64 => self.real,
            ScalarKind::C64 => self.cplx,
            ScalarKind::F32 => self.real_single,
            ScalarKind::C32 => self.cplx_single,
        }
    }

    /// The four rates, in the order `f64, c64, f32, c32` (the profile's order).
    pub fn values(&self) -> [f64; 4] {
        [self.real, self.cplx, self.real_single, self.cplx_single]
    }
}

/// The most anchors a [`RateCurve`] holds.
pub const MAX_RATE_ANCHORS: usize = 8;

/// A family's serial rate as a function of the call's size: anchors `(units, rate)` measured at
/// a few sizes (small calls run fewer units per nanosecond), interpolated linearly in
/// `ln(units)` between anchors and taken flat beyond the first and the last.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateCurve {
    units: [f64; MAX_RATE_ANCHORS],
    rates: [Rate; MAX_RATE_ANCHORS],
    len: u8,
}

impl RateCurve {
    /// One rate at every size.
    pub const fn flat(rate: Rate) -> RateCurve {
        RateCurve {
            units: [1.0; MAX_RATE_ANCHORS],
            rates: [rate; MAX_RATE_ANCHORS],
            len: 1,
        }
    }

    /// A curve through `(units, rate)` anchors with positive, strictly increasing units and
    /// positive finite rates (1 to [`MAX_RATE_ANCHORS`] of them).
    pub fn new(anchors: &[(f64, Rate)]) -> Result<RateCurve, String> {
        if anchors.is_empty() || anchors.len() > MAX_RATE_ANCHORS {
            return Err(format!(
                "a rate curve holds 1 to {MAX_RATE_ANCHORS} anchors ({} given)",
                anchors.len()
            ));
        }
        let mut c = RateCurve::flat(anchors[0].1);
        for (i, &(u, r)) in anchors.iter().enumerate() {
            if !(u.is_finite() && u > 0.0) || (i > 0 && u <= anchors[i - 1].0) {
                return Err(format!(
                    "anchor units must be positive and increasing ({u})"
                ));
            }
            if r.values().iter().any(|x| !(x.is_finite() && *x > 0.0)) {
                return Err(format!("rates must be positive ({r:?})"));
            }
            c.units[i] = u;
            c.rates[i] = r;
        }
        c.len = anchors.len() as u8;
        Ok(c)
    }

    /// The same curve with every rate multiplied by `factor` (a host `1 / factor` times as
    /// fast).
    pub fn scaled(mut self, factor: f64) -> RateCurve {
        for r in &mut self.rates {
            *r = Rate {
                real: r.real * factor,
                cplx: r.cplx * factor,
                real_single: r.real_single * factor,
                cplx_single: r.cplx_single * factor,
            };
        }
        self
    }

    /// The anchors, in order.
    pub fn anchors(&self) -> impl Iterator<Item = (f64, Rate)> + '_ {
        (0..self.len as usize).map(|i| (self.units[i], self.rates[i]))
    }

    /// The rate of a call of `units` units.
    pub fn at(&self, units: f64) -> Rate {
        let n = self.len as usize;
        if n == 1 || units.is_nan() || units <= self.units[0] {
            return self.rates[0];
        }
        if units >= self.units[n - 1] {
            return self.rates[n - 1];
        }
        let i = (1..n).find(|&i| self.units[i] >= units).unwrap_or(n - 1);
        let (u0, u1) = (self.units[i - 1].ln(), self.units[i].ln());
        let t = (units.ln() - u0) / (u1 - u0);
        let (a, b) = (self.rates[i - 1].values(), self.rates[i].values());
        let v = |k: usize| a[k] + (b[k] - a[k]) * t;
        Rate {
            real: v(0),
            cplx: v(1),
            real_single: v(2),
            cplx_single: v(3),
        }
    }
}
