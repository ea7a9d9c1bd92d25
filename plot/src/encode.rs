//! PNG encoding of a finished canvas (8-bit RGB, no metadata, so the same picture is the same
//! bytes on every machine).

use crate::PlotError;

/// The PNG file of `rgb`, `width * height` pixels of 3 bytes, row by row from the top.
pub fn png(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, PlotError> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let fail = |e: png::EncodingError| PlotError::Render(format!("PNG encoding failed: {e}"));
    let mut writer = encoder.write_header().map_err(fail)?;
    writer.write_image_data(rgb).map_err(fail)?;
    writer.finish().map_err(fail)?;
    Ok(bytes)
}
