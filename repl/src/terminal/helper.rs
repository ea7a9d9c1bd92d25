//! The line editor's helper: completion from the session's completer, hints from the history,
//! colours and matching brackets, and reading on while an input is unfinished (Enter then
//! opens a new line of the same input, which is edited and kept in the history as one).

use std::borrow::Cow;
use std::cell::Cell;

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::{CmdKind, Highlighter};
use rustyline::hint::{Hinter, HistoryHinter};
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Context, Helper};

use super::highlight;
use acc_repl::session::{self, Names, Session};

pub struct ReplHelper {
    /// The session's names as of the last input.
    pub names: Names,
    colour: bool,
    hinter: HistoryHinter,
    /// Show the bracket matching the cursor's (not in the line as it is finally drawn).
    brackets: Cell<bool>,
    /// Enter in an unfinished input opens a new line of it (on a terminal; without one the
    /// editor would drop an unfinished input at the end of the text, so the REPL reads on).
    read_on: bool,
}

impl ReplHelper {
    pub fn new(colour: bool, read_on: bool) -> ReplHelper {
        ReplHelper {
            names: Names::default(),
            colour,
            hinter: HistoryHinter::new(),
            brackets: Cell::new(false),
            read_on,
        }
    }
}

impl Completer for ReplHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let found = session::complete(&self.names, line, pos);
        let pairs = found
            .candidates
            .into_iter()
            .map(|c| Pair {
                display: c.text.clone(),
                replacement: c.text,
            })
            .collect();
        Ok((found.start, pairs))
    }
}

impl Hinter for ReplHelper {
    type Hint = String;

    fn hint(&self, line: &str, pos: usize, ctx: &Context<'_>) -> Option<String> {
        self.hinter.hint(line, pos, ctx)
    }
}

impl Highlighter for ReplHelper {
    fn highlight<'l>(&self, line: &'l str, pos: usize) -> Cow<'l, str> {
        if !self.colour {
            return Cow::Borrowed(line);
        }
        let cursor = self.brackets.get().then_some(pos);
        Cow::Owned(highlight::colour(line, cursor))
    }

    fn highlight_hint<'h>(&self, hint: &'h str) -> Cow<'h, str> {
        if !self.colour {
            return Cow::Borrowed(hint);
        }
        Cow::Owned(format!("\x1b[2m{hint}\x1b[0m"))
    }

    fn highlight_char(&self, _line: &str, _pos: usize, kind: CmdKind) -> bool {
        // Every change may change colours (a word becomes a keyword, a quote opens a string).
        self.brackets.set(kind != CmdKind::ForcedRefresh);
        self.colour
    }
}

impl Validator for ReplHelper {
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        Ok(if self.read_on && Session::awaits_more(ctx.input()) {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
    }
}

impl Helper for ReplHelper {}
