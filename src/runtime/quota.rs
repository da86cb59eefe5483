//! The CPU quota of the process's cgroup: how many CPUs' worth of time a container may use, as
//! opposed to how many CPUs it may run on (its affinity, `cpus.rs`).
//!
//! A container limited to 2 CPUs on a 64-CPU node usually keeps all 64 in its affinity mask; the
//! scheduler instead throttles the whole cgroup once it has used 2 CPU-periods in a period. A
//! pool sized by the mask would start 64 workers whose spinning members use up the quota, and
//! the whole group would then stall until the next period. So pools are sized by the smaller of
//! the two (`CpuSet::usable`), as `std::thread::available_parallelism` does.
//!
//! Read: cgroup v2's `cpu.max` (`"max 100000"` or `"QUOTA PERIOD"`) and cgroup v1's
//! `cpu.cfs_quota_us` and `cpu.cfs_period_us` (`-1`: no quota), in the process's cgroup and
//! every cgroup above it up to the mount's root; the smallest limit wins. The quota in CPUs is
//! `quota / period` rounded down, at least 1: a team's members spin for whole CPUs, so a share
//! of a CPU is no CPU to spin on (1.5 CPUs give one participant, never two that throttle).
//!
//! Read once per process (the first pool or `available_cpus` call): reading the files costs
//! tens of microseconds, too much for a pool built per call, and quotas rarely change while a
//! process runs.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The process's CPU quota in CPUs, `None` when it has none (or none could be read).
pub(crate) fn cpus() -> Option<usize> {
    static QUOTA: OnceLock<Option<usize>> = OnceLock::new();
    *QUOTA.get_or_init(|| quota_under(Path::new("/")))
}

/// The quota as seen through the filesystem under `root` (`/` in a process; a folder of
/// written files in the tests): `proc/self/cgroup`, `proc/self/mountinfo`, and the cgroup
/// folders they name, each under `root`.
pub(crate) fn quota_under(root: &Path) -> Option<usize> {
    let cgroup = std::fs::read_to_string(root.join("proc/self/cgroup")).ok()?;
    let mounts = std::fs::read_to_string(root.join("proc/self/mountinfo")).ok()?;
    let read = |dir: &Path, file: &str| std::fs::read_to_string(dir.join(file)).ok();
    let mut best: Option<usize> = None;
    for (version, path) in cgroup_paths(&cgroup) {
        let Some((mount_root, mount_point)) = mount_of(&mounts, version) else {
            continue;
        };
        let mount_point = under(root, &mount_point);
        // The path is relative to the hierarchy's root; the mount shows `mount_root` of it.
        // Where the two do not nest (a cgroup namespace seen from outside it), the mount's top
        // is this process's cgroup as far as can be known.
        let rel = Path::new(&path)
            .strip_prefix(&mount_root)
            .unwrap_or(Path::new(""));
        let mut dir = mount_point.join(rel);
        loop {
            let limit = match version {
                Version::V2 => read(&dir, "cpu.max").and_then(|t| parse_cpu_max(&t)),
                Version::V1 => read(&dir, "cpu.cfs_quota_us")
                    .zip(read(&dir, "cpu.cfs_period_us"))
                    .and_then(|(q, p)| parse_cfs(&q, &p)),
            };
            if let Some(n) = limit {
                best = Some(best.map_or(n, |b| b.min(n)));
            }
            if dir == mount_point || !dir.pop() || !dir.starts_with(&mount_point) {
                break;
            }
        }
    }
    best
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Version {
    V1,
    V2,
}

/// The cgroups of `/proc/self/cgroup` that can carry a CPU quota: the v2 line (`0::PATH`) and
/// the v1 line whose controllers include `cpu` (`N:cpu,cpuacct:PATH`).
fn cgroup_paths(text: &str) -> Vec<(Version, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if id == "0" && controllers.is_empty() {
            out.push((Version::V2, path.to_owned()));
        } else if controllers.split(',').any(|c| c == "cpu") {
            out.push((Version::V1, path.to_owned()));
        }
    }
    out
}

/// The root within its hierarchy and the mount point of the mount of `/proc/self/mountinfo`
/// for `version`: the `cgroup2` file system, or a v1 `cgroup` whose options include `cpu`.
/// (A line: `ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER_OPTIONS`.)
fn mount_of(text: &str, version: Version) -> Option<(String, String)> {
    for line in text.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let Some(dash) = fields.iter().position(|&f| f == "-") else {
            continue;
        };
        if dash < 5 || fields.len() < dash + 4 {
            continue;
        }
        let (fs, options) = (fields[dash + 1], fields[dash + 3]);
        let wanted = match version {
            Version::V2 => fs == "cgroup2",
            Version::V1 => fs == "cgroup" && options.split(',').any(|o| o == "cpu"),
        };
        if wanted {
            return Some((unescape(fields[3]), unescape(fields[4])));
        }
    }
    None
}

/// mountinfo's octal escapes (`\040` for a space) undone.
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b.get(i + 1..i + 4).filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `path` (absolute) under `root`.
fn under(root: &Path, path: &str) -> PathBuf {
    root.join(path.trim_start_matches('/'))
}

/// A v2 `cpu.max`: `"max PERIOD"` (no quota) or `"QUOTA PERIOD"`.
fn parse_cpu_max(text: &str) -> Option<usize> {
    let mut it = text.split_whitespace();
    let (quota, period) = (it.next()?, it.next()?);
    cpus_of(quota.parse().ok()?, period.parse().ok()?)
}

/// A v1 quota and period: `-1` (or any negative) quota is none.
fn parse_cfs(quota: &str, period: &str) -> Option<usize> {
    let quota: i64 = quota.trim().parse().ok()?;
    cpus_of(u64::try_from(quota).ok()?, period.trim().parse().ok()?)
}

/// Whole CPUs in `quota` per `period`, rounded down, at least 1 (none for a zero period).
fn cpus_of(quota: u64, period: u64) -> Option<usize> {
    if period == 0 {
        return None;
    }
    Some(usize::try_from(quota / period).unwrap_or(usize::MAX).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder of written cgroup files, removed on drop.
    struct Tree(PathBuf);

    impl Tree {
        fn new(name: &str) -> Tree {
            let dir = std::env::temp_dir().join(format!(
                "teamalg-quota-{name}-{}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Tree(dir)
        }

        fn write(&self, path: &str, text: &str) -> &Tree {
            let p = self.0.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
            self
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const V2_MOUNT: &str = "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw\n";
    const V1_MOUNTS: &str = "\
25 24 0:22 / /sys/fs/cgroup rw - tmpfs tmpfs ro,mode=755
31 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct
32 25 0:28 / /sys/fs/cgroup/cpuset rw,nosuid - cgroup cgroup rw,cpuset
";

    #[test]
    fn v2_quota_of_the_process_cgroup() {
        let t = Tree::new("v2");
        t.write("proc/self/cgroup", "0::/user.slice/job\n")
            .write("proc/self/mountinfo", V2_MOUNT)
            .write("sys/fs/cgroup/cpu.max", "max 100000\n")
            .write("sys/fs/cgroup/user.slice/cpu.max", "max 100000\n")
            .write("sys/fs/cgroup/user.slice/job/cpu.max", "250000 100000\n");
        assert_eq!(quota_under(&t.0), Some(2)); // 2.5 CPUs: two whole ones
    }

    #[test]
    fn the_smallest_limit_on_the_way_up_wins() {
        let t = Tree::new("up");
        t.write("proc/self/cgroup", "0::/a/b\n")
            .write("proc/self/mountinfo", V2_MOUNT)
            .write("sys/fs/cgroup/a/cpu.max", "300000 100000\n")
            .write("sys/fs/cgroup/a/b/cpu.max", "max 100000\n");
        assert_eq!(quota_under(&t.0), Some(3));
    }

    #[test]
    fn no_quota_is_none() {
        let t = Tree::new("none");
        t.write("proc/self/cgroup", "0::/\n")
            .write("proc/self/mountinfo", V2_MOUNT)
            .write("sys/fs/cgroup/cpu.max", "max 100000\n");
        assert_eq!(quota_under(&t.0), None);
        // And nothing to read at all.
        assert_eq!(quota_under(&t.0.join("missing")), None);
    }

    #[test]
    fn v1_quota_with_the_cpu_controller_mount() {
        let t = Tree::new("v1");
        t.write(
            "proc/self/cgroup",
            "5:cpuset:/\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n",
        )
        .write("proc/self/mountinfo", V1_MOUNTS)
        .write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "50000\n")
        .write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n")
        .write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n")
        .write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
        assert_eq!(quota_under(&t.0), Some(1)); // half a CPU: at least one
    }

    #[test]
    fn a_namespaced_mount_root_is_stripped() {
        // Inside a container the mount shows the container's cgroup as its root, while
        // /proc/self/cgroup (read without a cgroup namespace) names the full path.
        let t = Tree::new("ns");
        t.write("proc/self/cgroup", "0::/kubepods/pod1/ctr\n")
            .write(
                "proc/self/mountinfo",
                "30 23 0:26 /kubepods/pod1/ctr /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n",
            )
            .write("sys/fs/cgroup/cpu.max", "400000 100000\n");
        assert_eq!(quota_under(&t.0), Some(4));
    }

    #[test]
    fn parsers() {
        assert_eq!(parse_cpu_max("max 100000"), None);
        assert_eq!(parse_cpu_max("200000 100000\n"), Some(2));
        assert_eq!(parse_cpu_max("150000 100000"), Some(1));
        assert_eq!(parse_cpu_max("1000 100000"), Some(1));
        assert_eq!(parse_cpu_max("100000 0"), None);
        assert_eq!(parse_cpu_max("garbage"), None);
        assert_eq!(parse_cfs("-1\n", "100000\n"), None);
        assert_eq!(parse_cfs("400000", "100000"), Some(4));
        assert_eq!(unescape(r"/a\040b"), "/a b");
        assert_eq!(unescape(r"/a\04"), r"/a\04");
    }
}
