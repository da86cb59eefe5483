//! `--sections`: where a factorization's time goes on a held team (`teamalg_kernels::sections`).

use std::time::{Duration, Instant};

use teamalg::kernels::sections::{self, SectionTiming};
use teamalg_tools::tour::team::held_team;

use crate::cases::Row;

/// The kernels whose sections are traced (their f64 row).
pub(crate) const TRACED: [&str; 5] = ["lu", "cholesky", "qr", "svd", "bidiag"];

/// `--sections`: where a factorization's time goes on a held team of `w`. Per call (the
/// median of 7, after 3 warm ones): the serial time outside sections (the first panel, the
/// last steps), the sections' wall time, and the busy and idle time of the lead (participant
/// 0, which also factors the next panel) and of participant 1, summed over the sections and
/// over the first, middle and last third of them.
pub(crate) fn trace(row: &Row<'_>, w: usize) {
    let name = row.name;
    let team = held_team(w);
    for &n in &row.sizes {
        let mut c = (row.case)(n);
        for _ in 0..3 {
            c.prepare();
            c.teamalg(&team);
        }
        let mut calls: Vec<(Duration, Vec<SectionTiming>)> = (0..7)
            .map(|_| {
                c.prepare();
                let t = Instant::now();
                let ((), seen) = sections::collect(|| c.teamalg(&team));
                (t.elapsed(), seen)
            })
            .collect();
        calls.sort_by_key(|c| c.0);
        let (total, seen) = &calls[calls.len() / 2];
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let sum = |s: &[SectionTiming]| {
            s.iter()
                .fold((Duration::ZERO, Duration::ZERO, Duration::ZERO), |a, x| {
                    (a.0 + x.wall, a.1 + x.lead, a.2 + x.other)
                })
        };
        let (wall, lead, other) = sum(seen);
        let serial_sections = seen.iter().filter(|s| s.width < 2).count();
        println!(
            "{name:<12} {n:>5} call {:>8.2} ms: outside sections {:>6.2}, {} sections ({} serial) {:>8.2}; lead busy {:>8.2} idle {:>6.2}; member busy {:>8.2} idle {:>6.2}",
            ms(*total),
            ms(total.saturating_sub(wall)),
            seen.len(),
            serial_sections,
            ms(wall),
            ms(lead),
            ms(wall.saturating_sub(lead)),
            ms(other),
            ms(wall.saturating_sub(other)),
        );
        // Per site, in order of first appearance.
        let mut sites: Vec<&str> = Vec::new();
        for x in seen {
            if !sites.contains(&x.site) {
                sites.push(x.site);
            }
        }
        for site in sites {
            let mine: Vec<SectionTiming> =
                seen.iter().filter(|x| x.site == site).cloned().collect();
            let (wall, lead, other) = sum(&mine);
            println!(
                "{:<18} {site:<16} {:>5} sections wall {:>8.2}: lead busy {:>8.2}, member busy {:>8.2}",
                "",
                mine.len(),
                ms(wall),
                ms(lead),
                ms(other),
            );
        }
        let third = seen.len().div_ceil(3).max(1);
        for (part, chunk) in ["first", "middle", "last"].iter().zip(seen.chunks(third)) {
            let (wall, lead, other) = sum(chunk);
            println!(
                "{:<18} {part:>6} third ({:>3} sections) wall {:>8.2}: lead idle {:>6.2}, member idle {:>6.2}",
                "",
                chunk.len(),
                ms(wall),
                ms(wall.saturating_sub(lead)),
                ms(wall.saturating_sub(other)),
            );
        }
    }
}
