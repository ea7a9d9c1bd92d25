//! Memory over many runs of one engine. A file of its own: the live-array counter is global to
//! the process, so no other test may allocate arrays while this one counts.

use acc::Engine;
use acc_runtime::host::SharedBuffer;

/// Resident memory of this process, in bytes.
fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

#[test]
fn running_a_script_10000_times_leaves_memory_flat() {
    let out = SharedBuffer::new();
    let mut e = Engine::with_output(Box::new(out.clone())).expect("engine");
    let script = "let a = fill(1.0, 1000)\nlet s = 0.0\nfor i in 0..len(a) { s += a[i] }\n\
                  fn scaled(v: f64[], k: f64) -> f64[] { let b = copy(v)\n for i in 0..len(b) { b[i] *= k }\n return b }\n\
                  let t = scaled(a, 2.0)\nassert(sum(t) == 2.0 * s)\n";
    for _ in 0..1_000 {
        e.run("loop.acc", script).unwrap();
    }
    let arrays = acc_runtime::array::live_arrays();
    let before = rss();
    for _ in 0..10_000 {
        e.run("loop.acc", script).unwrap();
    }
    let grown = rss().saturating_sub(before);
    assert_eq!(acc_runtime::array::live_arrays(), arrays, "arrays leaked");
    assert!(grown < 4 << 20, "resident memory grew by {grown} bytes");
    assert_eq!(out.contents(), "");
}
