//! What a run can end with, other than success.

use acc_lang::{Diagnostic, SourceFile};
use std::fmt;

/// Exit status of a compile error (LANGUAGE.md section 9).
pub const EXIT_COMPILE_ERROR: i32 = 2;
/// Exit status of a run-time error.
pub const EXIT_RUNTIME_ERROR: i32 = 1;

#[derive(Debug)]
pub enum Error {
    /// The source did not compile; nothing of it ran or was kept.
    Compile {
        diagnostics: Vec<Diagnostic>,
        source: SourceFile,
    },
    /// A run-time error, at its source location.
    Runtime {
        diagnostic: Diagnostic,
        source: SourceFile,
    },
    /// The script called `exit(code)`.
    Exit(i32),
    /// A file could not be read.
    Io { path: String, message: String },
    /// A failure of acc itself (code generation); never the script's fault.
    Internal(String),
}

impl Error {
    /// The process exit status this error calls for.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Compile { .. } | Error::Io { .. } => EXIT_COMPILE_ERROR,
            Error::Runtime { .. } | Error::Internal(_) => EXIT_RUNTIME_ERROR,
            Error::Exit(code) => *code,
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
            Error::Runtime { diagnostic, source } => {
                crate::render_diagnostics(std::slice::from_ref(diagnostic), source, colour)
            }
            Error::Exit(_) => String::new(),
            Error::Io { path, message } => format!("error: cannot read `{path}`: {message}\n"),
            Error::Internal(m) => {
                format!("internal error: {m}\n  (a bug in acc: please report it with the script)\n")
            }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(false))
    }
}

impl std::error::Error for Error {}
