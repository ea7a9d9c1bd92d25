//! `--autocompare` (LANGUAGE.md §8), like NVHPC's PCAST: every compute region runs on the
//! current device and again on the host, on copies of its inputs; afterwards what the region
//! writes (the arrays it assigns elements of, its reductions and `copy` scalars) is compared,
//! every difference beyond the tolerances is reported on standard error with the region's
//! place, and the run goes on with the device's values.
//!
//! The host run works as NVHPC's does: on the host's own arrays where the region's data is in
//! device memory, so that the host's data follows what the program would compute on the host
//! (a later region's host run then starts from it, and data made on the device with `create`
//! has host values too); copies, back out, and the device's results win wherever the data
//! comes back. Where the device run itself writes host memory (a shared-memory device,
//! `no_create` of absent data), the host run writes a copy instead.
//!
//! One compared launch, in order:
//! 1. every queue of the current device is waited for (compared launches are synchronous);
//! 2. the construct's clauses are entered once more around the launch, as an enclosing `data`
//!    construct with the same clauses would be, so that every device copy the region writes
//!    is still there to read once it has run (an enclosing data region changes nothing a
//!    region computes);
//! 3. what each array the region writes holds before it, on both sides, is kept;
//! 4. the region runs on the device, synchronously, exactly as without the option;
//! 5. the region's host code runs (`Watched`), with the host device's gang count and its
//!    output dropped; a failure there is reported, not fatal;
//! 6. the device's values (read into scratch memory) are compared with the host run's, only
//!    where either run changed an element (`diff.rs`), and the clauses of step 2 exit.
//!
//! Without the option none of this exists: `Devices::launch` goes straight to the device.

mod diff;

pub use diff::{AutocompareOptions, F32_REL_TOL, F64_REL_TOL};

use super::compute::Launch;
use super::ops::QueueArg;
use super::{report, Current, DeviceKind, Devices, ASYNC_SYNC, DEVICE_HOST};
use crate::abi::{ArrayHeader, Ctx, STATUS_OK};
use crate::array;
use crate::error::{RunError, RunErrorKind};
use crate::launch::{self, ParamPass};

/// The state of `--autocompare` over a run: its options and the reports written so far.
pub(super) struct Autocompare {
    opts: AutocompareOptions,
    reported: usize,
}

impl Autocompare {
    pub(super) fn new(opts: AutocompareOptions) -> Autocompare {
        Autocompare { opts, reported: 0 }
    }

    /// Counts one report against the limit: `Some(text)` to write it, with a last line when
    /// this reaches the limit; `None` once past it.
    fn admit(&mut self, text: String) -> Option<String> {
        if self.reported >= self.opts.limit {
            return None;
        }
        self.reported += 1;
        Some(if self.reported == self.opts.limit {
            format!(
                "{text}autocompare: further differences are not reported \
                 (ACC_AUTOCOMPARE_LIMIT={})\n",
                self.opts.limit
            )
        } else {
            text
        })
    }
}

/// An array the region writes: where the host run writes it, and what both sides held before
/// the region.
struct Watched {
    param: usize,
    /// The host array.
    array: *mut ArrayHeader,
    /// A copy the host run writes (holding one reference), when the device run writes the
    /// host array itself; `None`: the host run writes the host array.
    copy: Option<*mut ArrayHeader>,
    device_before: Vec<u8>,
    host_before: Vec<u8>,
}

impl Watched {
    /// The array the host run writes.
    fn host_run_array(&self) -> *mut ArrayHeader {
        self.copy.unwrap_or(self.array)
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Some(copy) = self.copy {
            // SAFETY: the reference `watch` made.
            unsafe { array::release(copy) };
        }
    }
}

/// The elements of `a` as bytes (a view's own elements: the start of its owner's data).
///
/// # Safety
/// `a` is a live array, and the bytes are not used after it goes.
unsafe fn bytes<'a>(a: *mut ArrayHeader) -> &'a mut [u8] {
    let size = array::elem_size((*a).elem).unwrap_or(1);
    let len = (*a).len.max(0) as usize * size;
    if len == 0 {
        return &mut [];
    }
    std::slice::from_raw_parts_mut((*a).data, len)
}

impl Devices {
    /// A compute construct under `--autocompare` (see the module doc).
    ///
    /// # Safety
    /// As `Devices::launch`.
    pub(super) unsafe fn launch_compared(&mut self, ctx: *mut Ctx, l: &mut Launch<'_>) {
        let site = l.site;
        self.wait(ctx, &[], true, ASYNC_SYNC, site);
        if (*ctx).status != STATUS_OK {
            return;
        }
        if let Err(e) = self.clauses(l, true) {
            return report(ctx, e);
        }
        let before = l.args.to_vec();
        match self.watch(l) {
            Ok(mut watched) => {
                l.queue = ASYNC_SYNC;
                self.launch_on_device(ctx, l);
                if (*ctx).status == STATUS_OK {
                    let text = self.compare(ctx, l, before, &mut watched);
                    if let Some(text) = text.and_then(|t| self.autocompare.as_mut()?.admit(t)) {
                        let _ = crate::host::host_state(ctx).flush();
                        self.profiler.notice(&text);
                    }
                }
            }
            Err(kind) => report(ctx, l.error(kind)),
        }
        if let Err(e) = self.clauses(l, false) {
            report(ctx, e);
        }
    }

    /// Enters (`enter`) or exits the construct's clauses on the current device, synchronously.
    unsafe fn clauses(&mut self, l: &Launch<'_>, enter: bool) -> Result<(), RunError> {
        match self.current_device() {
            Ok(Current::Emulated(dev)) if enter => dev.enter_ops(l.ops, QueueArg::Sync),
            Ok(Current::Emulated(dev)) => dev.exit_ops(l.ops, QueueArg::Sync),
            Ok(Current::Nvidia(gpu)) if enter => gpu.enter_ops(l.ops, QueueArg::Sync),
            Ok(Current::Nvidia(gpu)) => gpu.exit_ops(l.ops, QueueArg::Sync),
            Ok(Current::Shared) => Ok(()),
            Err(kind) => Err(l.error(kind)),
        }
    }

    /// The arrays the region writes, before it runs.
    unsafe fn watch(&mut self, l: &Launch<'_>) -> Result<Vec<Watched>, RunErrorKind> {
        let mut watched = Vec::new();
        for (param, p) in l.desc.params.iter().enumerate() {
            let a = l.args[param] as usize as *mut ArrayHeader;
            if p.pass != ParamPass::Array || !p.written || a.is_null() {
                continue;
            }
            let host_before = bytes(a).to_vec();
            let (copy, device_before) = match self.device_values(a)? {
                Some(values) => (None, values),
                None => {
                    let copy = array::new_array((*a).elem, array::shape(a))?;
                    bytes(copy).copy_from_slice(&host_before);
                    (Some(copy), host_before.clone())
                }
            };
            watched.push(Watched {
                param,
                array: a,
                copy,
                device_before,
                host_before,
            });
        }
        Ok(watched)
    }

    /// Runs the region on the host (from the slots `before` the device run) and compares what
    /// it wrote with the device's results (the launch's slots now, and the device copies):
    /// the report, if anything differs or the host run failed.
    unsafe fn compare(
        &mut self,
        ctx: *mut Ctx,
        l: &Launch<'_>,
        mut before: Vec<u64>,
        watched: &mut [Watched],
    ) -> Option<String> {
        let opts = self.autocompare.as_ref()?.opts;
        let place = self.profiler.site_name(l.site);
        for w in watched.iter() {
            before[w.param] = w.host_run_array() as usize as u64;
        }
        let host = match self.run_on_host(ctx, l, &before) {
            Ok(slots) => slots,
            Err(e) => {
                return Some(format!(
                    "autocompare: {place}: the host run failed ({}); nothing compared\n",
                    e.kind.message("")
                ))
            }
        };
        let mut text = String::new();
        for (i, p) in l.desc.params.iter().enumerate() {
            if p.pass.is_result() {
                if let Some(found) = diff::compare_scalar(&opts, p.elem, l.args[i], host[i]) {
                    text += &diff::report(&place, &p.name, None, &found);
                }
            }
        }
        for w in watched.iter() {
            let p = &l.desc.params[w.param];
            let device = match w.copy {
                Some(_) => Ok(bytes(w.array).to_vec()),
                None => self.device_values(w.array).map(Option::unwrap_or_default),
            };
            let device = match device {
                Ok(values) => values,
                Err(kind) => {
                    text += &format!(
                        "autocompare: {place}: `{}` could not be read from the device ({}); \
                         not compared\n",
                        p.name,
                        kind.message("")
                    );
                    continue;
                }
            };
            let runs = diff::Runs {
                device_before: &w.device_before,
                device: &device,
                host_before: &w.host_before,
                host: bytes(w.host_run_array()),
            };
            let size = array::elem_size(p.elem).unwrap_or(1);
            if let Some(found) = diff::compare_elements(&opts, p.elem, size, &runs) {
                text += &diff::report(&place, &p.name, Some(array::shape(w.array)), &found);
            }
        }
        (!text.is_empty()).then_some(text)
    }

    /// The region's host code on `slots`, as the host device runs it (its gang count, on the
    /// pool, `acc_on_device` answering the host); the slots after it. Its output is dropped.
    unsafe fn run_on_host(
        &mut self,
        ctx: *mut Ctx,
        l: &Launch<'_>,
        slots: &[u64],
    ) -> Result<Vec<u64>, RunError> {
        let func = l.host_code()?;
        let gangs = self.gangs(l.desc, l.sizes, DeviceKind::Host);
        let pool = self.pool();
        let r = launch::run_gangs_threaded(
            &pool,
            launch::Launcher::of(ctx),
            DEVICE_HOST,
            l.desc,
            func,
            slots,
            gangs,
        );
        match r.error {
            Some(e) => Err(e),
            None => Ok(r.args),
        }
    }

    /// What the current device holds for host array `a` in memory of its own, read into host
    /// memory; `None` when the region uses `a` itself (a shared-memory device, or `no_create`
    /// of absent data).
    ///
    /// # Safety
    /// `a` is a live array.
    unsafe fn device_values(
        &mut self,
        a: *mut ArrayHeader,
    ) -> Result<Option<Vec<u8>>, RunErrorKind> {
        let n = bytes(a).len();
        match self.current_device()? {
            Current::Emulated(dev) => Ok(dev
                .copy_of(a)
                .and_then(|copy| Some(bytes(copy).get(..n)?.to_vec()))),
            Current::Nvidia(gpu) => Ok(gpu.mirror(a)?.map(|temp| {
                let values = bytes(temp).to_vec();
                array::release(temp);
                values
            })),
            Current::Shared => Ok(None),
        }
    }
}
