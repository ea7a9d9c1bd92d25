//! Time each front-end pass on one file, with the process's resident memory after each:
//! `cargo run --release -p acc-lang --example phases -- FILE.acc` (docs/ARCHITECTURE.md,
//! "Front-end scale"; large inputs come from `bench/frontend/gen.py`).

use acc_lang::{analysis, check, lexer, parser, validate, with_deep_stack};
use std::time::Instant;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: phases FILE.acc");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot read {path}: {e}");
            std::process::exit(2);
        }
    };
    with_deep_stack(|| {
        let t = Instant::now();
        let lexed = lexer::lex(&text);
        report("lex", t, &format!("{} tokens", lexed.tokens.len()));
        let t = Instant::now();
        let (program, diags) = parser::parse(&lexed.tokens, text.len());
        report("parse", t, &format!("{} errors", diags.len()));
        let t = Instant::now();
        let diags = validate::validate(&program);
        report("validate", t, &format!("{} diagnostics", diags.len()));
        let t = Instant::now();
        let mut checker = check::Checker::default();
        let checked = checker.check(&program);
        let errors = checked.as_ref().err().map_or(0, Vec::len);
        report("check", t, &format!("{errors} errors"));
        if let Ok((hir, _)) = &checked {
            let t = Instant::now();
            let (analysis, diags) = analysis::analyze(hir);
            report("analyze", t, &format!("{} diagnostics", diags.len()));
            let t = Instant::now();
            drop(analysis);
            report("free analysis", t, "");
        }
        let t = Instant::now();
        drop((checked, checker));
        report("free typed program", t, "");
        let t = Instant::now();
        drop(program);
        report("free syntax tree", t, "");
    });
}

fn report(pass: &str, start: Instant, what: &str) {
    let rss = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS"))
                .map(|l| l.trim_start_matches("VmRSS:").trim().to_string())
        })
        .unwrap_or_default();
    eprintln!(
        "{pass:<20} {:>9.3} s  rss {rss:>12}  {what}",
        start.elapsed().as_secs_f64()
    );
}
