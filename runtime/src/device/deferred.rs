//! Split launches left running (LANGUAGE.md 7.11). A synchronous construct split over GPUs
//! that gives nothing back (no reductions, no `copy` scalars, no printing) is started on
//! every GPU and left running: the host goes on at once, as after `async`, and catches up
//! (waits for it and reports its error, told with its own construct and block) before
//! anything that could show that it did not wait:
//!
//! - every entry point of the runtime and the standard library that compiled code calls
//!   (`host::guarded`, through `HostState::catch_up`): output, `clock()`, `exit`, a host error, a host function, a data
//!   directive, `wait`, an unsplit construct;
//! - the end of the run (`Devices::finish`).
//!
//! The one exception is the next split construct, which is queued behind it on the same
//! GPUs' synchronous streams (halo rows are already on their way, `push_stale_rows`), and
//! catches up before it waits for its own parts. So an iterative loop's construct that only
//! writes arrays overlaps the host's work for the next one, and the GPUs do not wait for the
//! host between them. At most one launch is left running: the one after it is waited for.
//!
//! A failure in a launch left running is reported when the host catches up, before the
//! output or the error of anything after it, exactly as if the host had waited. What the
//! queued construct after it did to device memory stays done (after a runtime error, as
//! after one inside a kernel, device copies hold whatever the GPUs wrote).
//!
//! Emulated devices run a part to its end at once, but defer its failure by the same rules
//! (`Deferred::Failed`), so that CI tests where the host catches up.

use super::nvidia::Pending;
use super::{report, Devices};
use crate::abi::{Ctx, STATUS_OK};
use crate::error::RunError;
use crate::host::host_state;

/// What a launch left running leaves the host to catch up on.
pub(crate) enum Deferred {
    /// Each GPU's part, started and not waited for, in device order.
    Gpus(Vec<DeferredPart>),
    /// The failure of a part on emulated devices, told with its device and block.
    Failed(RunError),
}

/// One GPU's part of a launch left running.
pub(crate) struct DeferredPart {
    pub(crate) device: usize,
    pub(crate) pending: Pending,
    /// The part's block and values, for telling its failure (`Devices::tell_block`).
    pub(crate) block: (i64, i64),
    pub(crate) values: (i64, i64),
}

impl Devices {
    /// Leaves `deferred` to catch up on later.
    ///
    /// # Safety
    /// `ctx` is a live context.
    pub(super) unsafe fn defer(&mut self, ctx: *mut Ctx, deferred: Deferred) {
        debug_assert!(self.deferred.is_none(), "one launch left running at a time");
        self.deferred = Some(deferred);
        host_state(ctx).catch_up = Some(catch_up);
    }

    /// Whether a launch is left running.
    pub(super) fn has_deferred(&self) -> bool {
        self.deferred.is_some()
    }

    /// Waits for the launch left running, if any, and reports its failure (the first error
    /// of the run wins, as always).
    ///
    /// # Safety
    /// `ctx` is a live context.
    pub(crate) unsafe fn catch_up(&mut self, ctx: *mut Ctx) {
        host_state(ctx).catch_up = None;
        let Some(deferred) = self.deferred.take() else {
            return;
        };
        match deferred {
            Deferred::Failed(e) => report(ctx, e),
            Deferred::Gpus(parts) => {
                for part in parts {
                    let failed_before = (*ctx).status != STATUS_OK;
                    match self.gpu(part.device) {
                        Ok(gpu) => gpu.finish_deferred(ctx, part.pending),
                        Err(kind) => crate::host::fail(ctx, kind, None),
                    }
                    if !failed_before && (*ctx).status != STATUS_OK {
                        self.tell_block(ctx, part.device, part.block, part.values);
                    }
                }
                let _ = self.current_device();
            }
        }
    }
}

/// `Devices::catch_up` for the devices of `ctx`'s run, if it made any.
///
/// # Safety
/// `ctx` is a live context whose `devices` is null or a live `RunDevices`.
pub(crate) unsafe fn catch_up(ctx: *mut Ctx) {
    let run = (*ctx).devices as *mut super::RunDevices;
    match run.as_mut().and_then(|r| r.if_made()) {
        Some(devices) => devices.catch_up(ctx),
        None => host_state(ctx).catch_up = None,
    }
}
