//! Dispatch costs: the measured cost of one section, per kind of token and width.

use std::fmt;
use std::time::Duration;

/// The most anchors a row holds.
pub const MAX_ANCHORS: usize = 16;

/// Who dispatches a section, which decides what it costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DispatchKind {
    /// A token with team authority: members are awake and reserved.
    Team,
    /// A plain token used by a worker of its own pool.
    InPool,
    /// A plain token used by any other thread.
    Outside,
}

impl DispatchKind {
    /// All kinds, in row order.
    pub const ALL: [DispatchKind; 3] = [
        DispatchKind::Team,
        DispatchKind::InPool,
        DispatchKind::Outside,
    ];

    fn row(self) -> usize {
        self as usize
    }

    /// The kind's name in profiles and tables.
    pub fn name(self) -> &'static str {
        match self {
            DispatchKind::Team => "team",
            DispatchKind::InPool => "in_pool",
            DispatchKind::Outside => "outside",
        }
    }
}

/// Why a row of anchors was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CostsError {
    /// No anchors.
    Empty,
    /// More than [`MAX_ANCHORS`] anchors.
    TooMany(usize),
    /// Widths must be at least 1 and strictly increasing.
    Unordered {
        /// The offending width.
        width: u16,
    },
}

impl fmt::Display for CostsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CostsError::Empty => f.write_str("a cost row needs at least one anchor"),
            CostsError::TooMany(n) => write!(
                f,
                "a cost row holds at most {MAX_ANCHORS} anchors ({n} given)"
            ),
            CostsError::Unordered { width } => {
                write!(
                    f,
                    "anchor widths must be at least 1 and increasing (width {width})"
                )
            }
        }
    }
}

impl std::error::Error for CostsError {}

/// A row of measured anchors `(width, cost in ns)`. Below the first anchor the cost is the
/// first anchor's; between anchors it is interpolated linearly; above the largest it grows in
/// proportion to the width (`cost(wm) * w / wm`), never flat. Lookups allocate nothing.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct WidthCosts {
    widths: [u16; MAX_ANCHORS],
    nanos: [u32; MAX_ANCHORS],
    len: u8,
}

impl fmt::Debug for WidthCosts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.anchors()).finish()
    }
}

impl WidthCosts {
    /// A row from `(width, nanoseconds)` anchors with strictly increasing widths.
    pub const fn new(anchors: &[(u16, u32)]) -> Result<WidthCosts, CostsError> {
        if anchors.is_empty() {
            return Err(CostsError::Empty);
        }
        if anchors.len() > MAX_ANCHORS {
            return Err(CostsError::TooMany(anchors.len()));
        }
        let mut widths = [0u16; MAX_ANCHORS];
        let mut nanos = [0u32; MAX_ANCHORS];
        let mut i = 0;
        while i < anchors.len() {
            let (w, ns) = anchors[i];
            if w == 0 || (i > 0 && w <= anchors[i - 1].0) {
                return Err(CostsError::Unordered { width: w });
            }
            widths[i] = w;
            nanos[i] = ns;
            i += 1;
        }
        Ok(WidthCosts {
            widths,
            nanos,
            len: anchors.len() as u8,
        })
    }

    /// A row known to be valid at compile time.
    const fn fixed(anchors: &[(u16, u32)]) -> WidthCosts {
        match WidthCosts::new(anchors) {
            Ok(row) => row,
            Err(_) => panic!("invalid built-in cost row"),
        }
    }

    /// The anchors, in order.
    pub fn anchors(&self) -> impl Iterator<Item = (u16, u32)> + '_ {
        (0..self.len as usize).map(|i| (self.widths[i], self.nanos[i]))
    }

    /// The cost of one section at `width`.
    #[inline]
    pub fn at(&self, width: usize) -> Duration {
        Duration::from_nanos(self.nanos_at(width))
    }

    fn nanos_at(&self, width: usize) -> u64 {
        let n = self.len as usize;
        let w = width as u64;
        let first = self.widths[0] as u64;
        if w <= first {
            return self.nanos[0] as u64;
        }
        let last = self.widths[n - 1] as u64;
        if w >= last {
            return self.nanos[n - 1] as u64 * w / last;
        }
        let mut i = 1;
        while (self.widths[i] as u64) < w {
            i += 1;
        }
        let (w0, w1) = (self.widths[i - 1] as u64, self.widths[i] as u64);
        let (c0, c1) = (self.nanos[i - 1] as i64, self.nanos[i] as i64);
        let t = (w - w0) as i64;
        (c0 + (c1 - c0) * t / (w1 - w0) as i64) as u64
    }

    /// The smallest anchor cost.
    pub fn min(&self) -> Duration {
        let n = self.len as usize;
        Duration::from_nanos(*self.nanos[..n].iter().min().expect("a row is never empty") as u64)
    }
}

/// A machine class, with its built-in dispatch cost rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostClass {
    /// x86-64 with AVX-512.
    X86_64Avx512,
    /// x86-64 with AVX2.
    X86_64Avx2,
    /// x86-64 without AVX2.
    X86_64Scalar,
    /// Apple silicon.
    Aarch64Apple,
    /// Other 64-bit ARM.
    Aarch64,
    /// Anything else (costs err on the serial side).
    Generic,
}

impl HostClass {
    /// The class of the machine this runs on.
    pub fn detect() -> HostClass {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return HostClass::X86_64Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return HostClass::X86_64Avx2;
            }
            HostClass::X86_64Scalar
        }
        #[cfg(all(target_arch = "aarch64", target_vendor = "apple"))]
        {
            HostClass::Aarch64Apple
        }
        #[cfg(all(target_arch = "aarch64", not(target_vendor = "apple")))]
        {
            HostClass::Aarch64
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            HostClass::Generic
        }
    }

    /// The class's name in profiles and tables.
    pub fn name(self) -> &'static str {
        match self {
            HostClass::X86_64Avx512 => "x86_64-avx512",
            HostClass::X86_64Avx2 => "x86_64-avx2",
            HostClass::X86_64Scalar => "x86_64-scalar",
            HostClass::Aarch64Apple => "aarch64-apple",
            HostClass::Aarch64 => "aarch64",
            HostClass::Generic => "generic",
        }
    }

    /// The class named `name`, if any.
    pub fn from_name(name: &str) -> Option<HostClass> {
        [
            HostClass::X86_64Avx512,
            HostClass::X86_64Avx2,
            HostClass::X86_64Scalar,
            HostClass::Aarch64Apple,
            HostClass::Aarch64,
            HostClass::Generic,
        ]
        .into_iter()
        .find(|c| c.name() == name)
    }
}

/// The CPU's vendor. It picks the built-in split costs of the reduction step families
/// ([`crate::builtin_split`]): those steps are bound by the memory system, and the two hosts
/// measured split them very differently (`docs/gates.md`, "Built-in rows").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CpuVendor {
    /// AMD (`AuthenticAMD`).
    Amd,
    /// Intel (`GenuineIntel`).
    Intel,
    /// Any other, or not x86-64.
    Other,
}

impl CpuVendor {
    /// The vendor of the machine this runs on, read once.
    pub fn detect() -> CpuVendor {
        static VENDOR: std::sync::OnceLock<CpuVendor> = std::sync::OnceLock::new();
        *VENDOR.get_or_init(Self::read)
    }

    #[cfg(target_arch = "x86_64")]
    fn read() -> CpuVendor {
        // SAFETY: every x86-64 processor has `cpuid`, and leaf 0 exists on all of them. (The
        // intrinsic is a safe function from Rust 1.87 on; the block keeps older compilers.)
        #[allow(unused_unsafe)]
        let r = unsafe { std::arch::x86_64::__cpuid(0) };
        let mut id = [0u8; 12];
        id[..4].copy_from_slice(&r.ebx.to_le_bytes());
        id[4..8].copy_from_slice(&r.edx.to_le_bytes());
        id[8..].copy_from_slice(&r.ecx.to_le_bytes());
        match &id {
            b"AuthenticAMD" => CpuVendor::Amd,
            b"GenuineIntel" => CpuVendor::Intel,
            _ => CpuVendor::Other,
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn read() -> CpuVendor {
        CpuVendor::Other
    }
}

// The built-in rows (10 us shares, back-to-back sections, overhead per section); their hosts
// and dates are listed in `docs/gates.md`, "Built-in rows".
//
// Apple M5 Max.
const APPLE_TEAM: WidthCosts = WidthCosts::fixed(&[(2, 3000), (4, 2300), (6, 1400)]);
const APPLE_IN_POOL: WidthCosts = WidthCosts::fixed(&[(2, 6000), (4, 11000), (6, 5500)]);
const APPLE_OUTSIDE: WidthCosts = WidthCosts::fixed(&[(2, 14000), (4, 18000), (6, 19000)]);
// x86-64 AVX-512. Width 2: teamalg's own sections on the 2-vCPU AMD EPYC KVM guest whose rates
// and split costs are the built-in ones (`teamalg calibrate`, 2026-12-01, medians of three
// runs: team 0.28, in pool 0.39, outside 0.41 us), so the built-in model is one host's. Team
// row from width 4: Ryzen AI 9 HX 470 at a fixed 2.0 GHz (`docs/gates.md`). The plain-token rows
// measured there (3.0 to 10 us) were a peer pool's, not teamalg's, so beyond width 2 they grow
// in proportion to the width.
const AVX512_TEAM: WidthCosts = WidthCosts::fixed(&[(2, 280), (4, 700), (6, 900), (8, 980)]);
const AVX512_IN_POOL: WidthCosts = WidthCosts::fixed(&[(2, 390)]);
const AVX512_OUTSIDE: WidthCosts = WidthCosts::fixed(&[(2, 410)]);
// x86-64 AVX2: EPYC 7702P, 64 cores (team row only; plain tokens take the generic rows).
const AVX2_TEAM: WidthCosts = WidthCosts::fixed(&[
    (2, 1420),
    (4, 1990),
    (6, 2330),
    (8, 2740),
    (12, 3560),
    (16, 4080),
    (24, 4290),
    (32, 4840),
    (48, 6400),
    (64, 9330),
]);
// Unmeasured hosts: err on the serial side.
const GENERIC_TEAM: WidthCosts = WidthCosts::fixed(&[(2, 3000), (4, 3000)]);
const GENERIC_IN_POOL: WidthCosts = WidthCosts::fixed(&[(2, 15000), (4, 15000)]);
const GENERIC_OUTSIDE: WidthCosts = WidthCosts::fixed(&[(2, 40000), (4, 40000)]);

/// One row of costs per [`DispatchKind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchCosts {
    rows: [WidthCosts; 3],
}

impl DispatchCosts {
    /// Rows for team, in-pool and outside dispatch.
    pub fn new(team: WidthCosts, in_pool: WidthCosts, outside: WidthCosts) -> Self {
        DispatchCosts {
            rows: [team, in_pool, outside],
        }
    }

    /// The built-in rows of a host class.
    pub fn for_class(class: HostClass) -> Self {
        match class {
            HostClass::X86_64Avx512 => Self::new(AVX512_TEAM, AVX512_IN_POOL, AVX512_OUTSIDE),
            HostClass::X86_64Avx2 => Self::new(AVX2_TEAM, GENERIC_IN_POOL, GENERIC_OUTSIDE),
            HostClass::Aarch64Apple => Self::new(APPLE_TEAM, APPLE_IN_POOL, APPLE_OUTSIDE),
            HostClass::X86_64Scalar | HostClass::Aarch64 | HostClass::Generic => {
                Self::new(GENERIC_TEAM, GENERIC_IN_POOL, GENERIC_OUTSIDE)
            }
        }
    }

    /// The built-in rows of the class of this machine.
    pub fn host_default() -> Self {
        Self::for_class(HostClass::detect())
    }

    /// The cost of one section of `kind` at `width` (`Duration::MAX` below width 2: no
    /// parallel dispatch).
    #[inline]
    pub fn cost(&self, kind: DispatchKind, width: usize) -> Duration {
        if width < 2 {
            return Duration::MAX;
        }
        self.rows[kind.row()].at(width)
    }

    /// The row of `kind`.
    pub fn row(&self, kind: DispatchKind) -> &WidthCosts {
        &self.rows[kind.row()]
    }

    /// The smallest cost of `kind` at any anchor.
    pub fn min_cost(&self, kind: DispatchKind) -> Duration {
        self.rows[kind.row()].min()
    }

    /// The same costs with `kind`'s row replaced.
    pub fn with(mut self, kind: DispatchKind, row: WidthCosts) -> Self {
        self.rows[kind.row()] = row;
        self
    }
}
