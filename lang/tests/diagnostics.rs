//! Snapshot tests of compile-error diagnostics: what a user sees for each mistake.
//!
//! Every `tests/diagnostics/*.acc` file is one case: a small script whose first line is a comment
//! saying what mistake it makes. The case must fail to compile; its diagnostics, rendered as
//! `acc check` prints them without colour, are compared with `tests/snapshots/diagnostics__<case>.snap`.
//!
//! Review new or changed snapshots with `cargo insta review`, or write them with
//! `INSTA_UPDATE=always cargo test -p acc-lang --test diagnostics` and read the `.snap` files.
//! `DIAG_CASE=text` runs only the cases whose name contains `text`.
//!
//! This walks the folder itself rather than using `insta::glob!`, which needs insta's `glob`
//! feature (and its `globset`/`walkdir` dependencies); the snapshots are the same either way.

mod cases;

use acc_lang::diag::render_plain;
use acc_lang::{check_source, SourceFile};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// The folder of cases, relative to the crate root: snapshots show this path, never a machine's.
const CASE_DIR: &str = "tests/diagnostics";

/// Compile one case and compare its rendered diagnostics with the snapshot. `Err` says why the
/// case failed when that is not a snapshot mismatch (insta reports those itself).
fn run_case(path: &Path) -> Result<(), String> {
    let cases::Case { name, text, what } = cases::read_case(path, "what mistake the case makes")?;
    let source = SourceFile::new(format!("{CASE_DIR}/{name}.acc"), text.as_str());
    let diags = match catch_unwind(AssertUnwindSafe(|| check_source(&source))) {
        Ok(Err(diags)) => diags,
        Ok(Ok(_)) => return Err("compiled without an error".into()),
        Err(_) => return Err("the compiler panicked".into()),
    };
    let rendered = render_plain(&diags, &source);

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
fn compile_errors_match_snapshots() {
    let filter = std::env::var("DIAG_CASE").unwrap_or_default();
    let cases: Vec<PathBuf> = cases::case_files(CASE_DIR)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(filter.as_str()))
        .collect();
    assert!(!cases.is_empty(), "no case matches DIAG_CASE={filter:?}");

    let failures: Vec<String> = cases
        .iter()
        .filter_map(|path| {
            run_case(path).err().map(|why| {
                let file = path.file_name().unwrap_or_default().to_string_lossy();
                format!("  {file}: {why}")
            })
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} diagnostic cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
