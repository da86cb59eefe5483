//! Per-family overrides of the rule: `ParThreshold`, and the set of them a pool or a call
//! carries, with the text form of `TEAMALG_THRESHOLDS`.

use std::fmt;

use crate::family::{Family, FAMILIES};

/// How a gated region decides, per kernel family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ParThreshold {
    /// Ask the rule with the family's rate and the token's dispatch cost (the default).
    #[default]
    Derived,
    /// Go parallel (at the whole budget) when the call's remaining work is at least this many
    /// units of the family's unit (multiply-adds for the kernels' families); serial below.
    Fixed(u64),
    /// Always serial.
    Never,
}

impl fmt::Display for ParThreshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParThreshold::Derived => f.write_str("derived"),
            ParThreshold::Fixed(n) => write!(f, "fixed:{n}"),
            ParThreshold::Never => f.write_str("never"),
        }
    }
}

impl std::str::FromStr for ParThreshold {
    type Err = String;

    /// `derived`, `never` or `fixed:N` (N units, `_` allowed as a digit separator).
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "derived" => Ok(ParThreshold::Derived),
            "never" => Ok(ParThreshold::Never),
            other => {
                let n = other.strip_prefix("fixed:").ok_or_else(|| {
                    format!("{other:?} is not a threshold (derived, never or fixed:N)")
                })?;
                n.replace('_', "")
                    .parse::<u64>()
                    .map(ParThreshold::Fixed)
                    .map_err(|_| format!("{n:?} in {other:?} is not a whole number of units"))
            }
        }
    }
}

/// Where the threshold in force came from, highest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// The call's own options.
    Call,
    /// The pool's builder (`PoolBuilder::threshold`).
    Pool,
    /// The environment (`TEAMALG_THRESHOLDS`).
    Environment,
    /// Nobody set one: the rule decides.
    Derived,
}

impl Source {
    /// The source's name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Source::Call => "call",
            Source::Pool => "pool",
            Source::Environment => "environment",
            Source::Derived => "derived",
        }
    }
}

/// A threshold per family where one was set, each with where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    set: [Option<(ParThreshold, Source)>; FAMILIES],
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            set: [None; FAMILIES],
        }
    }
}

impl Thresholds {
    /// No threshold set: every family derives.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same set with `family`'s threshold set to `t`, from `source`.
    pub fn with(mut self, family: Family, t: ParThreshold, source: Source) -> Self {
        self.set[family.index()] = Some((t, source));
        self
    }

    /// The threshold set for `family`, if any, and where it came from.
    pub fn get(&self, family: Family) -> Option<(ParThreshold, Source)> {
        self.set[family.index()]
    }

    /// The threshold in force for `family`: the one set, else `Derived`.
    pub fn in_force(&self, family: Family) -> (ParThreshold, Source) {
        self.get(family)
            .unwrap_or((ParThreshold::Derived, Source::Derived))
    }

    /// These thresholds over `below`: a family set here wins, others keep `below`'s.
    pub fn over(self, below: Thresholds) -> Thresholds {
        let mut out = below;
        for (slot, mine) in out.set.iter_mut().zip(self.set) {
            if mine.is_some() {
                *slot = mine;
            }
        }
        out
    }

    /// Parses `family=threshold` pairs separated by commas, as in
    /// `TEAMALG_THRESHOLDS=lu=never,gemm=fixed:100000`, each recorded with `source`. Empty
    /// items are ignored; an unknown family, a malformed threshold or a family named twice is
    /// an error that says which item and why.
    ///
    /// ```
    /// use teamalg_gates::{Family, ParThreshold, Source, Thresholds};
    ///
    /// let t = Thresholds::parse("lu=never, gemm=fixed:100_000", Source::Environment).unwrap();
    /// assert_eq!(t.in_force(Family::LuPartial), (ParThreshold::Never, Source::Environment));
    /// assert_eq!(t.in_force(Family::Gemm).0, ParThreshold::Fixed(100_000));
    /// assert_eq!(t.in_force(Family::Cholesky).0, ParThreshold::Derived);
    /// let e = Thresholds::parse("lu=sometimes", Source::Environment).unwrap_err();
    /// assert_eq!(e.item, "lu=sometimes");
    /// ```
    pub fn parse(text: &str, source: Source) -> Result<Thresholds, ThresholdsError> {
        let mut out = Thresholds::new();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let bad = |reason: String| ThresholdsError {
                item: item.to_string(),
                reason,
            };
            let (name, value) = item
                .split_once('=')
                .ok_or_else(|| bad("expected family=threshold".into()))?;
            let family = Family::from_name(name.trim()).ok_or_else(|| {
                let names: Vec<&str> = Family::KERNELS.iter().map(|f| f.name()).collect();
                bad(format!(
                    "unknown family {:?} (the kernels' families: {})",
                    name.trim(),
                    names.join(", ")
                ))
            })?;
            if out.get(family).is_some() {
                return Err(bad(format!("{} is named twice", family.name())));
            }
            let t = value.parse::<ParThreshold>().map_err(bad)?;
            out = out.with(family, t, source);
        }
        Ok(out)
    }
}

/// A malformed threshold list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThresholdsError {
    /// The offending item.
    pub item: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for ThresholdsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad threshold {:?}: {}", self.item, self.reason)
    }
}

impl std::error::Error for ThresholdsError {}
