//! Generate, run, compare, shrink, save: what the binary and the cargo test both do per seed.

use crate::gen::{generate, Config};
use crate::run::{Outcome, Runner, Verdict};
use crate::shrink::shrink;
use crate::tree::Program;
use std::fmt::Write;
use std::path::Path;

/// A program whose devices disagreed, with its shrunk form.
pub struct Mismatch {
    pub seed: u64,
    pub original: Program,
    pub verdict: Verdict,
    pub minimal: Program,
    pub outcomes: Vec<Outcome>,
    /// The original did not give the same verdict on every rerun (a race or a timing effect).
    pub flaky: bool,
}

/// What one seed gave.
pub enum SeedResult {
    Same,
    Invalid(Program, Vec<Outcome>),
    Differ(Box<Mismatch>),
}

/// Runs the program of `seed`; shrinks it (up to `budget` candidates, 0 for none) if the
/// devices disagree.
pub fn check_seed(runner: &Runner, cfg: &Config, seed: u64, budget: usize) -> SeedResult {
    let program = generate(seed, cfg);
    let outcomes = runner.run(&program.source());
    let verdict = Runner::verdict(&outcomes);
    match verdict {
        Verdict::Same => SeedResult::Same,
        Verdict::Invalid => SeedResult::Invalid(program, outcomes),
        Verdict::Differ(_) => {
            let flaky = (0..2).any(|_| Runner::verdict(&runner.run(&program.source())) != verdict);
            let minimal = if budget == 0 || flaky {
                program.clone()
            } else {
                shrink(&program, budget, |cand| {
                    Runner::verdict(&runner.run(&cand.source())) == verdict
                })
            };
            let outcomes = runner.run(&minimal.source());
            SeedResult::Differ(Box::new(Mismatch {
                seed,
                original: program,
                verdict,
                minimal,
                outcomes,
                flaky,
            }))
        }
    }
}

/// A human-readable account of a mismatch: the minimal program and every device's outcome.
pub fn report(runner: &Runner, m: &Mismatch) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "=== seed {} differs{}",
        m.seed,
        if m.flaky { " (flaky: not shrunk)" } else { "" }
    );
    let _ = writeln!(s, "{}", m.minimal.source());
    for (d, o) in runner.devices.iter().zip(&m.outcomes) {
        let _ = writeln!(s, "--- on {d}: {}", o.describe());
    }
    s
}

/// Saves the minimal program as a conformance-style regression test in `dir`:
/// `progen_SEED.acc` (its comment says which devices printed what) and `progen_SEED.out`, the
/// output of the first device (the reference, normally `host`).
pub fn save(runner: &Runner, m: &Mismatch, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let reference = &m.outcomes[0];
    let mut text = String::new();
    if reference.status != Some(0) {
        let first = reference
            .stderr
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        let msg = first.trim().trim_start_matches('×').trim();
        let _ = writeln!(text, "// expect-error: {msg}");
    }
    let _ = writeln!(
        text,
        "// acc-progen seed {}: the devices disagree; the expected output is {}'s.",
        m.seed, runner.devices[0]
    );
    for (d, o) in runner.devices.iter().zip(&m.outcomes) {
        let _ = writeln!(text, "// on {d}:");
        for l in o.describe().lines() {
            let _ = writeln!(text, "//   {l}");
        }
    }
    for l in m
        .minimal
        .source()
        .lines()
        .filter(|l| !l.starts_with("// acc-progen seed"))
    {
        let _ = writeln!(text, "{l}");
    }
    let base = dir.join(format!("progen_{}", m.seed));
    std::fs::write(base.with_extension("acc"), text)?;
    if reference.status == Some(0) {
        std::fs::write(base.with_extension("out"), &reference.stdout)?;
    }
    Ok(())
}
