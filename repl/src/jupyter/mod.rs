//! `acc jupyter`: a Jupyter kernel for acc, and its installation.
//!
//! - `install.rs`: `acc jupyter install` writes the kernelspec;
//! - `wire.rs`: the connection file and the ZeroMQ sockets (through `jupyter-zmq-client`);
//! - `kernel.rs`: the threads and the requests, answered by the same
//!   [`Session`](acc_repl::session::Session) as the terminal REPL;
//! - `answers.rs`: what the answers hold: kernel info, completion and inspection by the
//!   session's completer and inspector, errors;
//! - `output.rs`: a cell's output as `stream` messages, its last value apart, pictures.

mod answers;
mod install;
mod kernel;
mod output;
mod wire;

use std::path::PathBuf;

use clap::Subcommand;

#[derive(Subcommand)]
pub enum JupyterCommand {
    /// Install the kernelspec `acc`, so that Jupyter (JupyterLab, Notebook, console) lists
    /// the acc kernel.
    Install(install::InstallArgs),
    /// Run the kernel (Jupyter starts it so, with the connection file it wrote).
    Kernel {
        /// The connection file: ports, transport and signing key.
        #[arg(short = 'f', long = "connection-file", value_name = "FILE")]
        connection_file: PathBuf,
        #[command(flatten)]
        devices: crate::DeviceArgs,
    },
}

pub fn main(command: JupyterCommand) -> i32 {
    match command {
        JupyterCommand::Install(args) => install::install(&args),
        JupyterCommand::Kernel {
            connection_file,
            devices,
        } => kernel::run(&connection_file, &devices),
    }
}
