//! The one typeface of every picture, compiled in so that drawing text needs no font installed
//! on the machine (no fontconfig, no FreeType): DejaVu Sans, cut down to printable ASCII and
//! `° × − …` (fonts/README.md says how, fonts/LICENSE-DejaVu.txt under which terms).

use std::sync::OnceLock;

use plotters::style::FontStyle;

use crate::PlotError;

/// The family name the pictures' text styles ask for.
pub const FAMILY: &str = "acc-sans";

static DEJAVU_SANS: &[u8] = include_bytes!("../fonts/DejaVuSans-subset.ttf");

/// Registers the font with plotters, once per process (plotters keeps fonts in a global table).
pub fn ensure_registered() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(PlotError::Render("the built-in font does not load".into()))
    }
}
