//! acc: an array scripting language whose loops offload to GPUs with OpenACC directives.
//!
//! This crate is the embedding API: an [`Engine`] compiles source with the front end (`lang`),
//! lowers it to the shared IR, JIT-compiles it with Cranelift (`jit-host`) and runs it with the
//! runtime and standard library. Globals and functions persist across `Engine::run` calls.
//!
//! ```no_run
//! let mut engine = acc::Engine::new().unwrap();
//! engine.run("a.acc", "let x = 2\nfn twice(v: i64) -> i64 { return 2 * v }").unwrap();
//! engine.run("b.acc", "print(twice(x))").unwrap(); // 4
//! ```

mod api;
mod device_print;
mod engine;
mod error;

/// The front end and the IR, for tools built on acc's internals; not a stable surface.
#[cfg(feature = "internals")]
pub use acc_lang as lang;
pub use acc_lang::{Diagnostic, Severity, SourceFile};
pub use acc_runtime::device::{
    gpu_count, AutocompareOptions, DeviceKind, DeviceOptions, EdgesFirst,
};
/// A construct's profile numbers ([`Engine::profile_totals`], [`ProfileSite`]).
pub use acc_runtime::profile::SiteStats;
pub use acc_runtime::Picture;
pub use api::{
    Args, Array, DeviceInfo, Elem, Func, FunctionInfo, GlobalInfo, HostFunction, HostRet,
    InterruptHandle, Limits, ProfileSite, Ret, Scalar, Script, Value,
};
pub use engine::{Emit, Engine};
pub use error::{Error, EXIT_COMPILE_ERROR, EXIT_RUNTIME_ERROR};

/// Parse and type-check `source` without running it. `Ok` carries warnings, if any.
pub fn check(source: &SourceFile) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    acc_lang::check_source(source).map(|compiled| compiled.warnings)
}

/// `--info`'s compile-time feedback for `source` (LANGUAGE.md 8): every compute construct's
/// data clauses and every loop's schedule with its reason, one `file:line:col` line each, and
/// the compile's warnings. `Err` carries the diagnostics of a source that does not compile.
pub fn feedback(source: &SourceFile) -> Result<(String, Vec<Diagnostic>), Vec<Diagnostic>> {
    acc_lang::check_source(source).map(|compiled| {
        let text = acc_lang::analysis::feedback(source, &compiled.hir, &compiled.analysis);
        (text, compiled.warnings)
    })
}

#[doc(hidden)]
/// `check` for a process that exits right after it (`acc check`): what the compile built is
/// never freed, which for a large program saves as much time as a pass over it
/// (`acc_lang::check_before_exit`).
pub fn check_before_exit(source: &SourceFile) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    acc_lang::check_before_exit(source)
}

/// Whether `text` stops short of a program that more lines could complete (a bracket left
/// open, a line continuation, a directive waiting for its construct): what a REPL asks before
/// it runs what was typed.
pub fn awaits_more(text: &str) -> bool {
    acc_lang::awaits_more(text)
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
