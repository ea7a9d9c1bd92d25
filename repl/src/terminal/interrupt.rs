//! Ctrl-C during a computation: the terminal sends SIGINT (the line editor reads Ctrl-C as a
//! key only while it edits a line), and a handler stops the run through the engine's
//! `InterruptHandle`. The run ends with an error at the loop or call where it stopped, and the
//! session goes on. Ctrl-C never ends the process.
//!
//! A Ctrl-C between the editor's return and the start of the run (while the input compiles)
//! is kept and stops the run as it starts; one after the run, while its output is shown, is
//! forgotten when the editor reads the next input.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

#[derive(Default)]
struct State {
    /// The run Ctrl-C stops now, if one is going on.
    running: Option<acc::InterruptHandle>,
    /// Ctrl-C came while no run was armed.
    pending: bool,
}

pub struct Interrupter {
    state: Arc<Mutex<State>>,
}

impl Interrupter {
    /// Takes over SIGINT for the rest of the process; `None` if it cannot.
    pub fn install() -> Option<Interrupter> {
        let state: Arc<Mutex<State>> = Arc::default();
        let handler = state.clone();
        ctrlc::set_handler(move || {
            let mut state = lock(&handler);
            match state.running.as_ref() {
                Some(run) => run.interrupt(),
                None => state.pending = true,
            }
        })
        .ok()?;
        Some(Interrupter { state })
    }

    /// Forgets a Ctrl-C that came after the last run (the editor is about to read an input).
    pub fn forget_pending(&self) {
        lock(&self.state).pending = false;
    }

    /// Ctrl-C stops `handle`'s engine until the guard is dropped (at once, if Ctrl-C came
    /// since the editor returned).
    pub fn arm(&self, handle: acc::InterruptHandle) -> Armed<'_> {
        let mut state = lock(&self.state);
        if std::mem::take(&mut state.pending) {
            handle.interrupt();
        }
        state.running = Some(handle);
        Armed(self)
    }
}

/// While it lives, Ctrl-C stops the armed run.
pub struct Armed<'a>(&'a Interrupter);

impl Drop for Armed<'_> {
    fn drop(&mut self) {
        lock(&self.0.state).running = None;
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}
