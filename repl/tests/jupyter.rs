//! The Jupyter kernel through `jupyter_client`, the library JupyterLab's server uses to start
//! and talk to kernels: `acc jupyter install --prefix` writes the kernelspec, and
//! `jupyter/drive_kernel.py` starts the kernel from it and checks its answers (kernel info,
//! cells with output, values and errors, commands, completion, inspection, is-complete, an
//! interrupt by SIGINT and by message, shutdown).
//!
//! `jupyter_client` is Python's; when `python3` cannot import it, it is installed on first use
//! with pip into the target folder (`target/tmp/jupyter`), so that `cargo test --workspace`
//! runs this on a machine with only rustup and python3. Without either the test fails: the
//! kernel must not go untested silently.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

mod support;
use support::Scratch;

/// What the driver may take at most (it waits for each answer a minute at most).
const DRIVER_TIMEOUT: Duration = Duration::from_secs(600);

#[test]
fn the_kernel_answers_jupyter_client() {
    let python_path = jupyter_client();
    let scratch = Scratch::new("jupyter");
    let prefix = scratch.0.join("prefix");

    let install = Command::new(env!("CARGO_BIN_EXE_acc"))
        .args(["jupyter", "install", "--prefix"])
        .arg(&prefix)
        .output()
        .expect("acc runs");
    assert!(install.status.success(), "{}", report(&install));
    let spec_file = prefix.join("share/jupyter/kernels/acc/kernel.json");
    let spec: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&spec_file).expect("acc jupyter install writes kernel.json"),
    )
    .expect("kernel.json is JSON");
    let acc = Path::new(env!("CARGO_BIN_EXE_acc"))
        .canonicalize()
        .expect("the acc binary");
    assert_eq!(
        spec["argv"],
        serde_json::json!([acc, "jupyter", "kernel", "-f", "{connection_file}"])
    );
    assert_eq!(spec["language"], "acc");

    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/jupyter/drive_kernel.py");
    let mut command = Command::new("python3");
    command
        .arg(&driver)
        .current_dir(&scratch.0)
        // Only the kernelspec just written, and Jupyter's files in the scratch folder.
        .env("JUPYTER_PATH", prefix.join("share/jupyter"))
        .env("JUPYTER_DATA_DIR", scratch.0.join("data"))
        .env("JUPYTER_RUNTIME_DIR", scratch.0.join("runtime"))
        .env("JUPYTER_CONFIG_DIR", scratch.0.join("config"))
        .env("JUPYTER_PLATFORM_DIRS", "1")
        .env_remove("ACC_DEVICE_TYPE")
        .env_remove("ACC_DEVICE_NUM");
    if let Some(path) = &python_path {
        command.env("PYTHONPATH", path);
    }
    let driven = run_with_timeout(&mut command, &scratch.0, DRIVER_TIMEOUT);
    assert!(
        driven.status.success(),
        "the kernel failed a check of jupyter/drive_kernel.py:\n{}",
        report(&driven)
    );
    println!("{}", String::from_utf8_lossy(&driven.stdout));
}

/// A `PYTHONPATH` under which `python3` imports `jupyter_client`: none needed when it already
/// does, else the folder it was installed into on first use. Panics when it cannot be had.
fn jupyter_client() -> Option<PathBuf> {
    if imports_jupyter_client(None) {
        return None;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("jupyter");
    if imports_jupyter_client(Some(&dir)) {
        return Some(dir);
    }
    install_jupyter_client(&dir);
    assert!(
        imports_jupyter_client(Some(&dir)),
        "jupyter_client was installed into {} but python3 cannot import it",
        dir.display()
    );
    Some(dir)
}

fn imports_jupyter_client(path: Option<&Path>) -> bool {
    let mut command = Command::new("python3");
    command.args(["-c", "import jupyter_client"]);
    if let Some(path) = path {
        command.env("PYTHONPATH", path);
    }
    command.output().is_ok_and(|o| o.status.success())
}

/// `pip install --target DIR jupyter_client`, into a folder of this process's own first and
/// then renamed into place, so that a failed or concurrent install leaves no half-written one.
fn install_jupyter_client(dir: &Path) {
    let staging = dir.with_extension(format!("partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    eprintln!("installing jupyter_client into {} with pip", dir.display());
    let pip = |extra: &[&str]| {
        Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", "--target"])
            .arg(&staging)
            .args(extra)
            .arg("jupyter_client")
            .output()
    };
    let mut result = pip(&[]);
    // Debian's python3 refuses installs outside a virtual environment unless told otherwise;
    // `--target` puts nothing into the system's packages.
    if result.as_ref().is_ok_and(|r| !r.status.success()) {
        result = pip(&["--break-system-packages"]);
    }
    match result {
        Ok(r) if r.status.success() => {}
        Ok(r) => panic!(
            "the kernel test needs jupyter_client: `python3 -m pip install --target {} \
             jupyter_client` failed:\n{}",
            staging.display(),
            report(&r)
        ),
        Err(e) => panic!("the kernel test needs python3 with pip to install jupyter_client: {e}"),
    }
    // Another test process may have finished first: its install is as good.
    if std::fs::rename(&staging, dir).is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
}

/// Runs `command`, killing it after `timeout` (a kernel that stops answering must not hang
/// the test suite). Its output goes through files in `scratch`, which never fill up as a pipe
/// would.
fn run_with_timeout(command: &mut Command, scratch: &Path, timeout: Duration) -> Output {
    let file = |name: &str| std::fs::File::create(scratch.join(name)).expect("an output file");
    let mut child = command
        .stdout(file("driver.out"))
        .stderr(file("driver.err"))
        .spawn()
        .expect("python3 runs");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("the driver's status") {
            break status;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            break child.wait().expect("the driver's status");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let read = |name: &str| std::fs::read(scratch.join(name)).unwrap_or_default();
    let out = Output {
        status,
        stdout: read("driver.out"),
        stderr: read("driver.err"),
    };
    assert!(
        start.elapsed() <= timeout,
        "the driver took more than {} s:\n{}",
        timeout.as_secs(),
        report(&out)
    );
    out
}

fn report(out: &Output) -> String {
    format!(
        "status: {}\n--- stdout\n{}--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
