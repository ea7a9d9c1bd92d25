//! `devices(…)` (LANGUAGE.md 7.11, acc's extension) on 1, 2 and 3 emulated devices: every
//! `tests/conformance/*devices_*` script (the `directive_devices_*` ones and the
//! `error_runtime_devices_*` bounds errors) and `examples/jacobi_multi.acc`, run through
//! `acc test --device emulated` with `ACC_EMULATED_DEVICES` set, must give its expected output
//! (the output it gives without the clause) on each count.
//!
//! Only these scripts: others (`device_multi.acc`) expect the default two emulated devices.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

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
    check_device_count(devices);
    let scripts = scripts();
    assert!(
        scripts.len() > 10,
        "found only {} devices scripts",
        scripts.len()
    );
    let output = acc(devices)
        .arg("test")
        .arg("--device")
        .arg("emulated")
        .args(&scripts)
        .output()
        .expect("acc runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary = stdout.lines().last().unwrap_or_default().to_string();
    assert!(
        output.status.success(),
        "ACC_EMULATED_DEVICES={devices} acc test --device emulated failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        summary,
        format!("{} passed, 0 failed", scripts.len()),
        "ACC_EMULATED_DEVICES={devices}"
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
