//! The message-passing transport of the `mpi_*` built-ins (LANGUAGE.md 6, "Across nodes"): what
//! the runtime and the standard library know of MPI. The `acc` command built with the `mpi`
//! feature installs the `acc-mpi` crate's transport (rsmpi over the system's MPI library) at
//! start-up; otherwise `single()` answers, a world of one rank (rank 0 of 1), so that the
//! runtime never links an MPI library itself.
//!
//! Buffers are bytes: the standard library packs an array section into one contiguous buffer
//! (from its device copy when it is present, `Devices::mpi_read`) and unpacks what arrives.
//! Element types matter only to reductions (`Datatype`).

use std::collections::VecDeque;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// A reduction of `mpi_allreduce`: the language's reduction operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Prod,
    Max,
    Min,
    BitAnd,
    BitOr,
    BitXor,
    LogAnd,
    LogOr,
}

impl ReduceOp {
    pub const ALL: [ReduceOp; 9] = [
        ReduceOp::Sum,
        ReduceOp::Prod,
        ReduceOp::Max,
        ReduceOp::Min,
        ReduceOp::BitAnd,
        ReduceOp::BitOr,
        ReduceOp::BitXor,
        ReduceOp::LogAnd,
        ReduceOp::LogOr,
    ];

    /// The code compiled code passes (`acc_lang::builtins::MPI_OPS`' order).
    pub fn from_code(code: i32) -> Option<ReduceOp> {
        usize::try_from(code)
            .ok()
            .and_then(|i| ReduceOp::ALL.get(i).copied())
    }
}

/// The element type of a reduction's buffer (`bool` is one byte, 0 or 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Datatype {
    Bool,
    I32,
    I64,
    F32,
    F64,
}

impl Datatype {
    pub fn size(self) -> usize {
        match self {
            Datatype::Bool => 1,
            Datatype::I32 | Datatype::F32 => 4,
            Datatype::I64 | Datatype::F64 => 8,
        }
    }
}

/// One MPI communicator's worth of operations (`MPI_COMM_WORLD`). Errors are sentences
/// (without the call's location, which the caller adds); a transport never aborts by itself
/// except in `abort`.
pub trait Transport: Send + Sync {
    fn rank(&self) -> i32;
    fn size(&self) -> i32;
    /// Seconds since an arbitrary time (`MPI_Wtime`).
    fn wtime(&self) -> f64;
    fn barrier(&self) -> Result<(), String>;
    /// `MPI_Allreduce` in place over `data` (elements of `ty`).
    fn allreduce(&self, data: &mut [u8], ty: Datatype, op: ReduceOp) -> Result<(), String>;
    /// `MPI_Bcast` of `data` from `root`; every rank passes as many bytes.
    fn bcast(&self, data: &mut [u8], root: i32) -> Result<(), String>;
    fn send(&self, data: &[u8], dest: i32) -> Result<(), String>;
    /// Receives exactly `data.len()` bytes from `src` (a message of another size is an error).
    fn recv(&self, data: &mut [u8], src: i32) -> Result<(), String>;
    /// `MPI_Sendrecv`: `send` to `dest` while receiving exactly `recv.len()` bytes from `src`.
    fn sendrecv(&self, send: &[u8], dest: i32, recv: &mut [u8], src: i32) -> Result<(), String>;
    /// Ends every rank with exit status `code` (`MPI_Abort`).
    fn abort(&self, code: i32) -> !;
}

static TRANSPORT: OnceLock<Box<dyn Transport>> = OnceLock::new();

/// Installs the process's transport (once; a second one is refused and returned).
pub fn install(t: Box<dyn Transport>) -> Result<(), Box<dyn Transport>> {
    TRANSPORT.set(t)
}

/// Whether a transport was installed (the run is under MPI, perhaps of one rank).
pub fn installed() -> bool {
    TRANSPORT.get().is_some()
}

/// The installed transport, or the one-rank world.
pub fn get() -> &'static dyn Transport {
    match TRANSPORT.get() {
        Some(t) => t.as_ref(),
        None => single(),
    }
}

/// The world of one rank: collectives leave their data as it is, and messages to rank 0 wait
/// in a mailbox for a receive from rank 0.
pub fn single() -> &'static dyn Transport {
    static SINGLE: OnceLock<Single> = OnceLock::new();
    SINGLE.get_or_init(|| Single {
        start: Instant::now(),
        mailbox: SelfMailbox::default(),
    })
}

struct Single {
    start: Instant,
    mailbox: SelfMailbox,
}

/// The messages a rank sent itself, in order, for its receives from itself (the one-rank
/// world's, and an MPI transport's: a blocking `MPI_Send` to oneself of a large message would
/// wait forever for the receive after it).
#[derive(Default)]
pub struct SelfMailbox(Mutex<VecDeque<Vec<u8>>>);

impl SelfMailbox {
    /// The rank sends itself `data`.
    pub fn post(&self, data: &[u8]) {
        let mut queue = self.0.lock().unwrap_or_else(|e| e.into_inner());
        queue.push_back(data.to_vec());
    }

    /// `rank` receives the oldest message it sent itself into `data`, which must be its size.
    pub fn take(&self, rank: i32, data: &mut [u8]) -> Result<(), String> {
        let mut queue = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let Some(m) = queue.pop_front() else {
            return Err(format!(
                "rank {rank} sent itself no message: the receive would wait forever"
            ));
        };
        check_size(m.len(), data.len(), rank)?;
        data.copy_from_slice(&m);
        Ok(())
    }
}

/// A message of `got` bytes from `rank` for a receive of `expected` bytes: an error unless the
/// two agree.
pub fn check_size(got: usize, expected: usize, rank: i32) -> Result<(), String> {
    if got != expected {
        return Err(format!(
            "the message from rank {rank} has {got} bytes, the receiving section {expected}"
        ));
    }
    Ok(())
}

impl Transport for Single {
    fn rank(&self) -> i32 {
        0
    }
    fn size(&self) -> i32 {
        1
    }
    fn wtime(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
    fn barrier(&self) -> Result<(), String> {
        Ok(())
    }
    fn allreduce(&self, _: &mut [u8], _: Datatype, _: ReduceOp) -> Result<(), String> {
        Ok(())
    }
    fn bcast(&self, _: &mut [u8], _: i32) -> Result<(), String> {
        Ok(())
    }
    fn send(&self, data: &[u8], _: i32) -> Result<(), String> {
        self.mailbox.post(data);
        Ok(())
    }
    fn recv(&self, data: &mut [u8], _: i32) -> Result<(), String> {
        self.mailbox.take(0, data)
    }
    fn sendrecv(&self, send: &[u8], _: i32, recv: &mut [u8], _: i32) -> Result<(), String> {
        // From rank 0 to rank 0 directly: the mailbox holds only what `send` left.
        check_size(send.len(), recv.len(), 0)?;
        recv.copy_from_slice(send);
        Ok(())
    }
    fn abort(&self, code: i32) -> ! {
        std::process::exit(code)
    }
}

/// The GPU a rank starts on when the launcher says which rank it is on its node: its local
/// rank modulo the GPUs, as OpenACC+MPI codes pick one with `acc_set_device_num`. `None` when
/// no launcher variable is set. `ACC_DEVICE_NUM` (or `--device TYPE:N`) takes precedence; the
/// caller checks that.
pub fn local_rank() -> Option<usize> {
    [
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "MPI_LOCALRANKID",
        "MV2_COMM_WORLD_LOCAL_RANK",
        "SLURM_LOCALID",
        "PMI_LOCAL_RANK",
        "PALS_LOCAL_RANKID",
    ]
    .iter()
    .find_map(|k| std::env::var(k).ok()?.trim().parse().ok())
}

/// How many ranks the launcher started on this node (`None` when it does not say): the
/// multicore and emulated devices' threads are the node's cores shared out among them.
pub fn local_size() -> Option<usize> {
    [
        "OMPI_COMM_WORLD_LOCAL_SIZE",
        "MPI_LOCALNRANKS",
        "MV2_COMM_WORLD_LOCAL_SIZE",
    ]
    .iter()
    .find_map(|k| std::env::var(k).ok()?.trim().parse().ok())
    .filter(|&n: &usize| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rank_world() {
        let t = single();
        assert_eq!((t.rank(), t.size()), (0, 1));
        let mut x = 7i64.to_ne_bytes();
        t.allreduce(&mut x, Datatype::I64, ReduceOp::Sum).unwrap();
        assert_eq!(i64::from_ne_bytes(x), 7);
        let mut got = [0u8; 3];
        t.sendrecv(&[1, 2, 3], 0, &mut got, 0).unwrap();
        assert_eq!(got, [1, 2, 3]);
        assert!(t.recv(&mut got, 0).unwrap_err().contains("forever"));
        t.send(&[1, 2], 0).unwrap();
        assert!(t.recv(&mut got, 0).unwrap_err().contains("2 bytes"));
        assert_eq!(ReduceOp::from_code(8), Some(ReduceOp::LogOr));
        assert_eq!(ReduceOp::from_code(9), None);
    }
}
