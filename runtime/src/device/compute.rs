//! Compute constructs on the current device (`Devices::launch`): the shared-memory devices
//! run the gangs on the caller's context or the pool; `emulated` queues the kernel on its
//! device copies; `nvidia` launches the region's GPU kernel, or runs it on the host on mirrors
//! of the GPU's data when there is none yet.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::ops::{DataOpArg, QueueArg};
use acc_abi::{LaunchSizes, ABSENT};

use super::{emulated, report, Current, DeviceKind, Devices};
use super::{DEVICE_EMULATED, DEVICE_MULTICORE, DEVICE_NVIDIA};
use crate::abi::{ArrayHeader, Ctx};
use crate::error::{RunError, RunErrorKind};
use crate::host::host_state;
use crate::launch::{self, ComputeKind, RegionDesc, RegionFn};
use crate::profile::EventKind;

/// One launch of a compute construct, as compiled code describes it (`acc_rt_launch`).
pub struct Launch<'a> {
    pub desc: &'a RegionDesc,
    /// One slot per region parameter; the results' slots are updated on return.
    pub args: &'a mut [u64],
    /// The construct's data clauses.
    pub ops: &'a [DataOpArg],
    /// `num_gangs`, `num_workers`, `vector_length` per device type.
    pub sizes: &'a LaunchSizes,
    /// The `async` value (`ASYNC_SYNC` without the clause).
    pub queue: i64,
    /// The `wait` clause's queues (`None` without it).
    pub waits: Option<&'a [i64]>,
    pub site: u32,
    /// Compiled code takes the results with `acc_rt_launch_results` (`acc_abi::LAUNCH_RESULTS_LATE`):
    /// a launch with results may be left running too (`deferred.rs`).
    pub late: bool,
}

impl<'a> Launch<'a> {
    /// An error at the construct.
    pub(super) fn error(&self, kind: RunErrorKind) -> RunError {
        RunError {
            kind,
            site: Some(self.site),
        }
    }

    /// The region's host code (every device but a GPU with a kernel for it runs that).
    pub(super) fn host_code(&self) -> Result<RegionFn, RunError> {
        self.desc.func().ok_or_else(|| {
            self.error(RunErrorKind::Internal {
                message: "a region launched before its code was finalized".into(),
            })
        })
    }
}

/// `devices(…)` on one device, the current one (until the runtime cuts launches over several):
/// the block parameters of a cut region take the whole split loop, `[0, trip)`, or, when the
/// loop's formula cannot be read, the bounds that run every iteration without knowing them.
///
/// # Safety
/// The array parameters' slots of `args` hold live array headers.
unsafe fn set_split_block(desc: &RegionDesc, args: &mut [u64]) {
    let Some(Ok(split)) = desc.split.as_ref().map(|p| p.split.as_ref()) else {
        return;
    };
    let (lo, hi) = {
        // SAFETY: the caller's promise.
        let launch = unsafe { crate::gang_loop::LaunchArgs::new(args, &desc.params) };
        match split.trip_count(&launch) {
            Some(trip) => (0, trip),
            None => split.everything(),
        }
    };
    if split.lo_param < args.len() && split.hi_param < args.len() {
        args[split.lo_param] = lo as u64;
        args[split.hi_param] = hi as u64;
    }
}

/// A pointer that a queued job carries to another thread.
#[derive(Clone, Copy)]
struct SendPtr<T>(*const T);
// SAFETY: what it points at outlives every queued job (the engine waits for all queues at the
// end of a run; region descriptors live as long as their code) and is only read.
unsafe impl<T> Send for SendPtr<T> {}

impl Devices {
    /// The gang count of a launch on the current device: `num_gangs` for its type (the
    /// `nvidia` one on `emulated`, which stands in for a GPU), else one per pool thread on
    /// the threaded devices and 1 on `host`; always 1 for `serial` and for the `kernels`
    /// regions that run as one gang (`ComputeKind` says which: one loop nest is `Parallel`).
    pub(super) fn gangs(&self, desc: &RegionDesc, sizes: &LaunchSizes, kind: DeviceKind) -> i64 {
        if desc.kind != ComputeKind::Parallel {
            return 1;
        }
        let (given, default) = match kind {
            DeviceKind::Host => (sizes.host.num_gangs, 1),
            DeviceKind::Multicore => (sizes.multicore.num_gangs, self.opts.threads as i64),
            DeviceKind::Emulated | DeviceKind::Nvidia => {
                (sizes.nvidia.num_gangs, self.opts.threads as i64)
            }
        };
        if given == ABSENT {
            default
        } else {
            given.max(1)
        }
    }

    /// Runs a region on the host or multicore device, or on the host for `if(false)`.
    ///
    /// # Safety
    /// As `entry::acc_rt_launch`.
    unsafe fn launch_shared_memory(&mut self, ctx: *mut Ctx, l: &mut Launch<'_>, kind: DeviceKind) {
        let func = match l.host_code() {
            Ok(f) => f,
            Err(e) => return report(ctx, e),
        };
        let Launch {
            desc,
            ref mut args,
            sizes,
            site,
            ..
        } = *l;
        let gangs = self.gangs(desc, sizes, kind);
        let start = std::time::Instant::now();
        if kind == DeviceKind::Host || gangs == 1 {
            let out = launch::run_gangs_inline(ctx, desc, func, args, gangs);
            args.copy_from_slice(&out);
        } else {
            let pool = self.pool();
            let r = launch::run_gangs_threaded(
                &pool,
                launch::Launcher::of(ctx),
                DEVICE_MULTICORE,
                desc,
                func,
                args,
                gangs,
            );
            host_state(ctx).write(&r.output);
            if let Some(e) = r.error {
                report(ctx, e);
            }
            args.copy_from_slice(&r.args);
        }
        let place = self.place(site, None);
        self.profiler.record(
            place,
            EventKind::Launch {
                gangs: gangs as u32,
                workers: 1,
                vector: 1,
            },
            start,
            std::time::Instant::now(),
        );
    }

    /// `acc_rt_launch`: a compute construct's data entry, the kernel, the data exit (`cond`
    /// false: `if(false)`, on the host with no data movement).
    ///
    /// # Safety
    /// `ctx` is a live context; `l.args` matches `l.desc.params`; the ops' arrays are live.
    pub unsafe fn launch(&mut self, ctx: *mut Ctx, mut l: Launch<'_>, cond: bool) {
        let site = l.site;
        // Only a synchronous split construct, or one a GPU may leave running, may queue behind
        // one left running; anything else comes after it (`deferred.rs`).
        let synchronous = cond && l.waits.is_none() && l.queue == super::ASYNC_SYNC;
        let whole = synchronous && l.desc.split.is_none() && self.may_leave_running(&l);
        let may_follow = (synchronous && l.desc.split.is_some()) || whole;
        if !may_follow {
            self.catch_up(ctx);
            if (*ctx).status != crate::abi::STATUS_OK {
                return;
            }
        }
        if !super::directives::queue_values_ok(ctx, l.queue, l.waits.unwrap_or_default(), site) {
            return;
        }
        // A loop parallelized on the proof that two arrays differ must not run with them one
        // array (a later compile or the embedding program may have bound one to the other).
        // Every device checks, so that all give the same output; `if(false)` too.
        if let Some(e) = l.desc.shared_storage(l.args) {
            self.catch_up(ctx);
            return report(ctx, e);
        }
        // SAFETY: the caller promised live array headers in `l.args`.
        set_split_block(l.desc, l.args);
        let now = Instant::now();
        self.profiler
            .record(self.place(site, None), EventKind::RegionEnter, now, now);
        match cond {
            false => self.launch_shared_memory(ctx, &mut l, DeviceKind::Host),
            true if self.launch_split(ctx, &mut l) => {}
            true if whole && self.launch_left_running(ctx, &mut l) => {}
            // Arrays a `devices` region holds split are brought whole to where it runs.
            // (after a split launch left running, which a whole one does not queue behind).
            true => {
                self.catch_up(ctx);
                if (*ctx).status == crate::abi::STATUS_OK {
                    match self.before_split_use(l.desc, l.args, site) {
                        Ok(used) => {
                            if self.autocompare.is_some() {
                                self.launch_compared(ctx, &mut l);
                            } else {
                                self.launch_on_device(ctx, &mut l);
                            }
                            self.after_split_use(&used);
                        }
                        Err(e) => report(ctx, e),
                    }
                }
            }
        }
        let now = Instant::now();
        self.profiler
            .record(self.place(site, None), EventKind::RegionExit, now, now);
    }

    /// Whether a synchronous construct that is not split may be left running on the current
    /// GPU (`launch_left_running`): a GPU, no `--autocompare`, `--profile`, `--trace` or
    /// `ACC_SYNCHRONOUS`, results none or taken late, and no array a `devices` region holds
    /// split (which a construct left running there may be using).
    ///
    /// # Safety
    /// `l`'s array slots hold live headers.
    unsafe fn may_leave_running(&self, l: &Launch<'_>) -> bool {
        self.kind == DeviceKind::Nvidia
            && self.autocompare.is_none()
            && !self.opts.synchronous
            && !self.opts.profile.is_on()
            && (l.late || !l.desc.has_results())
            && (self.split.is_empty()
                || l.desc.params.iter().zip(l.args.iter()).all(|(p, &a)| {
                    let a = a as usize as *mut ArrayHeader;
                    !p.is_array()
                        || a.is_null()
                        || !self.split.contains_key(&(*super::ops::storage(a)).id)
                }))
    }

    /// A compute construct on the current device.
    ///
    /// # Safety
    /// As `launch`.
    pub(super) unsafe fn launch_on_device(&mut self, ctx: *mut Ctx, l: &mut Launch<'_>) {
        match self.kind {
            DeviceKind::Emulated => self.launch_emulated(ctx, l),
            DeviceKind::Nvidia => self.launch_nvidia(ctx, l),
            kind => {
                // Sections are checked on every device (LANGUAGE.md 7.3).
                match l
                    .ops
                    .iter()
                    .find_map(|op| Some((super::ops::placed(op).err()?, op.site)))
                {
                    Some((kind, at)) => crate::host::fail(ctx, kind, Some(at)),
                    None => self.launch_shared_memory(ctx, l, kind),
                }
            }
        }
    }

    unsafe fn launch_emulated(&mut self, ctx: *mut Ctx, l: &mut Launch<'_>) {
        let func = match l.host_code() {
            Ok(f) => f,
            Err(e) => return report(ctx, e),
        };
        let Some(q) = self.launch_queue(ctx, l) else {
            return;
        };
        let Launch {
            desc,
            ref mut args,
            ops,
            sizes,
            site,
            ..
        } = *l;
        let gangs = self.gangs(desc, sizes, DeviceKind::Emulated);
        let pool = self.pool();
        let num = self.num;
        let profiler = self.profiler.clone();
        let place = self.place(site, emulated::queue_number(q));
        let dev = self.emulated(num);
        if let Err(e) = dev.enter_ops(ops, q) {
            return report(ctx, e);
        }
        let mut slots = args.to_vec();
        let mut failed = None;
        for (i, p) in desc.params.iter().enumerate() {
            if p.is_array() {
                match dev.device_array(slots[i] as usize as *mut ArrayHeader) {
                    Ok(a) => slots[i] = a as usize as u64,
                    Err(e) => {
                        failed = Some((i, e));
                        break;
                    }
                }
            }
        }
        if let Some((n, kind)) = failed {
            for (slot, p) in slots.iter().zip(&desc.params).take(n) {
                if p.is_array() {
                    crate::array::release(*slot as usize as *mut ArrayHeader);
                }
            }
            let _ = dev.exit_ops(ops, q);
            return report(
                ctx,
                RunError {
                    kind,
                    site: Some(site),
                },
            );
        }
        let results = Arc::new(Mutex::new(None));
        let (mailbox, out) = (dev.mailbox(), results.clone());
        let (launcher, desc_ptr) = (
            launch::Launcher::of(ctx),
            SendPtr(desc as *const RegionDesc),
        );
        let job = move || {
            let launcher = launcher;
            let desc_ptr = desc_ptr;
            // SAFETY: see `SendPtr`; the slots hold references on their arrays.
            let desc = unsafe { &*desc_ptr.0 };
            let start = Instant::now();
            let r = unsafe {
                launch::run_gangs_threaded(
                    &pool,
                    launcher,
                    DEVICE_EMULATED,
                    desc,
                    func,
                    &slots,
                    gangs,
                )
            };
            let launch = EventKind::Launch {
                gangs: gangs as u32,
                workers: 1,
                vector: 1,
            };
            profiler.record(place, launch, start, Instant::now());
            for (slot, p) in slots.iter().zip(&desc.params) {
                if p.is_array() {
                    // SAFETY: the reference taken when the job was made.
                    unsafe { crate::array::release(*slot as usize as *mut ArrayHeader) };
                }
            }
            *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(r.args);
            let mut m = mailbox.lock().unwrap_or_else(|e| e.into_inner());
            m.push(emulated::Completion {
                output: r.output,
                error: r.error,
            });
        };
        dev.run(q, Box::new(job));
        if let Err(e) = dev.exit_ops(ops, q) {
            report(ctx, e);
        }
        if q == QueueArg::Sync || desc.has_results() {
            if let QueueArg::Async(id) = q {
                dev.wait(id);
            }
            dev.drain(ctx);
            if let Some(after) = results.lock().unwrap_or_else(|e| e.into_inner()).take() {
                for (i, p) in desc.params.iter().enumerate() {
                    if p.pass.is_result() {
                        args[i] = after[i];
                    }
                }
            }
        }
    }

    /// What a launch on a discrete device does first: decodes its `async` queue and waits
    /// for its `wait` clause's queues. `None` after recording an error.
    ///
    /// # Safety
    /// `ctx` is a live context.
    unsafe fn launch_queue(&mut self, ctx: *mut Ctx, l: &Launch<'_>) -> Option<QueueArg> {
        let q = self.queue_arg(ctx, l.queue, l.site)?;
        self.wait_clause(ctx, l.waits, q, l.site).then_some(q)
    }

    /// A compute construct on the current GPU.
    unsafe fn launch_nvidia(&mut self, ctx: *mut Ctx, l: &mut Launch<'_>) {
        let Some(q) = self.launch_queue(ctx, l) else {
            return;
        };
        // Device printf output appears when the GPU synchronizes: the host's goes first.
        let _ = host_state(ctx).flush();
        let kernel = self.kernels.get(l.desc.key);
        let done = match (self.current_device(), kernel.as_deref()) {
            // `no_create` of absent data: the region uses the host's data, so it runs on the
            // host (on mirrors of whatever else is on the GPU), as the emulated device does.
            (Ok(Current::Nvidia(gpu)), Some(kernel)) if !gpu.uses_host_data(l.ops) => {
                gpu.launch(ctx, l, q, kernel)
            }
            (Ok(Current::Nvidia(_)), _) => self.launch_for_gpu_on_host(ctx, l, q),
            (Ok(_), _) => Ok(()),
            (Err(e), _) => Err(l.error(e)),
        };
        if let Err(e) = done {
            report(ctx, e);
        }
    }

    /// A region the GPU has no kernel for (jit-ptx does not emit it yet), or one that uses
    /// host data (`no_create` of absent data), run on the host in the GPU's place: each array
    /// argument present on the GPU is mirrored into a temporary host array (so the host's own
    /// copy is left alone, as a GPU run would), the others are used in host memory, the gangs
    /// run on the pool, and the mirrors go back to the GPU. Correct for any region; slow
    /// (every array crosses the bus twice). Asynchronous launches of such regions run
    /// synchronously.
    unsafe fn launch_for_gpu_on_host(
        &mut self,
        ctx: *mut Ctx,
        l: &mut Launch<'_>,
        q: QueueArg,
    ) -> Result<(), RunError> {
        let func = l.host_code()?;
        let Launch {
            desc,
            ref mut args,
            ops,
            sizes,
            site,
            ..
        } = *l;
        let at = |kind| RunError {
            kind,
            site: Some(site),
        };
        if let QueueArg::Async(id) = q {
            self.wait_on(ctx, &[id], false, QueueArg::Sync, site);
        }
        let pool = self.pool();
        let gangs = self.gangs(desc, sizes, DeviceKind::Nvidia);
        let Ok(Current::Nvidia(gpu)) = self.current_device() else {
            return Ok(());
        };
        gpu.enter_ops(ops, QueueArg::Sync)?;
        // From here on the clauses are exited whatever happens, as at the region's end.
        let mut slots = args.to_vec();
        let mut mirrors = Vec::new();
        let mut ran = Ok(());
        for (slot, p) in slots.iter_mut().zip(&desc.params) {
            if p.is_array() {
                let host = *slot as usize as *mut ArrayHeader;
                match gpu.mirror(host) {
                    Ok(Some(temp)) => {
                        mirrors.push((host, temp));
                        *slot = temp as usize as u64;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        ran = Err(at(e));
                        break;
                    }
                }
            }
        }
        let r = ran.is_ok().then(|| {
            launch::run_gangs_threaded(
                &pool,
                launch::Launcher::of(ctx),
                DEVICE_NVIDIA,
                desc,
                func,
                &slots,
                gangs,
            )
        });
        for (host, temp) in mirrors {
            // Mirrors of a run that did not happen are only freed.
            let back = if r.is_some() {
                gpu.unmirror(host, temp)
            } else {
                crate::array::release(temp);
                Ok(())
            };
            if let (Err(e), true) = (back, ran.is_ok()) {
                ran = Err(at(e));
            }
        }
        if let Some(r) = r {
            host_state(ctx).write(&r.output);
            match r.error {
                Some(e) if ran.is_ok() => ran = Err(e),
                Some(_) => {}
                None if ran.is_ok() => {
                    for (i, p) in desc.params.iter().enumerate() {
                        if p.pass.is_result() {
                            args[i] = r.args[i];
                        }
                    }
                }
                None => {}
            }
        }
        let exited = gpu.exit_ops(ops, QueueArg::Sync);
        ran.and(exited)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::ELEM_I64;
    use crate::launch::{ParamDesc, ParamPass, RegionKey};
    use acc_abi::gang_loop::{Counted, TripExpr};
    use acc_abi::split::{DeviceList, LoopSplit, SplitPlan};

    /// A region of parameters `n`, `split_lo`, `split_hi` whose split loop is `for j in 1..=end`.
    fn region(end: TripExpr, step: i64) -> RegionDesc {
        let params = (0..3)
            .map(|_| ParamDesc::new(ParamPass::Value, ELEM_I64))
            .collect();
        let key = RegionKey { unit: 0, region: 0 };
        let mut desc = RegionDesc::new(key, ComputeKind::Parallel, "parallel loop", params, vec![]);
        desc.split = Some(SplitPlan {
            devices: DeviceList::All,
            split: Ok(LoopSplit {
                lo_param: 1,
                hi_param: 2,
                counted: Counted {
                    start: TripExpr::Const(1),
                    end,
                    step,
                    inclusive: true,
                },
                arrays: Vec::new(),
                ordered: false,
            }),
        });
        desc
    }

    #[test]
    fn one_device_runs_the_whole_split_loop() {
        // `for j in 1..=n step 3` with n = 10: j = 1, 4, 7, 10.
        let desc = region(TripExpr::Arg(0), 3);
        let mut args = [10u64, 77, 77];
        // SAFETY: no array parameters.
        unsafe { set_split_block(&desc, &mut args) };
        assert_eq!(args, [10, 0, 4]);
        // An empty loop: n = -5.
        let mut args = [(-5i64) as u64, 77, 77];
        unsafe { set_split_block(&desc, &mut args) };
        assert_eq!(args, [(-5i64) as u64, 0, 0]);
    }

    #[test]
    fn a_formula_that_cannot_be_read_runs_everything() {
        let desc = region(TripExpr::Arg(9), 3);
        let mut args = [10u64, 77, 77];
        // SAFETY: no array parameters.
        unsafe { set_split_block(&desc, &mut args) };
        assert_eq!(args, [10, 0, (i64::MAX / 3) as u64]);
    }
}
