//! acc: an array scripting language whose loops offload to GPUs with OpenACC directives.
//!
//! This crate is the embedding API. Today it exposes the front end (`check`, `lang`); the
//! `Engine` that runs programs arrives with host execution.

pub use acc_lang as lang;
pub use acc_lang::{Diagnostic, Severity, SourceFile};

/// Parse and type-check `source` without running it. `Ok` carries warnings, if any.
pub fn check(source: &SourceFile) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    acc_lang::check_source(source).map(|compiled| compiled.warnings)
}

/// Render diagnostics for a terminal (colour) or a pipe (plain text, no escapes).
pub fn render_diagnostics(diags: &[Diagnostic], source: &SourceFile, colour: bool) -> String {
    if !colour {
        return acc_lang::diag::render_plain(diags, source);
    }
    let handler = miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode());
    let mut out = String::new();
    for d in diags {
        let _ = handler.render_report(&mut out, &d.with_source(source));
    }
    out
}
