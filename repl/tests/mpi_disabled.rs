//! An acc built without the `mpi` feature rejects the `mpi_*` built-ins at compile time, at the
//! call, with a help line that says how to build acc with MPI; `acc test` skips the scripts
//! headed `// requires: mpi`.
#![cfg(not(feature = "mpi"))]

use std::path::Path;
use std::process::Command;

#[test]
fn mpi_built_ins_are_a_compile_error_that_says_how_to_enable_them() {
    let dir = std::env::temp_dir().join(format!("acc-mpi-disabled-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ranks.acc");
    std::fs::write(&file, "let x = 1\nprint(mpi_rank(), x)\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_acc"))
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("`mpi_rank` needs MPI, and this acc was built without it"),
        "{stderr}"
    );
    assert!(stderr.contains("ranks.acc:2:7"), "{stderr}");
    assert!(stderr.contains("an MPI built-in"), "{stderr}");
    assert!(stderr.contains("--features mpi"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn acc_test_skips_scripts_that_need_mpi() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/mpi");
    let out = Command::new(env!("CARGO_BIN_EXE_acc"))
        .arg("test")
        .arg(&examples)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("needs acc built with the `mpi` feature"),
        "{stdout}"
    );
    assert!(stdout.contains("0 passed, 0 failed, 1 skipped"), "{stdout}");
}
