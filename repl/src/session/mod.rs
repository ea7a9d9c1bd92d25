//! An interactive session, whatever shows it: one `Engine` for every input, the `:` commands,
//! completion and inspection. Nothing here knows about terminals: the terminal REPL
//! (`crate::terminal`) draws what this answers, and a notebook kernel can too.
//!
//! An input is code (run in the session; its output goes to the engine's output) or a command
//! (`:vars`), whose answer is a [`Reply`] to show. A notebook runs its cells with
//! [`Session::eval_cell`], which sets a cell's last value apart.

mod cell;
mod commands;
mod complete;
mod inspect;
mod reply;

pub use cell::{split_value, CellOutcome};
pub use commands::{Command, COMMANDS};
pub use complete::{complete, Candidate, Completion, Kind};
pub use inspect::inspect;
pub use reply::{Reply, Table};

/// What the session knows by name, for completion and inspection: a snapshot taken after each
/// input (`Session::names`).
#[derive(Clone, Debug, Default)]
pub struct Names {
    pub globals: Vec<acc::GlobalInfo>,
    pub functions: Vec<acc::FunctionInfo>,
}

/// What an input came to.
pub enum Outcome {
    /// Code ran to its end (its output went to the engine's output).
    Ran,
    /// A command's answer.
    Reply(Reply),
    /// The input failed; the session goes on as it was (for a compile error) or as far as
    /// the code got (for a run-time error or an interrupt).
    Failed(acc::Error),
    /// `:quit` or `exit(code)`: the session ends with this status.
    End(i32),
}

/// Makes an engine set up as the session's first: what `:reset` starts again with.
pub type EngineMaker = Box<dyn FnMut() -> Result<acc::Engine, acc::Error>>;

pub struct Session {
    engine: acc::Engine,
    new_engine: EngineMaker,
    /// The inputs that ran without error, in order: what `:save` writes.
    inputs: Vec<String>,
    /// Inputs of code so far: the `N` of `<repl:N>` in messages.
    count: usize,
    /// `:info on` (or `acc --info`): the compiler's feedback on each input before it runs.
    info: bool,
}

impl Session {
    /// A session on `engine`; `:reset` starts again on one from `new_engine`.
    pub fn new(mut engine: acc::Engine, new_engine: EngineMaker) -> Session {
        engine.set_print_values(true);
        Session {
            engine,
            new_engine,
            inputs: Vec::new(),
            count: 0,
            info: false,
        }
    }

    /// Shows the compiler's feedback on each input before it runs (`:info on`, `acc --info`).
    pub fn set_info(&mut self, on: bool) {
        self.info = on;
    }

    pub fn engine(&mut self) -> &mut acc::Engine {
        &mut self.engine
    }

    /// Run one input: a `:` command or code. Code must be whole (`acc::awaits_more` is
    /// false); a command's code too.
    pub fn eval(&mut self, input: &str) -> Outcome {
        match Command::parse(input) {
            Some(command) => self.command(command),
            None if input.trim().is_empty() => Outcome::Ran,
            None => self.run_code(input),
        }
    }

    /// Whether `input` stops short of a whole input (for a command, of its code).
    pub fn awaits_more(input: &str) -> bool {
        match Command::parse(input) {
            Some(command) => command.code().is_some_and(acc::awaits_more),
            None => acc::awaits_more(input),
        }
    }

    /// The globals and functions by name, for completion and inspection.
    pub fn names(&mut self) -> Names {
        Names {
            globals: self.engine.globals_info(),
            functions: self.engine.functions_info(),
        }
    }

    /// A handle that stops the run in progress (it changes at `:reset`).
    pub fn interrupt_handle(&self) -> acc::InterruptHandle {
        self.engine.interrupt_handle()
    }

    /// The script `:save` writes: every input that ran without error, in order.
    pub fn script(&self) -> String {
        let mut out = String::new();
        for input in &self.inputs {
            out += input.trim_end();
            out.push('\n');
        }
        out
    }

    fn run_code(&mut self, code: &str) -> Outcome {
        self.count += 1;
        let name = format!("<repl:{}>", self.count);
        self.run_named(&name, code)
    }

    /// Runs `code` under `name` (in messages and profiles).
    fn run_named(&mut self, name: &str, code: &str) -> Outcome {
        if self.info {
            // A compile error is reported by the run itself.
            if let Ok(info) = self.engine.feedback(name, code) {
                eprint!("{info}");
            }
        }
        match self.engine.run(name, code) {
            Ok(()) => {
                self.inputs.push(code.to_string());
                Outcome::Ran
            }
            Err(acc::Error::Exit(status)) => Outcome::End(status),
            Err(e) => Outcome::Failed(e),
        }
    }

    /// `:reset`: a new engine from the session's maker; inputs are forgotten.
    fn reset(&mut self) -> Result<(), acc::Error> {
        let mut engine = (self.new_engine)()?;
        engine.set_print_values(true);
        self.engine = engine;
        self.inputs.clear();
        Ok(())
    }
}
