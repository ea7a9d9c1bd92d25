//! The `nvidia` device: a CUDA GPU through cudarc's driver API (`cudarc::driver::result`, the
//! thin layer over `cu*` calls, so that a launch costs one `cuLaunchKernel` and no wrapper
//! bookkeeping).
//!
//! - Memory (`CudaMemory`, the `Memory` of `Discrete`, which owns the data rules): a device
//!   copy is the array's data plus a 64-byte header laid out like `ArrayHeader`'s prefix
//!   (`data`, `len`, `dims`), which kernels receive (jit-ptx's kernel ABI).
//! - Queues are CUDA streams (one per async queue, made on first use, plus one for synchronous
//!   work); `wait(q) async(r)` is an event recorded on `q` that `r` waits for.
//! - Transfers of 16 MiB and more go through two page-locked staging buffers used in turn
//!   (`Staging`), so that copying between the array and one buffer (on all cores) overlaps the
//!   DMA of the other; smaller ones are plain asynchronous copies.
//! - Modules are loaded once per PTX text (cached by content); a PTX the driver rejects is
//!   reported with the driver's JIT log.
//! - Device `print` and `printf` write records to a per-stream output buffer that the host
//!   turns into text when the stream is synchronized (`output`).
//! - Device errors: every kernel shares one error record in page-locked host memory mapped
//!   into the GPU (the first failing thread wins it); it is read at each synchronization point
//!   and reported with its site. Results and reduction partials come back the same way. Out of device
//!   memory, launch failures and illegal addresses become run-time errors at the construct;
//!   the device stays usable after an error in device code (a sticky driver error, such as an
//!   illegal address, leaves the context unusable: the runtime says so).
//!
//! - Stopping (`stop`): waits poll their stream and watch the run's interrupt word; kernels'
//!   `while` loops poll the stop word beside their error record (page-locked host memory);
//!   work that does not stop is abandoned.
//!
//! This file is the device itself (launches, waits, data ops); `memory` (copies, streams,
//! transfers, staging), `modules` (code), `grid` (launch shapes), `scratch` (results),
//! `pinned` (mapped host memory), `output` and `stop` are its parts.
//!
//! Nothing here runs unless `sys::is_culib_present()` says the driver library exists.

use acc_abi::DataModifiers;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use cudarc::driver::{result, sys};

use super::discrete::Discrete;
use super::ops::{DataOpArg, DataPhase, QueueArg};
use super::peer::Endpoint;
use super::Launch;
use acc_abi::{KernelErrorRecord, KernelFailure, LaunchSizes, ABSENT};

use crate::abi::{ArrayHeader, Ctx, MAX_RANK};
use crate::array;
use crate::error::{RunError, RunErrorKind};
use crate::gang_loop::LaunchArgs;
use crate::kernels::GpuKernel;
use crate::launch::{ComputeKind, ParamPass, RegionDesc};
use crate::profile::{EventKind, Profiler};
use crate::queue::QueueId;

mod grid;
mod memory;
mod modules;
mod output;
mod pinned;
mod scratch;
mod stop;

use grid::{default_gangs, fit_grid, private_layout, split_grid};
pub(crate) use memory::{CudaCopy, CudaMemory};
use modules::Loaded;
use pinned::Pinned;
use scratch::Scratch;

/// Bytes of the error record kernels fill (`acc_abi::KernelErrorRecord`) and, past it, the
/// stop word their `while` loops poll (`acc_abi::STOP_WORD_OFFSET`).
const ERROR_RECORD: usize = acc_abi::STOP_WORD_OFFSET + 8;

/// Bytes of the scratch buffer for launches' results and reduction partials.
const SCRATCH: usize = 64 * 1024;

/// How long loading and initializing the driver took (set by `gpu_count`).
static DRIVER_START: OnceLock<std::time::Duration> = OnceLock::new();

/// A kernel launched by `Nvidia::start_kernel`: when, on which stream, its scratch memory
/// and its grid.
/// A launch the host has yet to wait for (`Nvidia::launch_start`).
pub(crate) struct Pending {
    start: Instant,
    /// The error record its kernel was given (`Nvidia::errors`).
    record: usize,
    stream: sys::CUstream,
    scratch: Scratch,
    grid: u32,
    q: QueueArg,
    place: crate::profile::Place,
    launched: EventKind,
    /// The scratch buffer of a launch with results left running (`Nvidia::defer`).
    held: Option<Pinned>,
    /// Recorded after a launch left running (`Nvidia::defer`): its end, before whatever the
    /// host queued after it.
    done: Option<sys::CUevent>,
}

struct Started {
    start: Instant,
    stream: sys::CUstream,
    scratch: Scratch,
    grid: (u32, u32, u32),
}

/// How many GPUs the driver reports (0 without a driver).
pub fn gpu_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| {
        let start = Instant::now();
        // SAFETY: only looks for the library.
        if !unsafe { sys::is_culib_present() } || result::init().is_err() {
            return 0;
        }
        let _ = DRIVER_START.set(start.elapsed());
        result::device::get_count().map_or(0, |n| n.max(0) as usize)
    })
}

pub(crate) fn driver_error(what: &str, e: result::DriverError) -> RunErrorKind {
    let name = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    let message = match e.0 {
        sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => format!("out of device memory {what}"),
        sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS => {
            format!("illegal address on the device {what} ({name}); the GPU context is lost")
        }
        _ => format!("the GPU failed {what}: {name}"),
    };
    RunErrorKind::Device { message }
}

/// One GPU.
pub struct Nvidia {
    data: Discrete<CudaMemory>,
    /// Loaded modules by a hash of their PTX text, with how many texts use each (the same
    /// text compiled twice shares its module).
    modules: HashMap<u64, (sys::CUmodule, usize)>,
    /// The module of each text that has functions in `functions`, by the text's address.
    text_modules: HashMap<usize, u64>,
    /// Kernels' functions by the address of their module's text (held in `Loaded`, so that the
    /// address names that text as long as the entry lives) and the entry's name.
    functions: HashMap<usize, HashMap<String, Loaded>>,
    /// The error records kernels fill: every kernel of this device shares `errors[record]`,
    /// except that a split launch left running (`defer`) keeps the one it was given and
    /// later launches take the other, so that a failure is told with its own construct.
    errors: [Pinned; 2],
    record: usize,
    /// The event that orders copies between GPUs after this GPU's work (`Endpoint::mark`).
    mark: sys::CUevent,
    /// Rows this GPU sends after running a split launch's edges first (`edges.rs`): the
    /// stream the copies run on, the point after the edge kernels they wait for, and the
    /// point after the copies that the GPUs' later work waits for (`Endpoint`).
    push: sys::CUstream,
    edges: sys::CUevent,
    sent: sys::CUevent,
    /// The end of the launch left running with each error record (`defer`).
    done: [sys::CUevent; 2],
    /// Launches' results and reduction partials. A launch with results left running
    /// (`defer`) takes the buffer with it, and later launches use `spare_scratch`.
    scratch: Pinned,
    /// A scratch buffer a launch left running gave back.
    spare_scratch: Option<Pinned>,
    multiprocessors: u32,
    /// The device's primary context, made current on the host thread before each use (with
    /// several GPUs, the current one changes).
    context: sys::CUcontext,
    /// The string literals of the last kernel given each error record (a device `assert`
    /// names its message by index; one compile's kernels share them).
    strings: [Arc<[String]>; 2],
    /// The output buffers of kernels that print.
    output: output::DeviceOutput,
    /// When the stop words were set in this run (a wait saw the run's interrupt word).
    stop_sent: Option<Instant>,
    /// A wait of this run was abandoned after a stop: the rest of the run waits for nothing
    /// and copies nothing back (`CudaMemory::downloads_dropped`).
    abandoned: bool,
    /// An earlier run abandoned kernels that may still be running, and may still write the
    /// error record, the scratch and output buffers: `settle` waits for them before this
    /// device launches or waits again.
    unsettled: bool,
    /// Modules left to unload once abandoned kernels, which may run their code, are done.
    unload_later: Vec<sys::CUmodule>,
}

/// Gives the driver back what `new` and later work made on this GPU: its modules, events and
/// streams. An embedding program makes and drops engines for as long as it runs, and each
/// engine that used a GPU has its own. (Page-locked buffers free themselves; device memory
/// is freed stream-ordered by `Devices::drop` before.) A stream or event destroyed with work
/// pending is released by the driver once that work is done, so nothing here waits for
/// kernels; only the modules need this GPU's streams idle, and after an abandoned wait
/// (`abandoned`, `unsettled`) a kernel that may never end could still be running their code:
/// they are left loaded then. (Without this, each context that had used a GPU kept about
/// 3.4 MB of its memory: `runtime/tests/nvidia_gpu.rs`.)
impl Drop for Nvidia {
    fn drop(&mut self) {
        if self.make_current().is_err() {
            return;
        }
        let memory = &self.data.memory;
        let streams: Vec<sys::CUstream> = [memory.sync, self.push]
            .into_iter()
            .chain(memory.queues.values().copied())
            .collect();
        // SAFETY: this device's streams, events and modules, each destroyed once (the
        // streams in `CudaMemory::drop`, after this); its context is current.
        unsafe {
            let settled = !self.unsettled && !self.abandoned;
            if settled
                && streams
                    .iter()
                    .all(|&s| result::stream::synchronize(s).is_ok())
            {
                let loaded = self.modules.drain().map(|(_, (module, _))| module);
                for module in self.unload_later.drain(..).chain(loaded) {
                    let _ = result::module::unload(module);
                }
            }
            for event in [self.mark, self.edges, self.sent, self.done[0], self.done[1]] {
                let _ = result::event::destroy(event);
            }
            let _ = result::stream::destroy(self.push);
        }
    }
}

impl Nvidia {
    pub(crate) fn new(num: usize, profiler: Arc<Profiler>) -> Result<Nvidia, RunErrorKind> {
        let fail = |e| driver_error(&format!("opening nvidia:{num}"), e);
        let start = Instant::now();
        if num == 0 {
            if let Some(&took) = DRIVER_START.get() {
                profiler.note_startup("driver", took);
            }
        }
        // SAFETY: the driver was found and initialized (`gpu_count`); the primary context is
        // retained for the life of the process.
        unsafe {
            let dev = result::device::get(num as i32).map_err(fail)?;
            let cx = result::primary_ctx::retain(dev).map_err(fail)?;
            result::ctx::set_current(cx).map_err(fail)?;
            let sms = result::device::get_attribute(
                dev,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )
            .map_err(fail)?;
            let sync =
                result::stream::create(result::stream::StreamKind::NonBlocking).map_err(fail)?;
            let errors = [Pinned::new(ERROR_RECORD)?, Pinned::new(ERROR_RECORD)?];
            let scratch = Pinned::new(SCRATCH)?;
            let event =
                || result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING).map_err(fail);
            let (mark, done) = (event()?, [event()?, event()?]);
            let (edges, sent) = (event()?, event()?);
            let push =
                result::stream::create(result::stream::StreamKind::NonBlocking).map_err(fail)?;
            profiler.note_startup(format!("nvidia:{num} context"), start.elapsed());
            Ok(Nvidia {
                data: Discrete::new(CudaMemory {
                    num,
                    sync,
                    queues: HashMap::new(),
                    profiler,
                    staging: None,
                    small: None,
                    downloads_dropped: false,
                }),
                modules: HashMap::new(),
                text_modules: HashMap::new(),
                functions: HashMap::new(),
                errors,
                record: 0,
                mark,
                push,
                edges,
                sent,
                done,
                scratch,
                spare_scratch: None,
                multiprocessors: sms.max(1) as u32,
                context: cx,
                strings: [Arc::from(Vec::new()), Arc::from(Vec::new())],
                output: output::DeviceOutput::default(),
                stop_sent: None,
                abandoned: false,
                unsettled: false,
                unload_later: Vec::new(),
            })
        }
    }

    pub(crate) fn present_arrays(&self) -> usize {
        self.data.present_arrays()
    }

    /// The references on this GPU's copy of the whole of `a` (`Discrete::references`).
    ///
    /// # Safety
    /// `a` is a live array.
    pub(crate) unsafe fn references(&self, a: *mut ArrayHeader) -> u32 {
        self.data.references(a)
    }

    /// Whether any part of host array `a` is present on this GPU.
    ///
    /// # Safety
    /// `a` is a live array.
    pub(crate) unsafe fn holds(&self, a: *mut ArrayHeader) -> bool {
        self.data.copy_of(a).is_some()
    }

    /// The device address of `a`'s copy, if present.
    ///
    /// # Safety
    /// `a` is a live array.
    pub(crate) unsafe fn device_address(&self, a: *mut ArrayHeader) -> Option<sys::CUdeviceptr> {
        self.data.copy_of(a).map(|c| c.data)
    }

    /// Copies `section` of host array `host` to or from its copy on this GPU, on the
    /// synchronous stream (`Discrete::transfer_present`).
    ///
    /// # Safety
    /// `host` is a live array.
    pub(crate) unsafe fn transfer_present(
        &mut self,
        host: *mut ArrayHeader,
        section: &crate::presence::Section,
        upload: bool,
        site: u32,
    ) -> Result<(), RunErrorKind> {
        self.data.transfer_present(host, section, upload, site)
    }

    /// Waits for everything queued on this GPU's streams (before the row directory copies
    /// rows that earlier work may still be writing); errors are left for the next wait.
    pub(crate) fn quiesce(&self) -> Result<(), RunErrorKind> {
        let fail = |e| driver_error("waiting for the GPU", e);
        self.make_current()?;
        // SAFETY: streams of this device's context, which is current.
        unsafe {
            for &s in self.data.memory.queues.values() {
                result::stream::synchronize(s).map_err(fail)?;
            }
            result::stream::synchronize(self.data.memory.sync).map_err(fail)
        }
    }

    /// This GPU's context and synchronous stream, for a copy between GPUs.
    pub(crate) fn endpoint(&self) -> Endpoint {
        Endpoint {
            context: self.context,
            stream: self.data.memory.sync,
            mark: self.mark,
            push: self.push,
            edges: self.edges,
            sent: self.sent,
        }
    }

    /// Records the point after the edge launches of a split launch's part on this GPU,
    /// which the rows they wrote wait for before leaving (`peer::push_after`). The context is
    /// current.
    pub(crate) fn mark_edges(&self) -> Result<(), RunErrorKind> {
        // SAFETY: this GPU's event and stream.
        unsafe { result::event::record(self.edges, self.data.memory.sync) }
            .map_err(|e| driver_error("recording an event", e))
    }

    /// Records this GPU's mark after the work queued on its synchronous stream so far: the
    /// point copies into its memory wait for (`peer::push_after`). The context is current.
    pub(crate) fn mark_work(&self) -> Result<(), RunErrorKind> {
        // SAFETY: this GPU's event and stream.
        unsafe { result::event::record(self.mark, self.data.memory.sync) }
            .map_err(|e| driver_error("recording an event", e))
    }

    /// Makes this GPU's context the host thread's current one.
    pub(crate) fn make_current(&self) -> Result<(), RunErrorKind> {
        // SAFETY: the primary context retained in `new`.
        unsafe { result::ctx::set_current(self.context) }
            .map_err(|e| driver_error("selecting the GPU", e))
    }

    /// `(total, free)` device memory in bytes.
    pub(crate) fn memory(&self) -> Option<(u64, u64)> {
        self.make_current().ok()?;
        let (free, total) = result::mem_get_info().ok()?;
        Some((total as u64, free as u64))
    }

    /// # Safety
    /// `op.array` is a live array.
    pub(crate) unsafe fn data_op(
        &mut self,
        phase: DataPhase,
        op: &DataOpArg,
        modifiers: DataModifiers,
        q: QueueArg,
    ) -> Result<(), RunError> {
        self.data.data_op(phase, op, modifiers, q)
    }

    /// # Safety
    /// `op.array` is a live array.
    pub(crate) unsafe fn is_present(&self, op: &DataOpArg) -> Result<bool, RunErrorKind> {
        self.data.is_present(op)
    }

    /// Whether a construct with these clauses must run on the host's data: a `no_create` of
    /// data not on the GPU, which the region uses in host memory (LANGUAGE.md 7.3), as
    /// `Devices::launch_for_gpu_on_host` does with the arrays it finds absent. (A clause whose
    /// section is wrong also answers true: the host run's entry reports it.)
    ///
    /// # Safety
    /// The ops' arrays are live.
    pub(crate) unsafe fn uses_host_data(&self, ops: &[DataOpArg]) -> bool {
        ops.iter().any(|op| {
            op.action == super::ops::ACTION_NO_CREATE && !self.data.is_present(op).unwrap_or(false)
        })
    }

    /// A construct's clauses on entry (`Discrete::enter_ops`).
    ///
    /// # Safety
    /// The ops' arrays are live.
    pub(crate) unsafe fn enter_ops(
        &mut self,
        ops: &[DataOpArg],
        q: QueueArg,
    ) -> Result<(), RunError> {
        self.data.enter_ops(ops, q)
    }

    /// A construct's clauses on exit (`Discrete::exit_ops`).
    ///
    /// # Safety
    /// The ops' arrays are live.
    pub(crate) unsafe fn exit_ops(
        &mut self,
        ops: &[DataOpArg],
        q: QueueArg,
    ) -> Result<(), RunError> {
        self.data.exit_ops(ops, q)
    }

    /// A device header for a `reshape` view of `copy` with extents `dims` (the view's own
    /// shape, over the data it shares), written on `stream`; the caller frees it in stream
    /// order after the kernel that reads it.
    fn view_header(
        copy: &CudaCopy,
        len: i64,
        dims: &[u64; MAX_RANK],
        stream: sys::CUstream,
    ) -> Result<sys::CUdeviceptr, RunErrorKind> {
        let what = "making a view's header on the GPU";
        // SAFETY: a stream of this device; the header is 64 bytes, as `alloc`'s.
        unsafe {
            let header = result::malloc_async(stream, 64).map_err(|e| driver_error(what, e))?;
            let mut words = [0u64; 2 + MAX_RANK];
            words[0] = copy.data;
            words[1] = len as u64;
            words[2..].copy_from_slice(dims);
            // Pageable memory: the words are staged before the call returns.
            if let Err(e) = result::memcpy_htod_async(header, &words, stream) {
                let _ = result::free_async(header, stream);
                return Err(driver_error(what, e));
            }
            Ok(header)
        }
    }

    /// A compute construct on this GPU, with the region's `kernel`.
    ///
    /// # Safety
    /// As `Devices::launch`.
    pub(crate) unsafe fn launch(
        &mut self,
        ctx: *mut Ctx,
        l: &mut Launch<'_>,
        q: QueueArg,
        kernel: &GpuKernel,
    ) -> Result<(), RunError> {
        match self.launch_start(ctx, l, q, kernel)? {
            Some(p) => self.launch_finish(ctx, l, p),
            None => Ok(()),
        }
    }

    /// A launch up to the kernel's start: `Some` when the host must wait for it
    /// (`launch_finish`: a synchronous construct, or one with results), `None` when it is
    /// queued with its clauses' exit. GPUs of a split launch all start before the host waits
    /// for the first.
    ///
    /// # Safety
    /// As `Devices::launch`.
    pub(crate) unsafe fn launch_start(
        &mut self,
        ctx: *mut Ctx,
        l: &mut Launch<'_>,
        q: QueueArg,
        kernel: &GpuKernel,
    ) -> Result<Option<Pending>, RunError> {
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
        self.settle(ctx).map_err(at)?;
        let sms = self.multiprocessors;
        let loaded = self.function(kernel).map_err(at)?;
        let f = loaded.f;
        let launch = &kernel.launch;
        // SAFETY: the launch's array slots hold live headers.
        let arguments = unsafe { LaunchArgs::new(args, &desc.params) };
        let trip = (launch.gang_loop.as_ref()).and_then(|g| g.trip_count(&arguments));
        // A split kernel's vector loop (every gang's), for sharing each gang among blocks.
        let inner = (launch.gang_loop.as_ref())
            .and_then(|g| g.inner.as_ref().filter(|_| launch.split))
            .and_then(|c| c.trip_count(&arguments));
        let mut parts = 1;
        let (grid, block) = Self::shape(desc, sizes, |workers, vector| {
            let shared = launch.shared_bytes(workers, vector);
            let wave = sms * loaded.resident_blocks(workers * vector, shared);
            let per_gang = (launch.gang_loop.as_ref()).map_or(1, |g| g.per_gang(workers, vector));
            // Each block of a reduction leaves a partial result that the host combines, and
            // a block with shared memory starts by setting it up behind a block barrier: no
            // more blocks than a wave for either (SpMV with a row per warp and shared
            // memory for its row reductions: 0.2145 ms with 7 waves of blocks, 0.2050 with
            // one, on an H200; saxpy, without shared memory, gains from more blocks).
            let gangs = default_gangs(wave, trip, per_gang);
            if !desc.reductions.is_empty() || shared > 0 {
                return gangs.min(wave);
            }
            match trip
                .zip(inner)
                .and_then(|(t, i)| split_grid(t, i, workers * vector))
            {
                Some((gangs, split)) => {
                    parts = split;
                    gangs * split
                }
                None => gangs,
            }
        });
        self.strings[self.record] = kernel.strings.clone();
        self.data.enter_ops(ops, q)?;
        // From here on an error exits the clauses again (`exit_ops`), as the region's end
        // would: nothing the construct brought stays present.
        let mut views = Vec::new();
        let started = self.start_kernel(ctx, l, q, kernel, f, grid, block, parts, &mut views);
        if let Ok(stream) = self.data.memory.stream(q) {
            for header in views {
                // Stream-ordered: the headers go once the kernel is done.
                let _ = result::free_async(header, stream);
            }
        }
        let Started {
            start,
            stream,
            scratch,
            grid,
        } = match started {
            Ok(s) => s,
            Err(e) => {
                let _ = self.data.exit_ops(ops, q);
                return Err(e);
            }
        };
        let Launch {
            desc, ops, site, ..
        } = *l;
        let place = self.data.memory.place(site, q);
        let launched = EventKind::Launch {
            gangs: grid.0,
            workers: block.1,
            vector: block.0,
        };
        if q == QueueArg::Sync || desc.has_results() {
            return Ok(Some(Pending {
                start,
                record: self.record,
                stream,
                scratch,
                grid: grid.0,
                q,
                place,
                launched,
                held: None,
                done: None,
            }));
        }
        self.data.exit_ops(ops, q)?;
        self.data
            .memory
            .profiler
            .record(place, launched, start, start);
        Ok(None)
    }

    /// The end of a launch the host waits for (`launch_start` left it pending): the wait, the
    /// clauses' exit, the kernel's output, errors and results.
    ///
    /// # Safety
    /// As `launch`; `p` is what `launch_start` returned for `l`, and no launch on this GPU
    /// came between.
    pub(crate) unsafe fn launch_finish(
        &mut self,
        ctx: *mut Ctx,
        l: &mut Launch<'_>,
        p: Pending,
    ) -> Result<(), RunError> {
        let Launch {
            desc,
            ref mut args,
            ops,
            site,
            ..
        } = *l;
        let at = |kind| RunError {
            kind,
            site: Some(site),
        };
        // The kernel first, then the copies out: a copy to pageable host memory blocks
        // until the kernel is done, where an interrupt could not reach the wait.
        let done = self.await_stream(ctx, p.stream).map_err(at);
        self.data.exit_ops(ops, p.q)?;
        done?;
        self.data
            .memory
            .profiler
            .record(p.place, p.launched, p.start, Instant::now());
        // After the run failed (an earlier part, a launch left running before this one), what
        // the kernel printed comes after the failure, where the run never got to.
        if (*ctx).status == crate::abi::STATUS_OK {
            self.output.drain(ctx, p.stream);
        } else {
            self.output.discard();
        }
        self.check_error(ctx);
        p.scratch.results(desc, args, p.grid, &self.scratch);
        Ok(())
    }

    /// Leaves a started launch running (`Devices::launch_split`: a synchronous split launch
    /// that gives nothing back, or whose results are taken late): its clauses' exit is queued
    /// now, behind its kernel, and later launches take the other error record, and the
    /// other scratch buffer where it has results. `finish_deferred` waits for it.
    ///
    /// # Safety
    /// As `launch_finish`; the launch prints nothing, and no other launch of this GPU is left
    /// running.
    pub(crate) unsafe fn defer(&mut self, l: &Launch<'_>, p: &mut Pending) -> Result<(), RunError> {
        self.data.exit_ops(l.ops, p.q)?;
        if l.desc.has_results() {
            let spare = match self.spare_scratch.take() {
                Some(s) => s,
                None => Pinned::new(SCRATCH).map_err(|kind| l.error(kind))?,
            };
            p.held = Some(std::mem::replace(&mut self.scratch, spare));
        }
        // The next launch queues behind this one on the stream: the host catches up on this
        // one alone.
        let done = self.done[p.record];
        result::event::record(done, p.stream)
            .map_err(|e| l.error(driver_error("recording an event", e)))?;
        p.done = Some(done);
        self.record = p.record ^ 1;
        Ok(())
    }

    /// Waits for a launch `defer` left running and reports its error, if any; with
    /// `results`, the launch's descriptor and the part's argument slots, completes the slots
    /// as `launch_finish` would.
    ///
    /// # Safety
    /// `ctx` is a live context; `p` is what `defer` was given.
    pub(crate) unsafe fn finish_deferred(
        &mut self,
        ctx: *mut Ctx,
        mut p: Pending,
        results: Option<(&RegionDesc, &mut [u64])>,
    ) {
        let waited = match p.done {
            Some(done) => self.await_event(ctx, done),
            None => self.await_stream(ctx, p.stream),
        };
        if waited.is_ok() {
            self.check_record(ctx, p.record);
        }
        if let Some(held) = p.held.take() {
            if let (Ok(()), Some((desc, args))) = (&waited, results) {
                p.scratch.results(desc, args, p.grid, &held);
            }
            // Kept, not freed: after an abandoned wait the kernel may still write it, and
            // `settle` waits for such kernels before the buffer is used again.
            self.spare_scratch = Some(held);
        }
        if let Err(kind) = waited {
            crate::host::fail(ctx, kind, None);
        }
    }

    /// The part of a launch between its clauses' entry and exit: the kernel's parameters, its
    /// scratch memory, the launch itself. Headers made for `reshape` views go to `views`, for
    /// the caller to free after the kernel. Returns when the kernel was launched, its
    /// stream, its scratch and its grid.
    #[allow(clippy::too_many_arguments)]
    unsafe fn start_kernel(
        &mut self,
        ctx: *mut Ctx,
        l: &mut Launch<'_>,
        q: QueueArg,
        kernel: &GpuKernel,
        f: sys::CUfunction,
        mut grid: (u32, u32, u32),
        block: (u32, u32, u32),
        parts: u32,
        views: &mut Vec<sys::CUdeviceptr>,
    ) -> Result<Started, RunError> {
        let Launch {
            desc,
            ref mut args,
            sizes,
            site,
            ..
        } = *l;
        let at = |kind| RunError {
            kind,
            site: Some(site),
        };
        let view_stream = self.data.memory.stream(q).map_err(at)?;
        let mut values = Vec::with_capacity(desc.params.len() + 3);
        // The data pointers and extents of `kernel.launch.arrays`, passed after the private arrays.
        let mut array_values = Vec::new();
        // `kernel.launch.arrays` is in parameter order: one pass over both.
        let mut arrays = kernel.launch.arrays.iter().peekable();
        for (i, p) in desc.params.iter().enumerate() {
            values.push(match p.pass {
                ParamPass::Array | ParamPass::FirstPrivateArray | ParamPass::PrivateArray => {
                    let host = args[i] as usize as *mut ArrayHeader;
                    match self.data.copy_of(host) {
                        Some(c) => {
                            // A `reshape` view has the copy of the data it shares, in its
                            // own shape.
                            let dims = (*host).dims.map(|d| d as u64);
                            if let Some(a) = arrays.next_if(|a| a.param == i) {
                                array_values.push(c.data);
                                array_values.extend(dims.iter().take(a.rank as usize));
                            }
                            if dims == c.dims {
                                c.header
                            } else {
                                let header = Self::view_header(c, (*host).len, &dims, view_stream)
                                    .map_err(at)?;
                                views.push(header);
                                header
                            }
                        }
                        // A private array's copies come from the scratch below; the kernel
                        // reads the original only for `firstprivate`, which copies it in.
                        None if p.pass == ParamPass::PrivateArray => 0,
                        // `no_create` of absent data runs on the host (`Devices::launch_nvidia`
                        // sends such launches to `launch_for_gpu_on_host`).
                        None => {
                            let message =
                                "an array that is not on the GPU reached a kernel".to_string();
                            return Err(at(RunErrorKind::Internal { message }));
                        }
                    }
                }
                _ => args[i],
            });
        }
        if kernel.launch.one_gang {
            grid = (1, 1, 1);
        }
        let stream = self.data.memory.stream(q).map_err(at)?;
        let private = private_layout(kernel, args, block);
        if private.per_block > 0 {
            let free = result::mem_get_info().map_or(0, |(free, _)| free as u64);
            let explicit = sizes.nvidia.num_gangs != ABSENT && !kernel.launch.one_gang;
            grid.0 = fit_grid(private.per_block, grid.0, explicit, free).map_err(at)?;
        }
        let scratch = Scratch::new(desc, args, grid.0, &mut self.scratch).map_err(at)?;
        let out = match &kernel.prints {
            Some(prints) => self.output.buffer(stream, prints).map_err(at)?,
            None => 0,
        };
        values.extend([
            scratch.results,
            scratch.partials,
            self.errors[self.record].dev,
            out,
        ]);
        for &slot in &kernel.globals {
            values.push(*(*ctx).globals.add(slot as usize));
        }
        // The private arrays' copies: one allocation, freed in stream order after the kernel.
        let copies = if private.per_block > 0 {
            let bytes = private.per_block * u64::from(grid.0);
            let what = format!("allocating {bytes} bytes of private arrays");
            let base = result::malloc_async(stream, bytes as usize)
                .map_err(|e| at(driver_error(&what, e)))?;
            Some(base)
        } else {
            None
        };
        private.values(copies.unwrap_or(0), grid.0, &mut values);
        values.append(&mut array_values);
        if kernel.launch.split {
            values.push(u64::from(parts));
        }
        let mut params: Vec<*mut c_void> = values
            .iter_mut()
            .map(|v| v as *mut u64 as *mut c_void)
            .collect();
        let start = Instant::now();
        let shared = kernel.launch.shared_bytes(block.1, block.0);
        let launched = result::launch_kernel(f, grid, block, shared, stream, &mut params);
        if let Some(base) = copies {
            // Stream-ordered: the memory goes once the kernel is done.
            let _ = result::free_async(base, stream);
        }
        launched.map_err(|e| at(driver_error("launching a kernel", e)))?;
        Ok(Started {
            start,
            stream,
            scratch,
            grid,
        })
    }

    /// Grid and block: `num_gangs`, `vector_length`, `num_workers` for `nvidia`, else one gang
    /// of one thread for `serial`, blocks of 128 threads, and `default_gangs(workers, vector)`
    /// blocks (kernels loop over their iterations, so any grid is correct). The block is
    /// `acc_abi::nvidia_block`'s, the rule `--info` reports adjustments from.
    fn shape(
        desc: &RegionDesc,
        sizes: &LaunchSizes,
        default_gangs: impl FnOnce(u32, u32) -> u32,
    ) -> ((u32, u32, u32), (u32, u32, u32)) {
        if desc.kind == ComputeKind::Serial {
            return ((1, 1, 1), (1, 1, 1));
        }
        let sizes = &sizes.nvidia;
        let (vector, workers) = acc_abi::nvidia_block(sizes.num_workers, sizes.vector_length);
        let gangs = match sizes.num_gangs {
            ABSENT => default_gangs(workers, vector).max(1),
            // `check_sizes` has kept it within 1..=MAX_GANGS.
            given => given.clamp(1, i64::from(i32::MAX)) as u32,
        };
        ((gangs, 1, 1), (vector, workers, 1))
    }

    /// Reads the error records, the older first; a recorded error is reported in `ctx` and
    /// the record cleared. (Call after a synchronization.)
    ///
    /// # Safety
    /// `ctx` is a live context.
    pub(crate) unsafe fn check_error(&mut self, ctx: *mut Ctx) {
        self.check_record(ctx, self.record ^ 1);
        self.check_record(ctx, self.record);
    }

    /// `check_error` for error record `which`.
    ///
    /// # Safety
    /// As `check_error`.
    unsafe fn check_record(&mut self, ctx: *mut Ctx, which: usize) {
        let record: KernelErrorRecord = self.errors[which].read();
        if record.status == 0 {
            return;
        }
        let kind = match KernelFailure::from_code(record.kind) {
            Some(KernelFailure::DivZero) => RunErrorKind::DivZero,
            Some(KernelFailure::Assert) => RunErrorKind::AssertFailed {
                message: usize::try_from(record.index)
                    .ok()
                    .and_then(|i| self.strings[which].get(i).cloned()),
            },
            Some(KernelFailure::BadDimension) => RunErrorKind::BadDimension {
                dim: record.index,
                rank: record.dim,
            },
            Some(KernelFailure::ZeroStep) => RunErrorKind::ZeroStep,
            Some(KernelFailure::Stopped) => crate::host::stop_error(
                (*(*ctx).interrupt).load(std::sync::atomic::Ordering::Relaxed),
            ),
            Some(KernelFailure::Bounds) | None => RunErrorKind::Bounds {
                index: record.index,
                dim: record.dim,
                shape: record.shape.into_iter().take_while(|&e| e != -1).collect(),
            },
        };
        let site = record.site;
        let site = (site != u32::MAX).then_some(site);
        crate::host::fail(ctx, kind, site);
        self.errors[which].write(KernelErrorRecord::default());
    }

    /// A host array holding the device copy of `host` (all of it), for running a region on
    /// the host in the device's place; `None` when `host` has no device copy.
    ///
    /// # Safety
    /// `host` is a live array.
    pub(crate) unsafe fn mirror(
        &mut self,
        host: *mut ArrayHeader,
    ) -> Result<Option<*mut ArrayHeader>, RunErrorKind> {
        let Some(copy) = self.data.copy_of(host) else {
            return Ok(None);
        };
        let data = copy.data;
        let temp = array::new_array((*host).elem, array::shape(host))?;
        let bytes = (*temp).len as usize * array::elem_size((*temp).elem).unwrap_or(1);
        let h = std::slice::from_raw_parts_mut((*temp).data, bytes);
        // On the device's own stream: the legacy default stream is not ordered with it.
        let sync = self.data.memory.sync;
        let copied = result::memcpy_dtoh_async(h, data, sync)
            .and_then(|_| result::stream::synchronize(sync));
        if let Err(e) = copied {
            array::release(temp);
            return Err(driver_error("copying data for a host run", e));
        }
        Ok(Some(temp))
    }

    /// Copies a mirror back into the device copy of `host` and frees it.
    ///
    /// # Safety
    /// `temp` came from `mirror(host)`.
    pub(crate) unsafe fn unmirror(
        &mut self,
        host: *mut ArrayHeader,
        temp: *mut ArrayHeader,
    ) -> Result<(), RunErrorKind> {
        let done = match self.data.copy_of(host) {
            Some(copy) => {
                let bytes = (*temp).len as usize * array::elem_size((*temp).elem).unwrap_or(1);
                let h = std::slice::from_raw_parts((*temp).data, bytes);
                let sync = self.data.memory.sync;
                result::memcpy_htod_async(copy.data, h, sync)
                    .and_then(|_| result::stream::synchronize(sync))
                    .map_err(|e| driver_error("copying data back after a host run", e))
            }
            None => Ok(()),
        };
        array::release(temp);
        done
    }

    /// The queues used so far.
    pub(crate) fn queues_used(&self) -> Vec<QueueId> {
        let mut ids: Vec<QueueId> = self.data.memory.queues.keys().copied().collect();
        ids.sort();
        ids
    }

    pub(crate) fn stream_of(&mut self, q: QueueArg) -> Result<sys::CUstream, RunErrorKind> {
        self.data.memory.stream(q)
    }

    /// Blocks until queue `q` (or every queue) is done; output and errors of its kernels are
    /// reported (output queue by queue, in queue order).
    ///
    /// # Safety
    /// `ctx` is a live context.
    pub(crate) unsafe fn wait(&mut self, ctx: *mut Ctx, q: Option<QueueId>) {
        if let Err(kind) = self.settle(ctx) {
            return crate::host::fail(ctx, kind, None);
        }
        let queues = &self.data.memory.queues;
        let mut streams: Vec<(QueueId, sys::CUstream)> = match q {
            Some(id) => queues.get(&id).map(|&s| (id, s)).into_iter().collect(),
            None => queues.iter().map(|(&id, &s)| (id, s)).collect(),
        };
        streams.sort_by_key(|&(id, _)| id);
        for (_, s) in streams {
            if let Err(kind) = self.await_stream(ctx, s) {
                // Abandoned (or failed): its output and errors are not complete.
                return crate::host::fail(ctx, kind, None);
            }
            self.output.drain(ctx, s);
        }
        self.check_error(ctx);
    }

    /// Queue `r` waits for the work queued so far on `on` (`acc wait(on) async(r)`).
    pub(crate) fn join(&mut self, r: QueueId, on: &[QueueId]) -> Result<(), RunErrorKind> {
        let waiter = self.stream_of(QueueArg::Async(r))?;
        for &id in on {
            let Some(&s) = self.data.memory.queues.get(&id) else {
                continue;
            };
            // SAFETY: streams of this device; the event is destroyed once recorded and waited
            // on (the driver keeps it until the wait is done).
            unsafe {
                let ev = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
                    .map_err(|e| driver_error("making an event", e))?;
                result::event::record(ev, s).map_err(|e| driver_error("recording", e))?;
                result::stream::wait_event(
                    waiter,
                    ev,
                    sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                )
                .map_err(|e| driver_error("joining queues", e))?;
                let _ = result::event::destroy(ev);
            }
        }
        Ok(())
    }

    /// `acc_async_test(q)` (`None`: every queue).
    pub(crate) fn test(&self, q: Option<QueueId>) -> bool {
        let streams: Vec<sys::CUstream> = match q {
            Some(id) => self
                .data
                .memory
                .queues
                .get(&id)
                .copied()
                .into_iter()
                .collect(),
            None => self.data.memory.queues.values().copied().collect(),
        };
        streams
            .into_iter()
            // SAFETY: streams of this device.
            .all(|s| unsafe { sys::cuStreamQuery(s) } == sys::CUresult::CUDA_SUCCESS)
    }

    /// Frees every device copy (the device is going away).
    pub(crate) fn free_all(&mut self) {
        // SAFETY: the device's own streams.
        unsafe {
            for s in self.data.memory.queues.values() {
                let _ = result::stream::synchronize(*s);
            }
            let _ = result::stream::synchronize(self.data.memory.sync);
        }
        self.data.free_all();
    }
}
