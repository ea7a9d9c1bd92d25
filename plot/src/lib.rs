//! acc's pictures: `imshow` heat maps and `plot` line plots, rendered with plotters into an RGB
//! buffer and encoded as PNG. Everything is drawn in memory with a font compiled in, so no
//! system library (fontconfig, FreeType) is involved; what happens to the PNG (a file, or the
//! embedding program's display) is the standard library's business.

mod colormap;
mod encode;
mod font;
mod heatmap;
mod label;
mod line;
mod values;

use std::fmt;

pub use colormap::{viridis, MISSING};
pub use heatmap::heat_map;
pub use line::{line_plot, LINE_COLOUR};
pub use values::Values;

/// An encoded picture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Png {
    /// The PNG file's bytes.
    pub bytes: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

/// Why a picture could not be drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlotError {
    /// The array has no elements.
    Empty,
    /// `plot(x, y)` with arrays of different lengths.
    Lengths { x: usize, y: usize },
    /// Drawing or encoding failed (a bug of ours or of plotters).
    Render(String),
}

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlotError::Empty => f.write_str("the array is empty: there is nothing to draw"),
            PlotError::Lengths { x, y } => {
                write!(
                    f,
                    "x has {x} elements but y has {y}: they are drawn in pairs"
                )
            }
            PlotError::Render(why) => write!(f, "the picture could not be drawn: {why}"),
        }
    }
}

impl std::error::Error for PlotError {}

/// A plotters canvas over `rgb`, `width * height` pixels of 3 bytes.
fn canvas(
    rgb: &mut [u8],
    width: u32,
    height: u32,
) -> Result<plotters::backend::BitMapBackend<'_, plotters::backend::RGBPixel>, PlotError> {
    plotters::backend::BitMapBackend::with_buffer_and_format(rgb, (width, height))
        .map_err(|e| PlotError::Render(format!("no canvas: {e}")))
}

/// A plotters drawing error as ours.
fn canvas_error(e: impl fmt::Display) -> PlotError {
    PlotError::Render(e.to_string())
}
