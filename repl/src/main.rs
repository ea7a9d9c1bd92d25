//! The `acc` command.

use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "acc",
    version,
    about = "acc: array scripts with OpenACC offload"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and type-check a script without running it (exit 0 if valid, 2 if not).
    Check {
        /// The `.acc` files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

/// Exit status for compile errors (LANGUAGE.md section 9).
const COMPILE_ERROR: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check { files } => {
            let mut ok = true;
            for file in &files {
                ok &= check_file(file);
            }
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(COMPILE_ERROR)
            }
        }
    }
}

fn check_file(path: &PathBuf) -> bool {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read `{}`: {e}", path.display());
            return false;
        }
    };
    let source = acc::SourceFile::new(path.display().to_string(), text);
    let colour = std::io::stderr().is_terminal();
    match acc::check(&source) {
        Ok(warnings) => {
            eprint!("{}", acc::render_diagnostics(&warnings, &source, colour));
            true
        }
        Err(diags) => {
            eprint!("{}", acc::render_diagnostics(&diags, &source, colour));
            let errors = diags.iter().filter(|d| d.is_error()).count();
            eprintln!(
                "{}: {errors} error{}",
                path.display(),
                if errors == 1 { "" } else { "s" }
            );
            false
        }
    }
}
