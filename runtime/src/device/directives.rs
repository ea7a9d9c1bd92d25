//! Data directives, waits and the runtime routines' questions on the current device.

use acc_abi::DataModifiers;
use std::time::Instant;

use super::ops::{decode_queues, DataOpArg, DataPhase, QueueArg};
use super::{emulated, report, Current, DeviceKind, Devices, OpenRegion, ASYNC_SYNC};
use crate::abi::Ctx;
use crate::error::RunError;
use crate::host::host_state;
use crate::profile::EventKind;
use crate::queue::QueueId;

/// Checks the queue values of a directive or routine (its `async` value and `wait` list)
/// before any device looks at them, so that every device, and synchronous mode, accepts and
/// rejects the same values (LANGUAGE.md 7.7): `acc_async_sync`, `acc_async_noval` (through the
/// default queue, which `acc_set_default_async` may have set to anything) and numbers >= 0.
/// Devices that share host memory ignore the values otherwise. False after recording the
/// error.
///
/// # Safety
/// `ctx` is a live context.
pub(super) unsafe fn queue_values_ok(ctx: *mut Ctx, queue: i64, waits: &[i64], site: u32) -> bool {
    let default_async = host_state(ctx).default_async();
    let bad = QueueArg::decode(queue, default_async)
        .err()
        .or_else(|| decode_queues(waits, default_async).err());
    match bad {
        None => true,
        Some(kind) => {
            crate::host::fail(ctx, kind, Some(site));
            false
        }
    }
}

impl Devices {
    /// A queue argument of compiled code, or `None` after recording a bad one.
    pub(super) unsafe fn queue_arg(
        &self,
        ctx: *mut Ctx,
        queue: i64,
        site: u32,
    ) -> Option<QueueArg> {
        if self.opts.synchronous {
            return Some(QueueArg::Sync);
        }
        match QueueArg::decode(queue, host_state(ctx).default_async()) {
            Ok(q) => Some(q),
            Err(kind) => {
                crate::host::fail(ctx, kind, Some(site));
                None
            }
        }
    }

    /// A `wait(…)` clause on the current emulated device before an operation on `q`: the
    /// host waits for a synchronous operation, the queue for an asynchronous one. False after
    /// recording an error.
    pub(super) unsafe fn wait_clause(
        &mut self,
        ctx: *mut Ctx,
        waits: Option<&[i64]>,
        q: QueueArg,
        site: u32,
    ) -> bool {
        let Some(waits) = waits else { return true };
        let ids = match decode_queues(waits, host_state(ctx).default_async()) {
            Ok(ids) => ids,
            Err(kind) => {
                crate::host::fail(ctx, kind, Some(site));
                return false;
            }
        };
        self.wait_on(ctx, &ids, waits.is_empty(), q, site);
        (*ctx).status == crate::abi::STATUS_OK
    }

    /// Waits for queues `ids` (all queues when `all`): the host blocks (`q` is `Sync`) or
    /// queue `q` waits.
    pub(super) unsafe fn wait_on(
        &mut self,
        ctx: *mut Ctx,
        ids: &[QueueId],
        all: bool,
        q: QueueArg,
        site: u32,
    ) {
        let place = self.place(site, emulated::queue_number(q));
        let profiler = self.profiler.clone();
        let start = Instant::now();
        match self.current_device() {
            Err(e) => return crate::host::fail(ctx, e, Some(site)),
            Ok(Current::Shared) => return,
            Ok(Current::Emulated(dev)) => {
                let ids: Vec<QueueId> = if all {
                    dev.queues().used()
                } else {
                    ids.to_vec()
                };
                match q {
                    QueueArg::Sync => {
                        if all {
                            dev.wait_all();
                        } else {
                            for &id in &ids {
                                dev.wait(id);
                            }
                        }
                        dev.drain(ctx);
                    }
                    QueueArg::Async(r) => dev.queues().submit_wait(r, &ids),
                }
            }
            Ok(Current::Nvidia(gpu)) => match q {
                QueueArg::Sync if all => gpu.wait(ctx, None),
                QueueArg::Sync => ids.iter().for_each(|&id| gpu.wait(ctx, Some(id))),
                QueueArg::Async(r) => {
                    let ids = if all { gpu.queues_used() } else { ids.to_vec() };
                    if let Err(e) = gpu.join(r, &ids) {
                        crate::host::fail(ctx, e, Some(site));
                    }
                }
            },
        }
        profiler.record(place, EventKind::Wait, start, Instant::now());
    }

    /// `acc_rt_data`: a data directive, or one side of a `data` construct.
    ///
    /// A `data` construct's entry is recorded (`OpenRegion`) with the device it ran on and
    /// the clauses it entered; its exit exits exactly those, on that device. A construct that
    /// an error (or `exit`) leaves early is exited by `unwind` at the end of the run.
    ///
    /// # Safety
    /// `ctx` is a live context; the ops' arrays are live.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn data(
        &mut self,
        ctx: *mut Ctx,
        phase: DataPhase,
        ops: &[DataOpArg],
        modifiers: DataModifiers,
        queue: i64,
        waits: Option<&[i64]>,
        site: u32,
    ) {
        let now = Instant::now();
        let event = match phase {
            DataPhase::RegionExit => EventKind::RegionExit,
            _ => EventKind::RegionEnter,
        };
        self.profiler
            .record(self.place(site, None), event, now, now);
        if !queue_values_ok(ctx, queue, waits.unwrap_or_default(), site) {
            return;
        }
        if phase == DataPhase::RegionExit {
            if let Some(region) = self.open.pop() {
                if let Err(e) = self.exit_region(&region, None) {
                    report(ctx, e);
                }
                return;
            }
        }
        if matches!(self.kind, DeviceKind::Host | DeviceKind::Multicore) {
            // Sections are checked on every device, so that a program fails the same way
            // everywhere (LANGUAGE.md 7.3).
            for op in ops {
                if let Err(kind) = super::ops::placed(op) {
                    return crate::host::fail(ctx, kind, Some(op.site));
                }
            }
            if phase == DataPhase::RegionEntry {
                self.open.push(OpenRegion::new(None, QueueArg::Sync, &[]));
            }
            return;
        }
        let Some(q) = self.queue_arg(ctx, queue, site) else {
            return;
        };
        if !self.wait_clause(ctx, waits, q, site) {
            return;
        }
        if let (DataPhase::RegionEntry, Some(list)) = (phase, modifiers.device_list()) {
            let devices = self.listed_devices(&list);
            if !devices.is_empty() {
                match self.enter_split_region(ops, &devices) {
                    Ok(()) => {
                        let mut region = OpenRegion::new(Some((self.kind, self.num)), q, ops);
                        region.split = devices;
                        self.open.push(region);
                    }
                    Err(e) => report(ctx, e),
                }
                return;
            }
        }
        let held;
        let ops = if phase == DataPhase::Update && !self.split.is_empty() {
            held = match self.update_split(ops) {
                Ok(rest) => rest,
                Err(e) => return report(ctx, e),
            };
            &held[..]
        } else {
            ops
        };
        let device = (self.kind, self.num);
        let done = match (self.current_device(), phase) {
            (Err(e), _) => Err(RunError {
                kind: e,
                site: Some(site),
            }),
            (Ok(Current::Shared), _) => Ok(()),
            (Ok(Current::Emulated(dev)), DataPhase::RegionEntry) => dev.enter_ops(ops, q),
            (Ok(Current::Nvidia(gpu)), DataPhase::RegionEntry) => gpu.enter_ops(ops, q),
            (Ok(Current::Emulated(dev)), _) => ops
                .iter()
                .try_for_each(|op| dev.data_op(phase, op, modifiers, q)),
            (Ok(Current::Nvidia(gpu)), _) => ops
                .iter()
                .try_for_each(|op| gpu.data_op(phase, op, modifiers, q)),
        };
        match done {
            Err(e) => report(ctx, e),
            Ok(()) if phase == DataPhase::RegionEntry => {
                self.open.push(OpenRegion::new(Some(device), q, ops));
            }
            Ok(()) => {}
        }
    }

    /// Exits a recorded `data` construct's clauses on the device it entered them on, on its
    /// queue or on `queue`.
    unsafe fn exit_region(
        &mut self,
        region: &OpenRegion,
        queue: Option<QueueArg>,
    ) -> Result<(), RunError> {
        let Some((kind, num)) = region.device else {
            return Ok(());
        };
        if !region.split.is_empty() {
            let current = (self.kind, self.num);
            (self.kind, self.num) = (kind, num);
            let done = self.exit_split_region(&region.ops, &region.split);
            (self.kind, self.num) = current;
            return done;
        }
        let q = queue.unwrap_or(region.q);
        let current = (self.kind, self.num);
        (self.kind, self.num) = (kind, num);
        let done = match self.current_device() {
            Err(kind) => Err(RunError { kind, site: None }),
            Ok(Current::Shared) => Ok(()),
            Ok(Current::Emulated(dev)) => dev.exit_ops(&region.ops, q),
            Ok(Current::Nvidia(gpu)) => gpu.exit_ops(&region.ops, q),
        };
        (self.kind, self.num) = current;
        done
    }

    /// Exits every `data` construct still open, innermost first, as their ends would (the
    /// end of a run: a run-time error or `exit` left them early). Device memory is freed and
    /// the presence entries go; `copy` and `copyout` data is copied out, so that the host sees
    /// what the device held when the run stopped, as it would on a device that shares host
    /// memory. The queues are drained by then: the transfers run synchronously. Errors of
    /// the exits themselves are dropped (the run already failed).
    ///
    /// # Safety
    /// The recorded arrays are live (the records hold references).
    pub(super) unsafe fn unwind(&mut self) {
        while let Some(region) = self.open.pop() {
            let _ = self.exit_region(&region, Some(QueueArg::Sync));
        }
    }

    /// `acc wait(queues…) [async(q)]` (`all`: `acc wait` with no list).
    ///
    /// # Safety
    /// `ctx` is a live context.
    pub unsafe fn wait(&mut self, ctx: *mut Ctx, queues: &[i64], all: bool, queue: i64, site: u32) {
        if !queue_values_ok(ctx, queue, queues, site) {
            return;
        }
        if matches!(self.kind, DeviceKind::Host | DeviceKind::Multicore) {
            return;
        }
        let Some(q) = self.queue_arg(ctx, queue, site) else {
            return;
        };
        let ids = match decode_queues(queues, host_state(ctx).default_async()) {
            Ok(ids) => ids,
            Err(kind) => return crate::host::fail(ctx, kind, Some(site)),
        };
        self.wait_on(ctx, &ids, all, q, site);
    }

    /// A data routine (`acc_copyin(a)` …) on the current device: a dynamic data op.
    ///
    /// # Safety
    /// `ctx` is a live context; `op.array` is live.
    pub unsafe fn routine(&mut self, ctx: *mut Ctx, phase: DataPhase, op: &DataOpArg) {
        let site = op.site;
        self.data(
            ctx,
            phase,
            std::slice::from_ref(op),
            DataModifiers::NONE,
            ASYNC_SYNC,
            None,
            site,
        );
    }

    /// `acc_is_present(a)`: always true on devices that share host memory.
    ///
    /// # Safety
    /// `ctx` is a live context; `op.array` is live.
    pub unsafe fn is_present(&mut self, ctx: *mut Ctx, op: &DataOpArg) -> bool {
        let present = match self.current_device() {
            Err(e) => Err(e),
            // The section is checked on every device.
            Ok(Current::Shared) => super::ops::placed(op).map(|_| true),
            Ok(Current::Emulated(dev)) => dev.is_present(op),
            Ok(Current::Nvidia(gpu)) => gpu.is_present(op),
        };
        match present {
            Ok(p) => p,
            Err(kind) => {
                crate::host::fail(ctx, kind, Some(op.site));
                false
            }
        }
    }

    /// `acc_async_test(q)` / `acc_async_test_all()` (`None`).
    pub fn async_test(&mut self, q: Option<QueueId>) -> bool {
        match self.current_device() {
            Err(_) | Ok(Current::Shared) => true,
            Ok(Current::Emulated(dev)) => match q {
                Some(id) => dev.queues().test(id),
                None => dev.queues().test_all(),
            },
            Ok(Current::Nvidia(gpu)) => gpu.test(q),
        }
    }
}
