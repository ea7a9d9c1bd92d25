//! Resident memory of the process, shared by the memory tests and `benches/distinct_runs.rs`
//! (each includes this file with `#[path]`).

/// Resident memory of this process, in bytes (Linux; 0 where `/proc` is missing).
pub fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}
