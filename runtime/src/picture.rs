//! Where the pictures of `imshow` and `plot` go: the embedding program's display (a notebook
//! shows them inline) or files. Drawing them is `acc-plot`'s work and choosing between the two
//! the standard library's; this is the state an engine keeps for them across runs.

use std::fmt;

/// A picture a script drew: a PNG image and its size in pixels.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Picture {
    /// The PNG file's bytes (8-bit RGB).
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

impl Picture {
    pub fn new(png: Vec<u8>, width: u32, height: u32) -> Picture {
        Picture { png, width, height }
    }
}

impl fmt::Debug for Picture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The bytes themselves say nothing to a reader.
        f.debug_struct("Picture")
            .field("png", &format_args!("[{} bytes]", self.png.len()))
            .field("width", &self.width)
            .field("height", &self.height)
            .finish()
    }
}

/// Receives the pictures drawn without a file name, instead of `acc-plot-N.png` files.
pub type Display = Box<dyn FnMut(Picture) + Send>;

/// An engine's pictures: its display, if any, and how many unnamed files it wrote.
#[derive(Default)]
pub struct Pictures {
    display: Option<Display>,
    files: u32,
}

impl Pictures {
    pub fn set_display(&mut self, display: Option<Display>) {
        self.display = display;
    }

    /// The embedding program's display, when it set one.
    pub fn display(&mut self) -> Option<&mut Display> {
        self.display.as_mut()
    }

    /// The name of the next unnamed picture's file: `acc-plot-1.png`, `acc-plot-2.png`, …
    pub fn next_file_name(&mut self) -> String {
        self.files += 1;
        format!("acc-plot-{}.png", self.files)
    }
}
