//! Lowering never panics on a program that checked: the examples, the conformance scripts,
//! line-level mutations of them (deleted, duplicated and swapped lines mostly still compile, so
//! they reach the lowering in shapes nobody wrote), and later compiles of a REPL session that
//! use what earlier ones defined.

use acc_lang::lower::{lower, lower_with, Options};
use acc_lang::{check_source, Frontend, SourceFile};
use proptest::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

/// Every `.acc` file of `examples/` and `tests/conformance/`, sorted.
fn corpus() -> &'static [String] {
    static CORPUS: OnceLock<Vec<String>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        for dir in ["examples", "tests/conformance"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "acc") {
                    files.push(path);
                }
            }
        }
        files.sort();
        files
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect()
    })
}

/// Lower `text` if it checks; the IR text (empty when it does not check).
fn lowers(text: &str) -> String {
    let source = SourceFile::new("smoke.acc", text);
    match check_source(&source) {
        Ok(compiled) => {
            let plain = lower(&compiled.hir, &compiled.analysis).to_string();
            let repl = lower_with(
                &compiled.hir,
                &compiled.analysis,
                Options {
                    print_values: true,
                    ..Options::default()
                },
            );
            assert!(!plain.is_empty());
            repl.to_string()
        }
        Err(_) => String::new(),
    }
}

#[test]
fn corpus_lowers() {
    assert!(
        !corpus().is_empty(),
        "no examples or conformance scripts found"
    );
    let mut lowered = 0;
    for text in corpus() {
        if !lowers(text).is_empty() {
            lowered += 1;
        }
    }
    assert!(
        lowered > corpus().len() / 2,
        "only {lowered} scripts checked"
    );
}

/// One line edit, positions as fractions (1/10000) of the line count.
#[derive(Clone, Debug)]
enum Edit {
    Delete(u32),
    Duplicate(u32, u32),
    Swap(u32, u32),
}

fn edit() -> impl Strategy<Value = Edit> {
    let at = 0..10_000u32;
    prop_oneof![
        at.clone().prop_map(Edit::Delete),
        (at.clone(), at.clone()).prop_map(|(a, b)| Edit::Duplicate(a, b)),
        (at.clone(), at).prop_map(|(a, b)| Edit::Swap(a, b)),
    ]
}

fn apply(lines: &mut Vec<String>, e: &Edit) {
    if lines.is_empty() {
        return;
    }
    let at = |f: u32| lines.len() * f as usize / 10_000;
    match *e {
        Edit::Delete(a) => {
            let i = at(a);
            lines.remove(i);
        }
        Edit::Duplicate(a, b) => {
            let (i, j) = (at(a), at(b));
            let line = lines[i].clone();
            lines.insert(j, line);
        }
        Edit::Swap(a, b) => {
            let (i, j) = (at(a), at(b));
            lines.swap(i, j);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn mutated_scripts_lower(pick in 0..10_000usize, edits in prop::collection::vec(edit(), 1..4)) {
        let corpus = corpus();
        let text = &corpus[pick % corpus.len()];
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        for e in &edits {
            apply(&mut lines, e);
        }
        lowers(&(lines.join("\n") + "\n"));
    }

    /// Two scripts in one session: the second may call the first's functions and read its
    /// globals, which lowering reaches by id.
    #[test]
    fn later_compiles_lower(a in 0..10_000usize, b in 0..10_000usize) {
        let corpus = corpus();
        let mut frontend = Frontend::new();
        for text in [&corpus[a % corpus.len()], &corpus[b % corpus.len()]] {
            if let Ok(compiled) = frontend.compile(&SourceFile::new("line.acc", text.as_str())) {
                lower(&compiled.hir, &compiled.analysis).to_string();
            }
        }
    }
}

#[test]
fn a_session_uses_earlier_definitions() {
    let mut frontend = Frontend::new();
    let first = "let g = zeros(4)\nlet k = 2\nfn twice(x: f64) -> f64 { return 2.0 * x }\n";
    let second = "acc parallel loop\nfor i in 0..len(g) { g[i] = twice(i * k) }\nprint(g)\n";
    for text in [first, second] {
        let compiled = frontend
            .compile(&SourceFile::new("line.acc", text))
            .unwrap_or_else(|e| panic!("{e:?}"));
        let ir = lower(&compiled.hir, &compiled.analysis).to_string();
        assert!(!ir.is_empty());
        if text == second {
            // Earlier globals are region parameters; the earlier function is called by id.
            assert!(ir.contains("launch region 0"), "{ir}");
            assert!(ir.contains("call fn"), "{ir}");
        }
    }
}
