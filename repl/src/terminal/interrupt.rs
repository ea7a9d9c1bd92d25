//! Ctrl-C during a computation: the terminal sends SIGINT (the line editor reads Ctrl-C as a
//! key only while it edits a line), and a handler stops the run through the engine's
//! `InterruptHandle`. The run ends with an error at the loop or call where it stopped, and the
//! session goes on. Between runs the handler does nothing, so Ctrl-C never ends the process.

use std::sync::{Arc, Mutex, PoisonError};

pub struct Interrupter {
    /// The run Ctrl-C stops now, if one is going on.
    running: Arc<Mutex<Option<acc::InterruptHandle>>>,
}

impl Interrupter {
    /// Takes over SIGINT for the rest of the process; `None` if it cannot.
    pub fn install() -> Option<Interrupter> {
        let running: Arc<Mutex<Option<acc::InterruptHandle>>> = Arc::default();
        let handler = running.clone();
        ctrlc::set_handler(move || {
            let run = handler.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(handle) = run.as_ref() {
                handle.interrupt();
            }
        })
        .ok()?;
        Some(Interrupter { running })
    }

    /// Ctrl-C stops `handle`'s engine until the guard is dropped.
    pub fn arm(&self, handle: acc::InterruptHandle) -> Armed<'_> {
        *self.running.lock().unwrap_or_else(PoisonError::into_inner) = Some(handle);
        Armed(self)
    }
}

/// While it lives, Ctrl-C stops the armed run.
pub struct Armed<'a>(&'a Interrupter);

impl Drop for Armed<'_> {
    fn drop(&mut self) {
        *self
            .0
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
    }
}
