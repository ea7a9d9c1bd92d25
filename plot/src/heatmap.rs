//! `imshow`: a rank-2 array as a heat map, row 0 at the top, with a colour bar.
//!
//! plotters draws the frame (axes, tick labels, the bar's outline and labels) into an RGB
//! buffer; the cells and the bar's gradient are then written straight into that buffer, one
//! pixel at a time, each pixel taking the colour of the cell under its centre. So the cost is
//! the picture's size, not the array's: a 10,000 × 10,000 array is drawn from about 300,000
//! of its elements (after one pass over all of them for the colour range).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::colormap::viridis;
use crate::{canvas, canvas_error, encode, font, label, PlotError, Png, Values};

/// The largest side of the cell area in pixels; the smallest side of a very thin array's.
const MAX_SIDE: u32 = 560;
const MIN_SIDE: u32 = 80;
/// Space around the cell area: margin, tick labels below and left.
const MARGIN: u32 = 12;
const X_LABELS: u32 = 30;
const Y_LABELS: u32 = 56;
/// The colour bar: gap to the cells, its width, room for its labels.
const BAR_GAP: u32 = 24;
const BAR_WIDTH: u32 = 20;
const BAR_LABELS: u32 = 84;
const FONT_SIZE: f64 = 14.0;

/// The colour scale: the finite values' range, or none when no value is finite.
#[derive(Clone, Copy, Debug)]
struct Scale {
    range: Option<(f64, f64)>,
}

impl Scale {
    /// Where `v` falls in the colour bar, 0 to 1: the finite minimum at 0 and maximum at 1,
    /// -inf and +inf at the ends, NaN as NaN (drawn grey). A constant array is all 0, the
    /// darkest colour, as in matplotlib.
    fn position(self, v: f64) -> f64 {
        if v.is_nan() {
            return f64::NAN;
        }
        if v.is_infinite() {
            return if v > 0.0 { 1.0 } else { 0.0 };
        }
        match self.range {
            Some((lo, hi)) if hi > lo => {
                // Computed in two steps so that a span beyond f64's range does not overflow.
                (v / 2.0 - lo / 2.0) / (hi / 2.0 - lo / 2.0)
            }
            _ => 0.0,
        }
    }
}

/// The pixel size of the cell area for `rows × cols` cells: square cells where the array's
/// shape allows, within `MIN_SIDE..=MAX_SIDE`.
fn cell_area(rows: usize, cols: usize) -> (u32, u32) {
    let cell = f64::from(MAX_SIDE) / rows.max(cols) as f64;
    let side = |n: usize| ((n as f64 * cell).round() as u32).clamp(MIN_SIDE, MAX_SIDE);
    (side(cols), side(rows))
}

/// Draws `values` (row-major, `rows × cols`) as a heat map.
pub fn heat_map(values: Values, rows: usize, cols: usize) -> Result<Png, PlotError> {
    if rows == 0 || cols == 0 {
        return Err(PlotError::Empty);
    }
    if rows.checked_mul(cols) != Some(values.len()) {
        return Err(PlotError::Render(format!(
            "{} elements do not make {rows} rows of {cols}",
            values.len()
        )));
    }
    font::ensure_registered()?;
    let scale = Scale {
        range: values.finite_range(),
    };
    let (area_w, area_h) = cell_area(rows, cols);
    let width = MARGIN + Y_LABELS + area_w + BAR_GAP + BAR_WIDTH + BAR_LABELS;
    let height = MARGIN + area_h + X_LABELS + MARGIN;
    let mut rgb = vec![255u8; (width * height * 3) as usize];
    let cells = draw_frame(&mut rgb, (width, height), rows, cols, scale)?;
    let bar = Rect {
        x0: cells.x0 + area_w + BAR_GAP,
        y0: cells.y0,
        w: BAR_WIDTH,
        h: cells.h,
    };
    paint(&mut rgb, width, cells, |x, y| {
        // The cell under the pixel's centre.
        let row = ((f64::from(y) + 0.5) * rows as f64 / f64::from(cells.h)) as usize;
        let col = ((f64::from(x) + 0.5) * cols as f64 / f64::from(cells.w)) as usize;
        let i = row.min(rows - 1) * cols + col.min(cols - 1);
        viridis(scale.position(values.get(i)))
    });
    paint(&mut rgb, width, bar, |_, y| {
        viridis(1.0 - f64::from(y) / f64::from((bar.h - 1).max(1)))
    });
    let bytes = encode::png(&rgb, width, height)?;
    Ok(Png {
        bytes,
        width,
        height,
    })
}

/// A rectangle of pixels.
#[derive(Clone, Copy, Debug)]
struct Rect {
    x0: u32,
    y0: u32,
    w: u32,
    h: u32,
}

/// Sets each pixel of `rect` to `colour(x, y)`, `x` and `y` counted from its corner.
fn paint(rgb: &mut [u8], width: u32, rect: Rect, colour: impl Fn(u32, u32) -> [u8; 3]) {
    for y in 0..rect.h {
        for x in 0..rect.w {
            let at = (((rect.y0 + y) * width + rect.x0 + x) * 3) as usize;
            if let Some(pixel) = rgb.get_mut(at..at + 3) {
                pixel.copy_from_slice(&colour(x, y));
            }
        }
    }
}

/// Axes with the cells' indices, the colour bar's outline and its min/max labels; gives the
/// cell area's rectangle.
fn draw_frame(
    rgb: &mut [u8],
    (width, height): (u32, u32),
    rows: usize,
    cols: usize,
    scale: Scale,
) -> Result<Rect, PlotError> {
    let root = canvas(rgb, width, height)?.into_drawing_area();
    let (left, right) = root.split_horizontally(MARGIN + Y_LABELS + cell_area(rows, cols).0);
    let text = (font::FAMILY, FONT_SIZE).into_font().color(&BLACK);
    // Cell centres at whole numbers, so the index ticks label cells; y runs downwards.
    let mut chart = ChartBuilder::on(&left)
        .margin_top(MARGIN)
        .margin_bottom(MARGIN)
        .margin_left(MARGIN)
        .x_label_area_size(X_LABELS)
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(-0.5..cols as f64 - 0.5, rows as f64 - 0.5..-0.5)
        .map_err(canvas_error)?;
    let index = |v: &f64| {
        if v.fract() == 0.0 && *v >= 0.0 {
            format!("{}", *v as i64)
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(cols.min(8))
        .y_labels(rows.min(8))
        .x_label_formatter(&index)
        .y_label_formatter(&index)
        .label_style(text.clone())
        .draw()
        .map_err(canvas_error)?;
    let (xs, ys) = chart.plotting_area().get_pixel_range();
    let cells = Rect {
        x0: xs.start.max(0) as u32,
        y0: ys.start.max(0) as u32,
        w: (xs.end - xs.start).max(1) as u32,
        h: (ys.end - ys.start).max(1) as u32,
    };
    // The bar's outline, one pixel outside its gradient, and its labels.
    let (rx, _) = right.get_pixel_range();
    let bar_x = cells.x0 as i32 + cells.w as i32 + BAR_GAP as i32 - rx.start;
    let (top, bottom) = (cells.y0 as i32, (cells.y0 + cells.h) as i32);
    right
        .draw(&Rectangle::new(
            [(bar_x - 1, top - 1), (bar_x + BAR_WIDTH as i32, bottom)],
            BLACK.stroke_width(1),
        ))
        .map_err(canvas_error)?;
    let label_x = bar_x + BAR_WIDTH as i32 + 6;
    let at = |v: VPos| text.pos(Pos::new(HPos::Left, v));
    // The maximum at the top, the minimum at the bottom; a constant array (all cells the
    // darkest colour) has its one value at the bottom.
    let (top_label, bottom_label) = match scale.range {
        Some((lo, hi)) if hi > lo => (label::number(hi, 4), label::number(lo, 4)),
        Some((lo, _)) => (String::new(), label::number(lo, 4)),
        None => ("all NaN/inf".to_string(), String::new()),
    };
    right
        .draw_text(&top_label, &at(VPos::Top), (label_x, top))
        .map_err(canvas_error)?;
    right
        .draw_text(&bottom_label, &at(VPos::Bottom), (label_x, bottom))
        .map_err(canvas_error)?;
    root.present().map_err(canvas_error)?;
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_on_the_bar() {
        let s = Scale {
            range: Some((-1.0, 3.0)),
        };
        assert_eq!(s.position(-1.0), 0.0);
        assert_eq!(s.position(3.0), 1.0);
        assert_eq!(s.position(1.0), 0.5);
        assert_eq!(s.position(f64::INFINITY), 1.0);
        assert!(s.position(f64::NAN).is_nan());
        let wide = Scale {
            range: Some((-f64::MAX, f64::MAX)),
        };
        assert_eq!(wide.position(0.0), 0.5);
        let constant = Scale {
            range: Some((2.0, 2.0)),
        };
        assert_eq!(constant.position(2.0), 0.0);
    }

    #[test]
    fn areas_keep_the_shape() {
        assert_eq!(cell_area(2, 2), (560, 560));
        assert_eq!(cell_area(2, 4), (560, 280));
        assert_eq!(cell_area(1, 10_000), (560, 80));
        assert_eq!(cell_area(100_000, 3), (80, 560));
    }
}
