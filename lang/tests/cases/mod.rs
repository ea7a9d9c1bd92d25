//! The folder-of-scripts harness shared by the snapshot tests (`diagnostics.rs`, `warnings.rs`):
//! each case is one `.acc` file whose first line is a `//` comment saying what it shows.

use std::path::{Path, PathBuf};

/// One case: its name (the file stem), its text and what its first line says it shows.
pub struct Case {
    pub name: String,
    pub text: String,
    pub what: String,
}

/// Every `.acc` file of `dir` (relative to the crate root), sorted so that failures are listed
/// in a stable order.
pub fn case_files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|ext| ext == "acc"))
        .collect();
    files.sort();
    files
}

/// Reads a case; `Err` says why the file is not one (`first_line` says what its first comment
/// must tell).
pub fn read_case(path: &Path, first_line: &str) -> Result<Case, String> {
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or("file name is not UTF-8")?
        .to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let what = text
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("//"))
        .map(str::trim)
        .ok_or(format!(
            "the first line must be a `//` comment saying {first_line}"
        ))?
        .to_string();
    Ok(Case { name, text, what })
}
