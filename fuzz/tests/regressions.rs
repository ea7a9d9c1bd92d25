//! Every fuzzing finding is a regression test: the inputs in `tests/fuzz-regressions/` run
//! through the target that found them, in this process, and must pass every oracle within a
//! time bound. The first line names the target: `// fuzz-regression: frontend`, `pipeline`
//! (a mutated program) or `pipeline generated` (devices must agree).

use acc_fuzz::mutate::Mode;
use acc_fuzz::worker;
use std::time::{Duration, Instant};

/// Generous for a debug build on a loaded machine; the findings took tens of seconds.
const BOUND: Duration = Duration::from_secs(10);

#[test]
fn fuzz_regressions_pass() {
    let dir = acc_fuzz::corpus::repo_root().join("tests/fuzz-regressions");
    let corpus = acc_fuzz::corpus::Corpus::load(std::slice::from_ref(&dir));
    assert!(!corpus.is_empty(), "no inputs in {}", dir.display());
    for (name, text) in &corpus.files {
        let header = text.lines().next().unwrap_or("");
        let mode = match header.strip_prefix("// fuzz-regression: ").map(str::trim) {
            Some(h) if h.starts_with("frontend") => Mode::Frontend,
            Some(h) if h.starts_with("pipeline generated") => Mode::Generated,
            Some(h) if h.starts_with("pipeline") => Mode::Mutated,
            _ => panic!("{name}: the first line must be `// fuzz-regression: TARGET …`"),
        };
        let start = Instant::now();
        let result = worker::execute(mode, text, None, &mut || {});
        let took = start.elapsed();
        if let Err(f) = result {
            panic!("{name}: {}\n{}", f.signature, f.detail);
        }
        assert!(took < BOUND, "{name}: took {took:?}");
    }
}
