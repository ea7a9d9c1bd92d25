//! Shared by the tests: compiling acc source to the IR, and assembling PTX with `ptxas`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use acc_jit_ptx::{emit_module, PtxModule, PtxOptions};
use acc_lang::ir;
use acc_lang::span::SourceFile;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate is in the workspace")
        .to_path_buf()
}

/// Check and lower `text` as the engine does; `None` when it does not compile.
pub fn lower(name: &str, text: &str) -> Option<ir::Module> {
    acc_lang::lower_source(&SourceFile::new(name, text)).ok()
}

/// The PTX of `text`'s regions.
pub fn ptx_of(text: &str) -> PtxModule {
    let module = lower("test.acc", text).expect("the test source compiles");
    emit_module(&module, &PtxOptions::default())
}

/// The CUDA release whose `ptxas` the tests assemble with: 13.0, the GPU machine's driver.
const NVCC_PACKAGE: &str = "nvidia-cuda-nvcc==13.0.88";

/// Where `ptxas` lies inside an install of `NVCC_PACKAGE`.
const PTXAS_IN_PACKAGE: &str = "nvidia/cu13/bin/ptxas";

/// `ptxas`: `$ACC_PTXAS`, else the one installed on first use into the target folder
/// (`target/tmp/cuda-13.0.88`) with pip, so that `cargo test --workspace` works on a fresh
/// clone with only rustup and python3. Panics when neither can be had: the PTX tests must not
/// pass silently.
pub fn ptxas() -> PathBuf {
    static PTXAS: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    match PTXAS.get_or_init(find_or_install_ptxas) {
        Ok(path) => path.clone(),
        Err(why) => panic!("{why}"),
    }
}

fn find_or_install_ptxas() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("ACC_PTXAS") {
        let path = PathBuf::from(path);
        return match path.is_file() {
            true => Ok(path),
            false => Err(format!(
                "ACC_PTXAS is {}, which is not a file",
                path.display()
            )),
        };
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cuda-13.0.88");
    let path = dir.join(PTXAS_IN_PACKAGE);
    if path.is_file() {
        return Ok(path);
    }
    install_nvcc_package(&dir)?;
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "{NVCC_PACKAGE} installed, but {} is missing",
            path.display()
        ))
    }
}

/// `pip install --target DIR NVCC_PACKAGE` (only its ptxas is used; no GPU needed), into a
/// folder of this process's own first, then renamed into place, so that two test binaries
/// installing at once cannot leave a half-written install behind.
fn install_nvcc_package(dir: &Path) -> Result<(), String> {
    let staging = dir.with_extension(format!("partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    eprintln!(
        "installing ptxas ({NVCC_PACKAGE}) into {} with pip",
        dir.display()
    );
    let pip = |extra: &[&str]| {
        Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", "--no-deps", "--target"])
            .arg(&staging)
            .args(extra)
            .arg(NVCC_PACKAGE)
            .output()
    };
    let mut result = pip(&[]);
    // Debian's python3 refuses installs outside a virtual environment unless told otherwise;
    // `--target` puts nothing into the system's packages.
    if result.as_ref().is_ok_and(|r| !r.status.success()) {
        result = pip(&["--break-system-packages"]);
    }
    let failed = match &result {
        Ok(r) if r.status.success() => None,
        Ok(r) => Some(String::from_utf8_lossy(&r.stderr).into_owned()),
        Err(e) => Some(e.to_string()),
    };
    if let Some(why) = failed {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(format!(
            "ptxas is needed to assemble the emitted PTX (no GPU needed), and installing it \
             failed: `python3 -m pip install --no-deps --target {} {NVCC_PACKAGE}`: {why}\n\
             Install pip (Debian: `apt-get install python3-pip`) or set ACC_PTXAS to a ptxas \
             of CUDA 13.0.",
            dir.display()
        ));
    }
    if std::fs::rename(&staging, dir).is_err() {
        // Another test binary finished first: keep its install.
        let _ = std::fs::remove_dir_all(&staging);
    }
    Ok(())
}

/// Assemble `text` for sm_90; the error output of `ptxas` when it fails.
pub fn assemble(name: &str, text: &str) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("acc-jit-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let src = dir.join(format!("{name}.ptx"));
    let out = dir.join(format!("{name}.cubin"));
    std::fs::write(&src, text).map_err(|e| e.to_string())?;
    let result = Command::new(ptxas())
        .arg("-arch=sm_90")
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output()
        .map_err(|e| format!("running ptxas: {e}"))?;
    let _ = std::fs::remove_file(&out);
    if result.status.success() {
        let _ = std::fs::remove_file(&src);
        Ok(())
    } else {
        Err(format!(
            "{}{}(PTX kept at {})",
            String::from_utf8_lossy(&result.stdout),
            String::from_utf8_lossy(&result.stderr),
            src.display()
        ))
    }
}
