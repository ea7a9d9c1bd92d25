//! What a run can end with, other than success.

use acc_lang::{Diagnostic, SourceFile};
use std::fmt;

/// Exit status of a compile error (LANGUAGE.md section 9).
pub const EXIT_COMPILE_ERROR: i32 = 2;
/// Exit status of a run-time error.
pub const EXIT_RUNTIME_ERROR: i32 = 1;

/// Everything an [`Engine`](crate::Engine) call can fail with. Small (a diagnostic is boxed),
/// so that `Result<T, acc::Error>` is cheap to return.
///
/// `Display` (and `Debug`, so that `fn main() -> Result<(), acc::Error>` shows it) is the
/// rendered message, with `file:line:col` and the source line for errors in a script:
///
/// ```
/// let mut engine = acc::Engine::new()?;
/// let err = engine.run("a.acc", "let x = 1\nprint(y)").unwrap_err();
/// assert!(err.to_string().contains("a.acc:2:7"));
/// assert_eq!(err.exit_code(), acc::EXIT_COMPILE_ERROR);
/// # Ok::<(), acc::Error>(())
/// ```
#[non_exhaustive]
pub enum Error {
    /// The source did not compile; nothing of it ran or was kept.
    Compile {
        diagnostics: Vec<Diagnostic>,
        source: SourceFile,
    },
    /// A run-time error, at its source location.
    Runtime {
        diagnostic: Box<Diagnostic>,
        source: SourceFile,
    },
    /// The run was stopped by an [`InterruptHandle`](crate::InterruptHandle), in the loop
    /// the diagnostic points at.
    Interrupted {
        diagnostic: Box<Diagnostic>,
        source: SourceFile,
    },
    /// The run went past one of the engine's [`Limits`](crate::Limits): its time (stopped in
    /// the loop the diagnostic points at) or its call depth (at the call one level too deep).
    Limit {
        diagnostic: Box<Diagnostic>,
        source: SourceFile,
    },
    /// The script called `exit(code)`.
    Exit(i32),
    /// A file could not be read.
    Io { path: String, message: String },
    /// The embedder named a global or function that no script declared.
    NotFound {
        /// `"global"` or `"function"`.
        kind: &'static str,
        name: String,
        /// A declared name close to it.
        did_you_mean: Option<String>,
    },
    /// A value of one type where the script declares another (a global's type, a function's
    /// parameters or result).
    WrongType {
        /// What has the type: "global `n`", "argument 2 of `dot`".
        what: String,
        /// The type the script declares, as acc writes it (`f64[,]`).
        declared: String,
        /// The Rust type given, as acc writes it.
        given: String,
    },
    /// An embedding call the engine cannot carry out (a `Script` of another engine, an array
    /// shape that is not one, an array the host is using while a run needs it).
    Usage(String),
    /// A failure of acc itself (code generation); never the script's fault.
    Internal(String),
}

impl Error {
    /// The process exit status this error calls for.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Compile { .. } | Error::Io { .. } => EXIT_COMPILE_ERROR,
            Error::Exit(code) => *code,
            _ => EXIT_RUNTIME_ERROR,
        }
    }

    /// The error as a person reads it: diagnostics with file:line:col and the source line
    /// (`colour` for a terminal). `exit(code)` renders as nothing.
    pub fn render(&self, colour: bool) -> String {
        match self {
            Error::Compile {
                diagnostics,
                source,
            } => crate::render_diagnostics(diagnostics, source, colour),
            Error::Runtime { diagnostic, source }
            | Error::Interrupted { diagnostic, source }
            | Error::Limit { diagnostic, source } => {
                crate::render_diagnostics(std::slice::from_ref(&**diagnostic), source, colour)
            }
            Error::Exit(_) => String::new(),
            Error::Io { path, message } => format!("error: cannot read `{path}`: {message}\n"),
            Error::NotFound {
                kind,
                name,
                did_you_mean,
            } => {
                let hint = did_you_mean
                    .as_ref()
                    .map_or(String::new(), |d| format!(" (did you mean `{d}`?)"));
                format!("error: no {kind} `{name}` is declared{hint}\n")
            }
            Error::WrongType {
                what,
                declared,
                given,
            } => format!("error: {what} is `{declared}` in the script, but `{given}` was given\n"),
            Error::Usage(m) => format!("error: {m}\n"),
            Error::Internal(m) => {
                format!("internal error: {m}\n  (a bug in acc: please report it with the script)\n")
            }
        }
    }

    /// The diagnostics of an error in a script (none for the others).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            Error::Compile { diagnostics, .. } => diagnostics,
            Error::Runtime { diagnostic, .. }
            | Error::Interrupted { diagnostic, .. }
            | Error::Limit { diagnostic, .. } => std::slice::from_ref(&**diagnostic),
            _ => &[],
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.render(false).trim_end())
    }
}

/// The rendered message, as `Display`: what `main` returning `Err` prints.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {}

/// A miette report of an `Error` is its rendered text (which already shows the source and
/// labels) with a code naming its kind; `Error::diagnostics` gives the structured parts.
impl miette::Diagnostic for Error {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        let code = match self {
            Error::Compile { .. } => "acc::compile",
            Error::Runtime { .. } => "acc::runtime",
            Error::Interrupted { .. } => "acc::interrupted",
            Error::Limit { .. } => "acc::limit",
            Error::Exit(_) => "acc::exit",
            Error::Io { .. } => "acc::io",
            Error::NotFound { .. } => "acc::not_found",
            Error::WrongType { .. } => "acc::wrong_type",
            Error::Usage(_) => "acc::usage",
            Error::Internal(_) => "acc::internal",
        };
        Some(Box::new(code))
    }
}
