//! `plot`: a line plot of y against x (or against 0..n-1).
//!
//! Points where x or y is NaN or infinite are left out and break the line, as in matplotlib.
//! A long series is thinned before drawing: cut into at most `MAX_BUCKETS` runs of
//! consecutive points, each run keeps its lowest and highest point, so that the drawn line
//! keeps every peak and trough of the data at a cost bounded by the picture's width.

use plotters::prelude::*;

use crate::{canvas, canvas_error, encode, font, label, PlotError, Png, Values};

pub const WIDTH: u32 = 720;
pub const HEIGHT: u32 = 480;
/// Runs of points a long series is thinned to (two points each).
const MAX_BUCKETS: usize = 2048;
/// matplotlib's first line colour, `#1f77b4`.
pub const LINE_COLOUR: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
const FONT_SIZE: f64 = 14.0;
/// Data beyond this magnitude is drawn at it, so that an axis span always fits in an f64.
const LIMIT: f64 = f64::MAX / 4.0;

/// The x values: given, or the indices.
#[derive(Clone, Copy)]
enum Xs<'a> {
    Index,
    Given(Values<'a>),
}

impl Xs<'_> {
    fn get(self, i: usize) -> f64 {
        match self {
            Xs::Index => i as f64,
            Xs::Given(v) => v.get(i),
        }
    }
}

/// Draws `y` against `x` (`None`: against 0..n-1). `x` and `y` have one length.
pub fn line_plot(x: Option<Values>, y: Values) -> Result<Png, PlotError> {
    let n = y.len();
    if let Some(x) = x {
        if x.len() != n {
            return Err(PlotError::Lengths { x: x.len(), y: n });
        }
    }
    if n == 0 {
        return Err(PlotError::Empty);
    }
    font::ensure_registered()?;
    let xs = x.map_or(Xs::Index, Xs::Given);
    let runs = finite_runs(xs, y);
    let bounds = |pick: fn(&(f64, f64)) -> f64| {
        runs.iter().flatten().map(pick).fold(None, |r, v| match r {
            None => Some((v, v)),
            Some((lo, hi)) => Some((f64::min(lo, v), f64::max(hi, v))),
        })
    };
    // Nothing finite: empty axes around 0.
    let (x_lo, x_hi) = bounds(|p| p.0).unwrap_or((0.0, 0.0));
    let (y_lo, y_hi) = bounds(|p| p.1).unwrap_or((0.0, 0.0));
    let x_range = label::padded(x_lo, x_hi, 0.02);
    let y_range = label::padded(y_lo, y_hi, 0.05);

    let mut rgb = vec![255u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = canvas(&mut rgb, WIDTH, HEIGHT)?.into_drawing_area();
        let text = (font::FAMILY, FONT_SIZE).into_font().color(&BLACK);
        let mut chart = ChartBuilder::on(&root)
            .margin(16)
            .margin_right(32)
            .x_label_area_size(32)
            .y_label_area_size(72)
            .build_cartesian_2d(x_range.0..x_range.1, y_range.0..y_range.1)
            .map_err(canvas_error)?;
        let tick = |v: &f64| label::number(*v, 6);
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(RGBColor(230, 230, 230))
            .x_labels(8)
            .y_labels(8)
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .label_style(text)
            .draw()
            .map_err(canvas_error)?;
        let style = LINE_COLOUR.stroke_width(2);
        for run in &runs {
            if let [p] = run.as_slice() {
                // A point with no neighbour to join: a dot.
                chart
                    .draw_series(std::iter::once(Circle::new(*p, 3, LINE_COLOUR.filled())))
                    .map_err(canvas_error)?;
            } else {
                chart
                    .draw_series(LineSeries::new(run.iter().copied(), style))
                    .map_err(canvas_error)?;
            }
        }
        root.present().map_err(canvas_error)?;
    }
    let bytes = encode::png(&rgb, WIDTH, HEIGHT)?;
    Ok(Png {
        bytes,
        width: WIDTH,
        height: HEIGHT,
    })
}

/// The points to draw, as runs of finite points (each drawn as one line), thinned when long.
fn finite_runs(xs: Xs, y: Values) -> Vec<Vec<(f64, f64)>> {
    let n = y.len();
    let per_bucket = n.div_ceil(MAX_BUCKETS).max(1);
    let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current: Vec<(f64, f64)> = Vec::new();
    let mut start = 0;
    while start < n {
        let end = (start + per_bucket).min(n);
        // The bucket's lowest and highest finite points, in index order; a point that is not
        // finite ends the run (in a thinned series, the bucket's run).
        let mut low: Option<(usize, f64, f64)> = None;
        let mut high: Option<(usize, f64, f64)> = None;
        let mut broken = false;
        for i in start..end {
            let (px, py) = (xs.get(i), y.get(i));
            if !(px.is_finite() && py.is_finite()) {
                broken = true;
                continue;
            }
            let p = (i, px.clamp(-LIMIT, LIMIT), py.clamp(-LIMIT, LIMIT));
            if low.is_none_or(|l| p.2 < l.2) {
                low = Some(p);
            }
            if high.is_none_or(|h| p.2 > h.2) {
                high = Some(p);
            }
        }
        if broken && per_bucket == 1 {
            if !current.is_empty() {
                runs.push(std::mem::take(&mut current));
            }
        } else {
            let mut points: Vec<(usize, f64, f64)> = low.into_iter().chain(high).collect();
            points.sort_by_key(|p| p.0);
            points.dedup_by_key(|p| p.0);
            current.extend(points.into_iter().map(|(_, px, py)| (px, py)));
            if broken && !current.is_empty() {
                runs.push(std::mem::take(&mut current));
            }
        }
        start = end;
    }
    if !current.is_empty() {
        runs.push(current);
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_break_the_line() {
        let y = [1.0, 2.0, f64::NAN, 3.0, f64::INFINITY, 4.0, 5.0];
        let runs = finite_runs(Xs::Index, Values::F64(&y));
        assert_eq!(
            runs,
            vec![
                vec![(0.0, 1.0), (1.0, 2.0)],
                vec![(3.0, 3.0)],
                vec![(5.0, 4.0), (6.0, 5.0)]
            ]
        );
    }

    #[test]
    fn long_series_keep_their_extremes() {
        let y: Vec<f64> = (0..1_000_000i64)
            .map(|i| ((i * 7919) % 1000) as f64)
            .collect();
        let runs = finite_runs(Xs::Index, Values::F64(&y));
        let points: Vec<(f64, f64)> = runs.concat();
        assert!(points.len() <= 2 * MAX_BUCKETS, "{}", points.len());
        let max = points.iter().map(|p| p.1).fold(f64::MIN, f64::max);
        let min = points.iter().map(|p| p.1).fold(f64::MAX, f64::min);
        assert_eq!((min, max), (0.0, 999.0));
        assert!(points.windows(2).all(|w| w[0].0 < w[1].0), "x in order");
    }
}
