//! Split launches left running (LANGUAGE.md 7.11). A synchronous construct split over GPUs
//! (or on one GPU) that prints nothing, copies nothing out and gives nothing back (no
//! reductions, no `copy` scalars), or whose results compiled code takes later
//! (`acc_rt_launch_results`, `acc_lang::ir::late`), is started on every GPU and left running:
//! the host goes on at once, as after `async`, and catches up (waits for it, reports its error,
//! told with its own construct and block, and keeps its results for `take_late_results`)
//! before anything that could show that it did not wait:
//!
//! - every entry point of the runtime and the standard library that compiled code calls
//!   (`host::guarded`, through `HostState::catch_up`): output, `clock()`, `exit`, a host error, a host function, a data
//!   directive, `wait`, an unsplit construct;
//! - the end of the run (`Devices::finish`).
//!
//! The exceptions are the next split construct, which is queued behind it on the same GPUs'
//! synchronous streams (halo rows are already on their way, `push_stale_rows`) and catches up
//! once its own parts are started, and the taking of another launch's results. So in an
//! iterative loop each construct is queued before the host waits for the one before it: the
//! host reads a reduction's partial results and starts the next construct while the GPUs run,
//! and the GPUs do not wait for the host between constructs. At most one launch is left
//! running; the one after it may be left running once the host has caught up on it.
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
use crate::launch::RegionDesc;

/// What a launch left running leaves the host to catch up on.
pub(crate) enum Deferred {
    /// Each GPU's part, started and not waited for, in device order, and the launch's
    /// results where compiled code takes them later.
    Gpus(Vec<DeferredPart>, Option<LateLaunch>),
    /// The failure of a part on emulated devices, told with its device and block.
    Failed(RunError),
}

/// One GPU's part of a launch left running.
pub(crate) struct DeferredPart {
    pub(crate) device: usize,
    pub(crate) pending: Pending,
    /// The part's block and values, for telling its failure (`Devices::tell_block`), and
    /// whether to tell it (`split::Part::told`).
    pub(crate) block: (i64, i64),
    pub(crate) values: (i64, i64),
    pub(crate) told: bool,
    /// The part's argument slots, which its results complete.
    pub(crate) args: Vec<u64>,
}

/// A launch with results left running: what combining them needs.
pub(crate) struct LateLaunch {
    /// The region's descriptor, which lives as long as its unit's code: beyond the run.
    pub(crate) desc: *const RegionDesc,
    /// The address of the argument slots compiled code gave the launch, by which
    /// `acc_rt_launch_results` asks for the results.
    pub(crate) key: usize,
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

    /// Waits for the launch left running, if any, and reports its failure (the first error
    /// of the run wins, as always); a late launch's results are kept for
    /// `take_late_results`.
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
            Deferred::Gpus(parts, late) => {
                // SAFETY: see `LateLaunch::desc`.
                let desc = late.as_ref().map(|l| &*l.desc);
                let mut results = Vec::with_capacity(parts.len());
                for part in parts {
                    let DeferredPart {
                        device,
                        pending,
                        block,
                        values,
                        told,
                        mut args,
                    } = part;
                    let failed_before = (*ctx).status != STATUS_OK;
                    match self.gpu(device) {
                        Ok(gpu) => {
                            gpu.finish_deferred(ctx, pending, desc.map(|d| (d, &mut args[..])))
                        }
                        Err(kind) => {
                            // Its kernel may still write its scratch buffer: never freed.
                            std::mem::forget(pending);
                            crate::host::fail(ctx, kind, None)
                        }
                    }
                    if told && !failed_before && (*ctx).status != STATUS_OK {
                        self.tell_block(ctx, device, block, values);
                    }
                    results.push(args);
                }
                if let (Some(l), Some(desc)) = (late, desc) {
                    let mut combined = results.first().cloned().unwrap_or_default();
                    super::split::combine_parts(desc, &results, &mut combined);
                    self.late_results.push((l.key, combined));
                }
                let _ = self.current_device();
            }
        }
    }

    /// The results of a launch given `LAUNCH_RESULTS_LATE` (`acc_rt_launch_results`), whose
    /// argument slots `args` are at address `key`: where it was left running, the host
    /// catches up on it first (and on a failure left to tell, which comes before them).
    /// Where it was not, the launch wrote them itself.
    ///
    /// # Safety
    /// `ctx` is a live context; `args` match `desc`.
    pub(crate) unsafe fn take_late_results(
        &mut self,
        ctx: *mut Ctx,
        desc: &RegionDesc,
        key: usize,
        args: &mut [u64],
    ) {
        let waiting = match &self.deferred {
            Some(Deferred::Gpus(_, Some(l))) => l.key == key,
            Some(Deferred::Failed(_)) => true,
            _ => false,
        };
        if waiting {
            self.catch_up(ctx);
        }
        if let Some(i) = self.late_results.iter().position(|(k, _)| *k == key) {
            let (_, results) = self.late_results.swap_remove(i);
            for (i, p) in desc.params.iter().enumerate() {
                if p.pass.is_result() {
                    args[i] = results[i];
                }
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
