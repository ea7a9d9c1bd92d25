//! The atomic stress scripts (`tests/conformance/directive_atomic_stress_*.acc`, generated with
//! their expected output by `tests/conformance/oracle/atomic_stress.py`) pass 50 runs in a row
//! on the devices whose gangs run at the same time, with more gang threads than this machine
//! has cores, so that a lost update or a duplicated ticket would show.

use std::path::Path;
use std::process::Command;

const RUNS: usize = 50;

fn stress_scripts() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance");
    let mut scripts: Vec<_> = std::fs::read_dir(&dir)
        .expect("the conformance folder")
        .map(|e| e.expect("an entry").path())
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name.starts_with("directive_atomic_stress_") && name.ends_with(".acc")
        })
        .collect();
    scripts.sort();
    assert_eq!(scripts.len(), 4, "one stress script per atomic type");
    scripts
}

fn passes_repeatedly(device: &str) {
    let scripts = stress_scripts();
    for run in 0..RUNS {
        let output = Command::new(env!("CARGO_BIN_EXE_acc"))
            .arg("test")
            .arg("--device")
            .arg(device)
            .args(&scripts)
            .env("ACC_NUM_CORES", "8")
            .output()
            .expect("acc runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.trim_end().ends_with("4 passed, 0 failed"),
            "run {run} on {device}:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn atomic_stress_passes_50_runs_on_multicore() {
    passes_repeatedly("multicore");
}

#[test]
fn atomic_stress_passes_50_runs_on_emulated() {
    passes_repeatedly("emulated");
}
