// SPDX-License-Identifier: GPL-2.0-only
//! SVG plots of recorded runs (the `plotters` crate's SVG backend: text is written as
//! `<text>` elements, no font is read). Three panels on one time axis:
//!
//! 1. CPU lanes: the task running on each CPU (one colour per task), under it a grey
//!    strip for the idle state entered (darker = deeper), and one lane for the
//!    overutilized spans;
//! 2. each CPU's frequency (CPUs with the same steps share a line);
//! 3. each task's util_avg (solid) and util_est (dashed).
//!
//! Overutilized spans are shaded behind panels 2 and 3. Two runs (`compare`) stack their
//! lanes (base, then patch) and overlay their lines: base solid, patch dashed (util_est is
//! left out there so that each task keeps two lines).

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::signals::{Point, Signals};

/// Width of a plot (px).
const WIDTH: u32 = 1400;
/// Height of one lane (px).
const LANE_PX: u32 = 26;
/// Height of the frequency panel (px).
const FREQ_PX: u32 = 240;
/// Height of the util panel (px).
const UTIL_PX: u32 = 320;
/// Room left of the panels for lane and axis labels (px).
const LEFT_PX: u32 = 90;
/// Room right of the panels for the legend (px).
const RIGHT_PX: u32 = 210;
/// The largest util the util panel shows (`SCHED_CAPACITY_SCALE`).
const UTIL_MAX: f64 = 1024.0;

/// Why a plot cannot be drawn.
#[derive(Debug, thiserror::Error)]
#[error("plot: {0}")]
pub struct PlotError(String);

fn err<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError(e.to_string())
}

/// One run to draw: its label (`base`, `patch`, empty for a lone run) and series.
pub struct Run<'a> {
    /// Label.
    pub label: &'a str,
    /// Series.
    pub signals: &'a Signals,
}

fn task_colour(pid: u64) -> RGBColor {
    let c = Palette99::pick(pid as usize).to_rgba();
    RGBColor(c.0, c.1, c.2)
}

fn ou_colour(run: usize) -> RGBAColor {
    if run == 0 {
        RGBColor(220, 40, 40).mix(0.13)
    } else {
        RGBColor(40, 90, 220).mix(0.13)
    }
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// A step line through `points` up to `end` (ns), in seconds and `scale` units.
fn steps(points: &[Point], end: u64, scale: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2 + 1);
    for (i, &(t, v)) in points.iter().enumerate() {
        if i > 0 {
            out.push((secs(t), points[i - 1].1 as f64 / scale));
        }
        out.push((secs(t), v as f64 / scale));
    }
    if let Some(&(t, v)) = points.last() {
        if end > t {
            out.push((secs(end), v as f64 / scale));
        }
    }
    out
}

/// The plot of `runs` as SVG text.
pub fn svg(runs: &[Run<'_>], title: &str) -> Result<String, PlotError> {
    let lanes: u32 = runs
        .iter()
        .map(|r| r.signals.nr_cpus as u32 + 1)
        .sum::<u32>();
    let lanes_px = lanes * LANE_PX + 70;
    let height = 40 + lanes_px + FREQ_PX + UTIL_PX;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let body = root.titled(title, ("sans-serif", 20)).map_err(err)?;
        let (a, rest) = body.split_vertically(lanes_px);
        let (f, u) = rest.split_vertically(FREQ_PX);
        draw_lanes(&root, &a, runs, lanes)?;
        draw_freq(&root, &f, runs)?;
        draw_util(&root, &u, runs)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

fn duration(runs: &[Run<'_>]) -> f64 {
    secs(
        runs.iter()
            .map(|r| r.signals.duration_ns)
            .max()
            .unwrap_or(0),
    )
    .max(1e-6)
}

type Area<'b> = DrawingArea<SVGBackend<'b>, Shift>;
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

fn draw_lanes(
    root: &Area<'_>,
    area: &Area<'_>,
    runs: &[Run<'_>],
    lanes: u32,
) -> Result<(), PlotError> {
    let dur = duration(runs);
    let rows = f64::from(lanes);
    let mut ch = ChartBuilder::on(area)
        .caption(
            "CPU lanes: the task running (colour = task, as in the util legend); grey strip under it: idle state entered (light = state 0, darker = deeper); last lane: overutilized",
            ("sans-serif", 14),
        )
        .margin_top(4)
        .margin_right(RIGHT_PX)
        .x_label_area_size(28)
        .y_label_area_size(LEFT_PX)
        .build_cartesian_2d(0f64..dur, 0f64..rows)
        .map_err(err)?;
    ch.configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc("time (s)")
        .light_line_style(WHITE)
        .draw()
        .map_err(err)?;
    let deepest = runs
        .iter()
        .filter_map(|r| r.signals.max_idle())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let label =
        TextStyle::from(("sans-serif", 13).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
    let mut row = 0u32;
    for (k, r) in runs.iter().enumerate() {
        let s = r.signals;
        let prefix = if r.label.is_empty() {
            String::new()
        } else {
            format!("{} ", r.label)
        };
        for c in 0..s.nr_cpus {
            let y = rows - f64::from(row) - 1.0;
            ch.draw_series(s.running[c].iter().map(|sp| {
                Rectangle::new(
                    [(secs(sp.start), y + 0.35), (secs(sp.end), y + 0.95)],
                    task_colour(sp.value).filled(),
                )
            }))
            .map_err(err)?;
            ch.draw_series(s.idle[c].iter().map(|sp| {
                let g = (215.0 - 165.0 * sp.value as f64 / deepest) as u8;
                Rectangle::new(
                    [(secs(sp.start), y + 0.08), (secs(sp.end), y + 0.3)],
                    RGBColor(g, g, g).filled(),
                )
            }))
            .map_err(err)?;
            let (px, py) = ch.backend_coord(&(0.0, y + 0.5));
            root.draw(&Text::new(
                format!("{prefix}cpu{c}"),
                (px - 6, py),
                label.clone(),
            ))
            .map_err(err)?;
            row += 1;
        }
        let y = rows - f64::from(row) - 1.0;
        ch.draw_series(s.overutilized.iter().map(|sp| {
            Rectangle::new(
                [(secs(sp.start), y + 0.2), (secs(sp.end), y + 0.8)],
                if k == 0 {
                    RGBColor(220, 40, 40)
                } else {
                    RGBColor(40, 90, 220)
                }
                .filled(),
            )
        }))
        .map_err(err)?;
        let (px, py) = ch.backend_coord(&(0.0, y + 0.5));
        root.draw(&Text::new(
            format!("{prefix}overutil."),
            (px - 6, py),
            label.clone(),
        ))
        .map_err(err)?;
        row += 1;
    }
    Ok(())
}

fn shade_ou(ch: &mut Chart<'_, '_>, runs: &[Run<'_>], top: f64) -> Result<(), PlotError> {
    for (k, r) in runs.iter().enumerate() {
        ch.draw_series(r.signals.overutilized.iter().map(|sp| {
            Rectangle::new(
                [(secs(sp.start), 0.0), (secs(sp.end), top)],
                ou_colour(k).filled(),
            )
        }))
        .map_err(err)?;
    }
    Ok(())
}

fn line_style(colour: RGBColor) -> ShapeStyle {
    colour.stroke_width(2)
}

/// A legend entry: name, colour, dashed.
type Entry = (String, RGBColor, bool);

fn line(
    ch: &mut Chart<'_, '_>,
    pts: Vec<(f64, f64)>,
    e: Entry,
    legend: &mut Vec<Entry>,
) -> Result<(), PlotError> {
    if e.2 {
        ch.draw_series(DashedLineSeries::new(pts, 6, 4, line_style(e.1)))
            .map_err(err)?;
    } else {
        ch.draw_series(LineSeries::new(pts, line_style(e.1)))
            .map_err(err)?;
    }
    legend.push(e);
    Ok(())
}

/// The legend right of a panel (drawn on the whole picture: the panel clips).
fn legend(
    root: &Area<'_>,
    ch: &Chart<'_, '_>,
    top: f64,
    entries: &[Entry],
) -> Result<(), PlotError> {
    let (x, y0) = ch.backend_coord(&(ch.x_range().end, top));
    let font =
        TextStyle::from(("sans-serif", 12).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (k, (name, colour, dash)) in entries.iter().enumerate() {
        let (x, y) = (x + 12, y0 + 8 + 15 * k as i32);
        if *dash {
            root.draw(&DashedPathElement::new(
                vec![(x, y), (x + 24, y)],
                5,
                3,
                line_style(*colour),
            ))
            .map_err(err)?;
        } else {
            root.draw(&PathElement::new(
                vec![(x, y), (x + 24, y)],
                line_style(*colour),
            ))
            .map_err(err)?;
        }
        root.draw(&Text::new(name.clone(), (x + 30, y), font.clone()))
            .map_err(err)?;
    }
    Ok(())
}

fn draw_freq(root: &Area<'_>, area: &Area<'_>, runs: &[Run<'_>]) -> Result<(), PlotError> {
    let mut entries = Vec::new();
    let dur = duration(runs);
    let top = runs.iter().map(|r| r.signals.max_freq()).max().unwrap_or(0) as f64 / 1000.0 * 1.08;
    let mut ch = ChartBuilder::on(area)
        .caption(
            "Frequency (MHz) of each CPU (shaded: overutilized)",
            ("sans-serif", 14),
        )
        .margin_right(RIGHT_PX)
        .x_label_area_size(28)
        .y_label_area_size(LEFT_PX)
        .build_cartesian_2d(0f64..dur, 0f64..top.max(1.0))
        .map_err(err)?;
    ch.configure_mesh()
        .x_desc("time (s)")
        .y_desc("MHz")
        .y_label_formatter(&|v| format!("{v:.0}"))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(err)?;
    shade_ou(&mut ch, runs, top.max(1.0))?;
    for (k, r) in runs.iter().enumerate() {
        let s = r.signals;
        // CPUs of one frequency domain share a line.
        let mut groups: Vec<(Vec<usize>, &Vec<Point>)> = Vec::new();
        for c in 0..s.nr_cpus {
            match groups.iter_mut().find(|g| g.1 == &s.freq[c]) {
                Some(g) => g.0.push(c),
                None => groups.push((vec![c], &s.freq[c])),
            }
        }
        for (g, (cpus, pts)) in groups.into_iter().enumerate() {
            if pts.is_empty() {
                continue;
            }
            let name = match (cpus.first(), cpus.last()) {
                (Some(a), Some(b)) if b - a + 1 == cpus.len() && a != b => format!("cpu{a}-{b}"),
                _ => {
                    let l: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
                    format!("cpu{}", l.join(","))
                }
            };
            let name = if r.label.is_empty() {
                name
            } else {
                format!("{} {name}", r.label)
            };
            let colour = task_colour(90 + g as u64);
            let pts = steps(pts, s.duration_ns, 1000.0);
            line(&mut ch, pts, (name, colour, k > 0), &mut entries)?;
        }
    }
    legend(root, &ch, top.max(1.0), &entries)
}

fn draw_util(root: &Area<'_>, area: &Area<'_>, runs: &[Run<'_>]) -> Result<(), PlotError> {
    let mut entries = Vec::new();
    let dur = duration(runs);
    let caption = if runs.len() > 1 {
        "util_avg of each task (solid: base, dashed: patch; shaded: overutilized)"
    } else {
        "util_avg (solid) and util_est (dashed) of each task (shaded: overutilized)"
    };
    let mut ch = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 14))
        .margin_right(RIGHT_PX)
        .margin_bottom(6)
        .x_label_area_size(30)
        .y_label_area_size(LEFT_PX)
        .build_cartesian_2d(0f64..dur, 0f64..UTIL_MAX)
        .map_err(err)?;
    ch.configure_mesh()
        .x_desc("time (s)")
        .y_desc("util (of 1024)")
        .y_label_formatter(&|v| format!("{v:.0}"))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(err)?;
    shade_ou(&mut ch, runs, UTIL_MAX)?;
    for (k, r) in runs.iter().enumerate() {
        let s = r.signals;
        for i in 0..s.util_avg.len() {
            let colour = task_colour(i as u64 + 1);
            let name = s.task_name(i);
            let avg = steps(&s.util_avg[i], s.duration_ns, 1.0);
            match (runs.len(), k) {
                (1, _) => {
                    line(
                        &mut ch,
                        avg,
                        (format!("{name} util_avg"), colour, false),
                        &mut entries,
                    )?;
                    let est = steps(&s.util_est[i], s.duration_ns, 1.0);
                    line(
                        &mut ch,
                        est,
                        (format!("{name} util_est"), colour, true),
                        &mut entries,
                    )?;
                }
                _ => line(
                    &mut ch,
                    avg,
                    (format!("{} {name}", r.label), colour, k > 0),
                    &mut entries,
                )?,
            }
        }
    }
    legend(root, &ch, UTIL_MAX, &entries)
}
