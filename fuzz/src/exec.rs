//! One execution of each target, in-process, with its oracles. A failed oracle is a
//! [`Finding`]; a panic is caught by the caller (`worker.rs`), and what cannot be caught (an
//! abort, a stack overflow, a hang) is seen by the supervisor.

use crate::mutate::Mode;
use acc::{DeviceOptions, Engine, Error};
use acc_lang::diag::render_plain;
use acc_lang::{Diagnostic, Frontend, SourceFile, Span};
use std::io::Write;
use std::sync::{Arc, Mutex};

/// The name inputs are compiled under (diagnostics must name it with a line and column).
pub const FILE_NAME: &str = "fuzz.acc";

/// A broken oracle: `signature` groups findings of one cause (it has no input-specific
/// numbers where that can be helped), `detail` says what happened on this input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub signature: String,
    pub detail: String,
}

impl Finding {
    fn new(signature: impl Into<String>, detail: impl Into<String>) -> Finding {
        Finding {
            signature: signature.into(),
            detail: detail.into(),
        }
    }
}

/// How far an execution got, for the statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reached {
    /// The front end accepted the input.
    pub compiled: bool,
    /// Device runs made (the pipeline).
    pub device_runs: u32,
    /// The devices' outcomes differed (a mutated program; not a finding).
    pub differed: bool,
}

/// Diagnostics rendered per input: enough to find a renderer panic; rendering thousands (one
/// per unclosed bracket of a deep nest) would only take time.
const RENDERED: usize = 8;

/// The front end's oracle for its diagnostics: each has a message and a primary location
/// inside the source on character boundaries, and renders (plain and in colour, as `acc check`
/// does on a pipe and on a terminal) with `file:line:col`.
pub fn check_diagnostics(diags: &[Diagnostic], source: &SourceFile) -> Result<(), Finding> {
    let text = &*source.text;
    for d in diags {
        if d.message.is_empty() {
            return Err(Finding::new(
                "diagnostic without a message",
                format!("{d:?}"),
            ));
        }
        if d.labels.is_empty() {
            return Err(Finding::new(
                format!("diagnostic without a location: {}", shape(&d.message)),
                format!("{d:?}"),
            ));
        }
        for l in &d.labels {
            let (start, end) = (l.span.start as usize, l.span.end as usize);
            if start > end || end > text.len() {
                return Err(Finding::new(
                    format!("span outside the source: {}", shape(&d.message)),
                    format!("span {start}..{end} of a {}-byte source: {d:?}", text.len()),
                ));
            }
            if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
                return Err(Finding::new(
                    format!("span splits a character: {}", shape(&d.message)),
                    format!("span {start}..{end}: {d:?}"),
                ));
            }
        }
    }
    for d in diags.iter().take(RENDERED) {
        let located = d.with_source(source).location;
        let plain = render_plain(std::slice::from_ref(d), source);
        if !plain.contains(&located) {
            return Err(Finding::new(
                format!(
                    "rendered diagnostic without its location: {}",
                    shape(&d.message)
                ),
                format!("expected `{located}` in:\n{plain}"),
            ));
        }
    }
    let _ = acc::render_diagnostics(&diags[..diags.len().min(RENDERED)], source, true);
    Ok(())
}

/// A message with its numbers and quoted names blanked, so that one cause is one signature.
fn shape(message: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    for c in message.chars().take(120) {
        match c {
            '`' => {
                quoted = !quoted;
                out.push('`');
                if quoted {
                    out.push('…');
                }
            }
            _ if quoted => {}
            '0'..='9' => {
                if !out.ends_with('N') {
                    out.push('N');
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// The front-end target: compile, check the diagnostics, and on success lower, print the IR
/// and emit PTX (the back ends' pure functions of the IR, which need no device).
pub fn frontend(text: &str) -> Result<Reached, Finding> {
    let source = SourceFile::new(FILE_NAME, text);
    let mut reached = Reached::default();
    match Frontend::new().compile(&source) {
        Ok(compiled) => {
            reached.compiled = true;
            if let Some(e) = compiled.warnings.iter().find(|d| d.is_error()) {
                return Err(Finding::new(
                    "an error among the warnings of a successful compile",
                    format!("{e:?}"),
                ));
            }
            check_diagnostics(&compiled.warnings, &source)?;
            back_ends(&compiled);
        }
        Err(diags) => {
            if !diags.iter().any(Diagnostic::is_error) {
                return Err(Finding::new(
                    "compile failed without an error",
                    format!("{diags:?}"),
                ));
            }
            check_diagnostics(&diags, &source)?;
        }
    }
    // The REPL asks this of every line typed.
    let _ = acc_lang::awaits_more(text);
    Ok(reached)
}

/// Lowering, the IR's text form and the PTX emitter on a compiled program.
fn back_ends(compiled: &acc_lang::Compiled) {
    let module = acc_lang::with_deep_stack(|| {
        acc_lang::lower::lower_with(
            &compiled.hir,
            &compiled.analysis,
            acc_lang::lower::Options::default(),
        )
    });
    let _ = module.to_string();
    let options = acc_jit_ptx::PtxOptions { unchecked: false };
    let _ = acc_lang::with_deep_stack(|| acc_jit_ptx::emit_module(&module, &options));
}

/// The host devices every pipeline input runs on.
pub const DEVICES: &[&str] = &["host", "multicore", "emulated"];

/// Program output kept per run; beyond it output is dropped (a mutated loop may print
/// without end) and the prefixes are compared.
const OUTPUT_CAP: usize = 1 << 20;

/// A capped, shared output buffer for an engine.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut out = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let room = OUTPUT_CAP.saturating_sub(out.len());
        out.extend_from_slice(&buf[..buf.len().min(room)]);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What one device run printed and how it ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceOutcome {
    pub output: String,
    /// The error as the CLI prints it (plain), empty on success.
    pub error: String,
    pub status: i32,
}

/// Parameters of the corpus programs set small, so that mutated examples run in milliseconds
/// (the defaults are sized for benchmarks).
const PARAMS: &[(&str, &str)] = &[
    ("n", "40"),
    ("m", "24"),
    ("width", "48"),
    ("height", "32"),
    ("rows", "30"),
    ("cols", "20"),
    ("iter_max", "20"),
    ("max_iter", "30"),
    ("generations", "5"),
    ("nx", "8"),
];

/// Runs `text` on one device in a fresh engine.
pub fn run_on(text: &str, device: &str) -> Result<DeviceOutcome, Finding> {
    let capture = Capture::default();
    let mut engine = Engine::with_output(Box::new(capture.clone()))
        .map_err(|e| Finding::new("engine creation failed", e.to_string()))?;
    for (k, v) in PARAMS {
        engine.set_param(k, v);
    }
    let mut options = DeviceOptions::default();
    options
        .set_device(device)
        .map_err(|e| Finding::new("bad device", e))?;
    engine.set_devices(options);
    let result = engine.run(FILE_NAME, text);
    drop(engine);
    let output =
        String::from_utf8_lossy(&capture.0.lock().unwrap_or_else(|e| e.into_inner())).into_owned();
    let (error, status) = match &result {
        Ok(()) => (String::new(), 0),
        Err(e) => {
            check_run_error(e, text, device)?;
            (e.render(false), e.exit_code())
        }
    };
    Ok(DeviceOutcome {
        output,
        error,
        status,
    })
}

/// An engine error is a located diagnostic (or `exit`); never acc's own failure.
fn check_run_error(e: &Error, text: &str, device: &str) -> Result<(), Finding> {
    match e {
        Error::Internal(m) => Err(Finding::new(
            format!("internal error: {}", shape(m)),
            format!("on {device}: {m}"),
        )),
        Error::Io { .. } => Err(Finding::new("I/O error", e.to_string())),
        Error::Compile {
            diagnostics,
            source,
        } => {
            // The front end alone accepted it (the caller checks first): the engine must too.
            check_diagnostics(diagnostics, source)?;
            Err(Finding::new(
                "the engine rejected what the front end accepted",
                e.render(false),
            ))
        }
        Error::Runtime { diagnostic, source } => {
            let span = diagnostic.span();
            if span == Span::default() {
                return Err(Finding::new(
                    format!(
                        "run-time error without a location: {}",
                        shape(&diagnostic.message)
                    ),
                    format!("on {device}: {}", e.render(false)),
                ));
            }
            if &*source.text != text && source.name.as_ref() == FILE_NAME {
                return Err(Finding::new(
                    "run-time error quoting another source",
                    e.render(false),
                ));
            }
            check_diagnostics(std::slice::from_ref(&**diagnostic), source)
        }
        Error::Exit(_) => Ok(()),
        // Embedding-API errors: running source text cannot produce them.
        other => Err(Finding::new("unexpected error", other.to_string())),
    }
}

/// The pipeline target: the front end (as above), then a run on each host device; a generated
/// program must give the same outcome on all of them. `phase` is told when running starts
/// (the supervisor judges a hang before it as the compiler's, after it as the program's).
pub fn pipeline(text: &str, mode: Mode, phase: &mut dyn FnMut()) -> Result<Reached, Finding> {
    let mut reached = frontend(text)?;
    if !reached.compiled {
        if mode == Mode::Generated {
            return Err(Finding::new(
                "a generated program does not compile",
                "the generator (acc-progen) wrote an invalid program",
            ));
        }
        return Ok(reached);
    }
    phase();
    let mut outcomes = Vec::new();
    for device in DEVICES {
        outcomes.push(run_on(text, device)?);
        reached.device_runs += 1;
    }
    let differ = outcomes.iter().any(|o| *o != outcomes[0]);
    if differ && mode == Mode::Generated {
        let mut detail = String::new();
        for (d, o) in DEVICES.iter().zip(&outcomes) {
            detail += &format!(
                "on {d}: exit {}\n--- output\n{}--- error\n{}",
                o.status, o.output, o.error
            );
        }
        let which: Vec<String> = outcomes
            .iter()
            .map(|o| {
                outcomes
                    .iter()
                    .position(|p| p == o)
                    .unwrap_or(0)
                    .to_string()
            })
            .collect();
        return Err(Finding::new(
            format!("devices differ ({})", which.join(",")),
            detail,
        ));
    }
    reached.differed = differ;
    Ok(reached)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_blanks_numbers_and_names() {
        assert_eq!(
            shape("`x` of 12 elements at 3"),
            "`…` of N elements at N".to_string()
        );
    }

    #[test]
    fn a_good_program_passes() {
        let r = frontend("let x = 1\nprint(x)\n").unwrap();
        assert!(r.compiled);
        let r = frontend("let x = \n").unwrap();
        assert!(!r.compiled);
    }

    #[test]
    fn a_diagnostic_outside_the_source_is_a_finding() {
        let source = SourceFile::new(FILE_NAME, "let x = 1\n");
        let d = Diagnostic::error("bad `x`", Span::new(5, 50), "here");
        let f = check_diagnostics(&[d], &source).unwrap_err();
        assert!(f.signature.starts_with("span outside the source"), "{f:?}");
        let d = Diagnostic {
            labels: vec![],
            ..Diagnostic::error("bad", Span::new(0, 1), "")
        };
        assert!(check_diagnostics(&[d], &source).is_err());
    }

    #[test]
    fn pipeline_runs_on_every_device() {
        let mut ran = false;
        let r = pipeline(
            "let a = zeros(8)\nacc parallel loop copy(a)\nfor i in 0..8 { a[i] = i }\nprint(a)\n",
            Mode::Generated,
            &mut || ran = true,
        )
        .unwrap();
        assert!(ran);
        assert_eq!(r.device_runs, DEVICES.len() as u32);
        assert!(!r.differed);
    }

    /// A program that prints what only a shared-memory device sees (no copy-back) differs
    /// between devices: a finding for a generated program, a statistic for a mutated one.
    #[test]
    fn differing_devices_are_found() {
        let text = "let a = zeros(i64, 1)\nacc enter data copyin(a)\nacc parallel loop present(a)\nfor i in 0..1 { a[i] = 7 }\nprint(a[0])\n";
        let f = pipeline(text, Mode::Generated, &mut || {}).unwrap_err();
        assert!(f.signature.starts_with("devices differ"), "{f:?}");
        let r = pipeline(text, Mode::Mutated, &mut || {}).unwrap();
        assert!(r.differed);
    }

    #[test]
    fn run_time_errors_are_located() {
        let o = run_on("let a = zeros(2)\nprint(a[5])\n", "host").unwrap();
        assert_eq!(o.status, 1);
        assert!(o.error.contains("fuzz.acc:2:"), "{}", o.error);
    }

    /// Errors of device selection and of routines that take no site point at the clause or
    /// call (found by fuzzing: they had no location).
    #[test]
    fn device_selection_errors_are_located() {
        for (text, at) in [
            (
                "let x = 1\nacc set device_num(3) device_type(host)\n",
                "fuzz.acc:2:9",
            ),
            ("let x = 1\nacc set device_type(nvidia)\n", "fuzz.acc:2:9"),
            ("let x = 1\n  acc_wait(-9)\n", "fuzz.acc:2:3"),
            ("let x = 1\nacc_wait_async(-7, 2)\n", "fuzz.acc:2:1"),
        ] {
            if text.contains("nvidia") && acc::gpu_count() > 0 {
                continue; // selecting the GPU succeeds there
            }
            let o = run_on(text, "host").unwrap();
            assert_eq!(o.status, 1, "{text}: {o:?}");
            assert!(
                o.error.contains(at),
                "{text}: expected {at} in\n{}",
                o.error
            );
        }
    }
}
