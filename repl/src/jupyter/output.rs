//! What a cell prints, on its way to the notebook: the engine writes into a [`CellOutput`],
//! which publishes it as `stream` messages of the cell's request a few times a second while
//! the cell runs (a long loop's progress shows as it comes) and once more when it ends. The
//! output of a cell's last statement is kept back instead, to become its `execute_result`.

use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use jupyter_protocol::{DisplayData, JupyterMessage, Media, MediaType, StreamContent};

use super::wire::{log, Outbox};

/// How often a running cell's output is published.
const PUBLISH_EVERY: Duration = Duration::from_millis(100);

#[derive(Default)]
struct State {
    /// The execute request of the cell running or last run; `None` before the first.
    parent: Option<JupyterMessage>,
    /// Written and not yet published.
    pending: Vec<u8>,
    /// The last statement's output, while it is kept back.
    value: Option<Vec<u8>>,
}

/// The engine's output while the kernel runs; clones share it.
#[derive(Clone)]
pub struct CellOutput {
    state: Arc<Mutex<State>>,
    iopub: Outbox,
}

impl CellOutput {
    pub fn new(iopub: Outbox) -> CellOutput {
        CellOutput {
            state: Arc::default(),
            iopub,
        }
    }

    /// What the engine writes to (`Engine::with_output`, `Engine::set_output`).
    pub fn writer(&self) -> Box<dyn Write + Send> {
        Box::new(Writer(self.state.clone()))
    }

    /// Publishes what the running cell printed, a few times a second, for as long as the
    /// tokio runtime this is called in runs.
    pub fn publish_while_running(&self) {
        let output = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(PUBLISH_EVERY);
            loop {
                tick.tick().await;
                output.publish_pending(false);
            }
        });
    }

    /// A cell starts: what is written from now on is `request`'s output.
    pub fn begin(&self, request: &JupyterMessage) {
        let mut state = self.lock();
        state.parent = Some(request.clone());
        state.pending.clear();
        state.value = None;
    }

    /// What is written from now on is the cell's last statement's: kept back (what was
    /// written before is published first).
    pub fn keep_back(&self) {
        self.publish_pending(true);
        self.lock().value = Some(Vec::new());
    }

    /// The cell ended: publishes the rest of what it printed, and gives what was kept back.
    /// Output stays the cell's until the next begins (what its value's statement printed is
    /// published after this).
    pub fn end(&self) -> Option<String> {
        self.publish_pending(true);
        let mut state = self.lock();
        state
            .value
            .take()
            .map(|v| String::from_utf8_lossy(&v).into_owned())
    }

    /// Publishes `text` as the running cell's standard output (what its last statement
    /// printed before its value, say).
    pub fn print(&self, text: &str) {
        let state = self.lock();
        if let (Some(parent), false) = (&state.parent, text.is_empty()) {
            self.iopub.publish(StreamContent::stdout(text), parent);
        }
    }

    /// Shows a picture a cell drew (PNG bytes, `width` × `height` pixels) below what it
    /// printed so far.
    ///
    /// A picture of `imshow` or `plot` (the engine's display, set in `kernel::new_session`).
    pub fn picture(&self, png: &[u8], width: u32, height: u32) {
        self.publish_pending(true);
        let state = self.lock();
        let Some(parent) = &state.parent else {
            log("a picture drawn outside a cell is dropped");
            return;
        };
        let mut display = DisplayData::new(Media::new(vec![
            MediaType::Png(data_encoding::BASE64.encode(png)),
            MediaType::Plain(format!("<picture {width}×{height}>")),
        ]));
        display.metadata.insert(
            "image/png".into(),
            serde_json::json!({ "width": width, "height": height }),
        );
        self.iopub.publish(display, parent);
    }

    /// Publishes what was written since the last time: all of it when `all`, else up to the
    /// last whole character (a character split between two writes waits for its end).
    fn publish_pending(&self, all: bool) {
        let mut state = self.lock();
        if state.pending.is_empty() {
            return;
        }
        let whole = match std::str::from_utf8(&state.pending) {
            Ok(_) => state.pending.len(),
            // Cut short inside a character: the rest comes with the next write.
            Err(e) if e.error_len().is_none() && !all => e.valid_up_to(),
            Err(_) => state.pending.len(),
        };
        let bytes: Vec<u8> = state.pending.drain(..whole).collect();
        let text = String::from_utf8_lossy(&bytes);
        match &state.parent {
            Some(parent) if !text.is_empty() => {
                self.iopub.publish(StreamContent::stdout(&text), parent)
            }
            Some(_) => {}
            None => log(&format!("output outside a cell: {text}")),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }
}

/// A panic while the lock was held leaves plain bytes behind: still usable.
fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Writer(Arc<Mutex<State>>);

impl Write for Writer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut state = lock(&self.0);
        match &mut state.value {
            Some(value) => value.extend_from_slice(buf),
            None => state.pending.extend_from_slice(buf),
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jupyter_protocol::{ExecuteRequest, JupyterMessageContent};

    fn streams(rx: &mut tokio::sync::mpsc::UnboundedReceiver<JupyterMessage>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(m) = rx.try_recv() {
            match m.content {
                JupyterMessageContent::StreamContent(s) => out.push(s.text),
                JupyterMessageContent::DisplayData(d) => {
                    out.push(serde_json::to_string(&d.data).unwrap_or_default())
                }
                other => out.push(other.message_type().to_string()),
            }
        }
        out
    }

    fn settle(iopub: &Outbox) {
        iopub.flush(Duration::from_secs(5));
    }

    #[test]
    fn a_cells_output_streams_and_its_last_statement_is_kept_back() {
        let (iopub, mut rx) = Outbox::for_test();
        let output = CellOutput::new(iopub.clone());
        let request = JupyterMessage::new(ExecuteRequest::new("x".into()), None);
        let mut w = output.writer();
        output.begin(&request);
        w.write_all("héllo".as_bytes()).unwrap();
        // Half of a two-byte character waits for the other half.
        w.write_all(&"é".as_bytes()[..1]).unwrap();
        output.publish_pending(false);
        w.write_all(&"é".as_bytes()[1..]).unwrap();
        w.write_all(b"\n").unwrap();
        output.keep_back();
        w.write_all(b"42\n").unwrap();
        assert_eq!(output.end().as_deref(), Some("42\n"));
        settle(&iopub);
        let got = streams(&mut rx);
        assert_eq!(got, ["héllo", "é\n"]);
    }

    #[test]
    fn pictures_show_after_what_was_printed_before_them() {
        let (iopub, mut rx) = Outbox::for_test();
        let output = CellOutput::new(iopub.clone());
        let request = JupyterMessage::new(ExecuteRequest::new("x".into()), None);
        let mut w = output.writer();
        output.begin(&request);
        w.write_all(b"drawing\n").unwrap();
        output.picture(b"\x89PNG", 2, 1);
        assert_eq!(output.end(), None);
        settle(&iopub);
        let got = streams(&mut rx);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0], "drawing\n");
        assert!(got[1].contains("\"image/png\":\"iVBORw==\""), "{}", got[1]);
    }
}
