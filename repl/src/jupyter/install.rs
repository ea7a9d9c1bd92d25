//! `acc jupyter install`: the kernelspec that tells Jupyter how to start the kernel,
//! `DIR/share/jupyter/kernels/acc/kernel.json`, in the data folder Jupyter searches that the
//! options name.

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::{ArgGroup, Args};

/// Where to install (at most one; the user's folder when none is given).
#[derive(Args, Clone, Debug, Default)]
#[command(group(ArgGroup::new("place").args(["user", "prefix", "sys_prefix"])))]
pub struct InstallArgs {
    /// In your Jupyter data folder ($JUPYTER_DATA_DIR, else ~/.local/share/jupyter): the
    /// default.
    #[arg(long)]
    user: bool,
    /// Under DIR: DIR/share/jupyter/kernels/acc (for a Jupyter installed with prefix DIR).
    #[arg(long, value_name = "DIR")]
    prefix: Option<PathBuf>,
    /// Under the prefix of the Python environment in use (`sys.prefix` of `python3`, else
    /// $VIRTUAL_ENV): for a Jupyter installed in that environment.
    #[arg(long)]
    sys_prefix: bool,
}

/// The kernelspec's name: notebooks record it, and `jupyter console --kernel acc` names it.
const KERNEL_NAME: &str = "acc";

/// Installs the kernelspec; the exit status.
pub fn install(args: &InstallArgs) -> i32 {
    match kernels_folder(args).and_then(|kernels| write_kernelspec(&kernels)) {
        Ok(dir) => {
            println!(
                "installed the acc kernel in {}\n\
                 (Jupyter starts it with this acc binary: install again if you move it)",
                dir.display()
            );
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}

/// The `kernels` folder the options name.
fn kernels_folder(args: &InstallArgs) -> Result<PathBuf, String> {
    let data = if let Some(prefix) = &args.prefix {
        prefix.join("share").join("jupyter")
    } else if args.sys_prefix {
        python_prefix()?.join("share").join("jupyter")
    } else {
        user_data_folder()?
    };
    Ok(data.join("kernels"))
}

/// Jupyter's data folder for the user, as `jupyter --data-dir` gives it.
fn user_data_folder() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("JUPYTER_DATA_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or("neither JUPYTER_DATA_DIR nor HOME is set: use --prefix DIR")?;
    if cfg!(target_os = "macos") {
        return Ok(home.join("Library").join("Jupyter"));
    }
    let data_home = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map_or_else(|| home.join(".local").join("share"), PathBuf::from);
    Ok(data_home.join("jupyter"))
}

/// `sys.prefix` of `python3`, else the active virtual environment.
fn python_prefix() -> Result<PathBuf, String> {
    let asked = Command::new("python3")
        .args(["-c", "import sys; print(sys.prefix)"])
        .output();
    if let Ok(out) = &asked {
        let prefix = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if out.status.success() && !prefix.is_empty() {
            return Ok(PathBuf::from(prefix));
        }
    }
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(venv));
    }
    Err(match asked {
        Ok(out) => format!(
            "`python3 -c 'import sys; print(sys.prefix)'` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => {
            format!("cannot run python3 to find its sys.prefix ({e}) and VIRTUAL_ENV is not set")
        }
    })
}

/// Writes `kernels/acc/kernel.json`; the folder it is in.
fn write_kernelspec(kernels: &Path) -> Result<PathBuf, String> {
    let acc = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("cannot find the path of this acc binary: {e}"))?;
    let dir = kernels.join(KERNEL_NAME);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    let file = dir.join("kernel.json");
    let text = serde_json::to_string_pretty(&kernelspec(&acc)).unwrap_or_default() + "\n";
    std::fs::write(&file, text).map_err(|e| format!("cannot write `{}`: {e}", file.display()))?;
    Ok(dir)
}

/// The kernelspec of the kernel started as `acc jupyter kernel -f FILE`.
fn kernelspec(acc: &Path) -> serde_json::Value {
    serde_json::json!({
        "argv": [acc.to_string_lossy(), "jupyter", "kernel", "-f", "{connection_file}"],
        "display_name": "acc",
        "language": "acc",
        // Jupyter interrupts a cell with SIGINT; the kernel also answers interrupt_request.
        "interrupt_mode": "signal",
        "metadata": { "debugger": false },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernelspec_starts_this_binary_as_a_kernel() {
        let spec = kernelspec(Path::new("/opt/acc/bin/acc"));
        assert_eq!(
            spec["argv"],
            serde_json::json!([
                "/opt/acc/bin/acc",
                "jupyter",
                "kernel",
                "-f",
                "{connection_file}"
            ])
        );
        assert_eq!(spec["language"], "acc");
        assert_eq!(spec["display_name"], "acc");
    }

    #[test]
    fn a_prefix_names_its_share_folder() {
        let args = InstallArgs {
            prefix: Some(PathBuf::from("/tmp/p")),
            ..InstallArgs::default()
        };
        assert_eq!(
            kernels_folder(&args).unwrap(),
            Path::new("/tmp/p/share/jupyter/kernels")
        );
    }
}
