//! The porting warnings (LANGUAGE.md 8), one script per case, as a user sees them.
//!
//! Every `tests/warnings/*.acc` file is a program that compiles; its first line is a comment
//! saying what it shows. A case named `*_silenced` makes its intent explicit and must compile
//! without a warning; every other case must give at least one, and its warnings, rendered as
//! `acc check` prints them without colour, are compared with
//! `tests/snapshots/warnings__<case>.snap`. Each warning has a `_silenced` twin that says what
//! silences it.
//!
//! Write new snapshots with `INSTA_UPDATE=always cargo test -p acc-lang --test warnings` and
//! read them as a user would. `WARN_CASE=text` runs only the cases whose name contains `text`.

mod cases;

use acc_lang::diag::render_plain;
use acc_lang::{check_source, SourceFile};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// The folder of cases, relative to the crate root: snapshots show this path.
const CASE_DIR: &str = "tests/warnings";

fn run_case(path: &Path) -> Result<(), String> {
    let cases::Case { name, text, what } = cases::read_case(path, "what the case shows")?;
    let source = SourceFile::new(format!("{CASE_DIR}/{name}.acc"), text.as_str());
    let warnings = match catch_unwind(AssertUnwindSafe(|| check_source(&source))) {
        Ok(Ok(compiled)) => compiled.warnings,
        Ok(Err(diags)) => {
            return Err(format!(
                "does not compile:\n{}",
                render_plain(&diags, &source)
            ))
        }
        Err(_) => return Err("the compiler panicked".into()),
    };
    let rendered = render_plain(&warnings, &source);
    if name.ends_with("_silenced") {
        return if warnings.is_empty() {
            Ok(())
        } else {
            Err(format!("expected no warning, got:\n{rendered}"))
        };
    }
    if warnings.is_empty() {
        return Err("expected a warning, got none".into());
    }
    let mut settings = insta::Settings::clone_current();
    settings.set_input_file(path);
    settings.set_description(what);
    settings.set_omit_expression(true);
    settings.bind(|| {
        catch_unwind(AssertUnwindSafe(|| insta::assert_snapshot!(name, rendered)))
            .map_err(|_| "snapshot differs (see the diff above)".to_string())
    })
}

#[test]
fn porting_warnings_match_snapshots_and_are_silenced_by_intent() {
    let filter = std::env::var("WARN_CASE").unwrap_or_default();
    let cases: Vec<PathBuf> = cases::case_files(CASE_DIR)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(filter.as_str()))
        .collect();
    assert!(!cases.is_empty(), "no case matches WARN_CASE={filter:?}");
    // Every warning case has its silenced twin.
    let names: Vec<String> = cases
        .iter()
        .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(str::to_string))
        .collect();
    let mut failures: Vec<String> = names
        .iter()
        .filter(|n| !n.ends_with("_silenced") && filter.is_empty())
        .filter(|n| !names.contains(&format!("{n}_silenced")))
        .map(|n| format!("  {n}: no `{n}_silenced.acc` beside it"))
        .collect();
    failures.extend(cases.iter().filter_map(|path| {
        run_case(path).err().map(|why| {
            let file = path.file_name().unwrap_or_default().to_string_lossy();
            format!("  {file}: {why}")
        })
    }));
    assert!(
        failures.is_empty(),
        "{} of {} warning cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
