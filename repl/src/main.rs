//! The `acc` command: run a script, check it, run test scripts, open the REPL, or serve
//! Jupyter notebooks.

mod jupyter;
#[cfg(feature = "mpi")]
mod mpi;
mod terminal;
mod test_runner;

use clap::{Args, Parser, Subcommand};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "acc",
    version,
    about = "acc: array scripts with OpenACC offload",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// `acc FILE.acc`: the same as `acc run FILE.acc`.
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Run a script.
    Run(RunArgs),
    /// Parse and type-check scripts without running them (exit 0 if valid, 2 if not).
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Also print the compiler's feedback: each compute construct's data clauses and each
        /// loop's schedule, with the reason (as `acc --info FILE` does before running).
        #[arg(long)]
        info: bool,
    },
    /// Run test scripts: each passes when it exits 0 and prints its sibling `.out` file, or, when
    /// its first line is `// expect-error: TEXT`, fails with an error containing TEXT (after
    /// printing its `.out` file, if it has one).
    Test {
        /// Files or folders of `.acc` scripts (default: the current folder).
        paths: Vec<PathBuf>,
        /// Run the scripts on this device (`emulated`, `multicore:0`, …); a script's
        /// `NAME.DEVICE.out` is its expected output there when it exists.
        #[arg(long, value_name = "TYPE[:N]")]
        device: Option<String>,
    },
    /// The Jupyter kernel: `acc jupyter install` makes acc a kernel of JupyterLab and
    /// Jupyter Notebook.
    #[command(subcommand)]
    Jupyter(jupyter::JupyterCommand),
}

#[derive(Args, Default, Clone)]
pub(crate) struct RunArgs {
    /// The script; none opens the REPL.
    file: Option<PathBuf>,
    /// Give `param("name", default)` a value.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Print the compiled form instead of running: `ir` (the shared IR), `clif` (Cranelift IR)
    /// or `ptx` (the compute regions' GPU code).
    #[arg(long, value_name = "ir|clif|ptx", value_parser = ["ir", "clif", "ptx"])]
    pub(crate) emit: Option<String>,
    /// Leave bounds checks out of device code (host code keeps them).
    #[arg(long)]
    unchecked: bool,
    /// Under MPI, drop the output of the ranks other than 0 (by default each of their lines is
    /// headed `[rank N] `; also ACC_MPI_QUIET=1).
    #[arg(long)]
    mpi_quiet: bool,
    #[command(flatten)]
    pub(crate) devices: DeviceArgs,
}

/// Device selection and runtime tooling (LANGUAGE.md 7.10 and 8).
#[derive(Args, Default, Clone)]
pub(crate) struct DeviceArgs {
    /// The device to start on: `nvidia`, `host`, `multicore` or `emulated`, optionally with a
    /// number (`emulated:1`). Overrides ACC_DEVICE_TYPE and ACC_DEVICE_NUM.
    #[arg(long, value_name = "TYPE[:N]")]
    device: Option<String>,
    /// Run every `async` operation synchronously (also ACC_SYNCHRONOUS=1).
    #[arg(long)]
    synchronous: bool,
    /// Print a profile at exit: per construct and line, launches, device time, transfers
    /// (also ACC_PROFILE=1).
    #[arg(long)]
    profile: bool,
    /// Write a Chrome/Perfetto trace of every kernel, transfer and wait to FILE.
    #[arg(long, value_name = "FILE.json")]
    trace: Option<PathBuf>,
    /// Print notes about where the program runs (which device, fallbacks; also ACC_INFO=1).
    #[arg(long)]
    info: bool,
    /// Run every compute region on the device and again on the host, and report on standard
    /// error what differs (also ACC_AUTOCOMPARE=1; ACC_AUTOCOMPARE_LIMIT caps the reports).
    #[arg(long)]
    autocompare: bool,
    /// `--autocompare`'s relative tolerance (default: 1e-9 for float64, 1e-4 for float32,
    /// exact for integers).
    #[arg(long, value_name = "R")]
    rel_tol: Option<f64>,
    /// `--autocompare`'s absolute tolerance (default 0).
    #[arg(long, value_name = "A")]
    abs_tol: Option<f64>,
}

impl DeviceArgs {
    /// The environment's device options with the command line's on top.
    pub(crate) fn options(&self) -> Result<acc::DeviceOptions, String> {
        let mut o = acc::DeviceOptions::from_env()?;
        if let Some(d) = &self.device {
            o.set_device(d)?;
        }
        o.synchronous |= self.synchronous;
        o.profile.profile |= self.profile;
        o.profile.trace |= self.trace.is_some();
        if self.autocompare && o.autocompare.is_none() {
            o.autocompare = Some(acc::AutocompareOptions::from_env()?);
        }
        if let Some(compare) = &mut o.autocompare {
            compare.rel_tol = self.rel_tol.or(compare.rel_tol);
            compare.abs_tol = self.abs_tol.or(compare.abs_tol);
        }
        Ok(o)
    }

    /// Whether `--device TYPE:N` named a device number.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn device_number_given(&self) -> bool {
        self.device.as_deref().is_some_and(|d| d.contains(':'))
    }

    /// `--info` or `ACC_INFO=1`.
    pub(crate) fn info(&self) -> bool {
        self.info || std::env::var("ACC_INFO").is_ok_and(|v| !v.is_empty() && v != "0")
    }

    /// Before a run: under `--info`, the device notice (the requested device is missing).
    pub(crate) fn start(&self, engine: &mut acc::Engine) {
        if let (true, Some(notice)) = (self.info(), engine.device_notice()) {
            eprintln!("info: {notice}");
        }
    }

    /// After a run: the profile report (standard error) and the trace file.
    pub(crate) fn finish(&self, engine: &mut acc::Engine, profile: bool) {
        self.finish_rank(engine, profile, 0, 1);
    }

    /// `finish` on rank `rank` of `size` (MPI): the report of another rank than 0 has its
    /// lines headed `[rank N] `, and with several ranks each writes its own trace,
    /// `NAME.rankN.json` (rank 0 writes NAME).
    pub(crate) fn finish_rank(
        &self,
        engine: &mut acc::Engine,
        profile: bool,
        rank: i32,
        size: i32,
    ) {
        if profile {
            let report = engine.profile_report();
            if rank == 0 {
                eprint!("{report}");
            } else {
                eprint!("{}", mpi_prefixed(&report, rank));
            }
        }
        if let Some(path) = &self.trace {
            let path = match (rank, path.extension()) {
                (0, _) => path.clone(),
                (_, Some(ext)) if size > 1 => {
                    path.with_extension(format!("rank{rank}.{}", ext.to_string_lossy()))
                }
                _ => path.with_extension(format!("rank{rank}")),
            };
            if let Err(e) = std::fs::write(&path, engine.chrome_trace()) {
                eprintln!("error: cannot write the trace `{}`: {e}", path.display());
            }
        }
    }
}

/// Compiled acc code runs on the native stack: a deep recursion needs room.
const STACK_SIZE: usize = 1 << 30;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The stack is reserved, not committed: only what recursion touches costs memory.
    let status = std::thread::Builder::new()
        .name("acc".into())
        .stack_size(STACK_SIZE)
        .spawn(move || dispatch(cli))
        .map_or(acc::EXIT_RUNTIME_ERROR, |t| {
            t.join().unwrap_or(acc::EXIT_RUNTIME_ERROR)
        });
    ExitCode::from(status.clamp(0, 255) as u8)
}

fn dispatch(cli: Cli) -> i32 {
    #[cfg(feature = "mpi")]
    acc::lang::builtins::enable_mpi(true);
    match cli.command {
        Some(Command::Run(args)) => run(&args),
        Some(Command::Check { files, info }) => check(&files, info),
        Some(Command::Test { paths, device }) => test_runner::run_tests(&paths, device.as_deref()),
        Some(Command::Jupyter(command)) => jupyter::main(command),
        None if cli.run.file.is_some() => run(&cli.run),
        None => terminal::repl(&cli.run),
    }
}

fn colour() -> bool {
    std::io::stderr().is_terminal()
}

/// `NAME=VALUE` pairs of `--set`.
pub(crate) fn params(set: &[String]) -> Result<Vec<(String, String)>, String> {
    set.iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(format!("`--set {s}`: expected NAME=VALUE")),
        })
        .collect()
}

/// An engine set up as the command line asks (parameters, devices, bounds checks), and
/// whether to print a profile at the end; `Err` holds the exit status of a reported mistake.
pub(crate) fn engine(args: &RunArgs) -> Result<(acc::Engine, bool), i32> {
    let params = params(&args.set).map_err(|e| {
        eprintln!("error: {e}");
        acc::EXIT_COMPILE_ERROR
    })?;
    let mut engine = acc::Engine::new().map_err(|e| {
        eprint!("{}", e.render(colour()));
        e.exit_code()
    })?;
    for (k, v) in &params {
        engine.set_param(k, v);
    }
    #[allow(unused_mut)]
    let mut options = args.devices.options().map_err(|e| {
        eprintln!("error: {e}");
        acc::EXIT_COMPILE_ERROR
    })?;
    #[cfg(feature = "mpi")]
    mpi::device_per_rank(&mut options, &args.devices);
    let profile = options.profile.profile;
    engine.set_devices(options);
    engine.set_unchecked(args.unchecked);
    Ok((engine, profile))
}

fn run(args: &RunArgs) -> i32 {
    let Some(file) = &args.file else {
        return terminal::repl(args);
    };
    let (mut engine, profile) = match engine(args) {
        Ok(e) => e,
        Err(status) => return status,
    };
    if let Some(what) = &args.emit {
        let what = match what.as_str() {
            "ir" => acc::Emit::Ir,
            "ptx" => acc::Emit::Ptx,
            _ => acc::Emit::Clif,
        };
        return match std::fs::read_to_string(file) {
            Ok(text) => match engine.emit(&file.display().to_string(), &text, what) {
                Ok(out) => {
                    print!("{out}");
                    0
                }
                Err(e) => {
                    eprint!("{}", e.render(colour()));
                    e.exit_code()
                }
            },
            Err(e) => {
                eprintln!("error: cannot read `{}`: {e}", file.display());
                acc::EXIT_COMPILE_ERROR
            }
        };
    }
    #[cfg(feature = "mpi")]
    let rank = match mpi::start(&mut engine, args.mpi_quiet) {
        Ok(rank) => rank,
        Err(status) => return status,
    };
    #[cfg(not(feature = "mpi"))]
    let rank = 0;
    #[cfg(feature = "mpi")]
    let size = acc_mpi::rank_and_size().1;
    #[cfg(not(feature = "mpi"))]
    let size = 1;
    args.devices.start(&mut engine);
    if args.devices.info() && rank == 0 {
        print_feedback(file, true);
    }
    let status = match engine.run_file(file) {
        Ok(()) => 0,
        Err(e) => {
            let text = e.render(colour());
            if rank == 0 {
                eprint!("{text}");
            } else {
                eprint!("{}", mpi_prefixed(&text, rank));
            }
            e.exit_code()
        }
    };
    args.devices.finish_rank(&mut engine, profile, rank, size);
    #[cfg(feature = "mpi")]
    mpi::end(&mut engine, status);
    status
}

/// Each line of `text` headed `[rank N] ` (the output of ranks other than 0).
fn mpi_prefixed(text: &str, rank: i32) -> String {
    text.lines()
        .map(|l| format!("[rank {rank}] {l}\n"))
        .collect()
}

fn check(files: &[PathBuf], info: bool) -> i32 {
    grow_heap_in_large_steps();
    let mut ok = true;
    for (i, file) in files.iter().enumerate() {
        ok &= check_file(file, i + 1 == files.len() && !info);
        if ok && info {
            print_feedback(file, false);
        }
    }
    if ok {
        0
    } else {
        acc::EXIT_COMPILE_ERROR
    }
}

/// `--info`: the compiler's feedback for a script, on standard error, and its warnings when
/// `warnings` (a run shows them only under `--info`; `acc check` always does). A script that
/// does not compile prints nothing here: its run or check reports the errors.
fn print_feedback(path: &Path, warnings: bool) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let source = acc::SourceFile::new(path.display().to_string(), text);
    if let Ok((info, found)) = acc::feedback(&source) {
        if warnings {
            eprint!("{}", acc::render_diagnostics(&found, &source, colour()));
        }
        eprint!("{info}");
    }
}

/// `acc check` builds a large program's trees and frees nothing of them (`check_before_exit`):
/// glibc grows a thread's heap 128 kB at a time, a system call each, so a million lines made
/// thousands of them; 64 MB at a time saves a quarter of a second of system time. Reserved
/// pages not yet written cost no memory.
fn grow_heap_in_large_steps() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets a tuning parameter of glibc's allocator (under its lock).
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
    }
}

/// Check one file and print its diagnostics; `last`: the process exits after this one, so
/// what its compile built need not be freed.
fn check_file(path: &Path, last: bool) -> bool {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read `{}`: {e}", path.display());
            return false;
        }
    };
    let source = acc::SourceFile::new(path.display().to_string(), text);
    let checked = if last {
        acc::check_before_exit(&source)
    } else {
        acc::check(&source)
    };
    match checked {
        Ok(warnings) => {
            eprint!("{}", acc::render_diagnostics(&warnings, &source, colour()));
            true
        }
        Err(diags) => {
            eprint!("{}", acc::render_diagnostics(&diags, &source, colour()));
            let errors = diags.iter().filter(|d| d.is_error()).count();
            let plural = if errors == 1 { "" } else { "s" };
            eprintln!("{}: {errors} error{plural}", path.display());
            false
        }
    }
}
