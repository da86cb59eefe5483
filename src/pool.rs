//! The user's handle of a pool, and its builder.

use std::fmt;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use teamalg_gates::{
    DispatchCosts, Family, HostProfile, Model, ParThreshold, ProfileError, Source, Thresholds,
};

use crate::environment::{model_from_environment, thresholds_from_environment};
use crate::error::Error;
use crate::runtime::cpus::CpuSet;
use crate::runtime::reserve;
use crate::runtime::wait::DEFAULT_SPIN_POLLS;
use crate::runtime::pool_shared::PoolShared;

/// Default of [`PoolBuilder::acquire_timeout`].
pub(crate) const DEFAULT_ACQUIRE_TIMEOUT: Duration = Duration::from_millis(10);

type NameFn = Box<dyn Fn(usize) -> String>;
type StartFn = Arc<dyn Fn(usize) + Send + Sync>;

/// A set of worker threads with one owner. See the crate documentation for an example.
///
/// Dropping a pool waits until its workers have left it (dedicated workers are joined, so their
/// thread-local destructors have run); leased workers go back to the reserve.
pub struct Pool {
    pub(crate) shared: Arc<PoolShared>,
    dedicated: Vec<JoinHandle<()>>,
    lease: Option<reserve::Lease>,
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("threads", &self.threads())
            .field("dedicated", &!self.dedicated.is_empty())
            .finish()
    }
}

impl Pool {
    /// A builder with default settings.
    pub fn builder() -> PoolBuilder {
        PoolBuilder::default()
    }

    /// The number of worker threads.
    pub fn threads(&self) -> usize {
        self.shared.threads()
    }

    /// The spin budget of this pool's waits, in polls.
    pub fn spin_polls(&self) -> u32 {
        self.shared.spin_polls
    }

    /// Whether the pool's gates read the live view (`PoolBuilder::live_view`).
    pub fn live_view(&self) -> bool {
        self.shared.live.is_some()
    }

    /// The dispatch costs this pool's gates use.
    pub fn dispatch_costs(&self) -> DispatchCosts {
        self.shared.model.costs
    }

    /// How many `on_start` hooks have panicked so far (their workers serve anyway; the library
    /// writes nothing to stderr, so this is where a failed hook shows). A hook runs on its
    /// worker after `build` has seen the worker start, so a hook still running is not counted.
    pub fn start_hook_panics(&self) -> usize {
        self.shared
            .hook_panics
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Everything this pool's gates read: dispatch costs, rates, split costs and the
    /// thresholds set by the builder and the environment.
    pub fn model(&self) -> &Model {
        &self.shared.model
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        if let Some(lease) = &self.lease {
            let revoked = lease.revoke_unstarted(&self.shared);
            self.shared.forget(revoked);
        }
        self.shared.shut_down();
        let me = std::thread::current().id();
        for h in self.dedicated.drain(..) {
            // A pool dropped from one of its own workers cannot join that worker: it leaves the
            // pool when its current job returns.
            if h.thread().id() != me {
                let _ = h.join();
            }
        }
    }
}

/// Settings of a [`Pool`].
///
/// A pool with default *thread* settings (no `thread_name`, `on_start` or `stack_size`) leases
/// workers from the process-wide reserve, so building one per call is cheap; otherwise it gets
/// dedicated threads that its drop joins.
#[derive(Default)]
pub struct PoolBuilder {
    threads: Option<usize>,
    thread_name: Option<NameFn>,
    on_start: Option<StartFn>,
    stack_size: Option<usize>,
    spin_polls: Option<u32>,
    acquire_timeout: Option<Duration>,
    costs: Option<DispatchCosts>,
    profile: Option<HostProfile>,
    thresholds: Thresholds,
    live_view: Option<bool>,
}

impl fmt::Debug for PoolBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolBuilder")
            .field("threads", &self.threads)
            .field("thread_name", &self.thread_name.is_some())
            .field("on_start", &self.on_start.is_some())
            .field("stack_size", &self.stack_size)
            .field("spin_polls", &self.spin_polls)
            .field("acquire_timeout", &self.acquire_timeout)
            .field("costs", &self.costs)
            .field("profile", &self.profile.is_some())
            .field("thresholds", &self.thresholds)
            .field("live_view", &self.live_view)
            .finish()
    }
}

impl PoolBuilder {
    /// Number of workers (default: [`available_cpus`](crate::available_cpus), the CPUs of the
    /// calling thread's affinity set or the cgroup's CPU quota where that is smaller). 0 makes
    /// `build` fail with [`Error::ZeroThreads`].
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = Some(n);
        self
    }

    /// Names worker `k` (dedicated workers).
    pub fn thread_name(mut self, name: impl Fn(usize) -> String + 'static) -> Self {
        self.thread_name = Some(Box::new(name));
        self
    }

    /// Runs on worker `k`'s thread before it serves (dedicated workers).
    pub fn on_start(mut self, f: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.on_start = Some(Arc::new(f));
        self
    }

    /// Stack size of each worker thread, in bytes (dedicated workers).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Spin polls of every wait in this pool before it yields and sleeps (default
    /// [`DEFAULT_SPIN_POLLS`](crate::runtime::wait::DEFAULT_SPIN_POLLS)).
    pub fn spin_polls(mut self, polls: u32) -> Self {
        self.spin_polls = Some(polls);
        self
    }

    /// Whether the pool's gates read the live view (default `true`): what its sections lose now
    /// to participants that run late on a busy machine (`docs/gates.md`, "The live view").
    /// With `false` the pool decides from its model alone, as on a quiet machine (decisions
    /// that repeat exactly, for audits and tests of the model), its sections do not feed the
    /// view, and its waits do not throttle for it.
    ///
    /// ```
    /// use teamalg::Pool;
    /// let pool = Pool::builder().threads(2).live_view(false).build()?;
    /// assert!(!pool.live_view());
    /// # Ok::<(), teamalg::Error>(())
    /// ```
    pub fn live_view(mut self, on: bool) -> Self {
        self.live_view = Some(on);
        self
    }

    /// How long `into_team` and `Exec::team` wait for idle workers to become members before
    /// they give up (default 10 ms).
    pub fn acquire_timeout(mut self, timeout: Duration) -> Self {
        self.acquire_timeout = Some(timeout);
        self
    }

    /// The dispatch costs the pool's gates use, over those of the profile (default: the
    /// profile's, else the built-in row of this host's class).
    pub fn dispatch_costs(mut self, costs: DispatchCosts) -> Self {
        self.costs = Some(costs);
        self
    }

    /// Uses the host profile at `path` (written by `teamalg calibrate`): its dispatch costs,
    /// rates and split costs. A missing or malformed file, or a profile measured on another
    /// machine, is an error. Without one, a pool reads the profile `TEAMALG_PROFILE` names,
    /// else uses the built-in model of its host class.
    pub fn profile(self, path: impl AsRef<std::path::Path>) -> Result<Self, ProfileError> {
        Ok(self.host_profile(HostProfile::load(path)?))
    }

    /// Uses `profile` (already loaded and checked) as [`profile`](PoolBuilder::profile) does.
    pub fn host_profile(mut self, profile: HostProfile) -> Self {
        self.profile = Some(profile);
        self
    }

    /// How the regions of `family` decide on this pool's tokens and teams: over
    /// `TEAMALG_THRESHOLDS`, under a call's own options (`linalg::Options`).
    ///
    /// ```
    /// use teamalg::gates::{Family, ParThreshold};
    /// use teamalg::Pool;
    ///
    /// let pool = Pool::builder()
    ///     .threads(2)
    ///     .threshold(Family::LuPartial, ParThreshold::Never)
    ///     .build()?;
    /// assert_eq!(pool.model().threshold(Family::LuPartial).0, ParThreshold::Never);
    /// # Ok::<(), teamalg::Error>(())
    /// ```
    pub fn threshold(mut self, family: Family, threshold: ParThreshold) -> Self {
        self.thresholds = self.thresholds.with(family, threshold, Source::Pool);
        self
    }

    /// Builds the pool.
    pub fn build(self) -> Result<Pool, Error> {
        let cpus = CpuSet::current();
        let threads = self.threads.unwrap_or(cpus.usable());
        if threads == 0 {
            return Err(Error::ZeroThreads);
        }
        let spin_polls = self.spin_polls.unwrap_or(DEFAULT_SPIN_POLLS);
        let timeout = self.acquire_timeout.unwrap_or(DEFAULT_ACQUIRE_TIMEOUT);
        let mut model = match &self.profile {
            Some(p) => p.model(teamalg_kernels::families::CATALOGUE),
            None => model_from_environment()?,
        };
        if let Some(costs) = self.costs {
            model = model.with_costs(costs);
        }
        let model = model
            .with_thresholds(thresholds_from_environment()?)
            .with_thresholds(self.thresholds);
        let mut shared = PoolShared::new(threads, spin_polls, cpus, timeout, model);
        if self.live_view == Some(false) {
            shared.live = None;
        }
        let shared = Arc::new(shared);
        let dedicated =
            self.thread_name.is_some() || self.on_start.is_some() || self.stack_size.is_some();
        if !dedicated {
            let lease = reserve::lease(&shared)?;
            return Ok(Pool {
                shared,
                dedicated: Vec::new(),
                lease: Some(lease),
            });
        }
        let mut handles = Vec::with_capacity(threads);
        for k in 0..threads {
            let mut b = std::thread::Builder::new();
            b = b.name(match &self.thread_name {
                Some(f) => f(k),
                None => format!("teamalg-worker-{k}"),
            });
            if let Some(s) = self.stack_size {
                b = b.stack_size(s);
            }
            let pool = shared.clone();
            let on_start = self.on_start.clone();
            match b.spawn(move || {
                pool.arrive();
                if let Some(f) = on_start {
                    // A panicking start hook must not lose the worker (drop would wait for it).
                    let hook = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(k)));
                    if hook.is_err() {
                        pool.hook_panics
                            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                pool.serve(k, false);
                pool.leave();
            }) {
                Ok(h) => {
                    reserve::count_spawn();
                    handles.push(h);
                }
                Err(e) => {
                    shared.abandon(threads - k);
                    for h in handles {
                        let _ = h.join();
                    }
                    return Err(Error::Spawn(e));
                }
            }
        }
        shared.wait_arrivals(threads);
        Ok(Pool {
            shared,
            dedicated: handles,
            lease: None,
        })
    }
}
