//! Draws the cost curves of docs/benchmarks.md: every `docs/figures/*.csv`
//! that a benchmark wrote becomes the `.svg` beside it.
//!
//! `cargo bench --bench plots` (scripts/bench.sh runs it last).
//!
//! The benchmarks and the drawing are apart on purpose: a curve over pool
//! sizes up to 2^22 or 64 waiters takes minutes to measure, and its axes or
//! labels can then be redrawn in a second from the figures kept in the
//! repository. Each CSV has the header `series,x,y`, one line per point;
//! what its axes mean is said once, in [`CURVES`], so that a figure without
//! a description here fails loudly rather than being drawn unlabelled.
//!
//! plotters draws the SVG (its own text-size estimate, no font files), so
//! nothing here formats SVG by hand.

use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a curve's axes are: file stem, title, x label, y label, and which
/// axes are logarithmic (the x axis of sizes spanning 2^10–2^22 is).
struct Curve {
    name: &'static str,
    title: &'static str,
    x: &'static str,
    y: &'static str,
    log_x: bool,
    log_y: bool,
}

const CURVES: &[Curve] = &[
    Curve {
        name: "handover_waiters",
        title: "lock hand-over against waiters queued (median)",
        x: "waiters",
        y: "hand-over, ms",
        log_x: true,
        log_y: true,
    },
    Curve {
        name: "herd_refusals",
        title: "refused attempts per lock hand-over against waiters queued",
        x: "waiters",
        y: "refused attempts per hand-over",
        log_x: true,
        log_y: false,
    },
    Curve {
        name: "reports_pool_size",
        title: "list and stats against pool size (3 ids leased)",
        x: "pool size, ids",
        y: "whole process, ms",
        log_x: true,
        log_y: true,
    },
    Curve {
        name: "renewal_load",
        title: "one Redis's load against concurrent run leases",
        x: "concurrent leases",
        y: "requests per second",
        log_x: true,
        log_y: true,
    },
    Curve {
        name: "renewal_cpu",
        title: "one Redis's CPU against concurrent run leases",
        x: "concurrent leases",
        y: "server CPU, % of one core",
        log_x: true,
        log_y: true,
    },
    Curve {
        name: "fleet_cpu",
        title: "the busiest master's CPU against leases held (library drivers)",
        x: "leases",
        y: "server CPU, % of one core",
        log_x: true,
        log_y: true,
    },
    Curve {
        name: "fleet_renewal_p99",
        title: "renewal latency p99 against leases held (library drivers)",
        x: "leases",
        y: "renewal p99, ms",
        log_x: true,
        log_y: true,
    },
    Curve {
        name: "seq_serve_clients",
        title: "ids/s against clients (redis-benchmark)",
        x: "clients",
        y: "ids/s",
        log_x: true,
        log_y: false,
    },
];

/// Four colours that stay apart on white and for the common colour-vision
/// deficiencies (the first four of matplotlib's tab10); plotters' own
/// palette puts a pale yellow third.
const COLOURS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
];

/// One series: its label and its points, in the file's order.
type Series = BTreeMap<String, Vec<(f64, f64)>>;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/figures");
    let mut drawn = 0;
    for csv in figures(&dir) {
        let stem = csv.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let Some(curve) = CURVES.iter().find(|c| c.name == stem) else {
            panic!(
                "{}: no description in CURVES (benches/plots.rs)",
                csv.display()
            );
        };
        let series = read(&csv);
        let svg = csv.with_extension("svg");
        draw(curve, &series, &svg).unwrap_or_else(|e| panic!("{}: {e}", svg.display()));
        println!("{}", svg.display());
        drawn += 1;
    }
    println!("{drawn} curves drawn");
}

fn figures(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    found.sort();
    found
}

fn read(csv: &Path) -> Series {
    let text = std::fs::read_to_string(csv).unwrap_or_else(|e| panic!("{}: {e}", csv.display()));
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("series,x,y"),
        "{}: the header must be `series,x,y`",
        csv.display()
    );
    let mut series = Series::new();
    for (n, line) in lines.enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let bad = || panic!("{}:{}: not `series,x,y`: {line}", csv.display(), n + 2);
        let mut fields = line.rsplitn(3, ',');
        let (Some(y), Some(x), Some(label)) = (fields.next(), fields.next(), fields.next()) else {
            bad()
        };
        let (Ok(x), Ok(y)) = (x.trim().parse::<f64>(), y.trim().parse::<f64>()) else {
            bad()
        };
        series.entry(label.to_string()).or_default().push((x, y));
    }
    series
}

/// The range of one axis over every point, widened a little so that no
/// point sits on the frame; a logarithmic axis starts above zero.
fn range(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if log {
        (lo.max(1e-3) / 1.5, hi * 1.5)
    } else {
        (lo.min(0.0), hi * 1.1)
    }
}

/// A logarithmic axis from `lo` to `hi`, labelled at 1, 2 and 5 times
/// each power of ten between: plotters' own choice labels only the
/// largest decade, which left a curve below 10 ms without a figure.
fn log_axis(lo: f64, hi: f64) -> WithKeyPoints<LogCoord<f64>> {
    let mut points = Vec::new();
    let mut decade = 10f64.powf(lo.log10().floor());
    while decade <= hi {
        for m in [1.0, 2.0, 5.0] {
            let v = m * decade;
            if (lo..=hi).contains(&v) {
                points.push(v);
            }
        }
        decade *= 10.0;
    }
    (lo..hi).log_scale().with_key_points(points)
}

fn draw(curve: &Curve, series: &Series, svg: &Path) -> Result<(), String> {
    let points = || series.values().flatten();
    let (x0, x1) = range(points().map(|p| p.0), curve.log_x);
    let (y0, y1) = range(points().map(|p| p.1), curve.log_y);
    let root = SVGBackend::new(svg, (800, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(said)?;
    let mut chart = ChartBuilder::on(&root);
    chart
        .caption(curve.title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(72);
    // The four axis kinds are four types in plotters, hence four arms.
    match (curve.log_x, curve.log_y) {
        (true, true) => {
            let c = chart
                .build_cartesian_2d(log_axis(x0, x1), log_axis(y0, y1))
                .map_err(said)?;
            plot(c, curve, series)
        }
        (true, false) => {
            let c = chart
                .build_cartesian_2d(log_axis(x0, x1), y0..y1)
                .map_err(said)?;
            plot(c, curve, series)
        }
        (false, true) => {
            let c = chart
                .build_cartesian_2d(x0..x1, log_axis(y0, y1))
                .map_err(said)?;
            plot(c, curve, series)
        }
        (false, false) => {
            let c = chart.build_cartesian_2d(x0..x1, y0..y1).map_err(said)?;
            plot(c, curve, series)
        }
    }?;
    root.present().map_err(said)?;
    Ok(())
}

fn plot<'a, X, Y>(
    mut chart: ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    curve: &Curve,
    series: &Series,
) -> Result<(), String>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    chart
        .configure_mesh()
        .x_desc(curve.x)
        .y_desc(curve.y)
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(said)?;
    for (i, (label, points)) in series.iter().enumerate() {
        let color = COLOURS[i % COLOURS.len()].to_rgba();
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(said)?
            .label(label.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(said)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(said)
}

/// 1000 rather than 1000.0; fractions only where the value has one.
fn tick(v: f64) -> String {
    if v.fract().abs() < 1e-9 || v.abs() >= 100.0 {
        format!("{:.0}", v)
    } else {
        format!("{v:.2}")
    }
}

/// plotters' errors borrow the backend; the message is what is kept.
fn said(e: impl std::fmt::Display) -> String {
    e.to_string()
}
