//! The entry points compiled code calls for directives (docs/ABI.md): a compute construct,
//! a data directive, a `wait`. Each decodes its raw arguments and hands them to the current
//! run's `Devices`.

use acc_abi::{LaunchSizes, LAUNCH_IF, LAUNCH_RESULTS_LATE};

use super::devices;
use super::ops::{DataOpArg, DataPhase};
use crate::abi::Ctx;
use crate::error::RunErrorKind;
use crate::host::{fail, guard};
use crate::launch::RegionDesc;
use acc_abi::DataModifiers;

/// `n` records at `p` (none when `n` is 0, whatever `p` is).
unsafe fn records<'a, T>(p: *const T, n: u32) -> &'a [T] {
    if n == 0 || p.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(p, n as usize)
    }
}

/// A `wait(…)` list: `None` without the clause (`n` < 0), an empty list for `wait` alone.
unsafe fn wait_list<'a>(p: *const i64, n: i32) -> Option<&'a [i64]> {
    (n >= 0).then(|| records(p, n as u32))
}

/// A compute construct: `args` holds one slot per region parameter (the `InOut` ones are
/// updated on return, or by `acc_rt_launch_results` with `LAUNCH_RESULTS_LATE`), `ops` the
/// data clauses, `sizes` the launch sizes per device type, `flags` the `if` clause
/// (`LAUNCH_IF`) and whether the results may come late, `queue` the `async` value
/// (`ASYNC_SYNC` without the clause), `waits`/`nwaits` the `wait` clause.
///
/// # Safety
/// `ctx` is a live context; `desc` a live region descriptor whose parameters `args` matches;
/// `ops` points at `nops` records of live arrays; `sizes` at a `LaunchSizes`; `waits` at `nwaits`.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn acc_rt_launch(
    ctx: *mut Ctx,
    desc: *const RegionDesc,
    args: *mut u64,
    ops: *const DataOpArg,
    nops: u32,
    sizes: *const LaunchSizes,
    flags: u8,
    queue: i64,
    waits: *const i64,
    nwaits: i32,
    site: u32,
) {
    crate::host::guard_launch(ctx, Some(site), || {
        let cond = flags & LAUNCH_IF != 0;
        let desc = &*desc;
        let args = std::slice::from_raw_parts_mut(args, desc.params.len());
        let sizes = &*sizes;
        if let Err(kind) = crate::launch::check_sizes(sizes) {
            // A split launch left running came first, and so does its error.
            super::catch_up(ctx);
            return fail(ctx, kind, Some(site));
        }
        let ops = records(ops, nops);
        let waits = wait_list(waits, nwaits);
        let launch = super::Launch {
            desc,
            args,
            ops,
            sizes,
            queue,
            waits,
            site,
            late: flags & LAUNCH_RESULTS_LATE != 0,
        };
        devices(ctx).launch(ctx, launch, cond);
    })
}

/// The results of a launch given `LAUNCH_RESULTS_LATE`, into its `args` (the slots it was
/// given): waits for the launch where it was left running (`deferred.rs`), and reports its
/// failure. Nothing to do where the launch already wrote them.
///
/// # Safety
/// As `acc_rt_launch`, for the `desc` and `args` of a launch that compiled code gave
/// `LAUNCH_RESULTS_LATE` and has not taken the results of yet.
pub unsafe extern "C" fn acc_rt_launch_results(
    ctx: *mut Ctx,
    desc: *const RegionDesc,
    args: *mut u64,
) {
    // Not `guard`, which catches up on a launch left running: a launch the host started
    // after this one may stay running.
    crate::host::guard_launch(ctx, None, || {
        let desc = &*desc;
        let slots = std::slice::from_raw_parts_mut(args, desc.params.len());
        devices(ctx).take_late_results(ctx, desc, args as usize, slots);
    })
}

/// A data directive (`phase` an `ir::DataPhase` code): `enter data`, `exit data`, `update`,
/// `declare`, or the entry or exit of a `data` construct.
///
/// # Safety
/// As `acc_rt_launch`.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn acc_rt_data(
    ctx: *mut Ctx,
    phase: u32,
    ops: *const DataOpArg,
    nops: u32,
    flags: u32,
    cond: u8,
    queue: i64,
    waits: *const i64,
    nwaits: i32,
    site: u32,
) {
    if cond == 0 {
        return;
    }
    let Some(phase) = DataPhase::from_code(phase) else {
        let message = format!("unknown data phase {phase}");
        return fail(ctx, RunErrorKind::Internal { message }, Some(site));
    };
    guard(ctx, Some(site), || {
        devices(ctx).data(
            ctx,
            phase,
            records(ops, nops),
            DataModifiers::from_bits(flags),
            queue,
            wait_list(waits, nwaits),
            site,
        )
    });
}

/// `acc wait[(queues…)] [async(q)]`: `n` queues at `queues`, or every queue when `all`.
///
/// # Safety
/// `ctx` is a live context; `queues` points at `n` values.
pub unsafe extern "C" fn acc_rt_wait(
    ctx: *mut Ctx,
    queues: *const i64,
    n: u32,
    all: u8,
    queue: i64,
    site: u32,
) {
    let qs = records(queues, n);
    guard(ctx, Some(site), || {
        devices(ctx).wait(ctx, qs, all != 0, queue, site)
    });
}

pub fn symbols() -> Vec<(&'static str, *const u8)> {
    vec![
        ("acc_rt_launch", acc_rt_launch as *const u8),
        ("acc_rt_launch_results", acc_rt_launch_results as *const u8),
        ("acc_rt_data", acc_rt_data as *const u8),
        ("acc_rt_wait", acc_rt_wait as *const u8),
    ]
}
