//! SVG charts for report.md, drawn with plotters' SVG backend into strings (nothing touches
//! the disk here, so a report whose inputs fail writes nothing).
//!
//! Every chart is a horizontal bar chart, fastest or smallest at the top, one colour per format
//! name (the same in every chart), the x axis starting at zero with its unit and "lower is
//! better". Timing charts put one panel per host side by side on a shared x scale, with the
//! arms in the same rows, so a reader can compare hosts row by row. Text is plain SVG `<text>`:
//! plotters is built without its font feature and estimates text widths itself, so no font
//! files are read. plotters escapes `& < > " '` in text; every string of a chart first passes
//! [`crate::escape::xml_chars`], so no control character makes the SVG ill-formed.
//!
//! Every data bar, and nothing else, is a filled rectangle with opacity [`BAR_OPACITY`]: tests
//! count bars by it.
//!
//! Charts are drawn only from finite values on a finite axis ([`scale`] refuses others): the
//! axis code of plotters never ends on an infinite range.

use super::text::{grouped, short_number};
use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, DefaultFormatting, KeyPointHint, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The opacity of every data bar (and of no other filled rectangle), which identifies bars in
/// the SVG.
pub const BAR_OPACITY: f64 = 0.85;

const FONT: &str = "sans-serif";
const TITLE_SIZE: f64 = 24.0;
const PANEL_TITLE_SIZE: f64 = 20.0;
const LABEL_SIZE: f64 = 17.0;
const VALUE_SIZE: f64 = 15.0;
const AXIS_DESC_SIZE: f64 = 18.0;
/// Pixels per character of a label at LABEL_SIZE: the SVG font size is size / 1.24 (plotters'
/// convention) and an average sans-serif character is about 0.55 em wide.
const LABEL_CHAR_WIDTH: f64 = LABEL_SIZE / 1.24 * 0.56;
const VALUE_CHAR_WIDTH: f64 = VALUE_SIZE / 1.24 * 0.56;
const ROW_HEIGHT: u32 = 28;
const PANEL_PLOT_WIDTH: u32 = 560;
const X_LABEL_AREA: u32 = 54;
const PANEL_TITLE_AREA: u32 = 36;
const TITLE_AREA: u32 = 44;

/// One bar's figures, in the chart's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bar {
    pub value: f64,
    /// The 95% interval, drawn as a whisker; `None` draws no whisker.
    pub interval: Option<(f64, f64)>,
}

/// One host's bars, aligned with the chart's rows (`None`: the host has no figures for the
/// arm; the row reads "failed" if it is in `failed`, "n/a" otherwise).
#[derive(Clone, Debug, Default)]
pub struct Panel {
    pub title: String,
    pub bars: Vec<Option<Bar>>,
    pub failed: Vec<usize>,
}

/// A timing chart: rows top to bottom, one panel per host.
#[derive(Clone, Debug)]
pub struct BarChart {
    pub title: String,
    /// What the x axis measures, with its unit ("ns per record"); the chart adds "lower is
    /// better" and, on a log axis, says so.
    pub axis: String,
    pub labels: Vec<String>,
    /// The format of each row, which picks its colour.
    pub formats: Vec<String>,
    /// Rows that are baselines (a copy-only arm) rather than codecs: drawn grey, never
    /// "fastest".
    pub baselines: Vec<bool>,
    pub panels: Vec<Panel>,
}

impl BarChart {
    /// The chart with every text it shows through [`svg_text`].
    fn for_svg(&self) -> BarChart {
        BarChart {
            title: svg_text(&self.title),
            axis: svg_text(&self.axis),
            labels: self.labels.iter().map(|label| svg_text(label)).collect(),
            panels: self
                .panels
                .iter()
                .map(|panel| Panel {
                    title: svg_text(&panel.title),
                    ..panel.clone()
                })
                .collect(),
            ..self.clone()
        }
    }
}

/// A string a chart shows, as plotters may write it ([`crate::escape::xml_chars`]).
fn svg_text(text: &str) -> String {
    crate::escape::xml_chars(text).into_owned()
}

/// The colour of baseline bars.
const BASELINE_COLOUR: RGBColor = RGBColor(0xA0, 0xA0, 0xA0);
/// The shade behind every other row, which guides the eye across panels.
const STRIPE_COLOUR: RGBColor = RGBColor(0xF3, 0xF3, 0xF3);

/// The colour of a format, the same in every chart: its own ([`crate::format::Format::colour`])
/// for an enabled format, otherwise (a results file from a build with other formats) one
/// picked by a fixed hash of the name.
pub fn format_colour(format: &str) -> RGBColor {
    if let Some(format) = crate::format::by_name(format) {
        let [red, green, blue] = format.colour;
        return RGBColor(red, green, blue);
    }
    const OTHERS: [RGBColor; 6] = [
        RGBColor(0xBA, 0xB0, 0xAC),
        RGBColor(0x3B, 0x8E, 0xD0),
        RGBColor(0xD3, 0x72, 0x95),
        RGBColor(0x8C, 0xA2, 0x52),
        RGBColor(0xC9, 0x6A, 0x2F),
        RGBColor(0x5F, 0x6B, 0x8C),
    ];
    // FNV-1a: a fixed hash, so a format's colour never changes between runs or builds.
    let hash = format.bytes().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    OTHERS[(hash % OTHERS.len() as u64) as usize]
}

/// A chart ready to write.
#[derive(Clone, Debug)]
pub struct RenderedChart {
    pub file_name: String,
    pub svg: String,
    /// The number of bars drawn.
    pub bars: usize,
}

/// A lighter shade of a colour (for the compressed-size bars).
fn lighter(colour: RGBColor) -> RGBColor {
    let mix = |channel: u8| channel + ((255 - channel) as f64 * 0.55) as u8;
    RGBColor(mix(colour.0), mix(colour.1), mix(colour.2))
}

/// An axis tick: whole numbers without decimals (1, 10, 2,500), others as [`short_number`].
fn tick(value: f64) -> String {
    if value.abs() >= 1.0 && (value - value.round()).abs() < 1e-9 * value.abs() {
        grouped(value.round() as i64)
    } else {
        short_number(value)
    }
}

fn draw_error<E: std::error::Error + Send + Sync>(error: DrawingAreaErrorKind<E>) -> anyhow::Error {
    anyhow!("cannot draw the chart: {error}")
}

fn label_area_width(labels: &[String]) -> u32 {
    let longest = labels
        .iter()
        .map(|label| label.chars().count())
        .max()
        .unwrap_or(0);
    (longest as f64 * LABEL_CHAR_WIDTH) as u32 + 20
}

/// Codec bars spanning more than this factor (fastest to slowest) go on a log axis: on a
/// linear one the fast bars would be slivers beside the slow ones.
const LOG_SCALE_SPREAD: f64 = 30.0;

/// The x axis of a chart.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scale {
    /// From zero.
    Linear { max: f64 },
    /// From a power of ten below the lowest value; bars start there.
    Log { min: f64, max: f64 },
}

impl Scale {
    /// Where bars start.
    fn floor(self) -> f64 {
        match self {
            Scale::Linear { .. } => 0.0,
            Scale::Log { min, .. } => min,
        }
    }

    fn max(self) -> f64 {
        match self {
            Scale::Linear { max } | Scale::Log { max, .. } => max,
        }
    }
}

/// Every bar with whether it is its panel's fastest.
fn bars_with_fastest<'a>(
    panels: &'a [Panel],
    baselines: &'a [bool],
) -> impl Iterator<Item = (&'a Bar, bool)> {
    panels.iter().flat_map(move |panel| {
        let fastest = fastest(&panel.bars, baselines);
        panel
            .bars
            .iter()
            .enumerate()
            .filter_map(move |(row, bar)| bar.as_ref().map(|bar| (bar, fastest == Some(row))))
    })
}

/// The x axis: linear from zero unless logs are allowed and the codec bars span more than
/// [`LOG_SCALE_SPREAD`];
/// its end leaves room right of every bar and whisker for the bar's value label. An error when
/// a value, or the axis the values need, is not finite.
fn scale(
    panels: &[Panel],
    baselines: &[bool],
    plot_width: u32,
    value_label: impl Fn(&Bar, bool) -> String,
    allow_log: bool,
) -> Result<Scale> {
    let finite = |bar: &Bar| {
        bar.value.is_finite()
            && bar
                .interval
                .is_none_or(|(low, high)| low.is_finite() && high.is_finite())
    };
    if let Some(bar) = panels
        .iter()
        .flat_map(|panel| panel.bars.iter().flatten())
        .find(|bar| !finite(bar))
    {
        return Err(anyhow!(
            "cannot chart the value {} (interval {:?})",
            bar.value,
            bar.interval
        ));
    }
    let scale = unchecked_scale(panels, baselines, plot_width, value_label, allow_log);
    let (floor, max) = (scale.floor(), scale.max());
    if !(floor.is_finite() && max.is_finite() && floor < max) {
        return Err(anyhow!("cannot chart an axis from {floor} to {max}"));
    }
    Ok(scale)
}

fn unchecked_scale(
    panels: &[Panel],
    baselines: &[bool],
    plot_width: u32,
    value_label: impl Fn(&Bar, bool) -> String,
    allow_log: bool,
) -> Scale {
    let width = plot_width as f64;
    let end = |bar: &Bar| bar.interval.map_or(bar.value, |(_, high)| high.max(bar.value));
    // The fraction of the plot width left of the label, which must hold the bar.
    let room = |bar: &Bar, is_fastest: bool| {
        let text_width = value_label(bar, is_fastest).chars().count() as f64 * VALUE_CHAR_WIDTH;
        (width - text_width - 14.0).max(width * 0.3) / width
    };
    let codec_values: Vec<f64> = panels
        .iter()
        .flat_map(|panel| {
            panel
                .bars
                .iter()
                .enumerate()
                .filter(|(row, _)| !baselines.get(*row).copied().unwrap_or(false))
                .filter_map(|(_, bar)| bar.map(|bar| bar.value))
        })
        .filter(|value| *value > 0.0)
        .collect();
    let lowest_codec = codec_values.iter().copied().fold(f64::INFINITY, f64::min);
    let highest_codec = codec_values.iter().copied().fold(0.0, f64::max);
    if allow_log && highest_codec > lowest_codec * LOG_SCALE_SPREAD {
        let lowest = bars_with_fastest(panels, baselines)
            .map(|(bar, _)| match bar.interval {
                Some((low, _)) if low > 0.0 => low.min(bar.value),
                _ => bar.value,
            })
            .filter(|value| *value > 0.0)
            .fold(f64::INFINITY, f64::min);
        let min = 10f64.powf(lowest.log10().floor());
        // ln(end / min) / ln(max / min) <= room
        let max = bars_with_fastest(panels, baselines)
            .map(|(bar, is_fastest)| min * (end(bar).max(min) / min).powf(1.0 / room(bar, is_fastest)))
            .fold(min * 10.0, f64::max);
        return Scale::Log { min, max };
    }
    // end / max <= room
    let max = bars_with_fastest(panels, baselines)
        .map(|(bar, is_fastest)| end(bar) / room(bar, is_fastest))
        .fold(0.0, f64::max);
    Scale::Linear {
        max: if max > 0.0 { max } else { 1.0 },
    }
}

/// The row of the lowest value, baselines aside.
fn fastest(bars: &[Option<Bar>], baselines: &[bool]) -> Option<usize> {
    bars.iter()
        .enumerate()
        .filter(|(row, _)| !baselines.get(*row).copied().unwrap_or(false))
        .filter_map(|(row, bar)| bar.map(|bar| (row, bar.value)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(row, _)| row)
}

fn value_label(bar: &Bar, is_fastest: bool) -> String {
    let value = short_number(bar.value);
    if is_fastest {
        format!("{value}  fastest")
    } else {
        value
    }
}

/// Renders a timing chart: one panel per host side by side, the fastest bar of each panel
/// outlined and labelled.
pub fn bar_chart(chart: &BarChart) -> Result<String> {
    let chart = &chart.for_svg();
    let rows = chart.labels.len();
    let label_width = label_area_width(&chart.labels);
    let panels = chart.panels.len().max(1) as u32;
    // Room for the last x tick label of one panel and the first of the next.
    let panel_gap = 56;
    let width = label_width + panels * PANEL_PLOT_WIDTH + (panels - 1) * panel_gap + 40;
    let height = TITLE_AREA + PANEL_TITLE_AREA + rows as u32 * ROW_HEIGHT + X_LABEL_AREA + 24;
    let scale = scale(
        &chart.panels,
        &chart.baselines,
        PANEL_PLOT_WIDTH,
        value_label,
        true,
    )?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let body = root
            .titled(
                &chart.title,
                (FONT, TITLE_SIZE).into_font().style(FontStyle::Bold),
            )
            .map_err(draw_error)?;
        let mut rest = body.margin(0, 8, 8, 16);
        for (index, panel) in chart.panels.iter().enumerate() {
            let is_first = index == 0;
            let y_area = if is_first { label_width } else { panel_gap };
            let (area, right) = rest.split_horizontally(y_area + PANEL_PLOT_WIDTH);
            match scale {
                Scale::Linear { max } => draw_panel(&area, chart, panel, y_area, 0.0..max, scale, is_first)?,
                Scale::Log { min, max } => draw_panel(
                    &area,
                    chart,
                    panel,
                    y_area,
                    (min..max).log_scale(),
                    scale,
                    is_first,
                )?,
            }
            rest = right;
        }
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

/// One host's panel; `x` is the axis `scale` describes (a linear or a log range).
fn draw_panel<X>(
    area: &DrawingArea<SVGBackend, Shift>,
    chart: &BarChart,
    panel: &Panel,
    y_area: u32,
    x: X,
    scale: Scale,
    with_labels: bool,
) -> Result<()>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    let (floor, x_max) = (scale.floor(), scale.max());
    let axis = match scale {
        Scale::Linear { .. } => format!("{} (lower is better)", chart.axis),
        Scale::Log { .. } => format!("{}, log scale (lower is better)", chart.axis),
    };
    let rows = chart.labels.len();
    // Row r (0 = top) occupies y in [rows - 1 - r, rows - r]; its label sits at the middle.
    let row_y = |row: usize| (rows - 1 - row) as f64;
    let mut plot = ChartBuilder::on(area)
        .caption(&panel.title, (FONT, PANEL_TITLE_SIZE))
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(y_area)
        .build_cartesian_2d(x, RowAxis { rows })
        .map_err(draw_error)?;
    let row_of = |y: f64| rows.checked_sub(1 + (y - 0.5).round() as usize);
    let y_label = |y: &f64| {
        if !with_labels {
            return String::new();
        }
        row_of(*y).map_or(String::new(), |row| chart.labels[row].clone())
    };
    let x_label = |x: &f64| tick(*x);
    // Stripes first, so the grid and the bars draw over them.
    for row in (1..rows).step_by(2) {
        plot.draw_series(std::iter::once(Rectangle::new(
            [(floor, row_y(row)), (x_max, row_y(row) + 1.0)],
            STRIPE_COLOUR.filled(),
        )))
        .map_err(draw_error)?;
    }
    plot.configure_mesh()
        .disable_y_mesh()
        .y_labels(rows)
        .y_label_formatter(&y_label)
        .x_labels(6)
        .x_label_formatter(&x_label)
        .x_desc(axis)
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, AXIS_DESC_SIZE))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
        .draw()
        .map_err(draw_error)?;

    let fastest = fastest(&panel.bars, &chart.baselines);
    let value_style = TextStyle::from((FONT, VALUE_SIZE).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let fastest_style = TextStyle::from((FONT, VALUE_SIZE).into_font().style(FontStyle::Bold))
        .pos(Pos::new(HPos::Left, VPos::Center));
    let missing_style = TextStyle::from((FONT, VALUE_SIZE).into_font())
        .color(&RGBColor(0x88, 0x88, 0x88))
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (row, bar) in panel.bars.iter().enumerate() {
        let (bottom, middle) = (row_y(row), row_y(row) + 0.5);
        let Some(bar) = bar else {
            let text = if panel.failed.contains(&row) {
                "failed"
            } else {
                "n/a"
            };
            plot.draw_series(std::iter::once(
                EmptyElement::at((floor, middle)) + Text::new(text, (6, 0), missing_style.clone()),
            ))
            .map_err(draw_error)?;
            continue;
        };
        let colour = if chart.baselines.get(row).copied().unwrap_or(false) {
            BASELINE_COLOUR
        } else {
            format_colour(&chart.formats[row])
        };
        let mut rectangle = Rectangle::new(
            [(floor, bottom), (bar.value, bottom + 1.0)],
            colour.mix(BAR_OPACITY).filled(),
        );
        rectangle.set_margin(4, 4, 0, 0);
        plot.draw_series(std::iter::once(rectangle)).map_err(draw_error)?;
        let is_fastest = fastest == Some(row);
        if is_fastest {
            let mut outline = Rectangle::new(
                [(floor, bottom), (bar.value, bottom + 1.0)],
                BLACK.stroke_width(3),
            );
            outline.set_margin(4, 4, 0, 0);
            plot.draw_series(std::iter::once(outline)).map_err(draw_error)?;
        }
        let mut text_x = bar.value;
        if let Some((low, high)) = bar.interval {
            // A low end at or below zero (a very noisy arm) cannot sit on a log axis.
            draw_whisker(&mut plot, low.max(floor), high, middle)?;
            text_x = text_x.max(high);
        }
        let style = if is_fastest { &fastest_style } else { &value_style };
        plot.draw_series(std::iter::once(
            EmptyElement::at((text_x, middle))
                + Text::new(value_label(bar, is_fastest), (8, 0), style.clone()),
        ))
        .map_err(draw_error)?;
    }
    Ok(())
}

/// The y axis of a bar chart: `rows` bands of height 1 from zero, with a key point (a label)
/// at the middle of each band and nowhere else.
#[derive(Clone, Copy)]
struct RowAxis {
    rows: usize,
}

impl Ranged for RowAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let fraction = value / self.rows.max(1) as f64;
        limit.0 + (fraction * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            return Vec::new();
        }
        (0..self.rows).map(|band| band as f64 + 0.5).collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        0.0..self.rows as f64
    }
}

/// The 95% interval as a line with end caps, across the bar's middle.
fn draw_whisker<X: Ranged<ValueType = f64>>(
    plot: &mut ChartContext<SVGBackend, Cartesian2d<X, RowAxis>>,
    low: f64,
    high: f64,
    middle: f64,
) -> Result<()> {
    let style = ShapeStyle::from(&BLACK).stroke_width(2);
    plot.draw_series(std::iter::once(PathElement::new(
        vec![(low, middle), (high, middle)],
        style,
    )))
    .map_err(draw_error)?;
    for end in [low, high] {
        plot.draw_series(std::iter::once(
            EmptyElement::at((end, middle)) + PathElement::new(vec![(0, -7), (0, 7)], style),
        ))
        .map_err(draw_error)?;
    }
    Ok(())
}

/// A sizes chart: per arm, the encoded bytes and the zstd-compressed bytes as two bars, the
/// compressed one in a lighter shade of the format's colour.
#[derive(Clone, Debug)]
pub struct SizeChart {
    pub title: String,
    pub labels: Vec<String>,
    pub formats: Vec<String>,
    pub encoded: Vec<f64>,
    pub compressed: Vec<Option<f64>>,
    /// The legend text of the compressed bars, e.g. "zstd level 3".
    pub compressed_label: String,
}

pub fn size_chart(chart: &SizeChart) -> Result<String> {
    let chart = &SizeChart {
        title: svg_text(&chart.title),
        labels: chart.labels.iter().map(|label| svg_text(label)).collect(),
        compressed_label: svg_text(&chart.compressed_label),
        ..chart.clone()
    };
    let rows = chart.labels.len();
    let label_width = label_area_width(&chart.labels);
    let width = label_width + PANEL_PLOT_WIDTH + 40;
    let legend_area = 30;
    let height = TITLE_AREA + legend_area + rows as u32 * ROW_HEIGHT * 3 / 2 + X_LABEL_AREA + 24;
    let bars: Vec<Option<Bar>> = chart
        .encoded
        .iter()
        .chain(chart.compressed.iter().flatten())
        .map(|&value| {
            Some(Bar {
                value,
                interval: None,
            })
        })
        .collect();
    // Sizes rarely span much; a linear axis from zero keeps them comparable at a glance.
    let x_max = scale(
        &[Panel {
            bars,
            ..Panel::default()
        }],
        &[],
        PANEL_PLOT_WIDTH,
        |bar, _| short_number(bar.value),
        false,
    )?
    .max();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let body = root
            .titled(
                &chart.title,
                (FONT, TITLE_SIZE).into_font().style(FontStyle::Bold),
            )
            .map_err(draw_error)?;
        let (legend, body) = body.split_vertically(legend_area);
        draw_size_legend(&legend, label_width, &chart.compressed_label)?;
        let area = body.margin(0, 8, 8, 16);
        let row_y = |row: usize| (rows - 1 - row) as f64;
        let mut plot = ChartBuilder::on(&area)
            .x_label_area_size(X_LABEL_AREA)
            .y_label_area_size(label_width)
            .build_cartesian_2d(0f64..x_max, RowAxis { rows })
            .map_err(draw_error)?;
        let y_label = |y: &f64| {
            rows.checked_sub(1 + (y - 0.5).round() as usize)
                .map_or(String::new(), |row| chart.labels[row].clone())
        };
        let x_label = |x: &f64| tick(*x);
        plot.configure_mesh()
            .disable_y_mesh()
            .y_labels(rows)
            .y_label_formatter(&y_label)
            .x_labels(6)
            .x_label_formatter(&x_label)
            .x_desc("bytes per payload (lower is better)")
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, AXIS_DESC_SIZE))
            .light_line_style(TRANSPARENT)
            .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
            .draw()
            .map_err(draw_error)?;
        let value_style =
            TextStyle::from((FONT, VALUE_SIZE).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
        for row in 0..rows {
            let bottom = row_y(row);
            let colour = format_colour(&chart.formats[row]);
            // The encoded bar in the upper half of the row, the compressed one in the lower.
            let halves = [
                (bottom + 0.5, Some(chart.encoded[row]), colour),
                (bottom, chart.compressed[row], lighter(colour)),
            ];
            for (low_edge, value, colour) in halves {
                let Some(value) = value else { continue };
                let mut rectangle = Rectangle::new(
                    [(0.0, low_edge), (value, low_edge + 0.5)],
                    colour.mix(BAR_OPACITY).filled(),
                );
                // A gap between rows, none between a row's two bars.
                let upper = low_edge > row_y(row);
                let (top, bottom) = if upper { (5, 1) } else { (1, 5) };
                rectangle.set_margin(top, bottom, 0, 0);
                // The label follows the bar's centre, which the margins moved by 2 px.
                let text_offset = if upper { 2 } else { -2 };
                plot.draw_series(std::iter::once(rectangle)).map_err(draw_error)?;
                plot.draw_series(std::iter::once(
                    EmptyElement::at((value, low_edge + 0.25))
                        + Text::new(short_number(value), (6, text_offset), value_style.clone()),
                ))
                .map_err(draw_error)?;
            }
        }
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

/// "dark: encoded, light: compressed", with grey swatches (the colours are per format).
fn draw_size_legend(area: &DrawingArea<SVGBackend, Shift>, left: u32, compressed_label: &str) -> Result<()> {
    let style = TextStyle::from((FONT, LABEL_SIZE).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let swatch = RGBColor(0x55, 0x55, 0x55);
    let mut x = left as i32 + 24;
    for (colour, text) in [
        (swatch, "encoded bytes".to_string()),
        (lighter(swatch), compressed_label.to_string()),
    ] {
        area.draw(&Rectangle::new([(x, 8), (x + 22, 22)], colour.filled()))
            .map_err(draw_error)?;
        area.draw(&Text::new(text.clone(), (x + 30, 15), style.clone()))
            .map_err(draw_error)?;
        x += 30 + (text.len() as f64 * LABEL_CHAR_WIDTH) as i32 + 30;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short() {
        assert_eq!(short_number(0.0), "0");
        assert_eq!(short_number(0.12345), "0.123");
        assert_eq!(short_number(4.56789), "4.57");
        assert_eq!(short_number(31.4159), "31.4");
        assert_eq!(short_number(314.59), "315");
        assert_eq!(short_number(1_234_567.0), "1,234,567");
        assert_eq!(
            (tick(1.0), tick(10.0), tick(2500.0), tick(2.5), tick(0.1)),
            (
                "1".into(),
                "10".into(),
                "2,500".into(),
                "2.50".into(),
                "0.100".into()
            )
        );
    }

    /// CIELAB (D65) of an sRGB colour.
    fn lab([red, green, blue]: [f64; 3]) -> [f64; 3] {
        let [r, g, b] = [red, green, blue].map(linear);
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
        let f = |t: f64| {
            if t > 216.0 / 24389.0 {
                t.cbrt()
            } else {
                (24389.0 / 27.0 * t + 16.0) / 116.0
            }
        };
        [116.0 * f(y) - 16.0, 500.0 * (f(x) - f(y)), 200.0 * (f(y) - f(z))]
    }

    fn linear(channel: f64) -> f64 {
        let c = channel / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    }

    /// What a reader with protanopia or deuteranopia sees (Machado, Oliveira and Fernandes 2009,
    /// severity 1, on linear RGB), back in sRGB.
    fn seen(colour: [f64; 3], matrix: [[f64; 3]; 3]) -> [f64; 3] {
        let rgb = colour.map(linear);
        matrix.map(|row| {
            let c = (row[0] * rgb[0] + row[1] * rgb[1] + row[2] * rgb[2]).clamp(0.0, 1.0);
            255.0
                * if c <= 0.003_130_8 {
                    12.92 * c
                } else {
                    1.055 * c.powf(1.0 / 2.4) - 0.055
                }
        })
    }

    /// Every two formats' colours, and each against the baseline grey, stay apart: CIE76
    /// distance at least 20 for normal vision (about 2.3 is just noticeable) and at least 12
    /// as readers with protanopia or deuteranopia see them. The palette before 2026-12-05
    /// measured 7.3, and 0.9 for deuteranopia (cbor and rkyv, two olives).
    #[test]
    fn every_two_format_colours_are_far_apart_for_every_reader() {
        const PROTAN: [[f64; 3]; 3] = [
            [0.152_286, 1.052_583, -0.204_868],
            [0.114_503, 0.786_281, 0.099_216],
            [-0.003_882, -0.048_116, 1.051_998],
        ];
        const DEUTAN: [[f64; 3]; 3] = [
            [0.367_322, 0.860_646, -0.227_968],
            [0.280_085, 0.672_501, 0.047_413],
            [-0.011_820, 0.042_940, 0.968_881],
        ];
        let mut colours: Vec<(String, [f64; 3])> = crate::format::all()
            .iter()
            .map(|format| (format.name.to_string(), format.colour.map(f64::from)))
            .collect();
        let RGBColor(r, g, b) = BASELINE_COLOUR;
        colours.push(("the baseline grey".into(), [r, g, b].map(f64::from)));
        let distance = |a: [f64; 3], b: [f64; 3]| {
            let (a, b) = (lab(a), lab(b));
            ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
        };
        for (index, (name, colour)) in colours.iter().enumerate() {
            for (other, other_colour) in &colours[..index] {
                let normal = distance(*colour, *other_colour);
                assert!(normal >= 20.0, "{name} and {other}: CIE76 {normal:.1} < 20");
                for (vision, matrix) in [("protanopia", PROTAN), ("deuteranopia", DEUTAN)] {
                    let seen_apart = distance(seen(*colour, matrix), seen(*other_colour, matrix));
                    assert!(
                        seen_apart >= 12.0,
                        "{name} and {other} with {vision}: CIE76 {seen_apart:.1} < 12"
                    );
                }
            }
        }
    }

    #[test]
    fn colours_are_stable_and_distinct_for_known_formats() {
        let known: Vec<&str> = crate::format::all().iter().map(|format| format.name).collect();
        let colours: Vec<RGBColor> = known.iter().map(|name| format_colour(name)).collect();
        for (index, colour) in colours.iter().enumerate() {
            assert!(
                !colours[..index].contains(colour),
                "{} repeats a colour",
                known[index]
            );
            assert_ne!(*colour, BASELINE_COLOUR, "{} has the baseline grey", known[index]);
        }
        assert_eq!(format_colour("newformat"), format_colour("newformat"));
    }

    #[test]
    fn a_wide_spread_of_codec_times_gets_a_log_axis_and_baselines_do_not_count() {
        let bar = |value: f64| {
            Some(Bar {
                value,
                interval: Some((value * 0.9, value * 1.1)),
            })
        };
        let panel = |bars| Panel {
            title: "x86_64-linux".into(),
            bars,
            failed: Vec::new(),
        };
        let linear = [panel(vec![bar(100.0), bar(2000.0), bar(1.0)])];
        let baselines = [false, false, true];
        let chosen = scale(&linear, &baselines, 560, value_label, true).unwrap();
        assert!(
            matches!(chosen, Scale::Linear { max } if max > 2200.0),
            "{chosen:?}"
        );
        let wide = [panel(vec![bar(20.0), bar(2000.0), bar(1.0)])];
        let chosen = scale(&wide, &baselines, 560, value_label, true).unwrap();
        // From the power of ten below the baseline's whisker (0.9), past the widest whisker.
        assert!(
            matches!(chosen, Scale::Log { min, max } if min == 0.1 && max > 2200.0),
            "{chosen:?}"
        );
        assert!(matches!(
            scale(&wide, &baselines, 560, value_label, false),
            Ok(Scale::Linear { .. })
        ));
        // What would have no end on an axis is refused, not drawn.
        for unbounded in [f64::INFINITY, f64::NAN, f64::MAX] {
            let bars = [panel(vec![bar(20.0), bar(unbounded)])];
            assert!(
                scale(&bars, &[false, false], 560, value_label, true).is_err(),
                "{unbounded}"
            );
        }
    }

    #[test]
    fn one_bar_rectangle_per_bar_and_a_missing_arm_draws_none() {
        let bar = |value: f64| {
            Some(Bar {
                value,
                interval: Some((value * 0.9, value * 1.1)),
            })
        };
        let svg = bar_chart(&BarChart {
            title: "readings decode".into(),
            axis: "ns per record".into(),
            labels: vec!["json/serde_json".into(), "bincode/bincode".into()],
            formats: vec!["json".into(), "bincode".into()],
            baselines: vec![false, false],
            panels: vec![
                Panel {
                    title: "x86_64-linux".into(),
                    bars: vec![bar(100.0), bar(50.0)],
                    failed: Vec::new(),
                },
                Panel {
                    title: "aarch64-darwin".into(),
                    bars: vec![bar(80.0), None],
                    failed: Vec::new(),
                },
            ],
        })
        .unwrap();
        let bars = svg
            .matches(&format!("opacity=\"{BAR_OPACITY}\" fill=\"#"))
            .count();
        assert_eq!(bars, 3, "{svg}");
        assert!(svg.contains("fastest") && svg.contains("n/a"));
    }

    /// Every text a chart shows may come from a file: controls (ESC, NUL) are ill-formed XML,
    /// markup is plotters' to escape, and neither may be doubled or dropped.
    #[test]
    fn hostile_text_keeps_the_svg_well_formed() {
        let hostile = "<img src=x onerror=alert(1)>\u{1b}]52;c;aGk=\u{7}\u{0}&amp;";
        let bar = Some(Bar {
            value: 10.0,
            interval: Some((9.0, 11.0)),
        });
        let svg = bar_chart(&BarChart {
            title: hostile.into(),
            axis: hostile.into(),
            labels: vec![hostile.into()],
            formats: vec![hostile.into()],
            baselines: vec![false],
            panels: vec![Panel {
                title: hostile.into(),
                bars: vec![bar],
                failed: Vec::new(),
            }],
        })
        .unwrap();
        let sizes = size_chart(&SizeChart {
            title: hostile.into(),
            labels: vec![hostile.into()],
            formats: vec![hostile.into()],
            encoded: vec![10.0],
            compressed: vec![Some(5.0)],
            compressed_label: hostile.into(),
        })
        .unwrap();
        let shown = "<img src=x onerror=alert(1)>\u{fffd}]52;c;aGk=\u{fffd}\u{fffd}&amp;";
        for svg in [svg, sizes] {
            let document = roxmltree::Document::parse(&svg).unwrap_or_else(|error| panic!("{error}: {svg}"));
            assert!(
                document
                    .descendants()
                    .any(|node| node.text().map(str::trim) == Some(shown)),
                "{svg}"
            );
            assert!(!document.descendants().any(|node| node.has_tag_name("img")));
        }
    }
}
