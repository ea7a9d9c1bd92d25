//! `--autocompare` (LANGUAGE.md §8) through the `acc` command on the emulated device: the
//! programs of `tests/autocompare/` each plant one mistake the device run makes and the host
//! run does not, and every example runs clean.
//!
//! The expected values are worked out by hand in each program's comments: the host run uses
//! one gang (no `num_gangs` for the host), the emulated device the four of
//! `device_type(nvidia) num_gangs(4)`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// Runs `acc --device emulated --autocompare SCRIPT` (in a scratch folder, for the files
/// examples write) with `env` set: (success, stdout, stderr).
fn run(script: &Path, extra: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let dir = std::env::temp_dir().join(format!(
        "acc-autocompare-{}-{}",
        std::process::id(),
        script.file_stem().unwrap().to_string_lossy()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_acc"))
        .current_dir(&dir)
        .args(["--device", "emulated", "--autocompare"])
        .args(extra)
        .arg(script)
        .env_remove("ACC_DEVICE_TYPE")
        .env_remove("ACC_AUTOCOMPARE_LIMIT")
        .envs(env.iter().copied())
        .output()
        .expect("acc runs");
    let _ = std::fs::remove_dir_all(&dir);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn program(name: &str) -> PathBuf {
    root().join("tests/autocompare").join(name)
}

/// The report lines (those of `--autocompare`) of a run's standard error.
fn reports(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("autocompare:"))
        .collect()
}

#[test]
fn a_stale_device_copy_is_reported_and_the_run_goes_on_with_the_device_values() {
    let script = program("stale.acc");
    let (ok, stdout, stderr) = run(&script, &[], &[]);
    assert!(ok, "{stderr}");
    // The device computes 3 × 1 (the `b` it was given), the host 3 × 2.
    let at = format!("parallel loop @ {}:13", script.display());
    let lines = reports(&stderr);
    assert_eq!(lines.len(), 6, "{stderr}");
    assert_eq!(
        lines[0],
        format!("autocompare: {at}: `a` differs in 8 of 8 elements")
    );
    for (i, line) in lines[1..].iter().enumerate() {
        assert_eq!(
            *line,
            format!("autocompare:   a[{i}]: device 3.0, host 6.0, relative error 5.000e-1")
        );
    }
    assert_eq!(stdout, "3.0\n");
}

#[test]
fn a_race_on_a_copy_scalar_is_reported() {
    let script = program("race.acc");
    let (ok, stdout, stderr) = run(&script, &[], &[]);
    assert!(ok, "{stderr}");
    // One gang on the host counts 1; the device's four gangs count more (how many depends on
    // how their updates interleave, which is the race).
    let lines = reports(&stderr);
    assert_eq!(lines.len(), 1, "{stderr}");
    let head = format!(
        "autocompare: parallel @ {}:5: `hits` differs: device ",
        script.display()
    );
    assert!(lines[0].starts_with(&head), "{stderr}");
    assert!(lines[0].contains(", host 1, relative error "), "{stderr}");
    assert_eq!(stdout, "true\n");
}

#[test]
fn a_sum_without_its_reduction_clause_is_reported() {
    let script = program("reduction.acc");
    let (ok, stdout, stderr) = run(&script, &[], &[]);
    assert!(ok, "{stderr}");
    // Host: one gang sums all 1000 ones. Device: each of 4 gangs sums its 250 and stores 250.
    let at = format!("parallel @ {}:10", script.display());
    assert_eq!(
        reports(&stderr),
        [
            format!("autocompare: {at}: `total` differs in 1 of 1 elements"),
            "autocompare:   total[0]: device 250.0, host 1000.0, relative error 7.500e-1".into(),
        ],
        "{stderr}"
    );
    assert_eq!(stdout, "250.0\n");
}

#[test]
fn tolerances_and_the_limit_apply() {
    // 3 against 6 is a relative error of 0.5: inside a tolerance of 0.5, outside 0.4.
    let stale = program("stale.acc");
    let (ok, _, stderr) = run(&stale, &["--rel-tol", "0.5"], &[]);
    assert!(ok && reports(&stderr).is_empty(), "{stderr}");
    let (ok, _, stderr) = run(&stale, &["--abs-tol", "3"], &[]);
    assert!(ok && reports(&stderr).is_empty(), "{stderr}");
    let (ok, _, stderr) = run(&stale, &["--rel-tol", "0.4"], &[]);
    assert!(ok && reports(&stderr).len() == 6, "{stderr}");
    // A limit of 0 reports nothing; ACC_AUTOCOMPARE=1 is the option.
    let (ok, _, stderr) = run(&stale, &[], &[("ACC_AUTOCOMPARE_LIMIT", "0")]);
    assert!(ok && reports(&stderr).is_empty(), "{stderr}");
    let out = Command::new(env!("CARGO_BIN_EXE_acc"))
        .args(["--device", "emulated"])
        .arg(&stale)
        .env("ACC_AUTOCOMPARE", "1")
        .env_remove("ACC_AUTOCOMPARE_LIMIT")
        .output()
        .expect("acc runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(reports(&stderr).len(), 6, "{stderr}");
}

/// What an example may legitimately report: histogram.acc's `acc atomic capture` hands out
/// list slots in the order the gangs get there (its comments say so), which a host run in one
/// gang need not match.
const TIMING_DEPENDENT: &[(&str, &str)] = &[("histogram.acc", "`picked` differs")];

#[test]
fn every_example_runs_clean() {
    let mut examples: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "acc"))
        .collect();
    examples.sort();
    assert!(examples.len() >= 10);
    for script in examples {
        let (ok, _, stderr) = run(&script, &[], &[]);
        assert!(ok, "{}: {stderr}", script.display());
        let name = script.file_name().unwrap().to_string_lossy().into_owned();
        let allowed = |line: &str| {
            TIMING_DEPENDENT
                .iter()
                .any(|(file, what)| name == *file && line.contains(what))
                || line.starts_with("autocompare:   ")
        };
        let lines = reports(&stderr);
        assert!(
            lines.iter().all(|l| allowed(l)),
            "{}: {stderr}",
            script.display()
        );
    }
}

/// The loops the dependence test parallelizes give the sequential host run's results: every
/// `kernels` script of the conformance suite runs clean under `--autocompare` (the host run is
/// one gang, so each parallelized loop's iterations run there in order).
#[test]
fn kernels_the_compiler_parallelizes_match_the_sequential_run() {
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(root().join("tests/conformance"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("directive_kernels") && name.ends_with(".acc")
        })
        .collect();
    scripts.sort();
    assert!(scripts.len() >= 8, "{scripts:?}");
    for script in scripts {
        let (ok, _, stderr) = run(&script, &[], &[]);
        assert!(ok, "{}: {stderr}", script.display());
        assert_eq!(reports(&stderr), Vec::<&str>::new(), "{}", script.display());
    }
}
