//! The drawing every chart of the HTML pages shares: the size, the
//! colours, the frame, axes and fonts, the legend's keys and how a chart
//! is handed to a page. Apart from the charts themselves (a report's in
//! `charts.rs`, the server's in `server_charts.rs`, compare's and sweep's
//! beside their pages), which all draw with it and name each other not.

use plotters::chart::MeshStyle;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use serde::Serialize;

use crate::format::group;

/// Chart size in SVG user units; the page scales it to its width (viewBox).
pub(super) const SIZE: (u32, u32) = (880, 300);
/// The chart colours; the page's legends are drawn from the same values.
pub(super) const BLUE: RGBColor = RGBColor(37, 99, 235);
pub(super) const RED: RGBColor = RGBColor(220, 38, 38);
pub(super) const ORANGE: RGBColor = RGBColor(234, 88, 12);
pub(super) const INK: RGBColor = RGBColor(55, 65, 81);
const GRID: RGBColor = RGBColor(229, 231, 235);
const FAINT_GRID: RGBColor = RGBColor(243, 244, 246);

/// One colour per line where lines are many (a workload's queries); beyond
/// them the colours repeat, and the legend tells the lines apart.
/// The first five are far apart in hue (red beside orange read as one).
pub(super) const PALETTE: [RGBColor; 8] = [
    BLUE,
    ORANGE,
    RGBColor(21, 128, 61),
    RGBColor(124, 58, 237),
    RGBColor(219, 39, 119),
    RGBColor(13, 148, 136),
    RED,
    RGBColor(146, 64, 14),
];

/// A chart as the template shows it: a heading, a legend, the inline SVG.
#[derive(Debug, Serialize)]
pub(super) struct Chart {
    pub(super) title: String,
    pub(super) caption: String,
    pub(super) legend: Vec<LegendKey>,
    /// Made by plotters, which escapes the text it writes: safe to inline.
    pub(super) svg: String,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct LegendKey {
    pub(super) label: String,
    color: String,
    /// A shaded band (warm-up, outage), keyed by a block: a pale colour
    /// as thin as a line's key would not show.
    pub(super) band: bool,
}

impl LegendKey {
    pub(super) fn new(label: &str, RGBColor(r, g, b): RGBColor) -> LegendKey {
        LegendKey { label: label.to_string(), color: format!("#{r:02x}{g:02x}{b:02x}"), band: false }
    }

    pub(super) fn band(label: &str, color: RGBColor) -> LegendKey {
        LegendKey { band: true, ..LegendKey::new(label, color) }
    }
}

pub(super) fn font(size: u32) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&INK)
}

/// Every chart's frame: its margin and the room for the axes' labels.
pub(super) fn frame<'a, 'b>(root: &'a DrawingArea<SVGBackend<'b>, Shift>) -> ChartBuilder<'a, 'static, SVGBackend<'b>> {
    let mut builder = ChartBuilder::on(root);
    // The right margin holds half of the last tick's label ("99.9%", centred on the edge).
    builder.margin(12).margin_right(30).x_label_area_size(42).y_label_area_size(78);
    builder
}

/// Every chart's axes and grid, in the page's fonts and greys.
pub(super) fn mesh<'a, 'b, 's>(
    chart: &'b mut ChartContext<'a, SVGBackend<'s>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
) -> MeshStyle<'a, 'b, RangedCoordf64, RangedCoordf64, SVGBackend<'s>> {
    let mut mesh = chart.configure_mesh();
    mesh.label_style(font(14))
        .axis_desc_style(font(14))
        .bold_line_style(GRID)
        .light_line_style(FAINT_GRID)
        .axis_style(INK);
    mesh
}

/// plotters writes the SVG namespace as an `http://` URL; HTML needs no
/// namespace on inline SVG, and without it the page holds no URL but the
/// report's own (which keeps "nothing is loaded from outside" checkable).
pub(super) fn inline(svg: String) -> String {
    svg.replacen(r#" xmlns="http://www.w3.org/2000/svg""#, "", 1)
}

/// A line chart's x axis: what it measures and how its ticks read.
pub(super) struct XAxis {
    pub(super) desc: &'static str,
    pub(super) label: fn(&f64) -> String,
}

/// Seconds since the run's start: the timelines' axis.
pub(super) const SECONDS: XAxis = XAxis { desc: "seconds since the start", label: whole };

fn whole(v: &f64) -> String {
    format!("{v:.0}")
}

/// An axis tick: whole numbers without a decimal point (`20`, not `20.0`).
pub(super) fn tick(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        group(v.round().max(0.0) as u64)
    } else {
        trim_ms(*v)
    }
}

/// A latency in ms with the digits that matter: `0.042`, `3.21`, `48.2`, `1,204`.
fn trim_ms(v: f64) -> String {
    match v.abs() {
        0.0 => "0".into(),
        a if a < 1.0 => format!("{v:.3}"),
        a if a < 10.0 => format!("{v:.2}"),
        a if a < 100.0 => format!("{v:.1}"),
        _ => group(v.round().max(0.0) as u64),
    }
}
