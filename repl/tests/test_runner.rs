//! `acc test` itself: a script with a large output (more than a pipe holds) passes, and a
//! wrong line is reported where it differs.

use std::process::Command;

fn acc_test(dir: &std::path::Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_acc"))
        .arg("test")
        .arg(dir)
        .output()
        .expect("acc runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn large_outputs_and_differences() {
    let dir = std::env::temp_dir().join(format!("acc-test-runner-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("big.acc"), "for i in 0..100000 { print(i) }\n").unwrap();
    let expected: String = (0..100000).map(|i| format!("{i}\n")).collect();
    std::fs::write(dir.join("big.out"), &expected).unwrap();
    let (ok, stdout) = acc_test(&dir);
    assert!(ok, "{stdout}");
    assert!(stdout.ends_with("1 passed, 0 failed\n"), "{stdout}");

    std::fs::write(
        dir.join("big.out"),
        expected.replace("\n77777\n", "\n7777\n"),
    )
    .unwrap();
    let (ok, stdout) = acc_test(&dir);
    assert!(!ok);
    assert!(stdout.contains("output differs at line 77778"), "{stdout}");
    assert!(
        stdout.contains("expected: 7777") && stdout.contains("actual:   77777"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
