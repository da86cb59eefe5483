//! What team sections cost: held, after an idle gap, with a pool and team per call.

use std::time::{Duration, Instant};

use teamalg::Pool;

use super::measure::{busy, time_calls, Stats};

/// A pool of `w` threads and a team of all of them, built with the defaults.
///
/// # Panics
/// When the pool or the team cannot be formed (a benchmark cannot go on without it).
pub fn held_team(w: usize) -> teamalg::Team {
    Pool::builder()
        .threads(w)
        .build()
        .expect("pool")
        .into_team(w)
        .expect("team")
}

/// Sections of one `share` per participant on a held team of width `w`.
pub fn team_sections(team: &teamalg::Team, w: usize, share: Duration, calls: usize) -> Stats {
    team.exec(w)
        .team(|t| time_calls(calls, || t.run(|_| busy(share))))
        .expect("a team token always forms its team")
}

/// The first section of one `share` after the leader slept `gap` (members had time to park).
pub fn after_gap(
    team: &teamalg::Team,
    w: usize,
    share: Duration,
    gap: Duration,
    rounds: usize,
) -> Stats {
    team.exec(w)
        .team(|t| {
            let mut v = Vec::with_capacity(rounds);
            for _ in 0..rounds {
                std::thread::sleep(gap);
                let start = Instant::now();
                t.run(|_| busy(share));
                v.push(start.elapsed());
            }
            Stats::of(v)
        })
        .expect("a team token always forms its team")
}

/// A pool and team of width `w` built, used for one section and dropped, per call.
pub fn team_per_call(w: usize, share: Duration, calls: usize) -> Stats {
    time_calls(calls, || {
        let team = held_team(w);
        team.exec(w).team(|t| t.run(|_| busy(share))).unwrap();
    })
}
