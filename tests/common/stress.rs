//! Randomised nested programs checked against the slot ledger.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use teamalg::{Exec, Pool, ledger};

/// A small deterministic generator (xorshift64*).
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) % n
    }
}

/// A nested parallel program.
pub(crate) enum Prog {
    /// Busy work of this many spins; counts one unit.
    Leaf(u32),
    /// `fork` of the children (one job each).
    Fork(Vec<Prog>),
    /// `fork_sized` with these shares.
    Sized(Vec<usize>, Vec<Prog>),
    /// `for_ranges(len, grain)`: counts `len` units.
    Ranges(usize, usize),
}

impl Prog {
    pub(crate) fn random(rng: &mut Rng, depth: u32) -> Prog {
        let leaf = |rng: &mut Rng| Prog::Leaf(rng.below(2000) as u32);
        if depth == 0 {
            return leaf(rng);
        }
        match rng.below(5) {
            0 => leaf(rng),
            1 => Prog::Ranges(rng.below(50) as usize, rng.below(8) as usize),
            2 => {
                let n = rng.below(4) as usize + 1;
                let shares = (0..n).map(|_| rng.below(4) as usize).collect();
                Prog::Sized(
                    shares,
                    (0..n).map(|_| Prog::random(rng, depth - 1)).collect(),
                )
            }
            _ => {
                let n = rng.below(5) as usize;
                Prog::Fork((0..n).map(|_| Prog::random(rng, depth - 1)).collect())
            }
        }
    }

    /// The units this program counts when it runs.
    pub(crate) fn units(&self) -> usize {
        match self {
            Prog::Leaf(_) => 1,
            Prog::Ranges(len, _) => *len,
            Prog::Fork(c) | Prog::Sized(_, c) => c.iter().map(Prog::units).sum(),
        }
    }

    pub(crate) fn run(&self, exec: Exec<'_>, done: &AtomicUsize) {
        match self {
            Prog::Leaf(spins) => {
                for _ in 0..*spins {
                    std::hint::spin_loop();
                }
                done.fetch_add(1, Relaxed);
            }
            Prog::Ranges(len, grain) => exec.for_ranges(*len, *grain, |r| {
                done.fetch_add(r.len(), Relaxed);
            }),
            Prog::Fork(c) => exec.fork(c.len(), |i, child| c[i].run(child, done)),
            Prog::Sized(s, c) => exec.fork_sized(s, |i, child| c[i].run(child, done)),
        }
    }
}

/// Runs `rounds` random programs from `callers` threads at once on one pool; asserts every unit
/// ran and that no root ever had more live tasks than its budget. Returns the largest live count
/// seen (so callers can check the stress was really parallel).
pub(crate) fn stress(pool: &Pool, seed: u64, rounds: usize, callers: usize) -> usize {
    let max_seen = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for c in 0..callers {
            let max_seen = &max_seen;
            s.spawn(move || {
                let mut rng = Rng::new(seed ^ (c as u64 * 7919));
                for _ in 0..rounds {
                    let prog = Prog::random(&mut rng, 4);
                    let budget = 1 + rng.below(pool.threads() as u64) as usize;
                    let mut exec = Exec::new(pool, budget).unwrap();
                    let id = exec.ledger_root();
                    let done = AtomicUsize::new(0);
                    // Twice through reborrow, once by value.
                    prog.run(exec.reborrow(), &done);
                    prog.run(exec, &done);
                    assert_eq!(
                        done.load(Relaxed),
                        2 * prog.units(),
                        "lost or repeated work"
                    );
                    let max = ledger::max_live(id);
                    assert!(
                        max <= budget,
                        "root had {max} live tasks with a budget of {budget}"
                    );
                    assert_eq!(ledger::live(id), 0, "a task outlived its call");
                    max_seen.fetch_max(max, Relaxed);
                }
            });
        }
    });
    max_seen.into_inner()
}
