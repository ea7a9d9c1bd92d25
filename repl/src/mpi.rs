//! `acc FILE.acc` under MPI (the `mpi` feature): MPI is initialized on the run's thread, the
//! ranks other than 0 have their output headed `[rank N] ` (or dropped with `--mpi-quiet`),
//! each rank starts on a GPU of its node by its local rank, and a run that fails on one rank
//! ends every rank (`MPI_Abort`) instead of leaving the others waiting.

use std::io::Write;

/// Initializes MPI and sets up the engine's output for this rank; the rank.
pub(crate) fn start(engine: &mut acc::Engine, quiet: bool) -> Result<i32, i32> {
    if let Err(e) = acc_mpi::init() {
        eprintln!("error: MPI: {e}");
        return Err(acc::EXIT_RUNTIME_ERROR);
    }
    let (rank, _) = acc_mpi::rank_and_size();
    let quiet = quiet || std::env::var("ACC_MPI_QUIET").is_ok_and(|v| !v.is_empty() && v != "0");
    if rank != 0 {
        let out: Box<dyn Write + Send> = if quiet {
            Box::new(std::io::sink())
        } else {
            Box::new(Prefixed {
                prefix: format!("[rank {rank}] "),
                at_line_start: true,
                out: std::io::stdout(),
            })
        };
        engine.set_output(out);
    }
    Ok(rank)
}

/// After the run: a failed rank ends every rank with its status (the others may be waiting
/// for it in a collective or a receive); otherwise MPI is finalized.
pub(crate) fn end(engine: &mut acc::Engine, status: i32) {
    // Whatever this rank printed comes out before an abort.
    engine.set_output(Box::new(std::io::stdout()));
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    let (_, size) = acc_mpi::rank_and_size();
    if status != 0 && size > 1 {
        acc_mpi::abort(status);
    }
    acc_mpi::finalize();
}

/// Starts a rank on GPU (local rank mod GPUs) of its node, or emulated device, unless the
/// device number was given (`ACC_DEVICE_NUM`, `--device TYPE:N`); and, unless
/// `ACC_NUM_CORES` says, shares the node's cores out among its ranks for the threads of the
/// multicore and emulated devices.
pub(crate) fn device_per_rank(options: &mut acc::DeviceOptions, args: &crate::DeviceArgs) {
    let cores_given = std::env::var("ACC_NUM_CORES").is_ok_and(|v| !v.trim().is_empty());
    if let (false, Some(ranks)) = (cores_given, acc_mpi::local_size()) {
        *options = options.clone().threads(options.threads / ranks);
    }
    let given = std::env::var("ACC_DEVICE_NUM").is_ok_and(|v| !v.trim().is_empty())
        || args.device_number_given();
    let Some(local) = acc_mpi::local_rank() else {
        return;
    };
    if given {
        return;
    }
    let count = match options.kind {
        None | Some(acc::DeviceKind::Nvidia) => acc::gpu_count(),
        Some(acc::DeviceKind::Emulated) => options.emulated,
        Some(_) => 1,
    };
    if count > 0 {
        options.num = local % count;
    }
}

/// Heads each line written with the rank.
struct Prefixed {
    prefix: String,
    at_line_start: bool,
    out: std::io::Stdout,
}

impl Write for Prefixed {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut text = Vec::with_capacity(buf.len() + self.prefix.len());
        for &b in buf {
            if self.at_line_start {
                text.extend_from_slice(self.prefix.as_bytes());
            }
            text.push(b);
            self.at_line_start = b == b'\n';
        }
        self.out.write_all(&text)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}
