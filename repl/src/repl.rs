//! The interactive REPL: one `Engine` for the whole session, so a line sees what earlier lines
//! declared. An expression statement prints its value. Errors are shown and the session goes on.

use rustyline::error::ReadlineError;
use std::io::IsTerminal;

pub fn repl(args: &crate::RunArgs) -> i32 {
    if args.emit.is_some() {
        eprintln!("error: `--emit` prints a script's compiled form: name the script");
        return acc::EXIT_COMPILE_ERROR;
    }
    let (mut engine, profile) = match crate::engine(args) {
        Ok(e) => e,
        Err(status) => return status,
    };
    args.devices.start(&mut engine);
    let status = read_eval_print(&mut engine);
    // At the end of the session, as at the end of a script: `--profile`, `--trace`.
    args.devices.finish(&mut engine, profile);
    status
}

/// Lines until the end of input or `exit(code)`: the exit status.
fn read_eval_print(engine: &mut acc::Engine) -> i32 {
    engine.set_print_values(true);
    let mut editor = match rustyline::DefaultEditor::new() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: cannot open the terminal: {e}");
            return 1;
        }
    };
    let colour = std::io::stderr().is_terminal();
    let mut input = String::new();
    let mut line_no = 0;
    loop {
        let prompt = if input.is_empty() { "acc> " } else { "...> " };
        match editor.readline(prompt) {
            Ok(line) => {
                input.push_str(&line);
                input.push('\n');
                if acc::awaits_more(&input) {
                    continue;
                }
                let _ = editor.add_history_entry(input.trim_end());
                line_no += 1;
                if let Err(code) = eval(engine, line_no, &input, colour) {
                    return code;
                }
                input.clear();
            }
            Err(ReadlineError::Interrupted) => input.clear(),
            // Unfinished input at the end is run, so that its error shows.
            Err(ReadlineError::Eof) if !input.trim().is_empty() => {
                return eval(engine, line_no + 1, &input, colour).err().unwrap_or(0);
            }
            Err(ReadlineError::Eof) => return 0,
            Err(e) => {
                eprintln!("error: {e}");
                return 1;
            }
        }
    }
}

/// Run one input, showing its error if it fails (the session goes on); `Err` holds the
/// status that `exit(code)` ends the session with.
fn eval(engine: &mut acc::Engine, line_no: usize, input: &str, colour: bool) -> Result<(), i32> {
    match engine.run(&format!("<repl:{line_no}>"), input) {
        Err(acc::Error::Exit(code)) => Err(code),
        Err(e) => {
            eprint!("{}", e.render(colour));
            Ok(())
        }
        Ok(()) => Ok(()),
    }
}
