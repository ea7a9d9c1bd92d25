//! Split launches left running: a synchronous split construct on GPUs that gives nothing back
//! to the host is not waited for when it ends (`Devices::launch_split`). The host goes on to
//! the next construct, whose halo copies and kernels queue behind it on each GPU's stream, so
//! that the GPUs never wait for the host between two constructs (issue 19: the Jacobi's copy
//! loop between two stencils).
//!
//! Nothing a program can observe changes, because the launch is caught up with
//! (`Devices::catch_up`: waited for, its error record read) before anything could tell:
//! - every other device operation (`device::devices`, which all entry points but the compute
//!   construct's take), and any construct that is not itself a split launch queued on the
//!   GPUs' synchronous streams;
//! - the next split launch that the host waits for, before its own results and errors;
//! - output (`print`, `printf`, pictures), `clock()`, and the end of the run
//!   (`Context::finish`);
//! - an error the host records first in the meantime (a host bounds error, `exit`) gives way
//!   to the launch's, which came first in the program.
//!
//! Only launches with nothing to tell the host qualify: no results or reductions, no device
//! output, every array held split by a `data … devices(…)` region (so that the clauses' exit
//! moves no data), no `async` or `wait`, and neither `--profile`, `--trace` nor
//! `ACC_SYNCHRONOUS` (which time or order every operation on its own). At most one launch is
//! left running at a time: the next split launch is waited for, with it. Its kernels write
//! their own error record (`nvidia::Record::Deferred`), so that a failure is told with the
//! construct and device it came from.

use cudarc::driver::sys;

use super::{DeviceKind, Devices, RunDevices};
use crate::abi::{Ctx, STATUS_OK};
use crate::error::{RunError, RunErrorKind};
use crate::host::host_state;

/// One device's part of a launch left running.
pub(super) struct Deferred {
    pub(super) device: usize,
    pub(super) wait: Wait,
    /// What `split::tell_device` says of its block.
    pub(super) block: (i64, i64),
    pub(super) values: (i64, i64),
}

/// What catching up with a part takes.
pub(super) enum Wait {
    /// Waiting for the GPU stream it runs on, then reading its error record.
    Gpu(sys::CUstream),
    /// Nothing: the part ran (on an emulated device, which runs parts one after another)
    /// and failed so. Emulated devices leave only failures behind, so that the rules above
    /// are tested without a GPU.
    Failed(RunError),
}

impl Devices {
    /// Waits for the launch left running, if any, and reports its failure in place of any
    /// error recorded since (which came later in the program).
    ///
    /// # Safety
    /// `ctx` is a live context.
    pub(super) unsafe fn catch_up(&mut self, ctx: *mut Ctx) {
        if self.deferred.is_empty() {
            return;
        }
        host_state(ctx).devices_behind = false;
        let deferred = std::mem::take(&mut self.deferred);
        let saved = (self.kind, self.num);
        for part in deferred {
            // An error recorded since (the host's, `exit`) came later in the program: it
            // gives way to the launch's failure, but not to an interrupt.
            let before = ((*ctx).status, host_state(ctx).take_error());
            (*ctx).status = STATUS_OK;
            let waited = match part.wait {
                Wait::Gpu(stream) => match self.gpu(part.device) {
                    Ok(gpu) => gpu.finish_deferred(ctx, stream),
                    Err(kind) => Err(kind),
                },
                Wait::Failed(e) => {
                    super::report(ctx, e);
                    Ok(true)
                }
            };
            let stopped = matches!(
                before.1.as_ref().map(|e| &e.kind),
                Some(RunErrorKind::Interrupted | RunErrorKind::TimeLimit)
            );
            if matches!(waited, Ok(true)) && !stopped {
                self.tell_block(ctx, part.device, part.block, part.values);
                continue;
            }
            let since = host_state(ctx).take_error();
            (*ctx).status = before.0;
            host_state(ctx).set_error(before.1);
            if before.0 == STATUS_OK {
                match (waited, since) {
                    (Err(kind), _) => crate::host::fail(ctx, kind, None),
                    (Ok(_), Some(e)) => crate::host::fail(ctx, e.kind, e.site),
                    (Ok(_), None) => {}
                }
            }
        }
        (self.kind, self.num) = saved;
        if saved.0 == DeviceKind::Nvidia {
            let _ = self.current_device();
        }
    }
}

/// Catches up with a launch left running before the host shows something (output, the
/// time): nothing to do unless one is.
///
/// # Safety
/// `ctx` is a live context.
pub unsafe fn catch_up(ctx: *mut Ctx) {
    if ctx.is_null() || (*ctx).devices.is_null() || !host_state(ctx).devices_behind {
        return;
    }
    let run = (*ctx).devices as *mut RunDevices;
    if let Some(d) = (*run).if_made() {
        d.catch_up(ctx);
    }
}
