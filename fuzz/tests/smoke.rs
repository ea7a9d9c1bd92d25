//! CI's smoke run of both fuzzing targets (a fixed seed, a few hundred executions: seconds in
//! a debug build), and proof that the harness sees each kind of failure: a fault planted in the
//! worker (`--plant`) must come back as a finding, saved, with a failing exit status.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("acc-fuzz-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn fuzz(args: &[&str], out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_acc-fuzz"))
        .arg("run")
        .args(args)
        .arg("--out")
        .arg(out)
        .args(["--progress", "0"])
        .output()
        .expect("run acc-fuzz")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn saved(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| {
        d.filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "acc"))
        })
        .count()
    })
}

#[test]
fn frontend_smoke() {
    let out = out_dir("frontend");
    let o = fuzz(&["frontend", "--seed", "1", "--iterations", "300"], &out);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("Frontend: 300 executions"), "{t}");
    assert!(t.contains(" 0 findings"), "{t}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn pipeline_smoke() {
    let out = out_dir("pipeline");
    let o = fuzz(&["pipeline", "--seed", "1", "--iterations", "40"], &out);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("Pipeline: 40 executions"), "{t}");
    assert!(t.contains(" 0 findings"), "{t}");
    // Most inputs get as far as running on the three devices.
    let runs: u64 = t
        .split(" device runs")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(runs >= 40, "{t}");
    let _ = std::fs::remove_dir_all(&out);
}

/// A corpus of one program naming PLANTED, which the worker fails on as `--plant` says.
fn planted(kind: &str, dir: &str, signature: &str) {
    let out = out_dir(kind);
    let corpus = out.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("p.acc"), "let PLANTED = 1\nprint(PLANTED)\n").unwrap();
    let o = fuzz(
        &[
            "frontend",
            "--iterations",
            if kind == "hang" { "2" } else { "4" },
            // A hang is confirmed with five times the limit: keep both short.
            "--timeout",
            if kind == "hang" { "0.4" } else { "1" },
            "--plant",
            kind,
            "--corpus",
            corpus.to_str().unwrap(),
        ],
        &out,
    );
    let t = text(&o);
    assert!(!o.status.success(), "a planted {kind} went unnoticed:\n{t}");
    assert!(t.contains(signature), "expected `{signature}` in:\n{t}");
    assert!(saved(&out.join(dir)) >= 1, "nothing saved in {dir}/:\n{t}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_planted_panic_is_found() {
    planted("panic", "findings", "panic at fuzz/src/worker.rs");
}

#[test]
fn a_planted_abort_is_found() {
    planted("abort", "crashes", "crash while compiling: signal 6");
}

#[test]
fn a_planted_stack_overflow_is_found() {
    planted(
        "overflow",
        "crashes",
        "crash while compiling: stack overflow",
    );
}

#[test]
fn a_planted_hang_is_found() {
    planted("hang", "hangs", "hang while compiling");
}
