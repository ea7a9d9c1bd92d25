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

/// `ptxas`: `$ACC_PTXAS`, else the workspace's `.tools/cuda/nvidia/cu13/bin/ptxas`. Panics
/// with the way to install it when it is missing: the PTX tests must not pass silently.
pub fn ptxas() -> PathBuf {
    let path = std::env::var_os("ACC_PTXAS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join(".tools/cuda/nvidia/cu13/bin/ptxas"));
    if !path.is_file() {
        panic!(
            "ptxas not found at {}: install it (no GPU needed) with\n  python3 -m pip install \
             --no-deps --target .tools/cuda nvidia-cuda-nvcc==13.0.88\nin the workspace root, \
             or set ACC_PTXAS to a ptxas of CUDA 13.0",
            path.display()
        );
    }
    path
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
