//! `--info`'s feedback (LANGUAGE.md 8) on every example and conformance script, as one
//! snapshot: a change in any schedule, reason, reduction or data clause the compiler reports
//! shows up here for review. (That the schedules give the sequential results is the
//! conformance suite's job: every script runs on every device against its `.out` file.)

use acc_lang::analysis::feedback;
use acc_lang::{check_source, SourceFile};
use std::path::Path;

#[test]
fn feedback_on_the_examples_and_the_conformance_suite() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["examples", "tests/conformance"] {
        for entry in std::fs::read_dir(root.join(dir))
            .expect("readable")
            .flatten()
        {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "acc") {
                files.push(format!("{dir}/{}", entry.file_name().to_string_lossy()));
            }
        }
    }
    files.sort();
    let mut all = String::new();
    for name in files {
        let text = std::fs::read_to_string(root.join(&name)).expect("readable");
        let source = SourceFile::new(name.as_str(), text.as_str());
        // Scripts that test compile errors have no feedback.
        if let Ok(compiled) = check_source(&source) {
            all += &feedback(&source, &compiled.hir, &compiled.analysis);
        }
    }
    insta::assert_snapshot!(all);
}
