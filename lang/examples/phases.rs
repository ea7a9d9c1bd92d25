//! Time each front-end pass on one file (wall and CPU), with the process's resident memory
//! after each: `cargo run --release -p acc-lang --example phases -- FILE.acc` (docs/ARCHITECTURE.md,
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
        let t = (Instant::now(), cpu_seconds());
        let lexed = lexer::lex(&text);
        report("lex", t, &format!("{} tokens", lexed.tokens.len()));
        let t = (Instant::now(), cpu_seconds());
        let (program, diags) = parser::parse(&lexed.tokens, text.len());
        report("parse", t, &format!("{} errors", diags.len()));
        let t = (Instant::now(), cpu_seconds());
        let diags = validate::validate(&program);
        report("validate", t, &format!("{} diagnostics", diags.len()));
        let t = (Instant::now(), cpu_seconds());
        let mut checker = check::Checker::default();
        let checked = checker.check(&program);
        let errors = checked.as_ref().err().map_or(0, Vec::len);
        report("check", t, &format!("{errors} errors"));
        if let Err(diags) = &checked {
            let t = (Instant::now(), cpu_seconds());
            let source = acc_lang::SourceFile::new(path.as_str(), text.as_str());
            let rendered = acc_lang::diag::render_plain(diags, &source);
            report("render", t, &format!("{} bytes", rendered.len()));
        }
        if let Ok((hir, _)) = &checked {
            let t = (Instant::now(), cpu_seconds());
            let (analysis, diags) = analysis::analyze(hir);
            report("analyze", t, &format!("{} diagnostics", diags.len()));
            let t = (Instant::now(), cpu_seconds());
            drop(analysis);
            report("free analysis", t, "");
        }
        let t = (Instant::now(), cpu_seconds());
        drop((checked, checker));
        report("free typed program", t, "");
        let t = (Instant::now(), cpu_seconds());
        drop(program);
        report("free syntax tree", t, "");
    });
}

/// The calling thread's user and system time so far, in seconds (`/proc/thread-self/stat`, in
/// clock ticks of 10 ms): on a busy machine, wall time also counts other processes' time.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/thread-self/stat") else {
        return 0.0;
    };
    // The fields after the command name: state is the first, utime the 12th, stime the 13th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (ticks(11) + ticks(12)) as f64 / 100.0
}

fn report(pass: &str, start: (Instant, f64), what: &str) {
    let (start, cpu_start) = start;
    let rss = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS"))
                .map(|l| l.trim_start_matches("VmRSS:").trim().to_string())
        })
        .unwrap_or_default();
    eprintln!(
        "{pass:<20} {:>7.3} s  cpu {:>7.3} s  rss {rss:>12}  {what}",
        start.elapsed().as_secs_f64(),
        cpu_seconds() - cpu_start,
    );
}
