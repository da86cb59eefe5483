//! The pictures of `docs/perf/`, drawn from the benchmarks' CSV output with `plotters`, and the
//! tables beside them, printed from the same rows so the two cannot disagree.
//!
//! - kernels (`cargo run --release -p teamalg-tools --bin kernels -- --csv FILE`): speedup over faer serial by size,
//!   one panel per kernel and scalar, one line per arm;
//! - waits (`cargo run --release -p teamalg-tools --bin wait_scenarios -- --csv FILE`): median time per call of each
//!   case, one panel per scenario, one line per implementation (teamalg, libgomp, rayon).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use plotters::coord::CoordTranslate;
use plotters::prelude::*;

use crate::csv;

/// One row of the kernels CSV.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRow {
    /// `gemm`, `lu`, `cholesky`.
    pub kernel: String,
    /// `f64`, `c64`.
    pub scalar: String,
    /// The matrix order.
    pub n: usize,
    /// The arm: `faer_serial`, `faer_rayon`, `teamalg_team`, `team_per_call`.
    pub arm: String,
    /// Median time per call, us.
    pub median_us: f64,
    /// 90th percentile, us.
    pub p90_us: f64,
    /// Slowest call, us.
    pub max_us: f64,
    /// Median over rounds of this arm's time over faer serial's.
    pub ratio: f64,
}

/// The kernels CSV's rows (rows that do not parse are skipped).
pub fn kernel_rows(text: &str) -> Vec<KernelRow> {
    csv::parse(text)
        .into_iter()
        .filter_map(|r| {
            Some(KernelRow {
                kernel: r.get("kernel")?.clone(),
                scalar: r.get("scalar")?.clone(),
                n: r.get("n")?.parse().ok()?,
                arm: r.get("arm")?.clone(),
                median_us: r.get("median_us")?.parse().ok()?,
                p90_us: r.get("p90_us")?.parse().ok()?,
                max_us: r.get("max_us")?.parse().ok()?,
                ratio: r.get("ratio_to_serial")?.parse().ok()?,
            })
        })
        .collect()
}

/// One row of the wait scenarios' CSV (no header: label, impl, scenario, case, width, calls,
/// median, p90, max, times in us).
#[derive(Debug, Clone, PartialEq)]
pub struct WaitRow {
    /// `teamalg`, `omp`, `rayon`.
    pub imp: String,
    /// The scenario.
    pub scenario: String,
    /// The case within it.
    pub case: String,
    /// The width.
    pub width: usize,
    /// Median time per call, us.
    pub median_us: f64,
    /// 90th percentile, us.
    pub p90_us: f64,
    /// Slowest call, us.
    pub max_us: f64,
}

/// The wait scenarios' rows (rows that do not parse are skipped).
pub fn wait_rows(text: &str) -> Vec<WaitRow> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            if f.len() != 9 {
                return None;
            }
            Some(WaitRow {
                imp: f[1].to_string(),
                scenario: f[2].to_string(),
                case: f[3].to_string(),
                width: f[4].parse().ok()?,
                median_us: f[6].parse().ok()?,
                p90_us: f[7].parse().ok()?,
                max_us: f[8].parse().ok()?,
            })
        })
        .collect()
}

/// A plotting failure, as text.
pub type PlotError = String;

fn err(e: impl std::fmt::Display) -> PlotError {
    e.to_string()
}

const ARMS: [(&str, &str); 3] = [
    ("faer_rayon", "faer with rayon"),
    ("teamalg_team", "teamalg, held team"),
    ("team_per_call", "teamalg, team per call"),
];

fn color(i: usize) -> RGBColor {
    [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
    ][i % 4]
}

/// The kernels figure: speedup over faer serial (`1 / ratio`) against `n`, per kernel and
/// scalar, as SVG text.
pub fn kernels_svg(rows: &[KernelRow]) -> Result<String, PlotError> {
    let panels: BTreeSet<(String, String)> = rows
        .iter()
        .map(|r| (r.kernel.clone(), r.scalar.clone()))
        .collect();
    let panels: Vec<_> = panels.into_iter().collect();
    let cols = 2;
    let lines = panels.len().div_ceil(cols).max(1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 300 * lines as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let areas = root.split_evenly((lines, cols));
        for ((kernel, scalar), area) in panels.iter().zip(areas.iter()) {
            let cell: Vec<&KernelRow> = rows
                .iter()
                .filter(|r| &r.kernel == kernel && &r.scalar == scalar)
                .collect();
            // x is log2(n), labelled with n at the whole powers of two.
            let (lo, hi) = cell.iter().fold((f64::MAX, 0f64), |(lo, hi), r| {
                let x = (r.n as f64).log2();
                (lo.min(x), hi.max(x))
            });
            let (lo, hi) = (lo - 0.3, hi + 0.3);
            let top = cell.iter().map(|r| 1.0 / r.ratio).fold(1.5f64, f64::max) * 1.1;
            let mut chart = ChartBuilder::on(area)
                .caption(format!("{kernel} {scalar}"), ("sans-serif", 18))
                .margin(8)
                .x_label_area_size(32)
                .y_label_area_size(44)
                .build_cartesian_2d(lo..hi, 0f64..top)
                .map_err(err)?;
            chart
                .configure_mesh()
                .light_line_style(TRANSPARENT)
                .x_labels(((hi - lo) as usize + 1) * 4)
                .x_label_formatter(&|x| power_of_two(*x))
                .x_desc("n")
                .y_desc("speedup over faer serial")
                .draw()
                .map_err(err)?;
            let serial = [(lo, 1.0), (hi, 1.0)];
            chart
                .draw_series(LineSeries::new(serial, BLACK.mix(0.4)))
                .map_err(err)?
                .label("faer serial")
                .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], BLACK.mix(0.4)));
            for (i, (arm, label)) in ARMS.iter().enumerate() {
                let mut pts: Vec<(f64, f64)> = cell
                    .iter()
                    .filter(|r| r.arm == *arm)
                    .map(|r| ((r.n as f64).log2(), 1.0 / r.ratio))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                let c = color(i);
                chart
                    .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                    .map_err(err)?
                    .label(*label)
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], c));
                chart
                    .draw_series(pts.into_iter().map(|p| Circle::new(p, 3, c.filled())))
                    .map_err(err)?;
            }
            legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// Draws a chart's legend at `position`, boxed on a light background.
fn legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), PlotError>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)
}

/// `2^x` as a label when `x` is a whole number, else nothing.
fn power_of_two(x: f64) -> String {
    let r = x.round();
    if (x - r).abs() < 1e-6 && r >= 0.0 {
        format!("{}", 1u64 << r as u32)
    } else {
        String::new()
    }
}

/// One panel of the waits figure: the rows of `scenario` whose case `pick` keeps, under the
/// label it returns, joined by lines when the cases are ordered (a size, a gap).
struct Panel {
    title: &'static str,
    scenario: &'static str,
    pick: fn(&str) -> Option<String>,
    ordered: bool,
}

const PANELS: [Panel; 4] = [
    Panel {
        title: "200 sections of a held team, by share",
        scenario: "sections",
        pick: |c| Some(c.to_string()),
        ordered: true,
    },
    Panel {
        title: "first section after an idle gap, by gap",
        scenario: "gaps",
        pick: |c| c.strip_suffix("/first").map(str::to_string),
        ordered: true,
    },
    Panel {
        title: "50 sections: held team, team per call, pool per call",
        scenario: "acquire",
        pick: |c| (!c.contains('/')).then(|| c.to_string()),
        ordered: false,
    },
    Panel {
        title: "four arms alone and mixed in one process",
        scenario: "mixed",
        pick: |c| Some(c.replace('/', " ")),
        ordered: false,
    },
];

/// The kernels table, from the same rows: per kernel, scalar and n, each arm's median (us),
/// its speedup over faer serial, p90 and max.
pub fn kernels_table(rows: &[KernelRow]) -> String {
    let mut cells: BTreeMap<(String, String, usize), BTreeMap<String, &KernelRow>> =
        BTreeMap::new();
    for r in rows {
        cells
            .entry((r.kernel.clone(), r.scalar.clone(), r.n))
            .or_default()
            .insert(r.arm.clone(), r);
    }
    let mut out = String::from(
        "| kernel | n | faer serial (us) | faer rayon | teamalg team | team per call | team p90 / max (us) |\n| --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for ((kernel, scalar, n), arms) in &cells {
        let serial = arms.get("faer_serial").map_or(f64::NAN, |r| r.median_us);
        let speed = |arm: &str| {
            arms.get(arm).map_or("-".to_string(), |r| {
                format!("{:.0} us, {:.2}x", r.median_us, 1.0 / r.ratio)
            })
        };
        let tail = arms.get("teamalg_team").map_or("-".to_string(), |r| {
            format!("{:.0} / {:.0}", r.p90_us, r.max_us)
        });
        let _ = writeln!(
            out,
            "| {kernel} {scalar} | {n} | {serial:.0} | {} | {} | {} | {tail} |",
            speed("faer_rayon"),
            speed("teamalg_team"),
            speed("team_per_call")
        );
    }
    out
}

/// The waits figure: median time per call (log scale) of each case, one panel per scenario
/// (`PANELS`), one series per implementation, at `width`.
pub fn waits_svg(rows: &[WaitRow], width: usize) -> Result<String, PlotError> {
    let rows: Vec<&WaitRow> = rows.iter().filter(|r| r.width == width).collect();
    let impls: BTreeSet<&str> = rows.iter().map(|r| r.imp.as_str()).collect();
    let panels: Vec<&Panel> = PANELS
        .iter()
        .filter(|p| rows.iter().any(|r| r.scenario == p.scenario))
        .collect();
    let mut svg = String::new();
    {
        let height = 280 * panels.len().max(1) as u32;
        let root = SVGBackend::with_string(&mut svg, (900, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let areas = root.split_evenly((panels.len().max(1), 1));
        for (panel, area) in panels.iter().zip(areas.iter()) {
            // (label, row) for the rows the panel keeps, in the order they were measured.
            let kept: Vec<(String, &WaitRow)> = rows
                .iter()
                .filter(|r| r.scenario == panel.scenario)
                .filter_map(|r| (panel.pick)(&r.case).map(|l| (l, *r)))
                .collect();
            let mut cases: Vec<String> = Vec::new();
            for (l, _) in &kept {
                if !cases.contains(l) {
                    cases.push(l.clone());
                }
            }
            let lo = kept
                .iter()
                .map(|(_, r)| r.median_us)
                .fold(f64::MAX, f64::min)
                .max(0.01);
            let hi = kept
                .iter()
                .map(|(_, r)| r.median_us)
                .fold(0.0, f64::max)
                .max(lo * 2.0);
            let labels = cases.clone();
            let mut chart = ChartBuilder::on(area)
                .caption(
                    format!("{}, width {width}", panel.title),
                    ("sans-serif", 17),
                )
                .margin(8)
                .x_label_area_size(28)
                .y_label_area_size(60)
                .build_cartesian_2d(
                    -0.5f64..cases.len() as f64 - 0.5,
                    (lo * 0.6..hi * 1.8).log_scale(),
                )
                .map_err(err)?;
            chart
                .configure_mesh()
                .light_line_style(TRANSPARENT)
                .x_labels(cases.len() * 2 + 1)
                .x_label_formatter(&|x| {
                    let i = x.round();
                    if (x - i).abs() < 1e-6 && i >= 0.0 {
                        labels.get(i as usize).cloned().unwrap_or_default()
                    } else {
                        String::new()
                    }
                })
                .y_label_formatter(&|y| format!("{y}"))
                .y_desc("median per call (us)")
                .draw()
                .map_err(err)?;
            for (i, imp) in impls.iter().enumerate() {
                let pts: Vec<(f64, f64)> = cases
                    .iter()
                    .enumerate()
                    .filter_map(|(k, case)| {
                        kept.iter()
                            .find(|(l, r)| r.imp == *imp && l == case)
                            .map(|(_, r)| (k as f64, r.median_us))
                    })
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                let c = color(i);
                let dots = chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 4, c.filled())))
                    .map_err(err)?;
                dots.label(*imp)
                    .legend(move |(x, y)| Circle::new((x + 9, y), 4, c.filled()));
                if panel.ordered {
                    chart
                        .draw_series(LineSeries::new(pts, c.stroke_width(2)))
                        .map_err(err)?;
                }
            }
            legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// The waits table, from the same rows: per scenario and case, each implementation's median,
/// p90 and max (us), at `width`.
pub fn waits_table(rows: &[WaitRow], width: usize) -> String {
    let impls: BTreeSet<&str> = rows.iter().map(|r| r.imp.as_str()).collect();
    let mut out = String::from("| scenario | case |");
    for i in &impls {
        let _ = write!(out, " {i}: median / p90 / max (us) |");
    }
    out.push_str("\n| --- | --- |");
    for _ in &impls {
        out.push_str(" --- |");
    }
    out.push('\n');
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for r in rows.iter().filter(|r| r.width == width) {
        if seen.contains(&(r.scenario.as_str(), r.case.as_str())) {
            continue;
        }
        seen.push((&r.scenario, &r.case));
        let _ = write!(out, "| {} | {} |", r.scenario, r.case);
        for i in &impls {
            match rows.iter().find(|x| {
                x.width == width && x.imp == *i && x.scenario == r.scenario && x.case == r.case
            }) {
                Some(x) => {
                    let _ = write!(
                        out,
                        " {:.1} / {:.1} / {:.1} |",
                        x.median_us, x.p90_us, x.max_us
                    );
                }
                None => out.push_str(" - |"),
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const KERNELS: &str = "kernel,scalar,n,width,arm,median_us,p90_us,max_us,ratio_to_serial\n\
        gemm,f64,64,2,faer_serial,20,21,30,1\n\
        gemm,f64,64,2,faer_rayon,40,45,90,2\n\
        gemm,f64,64,2,teamalg_team,12,13,20,0.6\n\
        gemm,f64,256,2,faer_serial,800,810,900,1\n\
        gemm,f64,256,2,teamalg_team,420,430,500,0.525\n";

    #[test]
    fn the_kernels_figure_and_table_come_from_the_same_rows() {
        let rows = kernel_rows(KERNELS);
        assert_eq!(rows.len(), 5);
        let svg = kernels_svg(&rows).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("gemm f64"));
        assert!(svg.contains("teamalg, held team") && svg.contains("faer with rayon"));
        // One polyline per arm with points, plus the serial line.
        assert!(svg.matches("<polyline").count() >= 3, "{svg}");
        let table = kernels_table(&rows);
        assert!(
            table.contains("| gemm f64 | 64 | 20 | 40 us, 0.50x | 12 us, 1.67x | - | 13 / 20 |"),
            "{table}"
        );
        assert!(
            table.contains("| gemm f64 | 256 | 800 | - | 420 us, 1.90x |"),
            "{table}"
        );
    }

    #[test]
    fn the_waits_figure_and_table_come_from_the_same_rows() {
        let text = ",teamalg,sections,5us,2,20,6.0,7.0,9.0\n\
            ,omp,sections,5us,2,20,8.0,9.0,12.0\n\
            ,teamalg,sections,20us,2,20,21.0,22.0,30.0\n\
            ,omp,sections,20us,2,20,25.0,27.0,40.0\n\
            ,teamalg,sections,20us,4,20,99.0,99.0,99.0\n\
            not,a,row\n";
        let rows = wait_rows(text);
        assert_eq!(rows.len(), 5);
        let svg = waits_svg(&rows, 2).unwrap();
        assert!(
            svg.contains("200 sections of a held team, by share, width 2") && svg.contains("omp")
        );
        let table = waits_table(&rows, 2);
        assert!(
            table.contains("| sections | 5us | 8.0 / 9.0 / 12.0 | 6.0 / 7.0 / 9.0 |"),
            "{table}"
        );
        assert!(!table.contains("99.0"), "other widths stay out: {table}");
    }
}
