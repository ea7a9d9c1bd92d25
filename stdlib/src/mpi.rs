//! The MPI built-ins (LANGUAGE.md 6, "Across nodes"): `mpi_rank`, `mpi_allreduce`, … over the
//! process's transport (`acc_runtime::transport`: MPI when the `acc` command was built with the
//! `mpi` feature, else one rank). An array or section arrives as a data-op record; its elements
//! travel packed in row-major order, from and to the device copy where the section is present
//! on the current device (`Devices::mpi_stage`). Each call is recorded for `--profile` and the
//! trace with the bytes this rank sent and received.

use std::time::Instant;

use acc_runtime::abi::{Ctx, ELEM_BOOL, ELEM_F32, ELEM_F64, ELEM_I32, ELEM_I64};
use acc_runtime::array;
use acc_runtime::device::{devices, DataOpArg};
use acc_runtime::error::RunErrorKind;
use acc_runtime::host::{fail, guarded};
use acc_runtime::transport::{self, Datatype, ReduceOp};

use crate::arrays::symbol_list;

fn mpi_error(message: String) -> RunErrorKind {
    RunErrorKind::Mpi {
        message,
        help: None,
    }
}

/// The rank `-1`: no rank (MPI's `MPI_PROC_NULL`). A send to it or a receive from it does
/// nothing, so that the ranks at the ends of a halo exchange need no special case.
pub const NO_RANK: i32 = -1;

/// Whether `r` is a rank of the world or `NO_RANK`; records the error
/// otherwise.
unsafe fn check_peer(ctx: *mut Ctx, r: i32, what: &str) -> bool {
    r == NO_RANK || check_rank(ctx, r, what)
}

/// Whether `r` is a rank of the world; records the error otherwise.
unsafe fn check_rank(ctx: *mut Ctx, r: i32, what: &str) -> bool {
    let size = transport::get().size();
    if (0..size).contains(&r) {
        return true;
    }
    let ranks = if size == 1 {
        "the only rank is 0".to_string()
    } else {
        format!("the ranks are 0 to {}", size - 1)
    };
    let message = format!("{what} {r} is not a rank of this run of {size}");
    let help = Some(format!(
        "{ranks} (`mpi_size()` ranks; start more with `mpirun -np N`)"
    ));
    fail(ctx, RunErrorKind::Mpi { message, help }, None);
    false
}

/// The element type of a record's array, as a reduction sees it.
unsafe fn datatype(op: &DataOpArg) -> Datatype {
    match (*op.array).elem {
        ELEM_BOOL => Datatype::Bool,
        ELEM_I32 => Datatype::I32,
        ELEM_I64 => Datatype::I64,
        ELEM_F32 => Datatype::F32,
        ELEM_F64 => Datatype::F64,
        _ => Datatype::Bool,
    }
}

/// The byte runs `(offset, length)` of a record's section in its array's host data.
unsafe fn byte_runs(op: &DataOpArg) -> Result<Vec<(usize, usize)>, RunErrorKind> {
    let section = op.section()?;
    let size = array::elem_size((*op.array).elem).unwrap_or(1);
    Ok(section
        .runs(array::shape(op.array))
        .map(|(o, n)| (o as usize * size, n as usize * size))
        .collect())
}

/// The section's host elements, packed.
unsafe fn pack(op: &DataOpArg) -> Result<Vec<u8>, RunErrorKind> {
    let runs = byte_runs(op)?;
    let mut out = Vec::with_capacity(runs.iter().map(|r| r.1).sum());
    for (o, n) in runs {
        out.extend_from_slice(std::slice::from_raw_parts((*op.array).data.add(o), n));
    }
    Ok(out)
}

/// Writes packed elements into the section's host elements.
unsafe fn unpack(op: &DataOpArg, data: &[u8]) -> Result<(), RunErrorKind> {
    let mut at = 0;
    for (o, n) in byte_runs(op)? {
        std::ptr::copy_nonoverlapping(data[at..at + n].as_ptr(), (*op.array).data.add(o), n);
        at += n;
    }
    Ok(())
}

/// The bytes of a record's section.
unsafe fn section_bytes(op: &DataOpArg) -> Result<usize, RunErrorKind> {
    Ok(byte_runs(op)?.iter().map(|r| r.1).sum())
}

/// Runs one MPI call on sections: `body` returns the bytes moved, or the error. Errors are
/// recorded at the call; the call is recorded for the profile.
unsafe fn call(
    ctx: *mut Ctx,
    site: u32,
    body: impl FnOnce() -> Result<u64, acc_runtime::RunError>,
) {
    let start = Instant::now();
    match body() {
        Ok(bytes) => {
            let rank = transport::get().rank();
            devices(ctx).record_mpi(site, rank, bytes, start, Instant::now());
        }
        Err(e) => fail(ctx, e.kind, e.site),
    }
}

/// A receive's error, with the help for messages of another size.
fn size_help(kind: RunErrorKind) -> RunErrorKind {
    match kind {
        RunErrorKind::Mpi {
            message,
            help: None,
        } if message.contains("TRUNCATE") || message.contains("bytes") => RunErrorKind::Mpi {
            message,
            help: Some(
                "the receiving section must have as many elements as the sender sends".into(),
            ),
        },
        other => other,
    }
}

fn at(kind: RunErrorKind) -> acc_runtime::RunError {
    acc_runtime::RunError { kind, site: None }
}

/// The section of a send: from the device copy where present, packed.
unsafe fn outgoing(ctx: *mut Ctx, op: &DataOpArg) -> Result<Vec<u8>, acc_runtime::RunError> {
    devices(ctx).mpi_stage(op, true)?;
    pack(op).map_err(at)
}

/// The section's host bytes when they are one run of its array (a row, a whole array): MPI
/// sends from them and receives into them without a copy (`sending`, `receive`).
///
/// # Safety
/// `op` is a record of a live array, which outlives the slice.
unsafe fn one_run<'a>(op: &DataOpArg) -> Result<Option<&'a mut [u8]>, RunErrorKind> {
    Ok(match byte_runs(op)?[..] {
        [(o, n)] => Some(std::slice::from_raw_parts_mut((*op.array).data.add(o), n)),
        _ => None,
    })
}

/// The bytes a send of `op` sends, after bringing them from the device copy where present:
/// the host array's own bytes where they are one run, else packed into `packed`.
///
/// # Safety
/// As `one_run`.
unsafe fn sending<'a>(
    ctx: *mut Ctx,
    op: &DataOpArg,
    packed: &'a mut Vec<u8>,
) -> Result<&'a [u8], acc_runtime::RunError> {
    devices(ctx).mpi_stage(op, true)?;
    Ok(match one_run(op).map_err(at)? {
        Some(bytes) => bytes,
        None => {
            *packed = pack(op).map_err(at)?;
            packed
        }
    })
}

/// Receives `op`'s section with `recv` (given the bytes to fill), then brings it on to the
/// device copy where present: straight into the host array's bytes where they are one run
/// that `sent` (what the same call sends) does not overlap, else through a buffer. Returns
/// the bytes received.
///
/// # Safety
/// As `one_run`.
unsafe fn receive(
    ctx: *mut Ctx,
    op: &DataOpArg,
    sent: &[u8],
    recv: impl FnOnce(&mut [u8]) -> Result<(), String>,
) -> Result<usize, acc_runtime::RunError> {
    let failed = |m| at(size_help(mpi_error(m)));
    match one_run(op).map_err(at)? {
        Some(bytes) if !overlap(bytes, sent) => {
            recv(bytes).map_err(failed)?;
            devices(ctx).mpi_stage(op, false)?;
            Ok(bytes.len())
        }
        _ => {
            let mut got = vec![0; section_bytes(op).map_err(at)?];
            recv(&mut got).map_err(failed)?;
            incoming(ctx, op, &got)?;
            Ok(got.len())
        }
    }
}

/// Whether two byte ranges share a byte.
fn overlap(a: &[u8], b: &[u8]) -> bool {
    let (a, b) = (a.as_ptr_range(), b.as_ptr_range());
    a.start < b.end && b.start < a.end
}

/// Received bytes into the section, and on to its device copy where present.
unsafe fn incoming(
    ctx: *mut Ctx,
    op: &DataOpArg,
    data: &[u8],
) -> Result<(), acc_runtime::RunError> {
    unpack(op, data).map_err(at)?;
    devices(ctx).mpi_stage(op, false)?;
    Ok(())
}

/// # Safety
/// `ctx` is a live context (for every function of this module; records as each says).
pub unsafe extern "C" fn acc_mpi_rank(ctx: *mut Ctx) -> i32 {
    guarded(ctx, None, || transport::get().rank())
}

/// # Safety
/// As `acc_mpi_rank`.
pub unsafe extern "C" fn acc_mpi_size(ctx: *mut Ctx) -> i32 {
    guarded(ctx, None, || transport::get().size())
}

/// # Safety
/// As `acc_mpi_rank`.
pub unsafe extern "C" fn acc_mpi_wtime(ctx: *mut Ctx) -> f64 {
    guarded(ctx, None, || transport::get().wtime())
}

/// # Safety
/// As `acc_mpi_rank`.
pub unsafe extern "C" fn acc_mpi_barrier(ctx: *mut Ctx, site: u32) {
    guarded(ctx, None, || {
        call(ctx, site, || {
            transport::get().barrier().map_err(|m| at(mpi_error(m)))?;
            Ok(0)
        })
    })
}

macro_rules! scalar_collectives {
    ($($t:ty, $dt:ident, $allreduce:ident, $bcast:ident;)*) => {$(
        /// `mpi_allreduce(x, op)` of a scalar: the reduction over every rank's `x`.
        ///
        /// # Safety
        /// As `acc_mpi_rank`.
        pub unsafe extern "C" fn $allreduce(ctx: *mut Ctx, site: u32, x: $t, op: i32) -> $t {
            guarded(ctx, None, || {
                let mut data = x.to_ne_bytes();
                call(ctx, site, || {
                    let op = ReduceOp::from_code(op)
                        .ok_or_else(|| at(mpi_error(format!("no reduction operator {op}"))))?;
                    transport::get()
                        .allreduce(&mut data, Datatype::$dt, op)
                        .map_err(|m| at(mpi_error(m)))?;
                    Ok(2 * data.len() as u64)
                });
                <$t>::from_ne_bytes(data)
            })
        }

        /// `mpi_bcast(x, root)` of a scalar: `root`'s `x`.
        ///
        /// # Safety
        /// As `acc_mpi_rank`.
        pub unsafe extern "C" fn $bcast(ctx: *mut Ctx, site: u32, x: $t, root: i32) -> $t {
            guarded(ctx, None, || {
                let mut data = x.to_ne_bytes();
                if check_rank(ctx, root, "the root") {
                    call(ctx, site, || {
                        transport::get()
                            .bcast(&mut data, root)
                            .map_err(|m| at(mpi_error(m)))?;
                        Ok(data.len() as u64)
                    });
                }
                <$t>::from_ne_bytes(data)
            })
        }
    )*};
}

scalar_collectives! {
    u8, Bool, acc_mpi_allreduce_bool, acc_mpi_bcast_bool;
    i32, I32, acc_mpi_allreduce_i32, acc_mpi_bcast_i32;
    i64, I64, acc_mpi_allreduce_i64, acc_mpi_bcast_i64;
    f32, F32, acc_mpi_allreduce_f32, acc_mpi_bcast_f32;
    f64, F64, acc_mpi_allreduce_f64, acc_mpi_bcast_f64;
}

/// `mpi_allreduce(a, op)` of an array or section, in place.
///
/// # Safety
/// As `acc_mpi_rank`; `op` is a record of a live array.
pub unsafe extern "C" fn acc_mpi_allreduce_array(ctx: *mut Ctx, rec: *const DataOpArg, op: i32) {
    guarded(ctx, None, || {
        let rec = &*rec;
        call(ctx, rec.site, || {
            let op = ReduceOp::from_code(op)
                .ok_or_else(|| at(mpi_error(format!("no reduction operator {op}"))))?;
            let mut data = outgoing(ctx, rec)?;
            transport::get()
                .allreduce(&mut data, datatype(rec), op)
                .map_err(|m| at(mpi_error(m)))?;
            incoming(ctx, rec, &data)?;
            Ok(2 * data.len() as u64)
        })
    })
}

/// `mpi_bcast(a, root)` of an array or section, in place.
///
/// # Safety
/// As `acc_mpi_allreduce_array`.
pub unsafe extern "C" fn acc_mpi_bcast_array(ctx: *mut Ctx, rec: *const DataOpArg, root: i32) {
    guarded(ctx, None, || {
        let rec = &*rec;
        if !check_rank(ctx, root, "the root") {
            return;
        }
        call(ctx, rec.site, || {
            let t = transport::get();
            let mut data = if t.rank() == root {
                outgoing(ctx, rec)?
            } else {
                vec![0; section_bytes(rec).map_err(at)?]
            };
            t.bcast(&mut data, root).map_err(|m| at(mpi_error(m)))?;
            if t.rank() != root {
                incoming(ctx, rec, &data)?;
            }
            Ok(data.len() as u64)
        })
    })
}

/// `mpi_send(a, dest)`: a blocking send (`MPI_Send`, tag 0).
///
/// # Safety
/// As `acc_mpi_allreduce_array`.
pub unsafe extern "C" fn acc_mpi_send(ctx: *mut Ctx, rec: *const DataOpArg, dest: i32) {
    guarded(ctx, None, || {
        let rec = &*rec;
        if !check_peer(ctx, dest, "the destination") {
            return;
        }
        call(ctx, rec.site, || {
            if dest == NO_RANK {
                byte_runs(rec).map_err(at)?;
                return Ok(0);
            }
            let mut packed = Vec::new();
            let data = sending(ctx, rec, &mut packed)?;
            transport::get()
                .send(data, dest)
                .map_err(|m| at(mpi_error(m)))?;
            Ok(data.len() as u64)
        })
    })
}

/// `mpi_recv(a, src)`: a blocking receive of exactly the section's size (`MPI_Recv`, tag 0).
///
/// # Safety
/// As `acc_mpi_allreduce_array`.
pub unsafe extern "C" fn acc_mpi_recv(ctx: *mut Ctx, rec: *const DataOpArg, src: i32) {
    guarded(ctx, None, || {
        let rec = &*rec;
        if !check_peer(ctx, src, "the source") {
            return;
        }
        call(ctx, rec.site, || {
            section_bytes(rec).map_err(at)?;
            if src == NO_RANK {
                return Ok(0);
            }
            let got = receive(ctx, rec, &[], |buf| transport::get().recv(buf, src))?;
            Ok(got as u64)
        })
    })
}

/// `mpi_sendrecv(s, dest, r, src)`: `MPI_Sendrecv`, the halo exchange's step.
///
/// # Safety
/// As `acc_mpi_allreduce_array`, for both records.
pub unsafe extern "C" fn acc_mpi_sendrecv(
    ctx: *mut Ctx,
    send: *const DataOpArg,
    dest: i32,
    recv: *const DataOpArg,
    src: i32,
) {
    guarded(ctx, None, || {
        let (send, recv) = (&*send, &*recv);
        if !check_peer(ctx, dest, "the destination") || !check_peer(ctx, src, "the source") {
            return;
        }
        call(ctx, send.site, || {
            section_bytes(recv).map_err(at)?;
            let mut packed = Vec::new();
            let data = if dest == NO_RANK {
                byte_runs(send).map_err(at)?;
                &[][..]
            } else {
                sending(ctx, send, &mut packed)?
            };
            let t = transport::get();
            let got = match (dest == NO_RANK, src == NO_RANK) {
                (_, true) => {
                    if dest != NO_RANK {
                        t.send(data, dest)
                            .map_err(|m| at(size_help(mpi_error(m))))?;
                    }
                    0
                }
                (true, false) => receive(ctx, recv, data, |buf| t.recv(buf, src))?,
                (false, false) => receive(ctx, recv, data, |buf| t.sendrecv(data, dest, buf, src))?,
            };
            Ok((data.len() + got) as u64)
        })
    })
}

pub fn symbols() -> Vec<(&'static str, *const u8)> {
    symbol_list![
        acc_mpi_rank acc_mpi_size acc_mpi_wtime acc_mpi_barrier
        acc_mpi_allreduce_bool acc_mpi_allreduce_i32 acc_mpi_allreduce_i64
        acc_mpi_allreduce_f32 acc_mpi_allreduce_f64
        acc_mpi_bcast_bool acc_mpi_bcast_i32 acc_mpi_bcast_i64 acc_mpi_bcast_f32 acc_mpi_bcast_f64
        acc_mpi_allreduce_array acc_mpi_bcast_array acc_mpi_send acc_mpi_recv acc_mpi_sendrecv
    ]
}

#[cfg(test)]
mod tests {
    //! The built-ins on the one-rank world (`transport::single`): the test process installs no
    //! transport. (Several ranks: repl/tests/mpi.rs, under mpirun.)

    use super::*;
    use crate::testing::TestCtx;
    use acc_runtime::array::{elements, elements_mut, new_array, release};
    use acc_runtime::device::ops::{ACTION_COPYIN, ACTION_PRESENT};
    use acc_runtime::device::{DeviceKind, DeviceOptions};

    fn on(kind: DeviceKind) -> TestCtx {
        let mut t = TestCtx::new();
        t.context
            .configure_devices(DeviceOptions::new().device(kind, 0).profile(true));
        t
    }

    /// Row `i` of a rank-2 array: `a[i:1, 0:m]`.
    fn row(a: *mut acc_runtime::abi::ArrayHeader, i: i64) -> DataOpArg {
        let mut op = DataOpArg::whole(a, ACTION_PRESENT, 3);
        op.nranges = 2;
        op.ranges[0] = [i, 1];
        op.ranges[1] = [0, acc_abi::ABSENT];
        op
    }

    #[test]
    fn one_rank() {
        let mut t = on(DeviceKind::Host);
        let p = t.ptr();
        unsafe {
            assert_eq!((acc_mpi_rank(p), acc_mpi_size(p)), (0, 1));
            assert_eq!(acc_mpi_allreduce_f64(p, 1, 2.5, 2), 2.5);
            assert_eq!(acc_mpi_allreduce_bool(p, 1, 1, 8), 1);
            assert_eq!(acc_mpi_bcast_i64(p, 1, 7, 0), 7);
            acc_mpi_barrier(p, 1);
            assert!(acc_mpi_wtime(p) >= 0.0);
            // Rows of one array: row 0 sent to rank 0 arrives in row 1.
            let a = new_array(ELEM_I32, &[2, 3]).unwrap();
            elements_mut::<i32>(a).copy_from_slice(&[1, 2, 3, 0, 0, 0]);
            acc_mpi_sendrecv(p, &row(a, 0), 0, &row(a, 1), 0);
            assert_eq!(elements::<i32>(a), &[1, 2, 3, 1, 2, 3]);
            // No rank: nothing moves.
            acc_mpi_sendrecv(p, &row(a, 0), NO_RANK, &row(a, 1), NO_RANK);
            acc_mpi_recv(p, &row(a, 0), NO_RANK);
            t.assert_ok();
            // A rank outside the world, at the call.
            acc_mpi_send(p, &row(a, 0), 1);
            let (kind, _) = t.error();
            assert!(
                kind.to_string().contains("not a rank of this run of 1"),
                "{kind}"
            );
            // A message of another size than the receiving section.
            let b = new_array(ELEM_I32, &[2]).unwrap();
            acc_mpi_send(p, &row(a, 0), 0);
            acc_mpi_recv(p, &DataOpArg::whole(b, ACTION_PRESENT, 3), 0);
            let (kind, _) = t.error();
            assert!(kind.to_string().contains("12 bytes"), "{kind}");
            assert!(kind.help().unwrap().contains("as many elements"));
            release(a);
            release(b);
        }
    }

    #[test]
    fn present_sections_travel_from_and_to_the_device_copies() {
        let mut t = on(DeviceKind::Emulated);
        let p = t.ptr();
        unsafe {
            let a = new_array(ELEM_F64, &[2, 2]).unwrap();
            elements_mut::<f64>(a).copy_from_slice(&[1.0, 2.0, 0.0, 0.0]);
            let whole = DataOpArg::whole(a, ACTION_COPYIN, 3);
            crate::openacc::acc_copyin(p, &whole);
            // The host copy goes stale: the device still holds 1, 2 in row 0.
            elements_mut::<f64>(a).copy_from_slice(&[9.0, 9.0, 9.0, 9.0]);
            acc_mpi_sendrecv(p, &row(a, 0), 0, &row(a, 1), 0);
            t.assert_ok();
            // Row 0's device values were sent (and staged through the host's row 0), row 1's
            // device copy received them.
            assert_eq!(elements::<f64>(a), &[1.0, 2.0, 1.0, 2.0]);
            elements_mut::<f64>(a).copy_from_slice(&[0.0; 4]);
            crate::openacc::acc_copyout(p, &whole);
            assert_eq!(elements::<f64>(a), &[1.0, 2.0, 1.0, 2.0]);
            release(a);
        }
        let totals = t.context.devices().profiler().totals();
        assert_eq!((totals.mpi.count(), totals.mpi.bytes), (1, 32));
    }
}
