//! The interactive REPL: one `Engine` for the whole session, so a line sees what earlier lines
//! declared. An expression statement prints its value. Errors are shown and the session goes on.

use rustyline::error::ReadlineError;
use std::io::IsTerminal;

pub fn repl(set: &[String], devices: &crate::DeviceArgs) -> i32 {
    let mut engine = match acc::Engine::new() {
        Ok(e) => e,
        Err(e) => {
            eprint!("{}", e.render(false));
            return e.exit_code();
        }
    };
    match crate::params(set) {
        Ok(params) => params.iter().for_each(|(k, v)| engine.set_param(k, v)),
        Err(e) => eprintln!("error: {e}"),
    }
    match devices.options() {
        Ok(o) => engine.set_devices(o),
        Err(e) => eprintln!("error: {e}"),
    }
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
                if needs_more(&input) {
                    continue;
                }
                let _ = editor.add_history_entry(input.trim_end());
                line_no += 1;
                if let Err(e) = engine.run(&format!("<repl:{line_no}>"), &input) {
                    eprint!("{}", e.render(colour));
                    if let acc::Error::Exit(code) = e {
                        return code;
                    }
                }
                input.clear();
            }
            Err(ReadlineError::Interrupted) => input.clear(),
            Err(ReadlineError::Eof) => return 0,
            Err(e) => {
                eprintln!("error: {e}");
                return 1;
            }
        }
    }
}

/// The input so far leaves a bracket open, or ends with a line continuation: read more.
fn needs_more(input: &str) -> bool {
    let lexed = acc::lang::lexer::lex(input);
    let unclosed = lexed
        .diags
        .iter()
        .any(|d| d.message.starts_with("unclosed"));
    unclosed || input.trim_end().ends_with('\\')
}
