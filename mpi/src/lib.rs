//! acc's MPI transport (the `mpi` feature of the `acc` command): `acc_runtime::transport`'s
//! operations over the system's MPI library, through rsmpi's bindings (`mpi::ffi`), on
//! `MPI_COMM_WORLD`.
//!
//! Errors return (`MPI_ERRORS_RETURN`) so that the runtime reports them at the script's call;
//! the `acc` command then ends every rank with `MPI_Abort`. Every call comes from the thread
//! that ran `init` (the run's thread; `MPI_THREAD_FUNNELED`).
//!
//! Without its own `mpi` feature (which the `acc` command's `mpi` feature turns on) the crate
//! is empty, so that a workspace build needs no MPI library.
#![cfg(feature = "mpi")]

use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};

use acc_runtime::transport::{self, Datatype, ReduceOp, SelfMailbox, Transport};
use mpi::ffi;

static STARTED: AtomicBool = AtomicBool::new(false);

/// Initializes MPI (a single rank when the program was not started by `mpirun`) and installs
/// the transport. Call `finalize` before the process exits.
pub fn init() -> Result<(), String> {
    if STARTED.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    // SAFETY: plain MPI calls with valid pointers; MPI is initialized once per process.
    unsafe {
        let mut provided: c_int = 0;
        check(
            ffi::MPI_Init_thread(
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                ffi::RSMPI_THREAD_FUNNELED,
                &mut provided,
            ),
            "MPI_Init_thread",
        )?;
        check(
            ffi::MPI_Comm_set_errhandler(ffi::RSMPI_COMM_WORLD, ffi::RSMPI_ERRORS_RETURN),
            "MPI_Comm_set_errhandler",
        )?;
        let (mut rank, mut size) = (0, 0);
        check(
            ffi::MPI_Comm_rank(ffi::RSMPI_COMM_WORLD, &mut rank),
            "MPI_Comm_rank",
        )?;
        check(
            ffi::MPI_Comm_size(ffi::RSMPI_COMM_WORLD, &mut size),
            "MPI_Comm_size",
        )?;
        transport::install(Box::new(Mpi {
            rank,
            size,
            to_self: SelfMailbox::default(),
        }))
        .map_err(|_| "a transport was installed already".to_string())
    }
}

/// `MPI_Finalize` (after a barrier-free end: every rank calls it on its way out).
pub fn finalize() {
    if STARTED.load(Ordering::SeqCst) {
        // SAFETY: MPI was initialized by `init` and is finalized once.
        unsafe {
            let mut done = 0;
            ffi::MPI_Finalized(&mut done);
            if done == 0 {
                ffi::MPI_Finalize();
            }
        }
    }
}

/// MPI's message for an error code.
fn message(code: c_int) -> String {
    let mut buf = vec![0u8; 1024];
    let mut len: c_int = 0;
    // SAFETY: the buffer holds MPI_MAX_ERROR_STRING (256 in Open MPI, 1024 in MPICH) bytes.
    let r = unsafe { ffi::MPI_Error_string(code, buf.as_mut_ptr().cast(), &mut len) };
    if r != 0 {
        return format!("MPI error {code}");
    }
    buf.truncate(len.max(0) as usize);
    String::from_utf8_lossy(&buf).trim().to_string()
}

fn check(code: c_int, what: &str) -> Result<(), String> {
    if code == 0 {
        Ok(())
    } else {
        Err(format!("{what} failed: {}", message(code)))
    }
}

/// A byte count as MPI's `int` count.
fn count(n: usize) -> Result<c_int, String> {
    c_int::try_from(n).map_err(|_| format!("a message of {n} bytes (at most 2 GiB - 1 per call)"))
}

struct Mpi {
    rank: c_int,
    size: c_int,
    /// Messages a rank sent itself with `send`, for its `recv`s from itself.
    to_self: SelfMailbox,
}

const TAG: c_int = 0;

/// The bytes a receive got, checked against what it expected.
///
/// # Safety
/// `status` was filled by a completed receive of bytes.
unsafe fn received(status: &ffi::MPI_Status, expected: usize, src: i32) -> Result<(), String> {
    let mut got: c_int = 0;
    check(
        ffi::MPI_Get_count(status, ffi::RSMPI_UINT8_T, &mut got),
        "MPI_Get_count",
    )?;
    transport::check_size(got as usize, expected, src)
}

impl Transport for Mpi {
    fn rank(&self) -> i32 {
        self.rank
    }

    fn size(&self) -> i32 {
        self.size
    }

    fn wtime(&self) -> f64 {
        // SAFETY: no arguments.
        unsafe { ffi::RSMPI_Wtime() }
    }

    fn barrier(&self) -> Result<(), String> {
        // SAFETY: the world communicator.
        check(
            unsafe { ffi::MPI_Barrier(ffi::RSMPI_COMM_WORLD) },
            "MPI_Barrier",
        )
    }

    fn allreduce(&self, data: &mut [u8], ty: Datatype, op: ReduceOp) -> Result<(), String> {
        let n = count(data.len() / ty.size())?;
        // SAFETY: `data` holds `n` elements of `ty`; MPI reads and writes only them.
        unsafe {
            let dt = match ty {
                Datatype::Bool => ffi::RSMPI_UINT8_T,
                Datatype::I32 => ffi::RSMPI_INT32_T,
                Datatype::I64 => ffi::RSMPI_INT64_T,
                Datatype::F32 => ffi::RSMPI_FLOAT,
                Datatype::F64 => ffi::RSMPI_DOUBLE,
            };
            let mpi_op = match op {
                ReduceOp::Sum => ffi::RSMPI_SUM,
                ReduceOp::Prod => ffi::RSMPI_PROD,
                ReduceOp::Max => ffi::RSMPI_MAX,
                ReduceOp::Min => ffi::RSMPI_MIN,
                ReduceOp::BitAnd => ffi::RSMPI_BAND,
                ReduceOp::BitOr => ffi::RSMPI_BOR,
                ReduceOp::BitXor => ffi::RSMPI_BXOR,
                ReduceOp::LogAnd => ffi::RSMPI_LAND,
                ReduceOp::LogOr => ffi::RSMPI_LOR,
            };
            // MPI_IN_PLACE is `(void *) 1` in Open MPI and `(void *) -1` in MPICH: copy
            // instead, which every implementation accepts.
            let send = data.to_vec();
            check(
                ffi::MPI_Allreduce(
                    send.as_ptr().cast(),
                    data.as_mut_ptr().cast(),
                    n,
                    dt,
                    mpi_op,
                    ffi::RSMPI_COMM_WORLD,
                ),
                "MPI_Allreduce",
            )
        }
    }

    fn bcast(&self, data: &mut [u8], root: i32) -> Result<(), String> {
        let n = count(data.len())?;
        // SAFETY: `data` holds `n` bytes.
        check(
            unsafe {
                ffi::MPI_Bcast(
                    data.as_mut_ptr().cast(),
                    n,
                    ffi::RSMPI_UINT8_T,
                    root,
                    ffi::RSMPI_COMM_WORLD,
                )
            },
            "MPI_Bcast",
        )
    }

    fn send(&self, data: &[u8], dest: i32) -> Result<(), String> {
        if dest == self.rank {
            self.to_self.post(data);
            return Ok(());
        }
        let n = count(data.len())?;
        // SAFETY: `data` holds `n` bytes.
        check(
            unsafe {
                ffi::MPI_Send(
                    data.as_ptr().cast(),
                    n,
                    ffi::RSMPI_UINT8_T,
                    dest,
                    TAG,
                    ffi::RSMPI_COMM_WORLD,
                )
            },
            "MPI_Send",
        )
    }

    fn recv(&self, data: &mut [u8], src: i32) -> Result<(), String> {
        if src == self.rank {
            return self.to_self.take(src, data);
        }
        let n = count(data.len())?;
        // SAFETY: `data` holds `n` bytes; the status is written by MPI.
        unsafe {
            let mut status: ffi::MPI_Status = std::mem::zeroed();
            check(
                ffi::MPI_Recv(
                    data.as_mut_ptr().cast(),
                    n,
                    ffi::RSMPI_UINT8_T,
                    src,
                    TAG,
                    ffi::RSMPI_COMM_WORLD,
                    &mut status,
                ),
                "MPI_Recv",
            )?;
            received(&status, data.len(), src)
        }
    }

    fn sendrecv(&self, send: &[u8], dest: i32, recv: &mut [u8], src: i32) -> Result<(), String> {
        if dest == self.rank && src == self.rank {
            self.send(send, dest)?;
            return self.recv(recv, src);
        }
        let (ns, nr) = (count(send.len())?, count(recv.len())?);
        // SAFETY: the buffers hold `ns` and `nr` bytes; the status is written by MPI.
        unsafe {
            let mut status: ffi::MPI_Status = std::mem::zeroed();
            check(
                ffi::MPI_Sendrecv(
                    send.as_ptr().cast(),
                    ns,
                    ffi::RSMPI_UINT8_T,
                    dest,
                    TAG,
                    recv.as_mut_ptr().cast(),
                    nr,
                    ffi::RSMPI_UINT8_T,
                    src,
                    TAG,
                    ffi::RSMPI_COMM_WORLD,
                    &mut status,
                ),
                "MPI_Sendrecv",
            )?;
            received(&status, recv.len(), src)
        }
    }

    fn abort(&self, code: i32) -> ! {
        // SAFETY: the world communicator; MPI_Abort does not return in practice.
        unsafe {
            ffi::MPI_Abort(ffi::RSMPI_COMM_WORLD, code);
        }
        std::process::exit(code)
    }
}

/// This process's rank and the world's size (0 and 1 before `init`).
pub fn rank_and_size() -> (i32, i32) {
    let t = transport::get();
    (t.rank(), t.size())
}

/// Ends every rank with exit status `code` (`MPI_Abort`; a plain exit for one rank).
pub fn abort(code: i32) -> ! {
    transport::get().abort(code)
}

/// The rank's index on its node, from the launcher's environment
/// (`acc_runtime::transport::local_rank`).
pub fn local_rank() -> Option<usize> {
    transport::local_rank()
}

/// The ranks on this node, from the launcher's environment
/// (`acc_runtime::transport::local_size`).
pub fn local_size() -> Option<usize> {
    transport::local_size()
}
