//! A process in a cgroup with a CPU quota of one CPU sizes its pools to one worker, however many
//! CPUs its affinity mask holds. Runs where the machine lets this process create a cgroup (root,
//! with the v1 `cpu` controller mounted or v2's `cpu` controller enabled); elsewhere it says so
//! and checks nothing more (the quota parser's own tests run everywhere, in `src/runtime/quota.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

const CHILD: &str = "TEAMALG_QUOTA_CHILD";

/// In the child: the quota of one CPU decides, whatever the mask.
#[test]
fn pools_follow_the_quota_in_a_child() {
    if std::env::var_os(CHILD).is_none() {
        return; // only meaningful inside the cgroup `the_quota_bounds_a_process` makes
    }
    assert_eq!(teamalg::available_cpus(), 1);
    let pool = teamalg::Pool::builder().build().unwrap();
    assert_eq!(pool.threads(), 1);
    assert_eq!(teamalg::share::node_share(0, 1).threads, 1);
}

/// A cgroup of one CPU's quota made for this test, removed on drop.
struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    /// Under the v1 `cpu` hierarchy or a v2 hierarchy with the `cpu` controller, when writable.
    fn one_cpu() -> Option<Cgroup> {
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let name = format!("teamalg-quota-test-{}", std::process::id());
        for line in mounts.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            let Some(dash) = f.iter().position(|&x| x == "-") else {
                continue;
            };
            if dash < 5 || f.len() < dash + 4 {
                continue;
            }
            let (fs, opts, point) = (f[dash + 1], f[dash + 3], Path::new(f[4]));
            let (file, text) = if fs == "cgroup" && opts.split(',').any(|o| o == "cpu") {
                ("cpu.cfs_quota_us", "100000") // the default period is 100000
            } else if fs == "cgroup2"
                && std::fs::read_to_string(point.join("cgroup.subtree_control"))
                    .is_ok_and(|c| c.split_whitespace().any(|c| c == "cpu"))
            {
                ("cpu.max", "100000 100000")
            } else {
                continue;
            };
            let dir = point.join(&name);
            if std::fs::create_dir(&dir).is_err() {
                continue;
            }
            let cg = Cgroup { dir };
            if std::fs::write(cg.dir.join(file), text).is_ok() {
                return Some(cg);
            }
        }
        None
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[test]
fn the_quota_bounds_a_process() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        eprintln!("skipped: one CPU, so a quota of one changes nothing to see");
        return;
    }
    let Some(cg) = Cgroup::one_cpu() else {
        eprintln!("skipped: this process cannot create a cgroup with a CPU quota here");
        return;
    };
    // The child joins the cgroup before it runs the test binary: the shell writes its own pid
    // to `cgroup.procs`, then becomes the test.
    let exe = std::env::current_exe().unwrap();
    let status = Command::new("sh")
        .arg("-c")
        .arg(r#"echo $$ > "$1/cgroup.procs" && shift && exec "$@""#)
        .arg("sh")
        .arg(&cg.dir)
        .arg(&exe)
        .args([
            "--exact",
            "pools_follow_the_quota_in_a_child",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .status()
        .unwrap();
    assert!(status.success(), "the child in a one-CPU quota failed");
}
