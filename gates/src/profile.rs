//! Host profiles: the dispatch costs (and serial rates) measured on one machine, in a small
//! human-readable file with the machine's fingerprint.
//!
//! ```text
//! # teamalg host profile
//! cpu_model = "Intel(R) Xeon(R) Processor"
//! cores = 2
//! class = "x86_64-avx512"
//! team = [[2, 640]]
//! in_pool = [[2, 790]]
//! outside = [[2, 1100]]
//! rate.gemm = [0.031, 0.129, 0.015, 0.066]
//! split.lu = [[2, 6200, 0.93, 9000, 0.95], [4, 7400, 0.81, 9900, 0.88]]
//! ```
//!
//! Costs are nanoseconds per section at each anchor width; a rate is nanoseconds per unit for
//! `f64`, `c64`, `f32` and `c32` (two values: `f64` and `c64`, single precision at half); a
//! split is, at each width fitted, the overhead per section in nanoseconds and the efficiency,
//! for real then complex scalars ([`SplitCurve`]; four numbers alone are width 2). A profile from another machine (another CPU model, core count or class) is
//! refused: its costs would be wrong here.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::costs::{CpuVendor, DispatchCosts, DispatchKind, HostClass, WidthCosts};
use crate::family::Family;
use crate::model::Model;
use crate::rate::{Rate, RateCurve};
use crate::rows::{builtin_rate, builtin_split, Catalogue};
use crate::split::{SplitCost, SplitCurve, Splits};

/// What identifies a machine for a profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    /// The CPU model name.
    pub cpu_model: String,
    /// Logical CPUs of the machine.
    pub cores: usize,
    /// The host class.
    pub class: HostClass,
}

impl Fingerprint {
    /// This machine's fingerprint.
    pub fn current() -> Fingerprint {
        let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            info.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        let cpu_model = field("model name")
            .or_else(|| field("Model"))
            .unwrap_or_else(|| "unknown".to_string());
        let counted = info.lines().filter(|l| l.starts_with("processor")).count();
        let cores = if counted > 0 {
            counted
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        };
        Fingerprint {
            cpu_model,
            cores,
            class: HostClass::detect(),
        }
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} CPUs, {})",
            self.cpu_model,
            self.cores,
            self.class.name()
        )
    }
}

/// Why a profile could not be used.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ProfileError {
    /// The file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        message: String,
    },
    /// A line could not be understood.
    Malformed {
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A required key is missing.
    Missing(&'static str),
    /// The profile was measured on another machine.
    ForeignHost {
        /// The machine in the profile.
        profile: Fingerprint,
        /// This machine.
        host: Fingerprint,
    },
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProfileError::Io { path, message } => {
                write!(f, "cannot use host profile {}: {message}", path.display())
            }
            ProfileError::Malformed { line, reason } => {
                write!(f, "malformed host profile, line {line}: {reason}")
            }
            ProfileError::Missing(key) => write!(f, "host profile lacks `{key}`"),
            ProfileError::ForeignHost { profile, host } => write!(
                f,
                "host profile was measured on {profile}, not on this host ({host}); \
                 run `teamalg calibrate` here"
            ),
        }
    }
}

impl std::error::Error for ProfileError {}

/// What a calibration saw of the machine besides itself (`teamalg calibrate` refuses to write
/// a profile measured beside other work unless forced, and records this in it).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SeenLoad {
    /// Runnable threads not the calibration's own, on average over the run (sampled from
    /// `/proc/loadavg` and the process's own thread states).
    pub others: f64,
    /// Dispatch samples rejected because a participant was descheduled, as a fraction.
    pub rejected: f64,
    /// Dispatch rows whose rounds never agreed.
    pub unstable: usize,
}

/// A calibrated host: fingerprint, dispatch costs, measured rates and split costs.
#[derive(Debug, Clone, PartialEq)]
pub struct HostProfile {
    /// The machine measured.
    pub fingerprint: Fingerprint,
    /// Its dispatch costs.
    pub costs: DispatchCosts,
    /// The serial rates measured (families not listed keep the built-in rate).
    pub rates: Vec<(Family, RateCurve)>,
    /// The split costs fitted (families not listed keep the built-in ones).
    pub splits: Vec<(Family, Splits)>,
    /// The load the calibration saw, when it recorded one.
    pub load: Option<SeenLoad>,
}

impl HostProfile {
    /// The measured rate curve of `family`, else the built-in one of `rows` for the profile's
    /// class.
    pub fn rate(&self, family: Family, rows: Catalogue) -> RateCurve {
        self.rates.iter().find(|(f, _)| *f == family).map_or_else(
            || builtin_rate(family, self.fingerprint.class, rows),
            |(_, r)| *r,
        )
    }

    /// The fitted split costs of `family`, else the built-in ones of `rows`.
    pub fn split(&self, family: Family, rows: Catalogue) -> Splits {
        self.splits.iter().find(|(f, _)| *f == family).map_or_else(
            || builtin_split(family, CpuVendor::detect(), rows),
            |(_, s)| *s,
        )
    }

    /// The model the gates use with this profile: its costs, its rates and split costs where
    /// measured, the built-in ones of `rows` (the kernels' family list) elsewhere, no
    /// thresholds.
    pub fn model(&self, rows: Catalogue) -> Model {
        let mut m = Model::for_class(self.fingerprint.class, rows).with_costs(self.costs);
        for f in Family::ALL {
            m = m
                .with_rate(f, self.rate(f, rows))
                .with_split(f, self.split(f, rows));
        }
        m
    }

    /// The profile as text (the format of the module documentation).
    pub fn to_text(&self) -> String {
        let fp = &self.fingerprint;
        let mut s = String::from("# teamalg host profile (written by `teamalg calibrate`)\n");
        s += &format!("cpu_model = {:?}\n", fp.cpu_model);
        s += &format!("cores = {}\n", fp.cores);
        s += &format!("class = {:?}\n", fp.class.name());
        if let Some(l) = self.load {
            s += "# the load seen while measuring: [other runnable threads, rejected samples, unstable rows]\n";
            s += &format!("load = [{}, {}, {}]\n", l.others, l.rejected, l.unstable);
        }
        s += "# nanoseconds per section at each width: [[width, ns], ...]\n";
        for kind in DispatchKind::ALL {
            let pairs: Vec<String> = self
                .costs
                .row(kind)
                .anchors()
                .map(|(w, ns)| format!("[{w}, {ns}]"))
                .collect();
            s += &format!("{} = [{}]\n", kind.name(), pairs.join(", "));
        }
        if !self.rates.is_empty() {
            s += "# nanoseconds per unit at a call of `units` units: [[units, f64, c64, f32, c32], ...]\n";
        }
        for (family, curve) in &self.rates {
            let anchors: Vec<String> = curve
                .anchors()
                .map(|(u, r)| {
                    let [a, b, c, d] = r.values();
                    format!("[{u:.0}, {a:.6}, {b:.6}, {c:.6}, {d:.6}]")
                })
                .collect();
            s += &format!("rate.{} = [{}]\n", family.name(), anchors.join(", "));
        }
        if !self.splits.is_empty() {
            s += "# per section beyond dispatch: [[width, real ns, real efficiency, complex ns, complex efficiency], ...]\n";
        }
        for (family, sp) in &self.splits {
            // Both curves at the widths of either (calibration fits them at the same widths).
            let mut widths: Vec<usize> = sp
                .real
                .anchors()
                .chain(sp.cplx.anchors())
                .map(|a| a.0)
                .collect();
            widths.sort_unstable();
            widths.dedup();
            let anchors: Vec<String> = widths
                .into_iter()
                .map(|w| {
                    let (real, cplx) = (sp.real.at(w), sp.cplx.at(w));
                    format!(
                        "[{w}, {}, {}, {}, {}]",
                        real.overhead_ns, real.efficiency, cplx.overhead_ns, cplx.efficiency
                    )
                })
                .collect();
            s += &format!("split.{} = [{}]\n", family.name(), anchors.join(", "));
        }
        s
    }

    /// Parses a profile.
    pub fn parse(text: &str) -> Result<HostProfile, ProfileError> {
        let (mut model, mut cores, mut class) = (None, None, None);
        let mut rows: [Option<WidthCosts>; 3] = [None, None, None];
        let mut rates = Vec::new();
        let mut splits = Vec::new();
        let mut load = None;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |reason: String| ProfileError::Malformed {
                line: i + 1,
                reason,
            };
            let (key, value) = line
                .split_once('=')
                .ok_or_else(|| bad("expected `key = value`".into()))?;
            let (key, value) = (key.trim(), value.trim());
            match key {
                "cpu_model" => {
                    model =
                        Some(unquote(value).ok_or_else(|| bad("expected a quoted string".into()))?)
                }
                "cores" => {
                    cores = Some(
                        value
                            .parse::<usize>()
                            .map_err(|e| bad(format!("cores: {e}")))?,
                    )
                }
                "class" => {
                    let name =
                        unquote(value).ok_or_else(|| bad("expected a quoted string".into()))?;
                    class = Some(
                        HostClass::from_name(&name)
                            .ok_or_else(|| bad(format!("unknown class {name:?}")))?,
                    );
                }
                "load" => {
                    let v = numbers(value)
                        .filter(|v| v.len() == 3 && v.iter().all(|x| *x >= 0.0))
                        .ok_or_else(|| {
                            bad("expected [other runnable threads, rejected samples, unstable rows]"
                                .into())
                        })?;
                    load = Some(SeenLoad {
                        others: v[0],
                        rejected: v[1],
                        unstable: v[2] as usize,
                    });
                }
                _ if key.starts_with("rate.") => {
                    let family = Family::from_name(&key[5..])
                        .ok_or_else(|| bad(format!("unknown kernel family {:?}", &key[5..])))?;
                    rates.push((family, rate_curve(value).map_err(bad)?));
                }
                _ if key.starts_with("split.") => {
                    let family = Family::from_name(&key[6..])
                        .ok_or_else(|| bad(format!("unknown kernel family {:?}", &key[6..])))?;
                    let (real, cplx) = split_curves(value, family.decay()).map_err(bad)?;
                    splits.push((family, Splits { real, cplx }));
                }
                _ => {
                    let kind = DispatchKind::ALL
                        .into_iter()
                        .find(|k| k.name() == key)
                        .ok_or_else(|| bad(format!("unknown key {key:?}")))?;
                    let pairs =
                        pairs(value).ok_or_else(|| bad("expected [[width, ns], ...]".into()))?;
                    let row = WidthCosts::new(&pairs).map_err(|e| bad(e.to_string()))?;
                    rows[kind as usize] = Some(row);
                }
            }
        }
        let [team, in_pool, outside] = rows;
        Ok(HostProfile {
            fingerprint: Fingerprint {
                cpu_model: model.ok_or(ProfileError::Missing("cpu_model"))?,
                cores: cores.ok_or(ProfileError::Missing("cores"))?,
                class: class.ok_or(ProfileError::Missing("class"))?,
            },
            costs: DispatchCosts::new(
                team.ok_or(ProfileError::Missing("team"))?,
                in_pool.ok_or(ProfileError::Missing("in_pool"))?,
                outside.ok_or(ProfileError::Missing("outside"))?,
            ),
            rates,
            splits,
            load,
        })
    }

    /// Reads and parses a profile, and checks that it was measured on this machine.
    pub fn load(path: impl AsRef<Path>) -> Result<HostProfile, ProfileError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ProfileError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let profile = HostProfile::parse(&text)?;
        profile.check(&Fingerprint::current())?;
        Ok(profile)
    }

    /// Refuses a profile measured on another machine than `host`.
    pub fn check(&self, host: &Fingerprint) -> Result<(), ProfileError> {
        if self.fingerprint != *host {
            return Err(ProfileError::ForeignHost {
                profile: self.fingerprint.clone(),
                host: host.clone(),
            });
        }
        Ok(())
    }

    /// Writes the profile.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), ProfileError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_text()).map_err(|e| ProfileError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }
}

/// A rate: `[f64, c64]` (single precision at half), `[f64, c64, f32, c32]`, or a curve
/// `[[units, f64, c64, f32, c32], ...]`.
fn rate_curve(v: &str) -> Result<RateCurve, String> {
    let flat = |v: &[f64]| -> Result<Rate, String> {
        if v.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
            return Err("rates must be positive numbers".into());
        }
        match v[..] {
            [real, cplx] => Ok(Rate::halved(real, cplx)),
            [real, cplx, real_single, cplx_single] => Ok(Rate {
                real,
                cplx,
                real_single,
                cplx_single,
            }),
            _ => Err("expected [f64, c64, f32, c32] or [[units, f64, c64, f32, c32], ...]".into()),
        }
    };
    let inner = v.trim();
    if inner.starts_with("[[") {
        let body = inner
            .strip_prefix('[')
            .and_then(|s| s.strip_suffix(']'))
            .ok_or("expected [[units, f64, c64, f32, c32], ...]")?;
        let mut anchors = Vec::new();
        for item in body.split(']') {
            let item = item.trim().trim_start_matches(',').trim();
            if item.is_empty() {
                continue;
            }
            let v = numbers(&format!("{item}]")).ok_or("expected numbers in each anchor")?;
            if v.len() != 5 {
                return Err("each anchor is [units, f64, c64, f32, c32]".into());
            }
            anchors.push((v[0], flat(&v[1..])?));
        }
        RateCurve::new(&anchors)
    } else {
        let v = numbers(inner).ok_or("expected [f64, c64, f32, c32]")?;
        Ok(RateCurve::flat(flat(&v)?))
    }
}

/// A split: `[real ns, real efficiency, complex ns, complex efficiency]` (width 2) or
/// `[[width, real ns, real efficiency, complex ns, complex efficiency], ...]`, as two curves
/// with `decay` where one width is given.
fn split_curves(v: &str, decay: f64) -> Result<(SplitCurve, SplitCurve), String> {
    const SHAPE: &str = "expected [real ns, real efficiency, complex ns, complex efficiency] or \
                         [[width, real ns, real efficiency, complex ns, complex efficiency], ...]";
    let rows: Vec<Vec<f64>> = if v.trim().starts_with("[[") {
        nested(v).ok_or(SHAPE)?
    } else {
        let flat = numbers(v.trim()).ok_or(SHAPE)?;
        vec![[2.0].into_iter().chain(flat).collect()]
    };
    let (mut real, mut cplx) = (Vec::new(), Vec::new());
    for r in &rows {
        let [w, ro, re, co, ce] = r[..] else {
            return Err(SHAPE.into());
        };
        if w.fract() != 0.0 || !(2.0..=u16::MAX as f64).contains(&w) {
            return Err(format!(
                "a split width must be a whole number of at least 2 ({w})"
            ));
        }
        let at = |overhead_ns, efficiency| SplitCost {
            overhead_ns,
            efficiency,
        };
        real.push((w as usize, at(ro, re)));
        cplx.push((w as usize, at(co, ce)));
    }
    let real = SplitCurve::new(&real, decay).map_err(|e| e.to_string())?;
    let cplx = SplitCurve::new(&cplx, decay).map_err(|e| e.to_string())?;
    Ok((real, cplx))
}

/// `[[a, b, ...], [c, d, ...], ...]` of numbers.
fn nested(v: &str) -> Option<Vec<Vec<f64>>> {
    let body = v.trim().strip_prefix('[')?.strip_suffix(']')?;
    let mut rows = Vec::new();
    for item in body.split(']') {
        let item = item.trim().trim_start_matches(',').trim();
        if item.is_empty() {
            continue;
        }
        rows.push(numbers(&format!("{item}]"))?);
    }
    Some(rows)
}

fn unquote(v: &str) -> Option<String> {
    let inner = v.strip_prefix('"')?.strip_suffix('"')?;
    Some(inner.replace("\\\"", "\"").replace("\\\\", "\\"))
}

/// `[a, b, ...]` of numbers.
fn numbers(v: &str) -> Option<Vec<f64>> {
    let inner = v.strip_prefix('[')?.strip_suffix(']')?;
    inner
        .split(',')
        .map(|x| x.trim().parse::<f64>().ok())
        .collect()
}

/// `[[w, ns], ...]` of integer pairs.
fn pairs(v: &str) -> Option<Vec<(u16, u32)>> {
    let inner = v.trim().strip_prefix('[')?.strip_suffix(']')?.trim();
    let mut out = Vec::new();
    let mut rest = inner;
    while !rest.is_empty() {
        let open = rest.strip_prefix('[')?;
        let close = open.find(']')?;
        let (pair, after) = (&open[..close], &open[close + 1..]);
        let (w, ns) = pair.split_once(',')?;
        out.push((w.trim().parse().ok()?, ns.trim().parse().ok()?));
        rest = after
            .trim_start()
            .strip_prefix(',')
            .unwrap_or(after)
            .trim_start();
    }
    Some(out)
}
