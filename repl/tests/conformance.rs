//! The conformance suite (`tests/conformance/` at the workspace root) and the examples (each
//! with its expected output), run through `acc test` exactly as a user would run them.

use std::path::Path;
use std::process::Command;

/// `acc test --device DEVICE tests/conformance examples tests/progen-regressions` passes every
/// script.
fn suite_passes_on(device: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let output = Command::new(env!("CARGO_BIN_EXE_acc"))
        .arg("test")
        .arg("--device")
        .arg(device)
        .arg(root.join("tests/conformance"))
        .arg(root.join("examples"))
        .arg(root.join("tests/progen-regressions"))
        .output()
        .expect("acc runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary = stdout.lines().last().unwrap_or_default().to_string();
    assert!(
        output.status.success(),
        "acc test --device {device} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(summary.ends_with(" passed, 0 failed"), "{summary}");
}

#[test]
fn conformance_suite_passes_on_the_host() {
    suite_passes_on("host");
}

#[test]
fn conformance_suite_passes_on_multicore() {
    suite_passes_on("multicore");
}

#[test]
fn conformance_suite_passes_on_an_emulated_device() {
    suite_passes_on("emulated");
}

#[test]
fn conformance_suite_passes_on_the_second_emulated_device() {
    suite_passes_on("emulated:1");
}
