//! Pictures for the embedding program: [`Engine::set_display`].

use crate::{Engine, Picture};

impl Engine {
    /// Shows the pictures of `imshow` and `plot` in the embedding program: each call that
    /// names no file hands its [`Picture`] (PNG bytes and size) to `display` and writes no
    /// file. A call that names a file (`imshow(a, "grid.png")`) still writes that file. This is
    /// how a notebook shows pictures inline; without a display, unnamed pictures are written
    /// to `acc-plot-1.png`, `acc-plot-2.png`, … in the current directory.
    ///
    /// `display` runs on the thread that runs the script, during the call.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    ///
    /// let mut engine = acc::Engine::with_output(Box::new(std::io::sink())).unwrap();
    /// let shown: Arc<Mutex<Vec<acc::Picture>>> = Arc::default();
    /// let sink = shown.clone();
    /// engine.set_display(move |p| sink.lock().unwrap().push(p));
    /// engine.run("heat.acc", "let a = zeros(3, 4)\na[1, 2] = 1.0\nimshow(a)").unwrap();
    ///
    /// let shown = shown.lock().unwrap();
    /// assert_eq!(shown.len(), 1);
    /// assert!(shown[0].png.starts_with(b"\x89PNG\r\n\x1a\n"));
    /// assert!(shown[0].width > 0 && shown[0].height > 0);
    /// ```
    pub fn set_display(&mut self, display: impl FnMut(Picture) + Send + 'static) {
        self.context
            .host()
            .pictures()
            .set_display(Some(Box::new(display)));
    }

    /// Writes unnamed pictures to `acc-plot-N.png` files again (undoes
    /// [`set_display`](Engine::set_display)).
    pub fn clear_display(&mut self) {
        self.context.host().pictures().set_display(None);
    }
}
