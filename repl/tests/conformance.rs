//! The conformance suite (`tests/conformance/` at the workspace root) and the examples (each
//! with its expected output), run through `acc test` exactly as a user would run them, on every
//! device, and the `devices(…)` scripts on 1, 2 and 3 emulated devices.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `command` (an `acc test …`), which must pass every script; returns its summary line
/// (`N passed, 0 failed`, perhaps with `, N skipped`). `what` names the run in a failure.
fn passes(mut command: Command, what: &str) -> String {
    let output = command.output().expect("acc runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary = stdout.lines().last().unwrap_or_default().to_string();
    assert!(
        output.status.success(),
        "{what} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // `, 1 skipped` follows in a build without MPI: examples/mpi/ needs it.
    assert!(summary.contains(" passed, 0 failed"), "{what}: {summary}");
    summary
}

/// `acc test --device DEVICE tests/conformance examples tests/progen-regressions` passes every
/// script.
fn suite_passes_on(device: &str) {
    let root = root();
    let mut command = Command::new(env!("CARGO_BIN_EXE_acc"));
    command
        .arg("test")
        .arg("--device")
        .arg(device)
        .arg(root.join("tests/conformance"))
        .arg(root.join("examples"))
        .arg(root.join("tests/progen-regressions"));
    passes(command, &format!("acc test --device {device}"));
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

// ---- `devices(…)` (LANGUAGE.md 7.11) on 1, 2 and 3 emulated devices -------------------------
//
// Every `tests/conformance/*devices_*` script (the `directive_devices_*` ones and the
// `error_runtime_devices_*` bounds errors) and `examples/jacobi_multi.acc`, run with
// `ACC_EMULATED_DEVICES` set, must give its expected output (the output it gives without the
// clause) on each count. Only these scripts: others (`device_multi.acc`) expect the default two
// emulated devices.

/// The scripts under test, sorted.
fn scripts() -> Vec<PathBuf> {
    let dir = root().join("tests/conformance");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/conformance is readable")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            p.extension().is_some_and(|e| e == "acc")
                && (name.starts_with("directive_devices_")
                    || name.starts_with("error_runtime_devices_"))
        })
        .collect();
    found.sort();
    found.push(root().join("examples/jacobi_multi.acc"));
    found
}

/// `acc` with `ACC_EMULATED_DEVICES=devices` (and no other device selection from the
/// environment).
fn acc(devices: usize) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_acc"));
    command
        .env("ACC_EMULATED_DEVICES", devices.to_string())
        .env_remove("ACC_DEVICE_TYPE")
        .env_remove("ACC_DEVICE_NUM");
    command
}

/// The emulated device type reports `devices` devices under the variable (else the runs below
/// would prove nothing about that count).
fn check_device_count(devices: usize) {
    let dir =
        std::env::temp_dir().join(format!("acc-devices-test-{}-{devices}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let probe = dir.join("count.acc");
    std::fs::write(&probe, "print(acc_get_num_devices(acc_device_emulated))\n")
        .expect("the probe is written");
    let output = acc(devices)
        .arg("run")
        .arg(&probe)
        .arg("--device")
        .arg("emulated")
        .output()
        .expect("acc runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        devices.to_string(),
        "ACC_EMULATED_DEVICES={devices}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn devices_scripts_pass_on(devices: usize) {
    devices_scripts_pass_with(devices, "auto");
}

/// The same with `ACC_EDGES_FIRST=edges_first` (LANGUAGE.md 7.11, "Edges first").
fn devices_scripts_pass_with(devices: usize, edges_first: &str) {
    check_device_count(devices);
    let scripts = scripts();
    assert!(
        scripts.len() > 10,
        "found only {} devices scripts",
        scripts.len()
    );
    let mut command = acc(devices);
    command
        .env("ACC_EDGES_FIRST", edges_first)
        .arg("test")
        .arg("--device")
        .arg("emulated")
        .args(&scripts);
    let what = format!(
        "ACC_EMULATED_DEVICES={devices} ACC_EDGES_FIRST={edges_first} acc test --device emulated"
    );
    assert_eq!(
        passes(command, &what),
        format!("{} passed, 0 failed", scripts.len()),
        "{what}"
    );
}

#[test]
fn devices_scripts_pass_on_one_emulated_device() {
    devices_scripts_pass_on(1);
}

#[test]
fn devices_scripts_pass_on_two_emulated_devices() {
    devices_scripts_pass_on(2);
}

#[test]
fn devices_scripts_pass_on_three_emulated_devices() {
    devices_scripts_pass_on(3);
}

/// Every part that sends halo rows runs the iterations writing them first (emulated devices
/// do as GPUs do, so that the cut is tested here; under `auto` these small arrays never take
/// that path).
#[test]
fn devices_scripts_pass_on_two_and_three_emulated_devices_with_edges_first() {
    devices_scripts_pass_with(2, "on");
    devices_scripts_pass_with(3, "on");
}
