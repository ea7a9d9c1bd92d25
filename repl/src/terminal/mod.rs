//! The terminal REPL, `acc` with no script: a line editor (rustyline) around a
//! [`Session`](acc_repl::session::Session). It adds what only a terminal has: the banner,
//! colours, the history file, and Ctrl-C (at the prompt it clears the input; during a
//! computation it stops it and the session goes on); Ctrl-D ends the session.
//!
//! With standard input not a terminal (a pipe, a test) it reads lines plainly: no banner, no
//! history file, and Ctrl-C is left to end the process.

mod helper;
mod highlight;
mod history;
mod interrupt;

use std::io::{IsTerminal, Write};

use rustyline::config::{CompletionType, Config};
use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::Editor;

use acc_repl::session::{Outcome, Session};
use helper::ReplHelper;
use interrupt::Interrupter;

pub fn repl(args: &crate::RunArgs) -> i32 {
    if args.emit.is_some() {
        eprintln!("error: `--emit` prints a script's compiled form: name the script");
        return acc::EXIT_COMPILE_ERROR;
    }
    let (engine, profile) = match crate::engine(args) {
        Ok(e) => e,
        Err(status) => return status,
    };
    let again = args.clone();
    let new_engine = Box::new(move || {
        crate::engine(&again)
            .map(|(engine, _)| engine)
            .map_err(|_| {
                acc::Error::Usage("cannot start a new session (the reason is above)".into())
            })
    });
    let mut session = Session::new(engine, new_engine);
    session.set_info(args.devices.info());
    args.devices.start(session.engine());
    let status = read_eval_print(&mut session);
    // At the end of the session, as at the end of a script: `--profile`, `--trace`.
    args.devices.finish(session.engine(), profile);
    status
}

/// Inputs until the end of input, `:quit` or `exit(code)`: the exit status.
fn read_eval_print(session: &mut Session) -> i32 {
    let interactive = std::io::stdin().is_terminal();
    let no_colour = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let colour = std::io::stderr().is_terminal() && !no_colour;
    let config = Config::builder()
        .auto_add_history(false)
        .completion_type(CompletionType::List)
        .build();
    let mut editor: Editor<ReplHelper, FileHistory> = match Editor::with_config(config) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: cannot open the terminal: {e}");
            return 1;
        }
    };
    let highlight = std::io::stdout().is_terminal() && !no_colour;
    editor.set_helper(Some(ReplHelper::new(highlight, interactive)));
    let history = interactive.then(history::file).flatten();
    if let Some(file) = &history {
        // A first session has no history yet.
        let _ = editor.load_history(file);
    }
    let interrupter = interactive.then(Interrupter::install).flatten();
    if interactive {
        print!("{}", banner(session));
    }
    let mut input = String::new();
    loop {
        let prompt = if input.is_empty() { "acc> " } else { "...> " };
        if let Some(interrupter) = &interrupter {
            interrupter.forget_pending();
        }
        match editor.readline(prompt) {
            Ok(line) => {
                input.push_str(&line);
                input.push('\n');
                // Without a terminal the editor reads line by line: read on here.
                if Session::awaits_more(&input) {
                    continue;
                }
                if !input.trim().is_empty() {
                    let _ = editor.add_history_entry(input.trim_end());
                    if let Some(file) = &history {
                        let _ = editor.append_history(file);
                    }
                }
                let outcome = {
                    let _armed = interrupter
                        .as_ref()
                        .map(|i| i.arm(session.interrupt_handle()));
                    session.eval(&input)
                };
                input.clear();
                if let Some(status) = show(outcome, colour) {
                    return status;
                }
                if let Some(helper) = editor.helper_mut() {
                    helper.names = session.names();
                }
            }
            Err(ReadlineError::Interrupted) => input.clear(),
            // Unfinished input at the end is run, so that its error shows.
            Err(ReadlineError::Eof) if !input.trim().is_empty() => {
                return show(session.eval(&input), colour).unwrap_or(0);
            }
            Err(ReadlineError::Eof) => return 0,
            Err(e) => {
                eprintln!("error: {e}");
                return 1;
            }
        }
    }
}

/// Show what an input came to; `Some(status)` when the session ends.
fn show(outcome: Outcome, colour: bool) -> Option<i32> {
    match outcome {
        Outcome::Ran => None,
        Outcome::Reply(reply) => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(reply.to_text().as_bytes());
            let _ = out.flush();
            None
        }
        Outcome::Failed(e) => {
            if matches!(e, acc::Error::Interrupted { .. }) {
                // Off the line where the terminal echoed `^C`.
                eprintln!();
            }
            eprint!("{}", e.render(colour));
            None
        }
        Outcome::End(status) => Some(status),
    }
}

/// The version, the device and where to start.
fn banner(session: &mut Session) -> String {
    format!(
        "acc {} (OpenACC arrays, JIT-compiled) on {}\n\
         :help lists the commands; Tab completes; Ctrl-C stops a computation; Ctrl-D leaves.\n",
        env!("CARGO_PKG_VERSION"),
        session.engine().current_device()
    )
}
