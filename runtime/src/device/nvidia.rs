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
//! Nothing here runs unless `sys::is_culib_present()` says the driver library exists.

use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use cudarc::driver::{result, sys};

use super::discrete::{Discrete, Memory};
use super::ops::{DataOpArg, DataPhase, QueueArg};
use super::Launch;
use crate::abi::{ArrayHeader, Ctx, MAX_RANK};
use crate::array;
use crate::error::{RunError, RunErrorKind};
use crate::launch::{self, ComputeKind, GpuKernel, ParamPass, RegionDesc};
use crate::presence::Section;
use crate::profile::{DeviceRef, EventKind, Place, Profiler};
use crate::queue::QueueId;

mod output;

/// Bytes of the error record kernels fill (jit-ptx's ABI): status, site, kind, dim, index,
/// shape[6].
const ERROR_RECORD: usize = 80;

/// The stop word of a module whose kernels have `while` loops (jit-ptx's `STOP_WORD`): a
/// 32-bit global in device memory that those loops poll, which the host sets to the run's
/// interrupt word to stop them.
const STOP_WORD: &std::ffi::CStr = c"acc_stop";

/// How long a wait goes on after asking the kernels to stop: long enough for `while` loops,
/// which poll the stop word every 1024 trips, to see it. Then the wait is abandoned.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_millis(200);

/// Bytes of the scratch buffer for launches' results and reduction partials.
const SCRATCH: usize = 64 * 1024;

/// How long loading and initializing the driver took (set by `gpu_count`).
static DRIVER_START: OnceLock<std::time::Duration> = OnceLock::new();

/// A kernel launched by `Nvidia::start_kernel`: when, on which stream, its scratch memory
/// and its grid.
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

fn driver_error(what: &str, e: result::DriverError) -> RunErrorKind {
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

/// A device copy: the data and its header.
pub(crate) struct CudaCopy {
    pub data: sys::CUdeviceptr,
    pub header: sys::CUdeviceptr,
    /// The header's extents, which kernels also take as parameters.
    pub dims: [u64; MAX_RANK],
}

pub(crate) struct CudaMemory {
    num: usize,
    sync: sys::CUstream,
    queues: HashMap<QueueId, sys::CUstream>,
    profiler: Arc<Profiler>,
    /// Page-locked staging buffers for large transfers (made on first use).
    staging: Option<Staging>,
    /// Set for the rest of a run whose wait for a kernel was abandoned (`Nvidia::abandon`):
    /// copies to the host are left out, so that nothing waits for that kernel and no copy
    /// lands in host memory after the run has returned.
    downloads_dropped: bool,
}

impl Drop for Staging {
    fn drop(&mut self) {
        for (b, &e) in self.events.iter().enumerate() {
            // SAFETY: this device's events, destroyed once.
            unsafe {
                if self.busy[b] {
                    let _ = result::event::synchronize(e);
                }
                let _ = result::event::destroy(e);
            }
        }
    }
}

/// Runs of at least this many bytes go through the staging buffers (smaller ones take about
/// a millisecond as they are, less than making the buffers costs the first time).
const STAGED_FROM: usize = 16 << 20;
/// The size of each of the two staging buffers.
const STAGING_CHUNK: usize = 32 << 20;

/// Copies `src` into `dst` on the host's cores, a megabyte each: one thread's copy is
/// slower than the DMA it feeds.
fn parallel_copy(dst: &mut [u8], src: &[u8]) {
    use rayon::prelude::*;
    const PIECE: usize = 1 << 20;
    dst.par_chunks_mut(PIECE)
        .zip(src.par_chunks(PIECE))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

/// Two page-locked buffers used in turn, so that copying one chunk between the array and a
/// buffer (on all cores) overlaps the DMA of the other (the driver's own staging of pageable
/// memory copies on one thread).
/// Each buffer's event marks when the GPU is done with it.
struct Staging {
    buffers: [Pinned; 2],
    events: [sys::CUevent; 2],
    /// A buffer whose event was recorded and not yet waited for.
    busy: [bool; 2],
}

impl Staging {
    fn new() -> Result<Staging, RunErrorKind> {
        let event = || {
            result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
                .map_err(|e| driver_error("making an event", e))
        };
        Ok(Staging {
            buffers: [
                Pinned::staging(STAGING_CHUNK)?,
                Pinned::staging(STAGING_CHUNK)?,
            ],
            events: [event()?, event()?],
            busy: [false; 2],
        })
    }

    /// Waits until the GPU is done with buffer `b`.
    fn wait(&mut self, b: usize) -> Result<(), RunErrorKind> {
        if std::mem::take(&mut self.busy[b]) {
            // SAFETY: an event of this device.
            unsafe { result::event::synchronize(self.events[b]) }
                .map_err(|e| driver_error("copying data", e))?;
        }
        Ok(())
    }

    fn record(&mut self, b: usize, stream: sys::CUstream) -> Result<(), RunErrorKind> {
        // SAFETY: an event and a stream of this device.
        unsafe { result::event::record(self.events[b], stream) }
            .map_err(|e| driver_error("copying data", e))?;
        self.busy[b] = true;
        Ok(())
    }

    /// Host to device through the buffers.
    ///
    /// # Safety
    /// `dev` has room for `host`.
    unsafe fn upload(
        &mut self,
        host: &[u8],
        dev: sys::CUdeviceptr,
        stream: sys::CUstream,
    ) -> Result<(), RunErrorKind> {
        for (k, chunk) in host.chunks(STAGING_CHUNK).enumerate() {
            let b = k % 2;
            self.wait(b)?;
            let buf = std::slice::from_raw_parts_mut(self.buffers[b].host, chunk.len());
            parallel_copy(buf, chunk);
            let at = dev + (k * STAGING_CHUNK) as u64;
            result::memcpy_htod_async(at, buf, stream)
                .map_err(|e| driver_error("copying data", e))?;
            self.record(b, stream)?;
        }
        Ok(())
    }

    /// Device to host through the buffers: chunk `k + 1`'s DMA runs while chunk `k` is copied
    /// out.
    ///
    /// # Safety
    /// `dev` holds at least `host.len()` bytes.
    unsafe fn download(
        &mut self,
        host: &mut [u8],
        dev: sys::CUdeviceptr,
        stream: sys::CUstream,
    ) -> Result<(), RunErrorKind> {
        let total = host.len();
        let chunks = total.div_ceil(STAGING_CHUNK);
        let len = |k: usize| STAGING_CHUNK.min(total - k * STAGING_CHUNK);
        let issue = |st: &mut Staging, k: usize| -> Result<(), RunErrorKind> {
            let b = k % 2;
            st.wait(b)?;
            let buf = std::slice::from_raw_parts_mut(st.buffers[b].host, len(k));
            let at = dev + (k * STAGING_CHUNK) as u64;
            result::memcpy_dtoh_async(buf, at, stream)
                .map_err(|e| driver_error("copying data", e))?;
            st.record(b, stream)
        };
        if chunks > 0 {
            issue(self, 0)?;
        }
        for k in 0..chunks {
            if k + 1 < chunks {
                issue(self, k + 1)?;
            }
            let b = k % 2;
            self.wait(b)?;
            let buf = std::slice::from_raw_parts(self.buffers[b].host, len(k));
            parallel_copy(
                &mut host[k * STAGING_CHUNK..k * STAGING_CHUNK + len(k)],
                buf,
            );
        }
        Ok(())
    }
}

impl CudaMemory {
    fn stream(&mut self, q: QueueArg) -> Result<sys::CUstream, RunErrorKind> {
        match q {
            QueueArg::Sync => Ok(self.sync),
            QueueArg::Async(id) => {
                if let Some(&s) = self.queues.get(&id) {
                    return Ok(s);
                }
                let s = result::stream::create(result::stream::StreamKind::NonBlocking)
                    .map_err(|e| driver_error("making a queue", e))?;
                self.queues.insert(id, s);
                Ok(s)
            }
        }
    }

    fn place(&self, site: u32, q: QueueArg) -> Place {
        Place {
            site,
            device: DeviceRef {
                kind: "nvidia",
                num: self.num as u32,
            },
            queue: super::emulated::queue_number(q),
        }
    }

    /// Waits for a synchronous operation's stream.
    fn finish_sync(&self, q: QueueArg) -> Result<(), RunErrorKind> {
        if q == QueueArg::Sync {
            // SAFETY: a stream of this device.
            unsafe { result::stream::synchronize(self.sync) }
                .map_err(|e| driver_error("synchronizing", e))?;
        }
        Ok(())
    }
}

impl Memory for CudaMemory {
    type Copy = CudaCopy;

    fn name(&self) -> String {
        format!("nvidia:{}", self.num)
    }

    unsafe fn alloc(&mut self, host: *mut ArrayHeader) -> Result<CudaCopy, RunErrorKind> {
        let size = array::elem_size((*host).elem).unwrap_or(1);
        let bytes = ((*host).len as usize * size).max(1);
        let what = format!("allocating {bytes} bytes on nvidia:{}", self.num);
        let data = result::malloc_async(self.sync, bytes).map_err(|e| driver_error(&what, e))?;
        let header = match result::malloc_async(self.sync, 64) {
            Ok(h) => h,
            Err(e) => {
                let _ = result::free_async(data, self.sync);
                return Err(driver_error(&what, e));
            }
        };
        let dims = (*host).dims.map(|d| d as u64);
        let mut words = [0u64; 2 + MAX_RANK];
        words[0] = data;
        words[1] = (*host).len as u64;
        words[2..].copy_from_slice(&dims);
        result::memcpy_htod_async(header, &words, self.sync)
            .and_then(|_| result::stream::synchronize(self.sync))
            .map_err(|e| driver_error(&what, e))?;
        Ok(CudaCopy { data, header, dims })
    }

    fn free(&mut self, copy: CudaCopy, q: QueueArg) {
        // Stream-ordered: the memory goes once the queue's earlier work is done.
        if let Ok(s) = self.stream(q) {
            // SAFETY: allocated with `malloc_async` and freed once.
            unsafe {
                let _ = result::free_async(copy.data, s);
                let _ = result::free_async(copy.header, s);
            }
        }
    }

    unsafe fn transfer(
        &mut self,
        host: *mut ArrayHeader,
        copy: &CudaCopy,
        section: &Section,
        upload: bool,
        site: u32,
        q: QueueArg,
    ) -> Result<(), RunErrorKind> {
        if !upload && self.downloads_dropped {
            return Ok(());
        }
        let stream = self.stream(q)?;
        let size = array::elem_size((*host).elem).unwrap_or(1);
        let start = Instant::now();
        let mut bytes = 0u64;
        for (offset, len) in section.runs(array::shape(host)) {
            let (o, n) = (offset as usize * size, len as usize * size);
            let h = std::slice::from_raw_parts_mut((*host).data.add(o), n);
            let d = copy.data + o as u64;
            if n >= STAGED_FROM {
                if self.staging.is_none() {
                    self.staging = Some(Staging::new()?);
                }
                if let Some(st) = self.staging.as_mut() {
                    if upload {
                        st.upload(h, d, stream)?;
                    } else {
                        st.download(h, d, stream)?;
                    }
                }
            } else {
                let done = if upload {
                    result::memcpy_htod_async(d, h, stream)
                } else {
                    result::memcpy_dtoh_async(h, d, stream)
                };
                done.map_err(|e| driver_error("copying data", e))?;
            }
            bytes += n as u64;
        }
        self.finish_sync(q)?;
        let kind = if upload {
            EventKind::Upload { bytes }
        } else {
            EventKind::Download { bytes }
        };
        self.profiler
            .record(self.place(site, q), kind, start, Instant::now());
        Ok(())
    }
}

/// A kernel's function, and how many of its blocks fit on a multiprocessor at once.
struct Loaded {
    f: sys::CUfunction,
    _ptx: Arc<str>,
    /// `((threads per block, dynamic shared bytes), resident blocks)` pairs asked so far.
    resident: Vec<((u32, u32), u32)>,
}

/// Iterations of a long gang loop each thread takes: enough to amortize its start, few
/// enough that the blocks keep the memory system busy (measured on saxpy, H100).
const ITERATIONS_PER_THREAD: u64 = 16;

/// The grid when `num_gangs` is not given: one full `wave` of resident blocks without a
/// known gang loop; with one of `trip` iterations, each block taking `per_gang` at a time,
/// no more blocks than there are iterations, a full wave while every block gets some, and
/// more (up to one per `ITERATIONS_PER_THREAD` each) for long loops.
fn default_gangs(wave: u32, trip: Option<u64>, per_gang: u32) -> u32 {
    let Some(trip) = trip else {
        return wave;
    };
    let per_gang = u64::from(per_gang.max(1));
    let busy = trip.div_ceil(per_gang);
    let long = trip.div_ceil(per_gang * ITERATIONS_PER_THREAD);
    long.max(busy.min(u64::from(wave)))
        .clamp(1, i32::MAX as u64) as u32
}

/// Vector-loop iterations each thread of a split kernel takes. Jacobi's copy on an H100 (as
/// CUDA C after acc's stencil, 1000 iterations): 4 each 220.4 ms, 2 each 222.2, 1 each 228.1,
/// a block per row (32 each) 239.
const SPLIT_ITERATIONS_PER_THREAD: u64 = 4;

/// The most blocks a grid may have (`gridDim.x`).
const MAX_GRID: u64 = i32::MAX as u64;

/// A split kernel's grid for a gang loop of `trip` iterations around a vector loop of `inner`
/// (blocks of `threads`): a gang per gang-loop iteration, and enough blocks per gang that each
/// thread takes about `SPLIT_ITERATIONS_PER_THREAD` vector iterations. `(gangs, blocks per
/// gang)`, or `None` when a block per gang is enough.
fn split_grid(trip: u64, inner: u64, threads: u32) -> Option<(u32, u32)> {
    let split = inner.div_ceil(u64::from(threads.max(1)) * SPLIT_ITERATIONS_PER_THREAD);
    if split < 2 || trip == 0 {
        return None;
    }
    let split = split.min(MAX_GRID);
    let gangs = trip.min(MAX_GRID / split);
    Some((gangs as u32, split as u32))
}

impl Loaded {
    /// How many blocks of `threads` threads with `shared_bytes` of dynamic shared memory fit
    /// on one multiprocessor (16 if the driver cannot say).
    fn resident_blocks(&mut self, threads: u32, shared_bytes: u32) -> u32 {
        let key = (threads, shared_bytes);
        if let Some(&(_, n)) = self.resident.iter().find(|(k, _)| *k == key) {
            return n;
        }
        // SAFETY: a loaded function; the context is current.
        let n = unsafe {
            result::occupancy::max_active_block_per_multiprocessor(
                self.f,
                threads as i32,
                shared_bytes as usize,
            )
        }
        .map_or(16, |n| n.max(1) as u32);
        self.resident.push((key, n));
        n
    }
}

/// A GPU's side of a copy between GPUs.
#[derive(Clone, Copy)]
pub(crate) struct Endpoint {
    context: sys::CUcontext,
    stream: sys::CUstream,
}

/// Copies `bytes` from `from` on one GPU to `to` on another (or the same), after the work
/// each has been given synchronously, and waits for it. Peer access between two GPUs (their
/// contexts' and their memory pools') is asked for first (refused or already granted: the
/// driver copies anyway).
pub(crate) fn peer_copy(
    to_end: Endpoint,
    to: sys::CUdeviceptr,
    from_end: Endpoint,
    from: sys::CUdeviceptr,
    bytes: usize,
) -> Result<(), RunErrorKind> {
    let fail = |e| driver_error("copying between GPUs", e);
    // SAFETY: both contexts are primary contexts held for the process; the addresses are
    // device copies of `bytes` bytes at least (the caller checked the lengths).
    unsafe {
        result::stream::synchronize(to_end.stream).map_err(fail)?;
        result::ctx::set_current(from_end.context).map_err(fail)?;
        result::stream::synchronize(from_end.stream).map_err(fail)?;
        if to_end.context == from_end.context {
            let r = sys::cuMemcpyDtoDAsync_v2(to, from, bytes, from_end.stream);
            result_of(r).map_err(fail)?;
        } else {
            let _ = sys::cuCtxEnablePeerAccess(to_end.context, 0);
            let from_device = current_device().map_err(fail)?;
            result::ctx::set_current(to_end.context).map_err(fail)?;
            let _ = sys::cuCtxEnablePeerAccess(from_end.context, 0);
            let to_device = current_device().map_err(fail)?;
            grant_pool_access(from_device, to_device);
            grant_pool_access(to_device, from_device);
            result::ctx::set_current(from_end.context).map_err(fail)?;
            let r = sys::cuMemcpyPeerAsync(
                to,
                to_end.context,
                from,
                from_end.context,
                bytes,
                from_end.stream,
            );
            result_of(r).map_err(fail)?;
        }
        result::stream::synchronize(from_end.stream).map_err(fail)
    }
}

/// The device of the current context.
///
/// # Safety
/// A context is current.
unsafe fn current_device() -> Result<sys::CUdevice, result::DriverError> {
    let mut device = 0;
    result_of(sys::cuCtxGetDevice(&mut device))?;
    Ok(device)
}

/// Lets GPU `peer` reach the memory that GPU `owner`'s default pool hands out (what
/// `malloc_async` allocates), once per pair, where the hardware allows it: copies between
/// them then go over NVLink or PCIe directly (H200 pair: 363 GB/s) instead of through the
/// host (38 GB/s). `cuCtxEnablePeerAccess` does not cover pool memory. Where access cannot
/// be granted the driver still copies, through the host.
///
/// # Safety
/// Both are valid device ordinals.
unsafe fn grant_pool_access(owner: sys::CUdevice, peer: sys::CUdevice) {
    static GRANTED: std::sync::Mutex<Vec<(sys::CUdevice, sys::CUdevice)>> =
        std::sync::Mutex::new(Vec::new());
    let mut granted = GRANTED.lock().unwrap_or_else(|e| e.into_inner());
    if granted.contains(&(owner, peer)) {
        return;
    }
    granted.push((owner, peer));
    let mut can = 0;
    if sys::cuDeviceCanAccessPeer(&mut can, peer, owner) != sys::CUresult::CUDA_SUCCESS || can == 0
    {
        return;
    }
    let mut pool = std::mem::MaybeUninit::uninit();
    if sys::cuDeviceGetDefaultMemPool(pool.as_mut_ptr(), owner) != sys::CUresult::CUDA_SUCCESS {
        return;
    }
    let desc = sys::CUmemAccessDesc {
        location: sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: peer,
        },
        flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    };
    let _ = sys::cuMemPoolSetAccess(pool.assume_init(), &desc, 1);
}

fn result_of(r: sys::CUresult) -> Result<(), result::DriverError> {
    match r {
        sys::CUresult::CUDA_SUCCESS => Ok(()),
        e => Err(result::DriverError(e)),
    }
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
    /// The error record every kernel of this device shares.
    error: Pinned,
    /// Launches' results and reduction partials (one launch with results at a time: such a
    /// launch waits for its kernel).
    scratch: Pinned,
    multiprocessors: u32,
    /// The device's primary context, made current on the host thread before each use (with
    /// several GPUs, the current one changes).
    context: sys::CUcontext,
    /// The string literals of the last kernel launched (a device `assert` names its message
    /// by index; one compile's kernels share them).
    strings: Arc<[String]>,
    /// The output buffers of kernels that print.
    output: output::DeviceOutput,
    /// The stop words of the loaded modules that have one, by module key.
    stop_words: HashMap<u64, sys::CUdeviceptr>,
    /// The stream that sets stop words while kernels run (made on first use).
    stop_stream: Option<sys::CUstream>,
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
            let error = Pinned::new(ERROR_RECORD)?;
            let scratch = Pinned::new(SCRATCH)?;
            profiler.note_startup(format!("nvidia:{num} context"), start.elapsed());
            Ok(Nvidia {
                data: Discrete::new(CudaMemory {
                    num,
                    sync,
                    queues: HashMap::new(),
                    profiler,
                    staging: None,
                    downloads_dropped: false,
                }),
                modules: HashMap::new(),
                text_modules: HashMap::new(),
                functions: HashMap::new(),
                error,
                scratch,
                multiprocessors: sms.max(1) as u32,
                context: cx,
                strings: Arc::from(Vec::new()),
                output: output::DeviceOutput::default(),
                stop_words: HashMap::new(),
                stop_stream: None,
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

    /// Whether any part of host array `a` is present on this GPU.
    ///
    /// # Safety
    /// `a` is a live array.
    pub(crate) unsafe fn holds(&self, a: *mut ArrayHeader) -> bool {
        self.data.copy_of(a).is_some()
    }

    /// Drops the functions of the kernels of a PTX text, unloading its module when no other
    /// text uses it: the engine freed the code that launches them. Nothing of it may be
    /// queued (the run that used it finished).
    pub(crate) fn forget_kernels(&mut self, ptx: &Arc<str>) {
        let text = Arc::as_ptr(ptx) as *const u8 as usize;
        self.functions.remove(&text);
        let Some(key) = self.text_modules.remove(&text) else {
            return;
        };
        let Some((module, users)) = self.modules.get_mut(&key) else {
            return;
        };
        *users -= 1;
        if *users == 0 {
            let module = *module;
            self.modules.remove(&key);
            self.stop_words.remove(&key);
            self.unload_later.push(module);
            self.unload_idle_modules();
        }
    }

    /// Unloads the modules in `unload_later`, unless kernels abandoned after a stop are still
    /// running (then a later call does): unloading waits for the whole device, and a wait
    /// for a kernel that may never end would block the host.
    fn unload_idle_modules(&mut self) {
        if self.unload_later.is_empty() || self.make_current().is_err() {
            return;
        }
        if self.unsettled && !self.idle() {
            return;
        }
        // SAFETY: modules this device loaded, none of whose kernels is queued (or the device
        // is idle); its context is current.
        unsafe {
            let _ = result::ctx::synchronize();
            for module in self.unload_later.drain(..) {
                let _ = result::module::unload(module);
            }
        }
    }

    /// Whether every stream of this device has finished its work.
    fn idle(&self) -> bool {
        let memory = &self.data.memory;
        std::iter::once(&memory.sync)
            .chain(memory.queues.values())
            // SAFETY: streams of this device.
            .all(|&s| unsafe { sys::cuStreamQuery(s) } == sys::CUresult::CUDA_SUCCESS)
    }

    /// Waits for `stream`'s work as `cuStreamSynchronize` would, watching the run's interrupt
    /// word meanwhile (a blocking wait could not be interrupted). Once the word is set, the
    /// stop word asks the kernels to stop (their `while` loops poll it); work still running
    /// `STOP_GRACE` later is abandoned (`abandon`), and the wait fails with the stop.
    ///
    /// # Safety
    /// `ctx` is a live context; `stream` is this device's.
    unsafe fn await_stream(
        &mut self,
        ctx: *mut Ctx,
        stream: sys::CUstream,
    ) -> Result<(), RunErrorKind> {
        let mut polls = 0u32;
        loop {
            match sys::cuStreamQuery(stream) {
                sys::CUresult::CUDA_SUCCESS => return Ok(()),
                sys::CUresult::CUDA_ERROR_NOT_READY => {}
                e => return Err(driver_error("waiting for the GPU", result::DriverError(e))),
            }
            let word = (*(*ctx).interrupt).load(std::sync::atomic::Ordering::Relaxed);
            if word != crate::abi::INTERRUPT_NONE {
                if self.abandoned {
                    return Err(crate::abi::stop_error(word));
                }
                let since = match self.stop_sent {
                    Some(since) => since,
                    None => {
                        self.set_stop_words(word);
                        *self.stop_sent.insert(Instant::now())
                    }
                };
                if since.elapsed() >= STOP_GRACE {
                    self.abandon();
                    return Err(crate::abi::stop_error(word));
                }
            }
            polls = polls.saturating_add(1);
            pause(polls);
        }
    }

    /// Sets the stop word of every loaded module to `word`, on a stream of its own: a copy
    /// engine writes it while the kernels run.
    fn set_stop_words(&mut self, word: u32) {
        if self.stop_words.is_empty() {
            return;
        }
        let stream = match self.stop_stream {
            Some(s) => s,
            None => match result::stream::create(result::stream::StreamKind::NonBlocking) {
                Ok(s) => *self.stop_stream.insert(s),
                Err(_) => return,
            },
        };
        for &at in self.stop_words.values() {
            // SAFETY: a 4-byte global of a loaded module; the source is waited for below.
            unsafe {
                let _ = result::memcpy_htod_async(at, std::slice::from_ref(&word), stream);
            }
        }
        // SAFETY: this device's stream.
        let _ = unsafe { result::stream::synchronize(stream) };
    }

    /// Gives up on this device's running work after a stop. Its kernels run on, and stream
    /// order keeps later work behind them. For the rest of the run nothing is copied back to
    /// the host, and the synchronous stream waits for every queue, so that memory freed on it
    /// is not freed under a queued kernel. Before the device launches or waits again,
    /// `settle` waits for the abandoned kernels.
    fn abandon(&mut self) {
        self.abandoned = true;
        self.data.memory.downloads_dropped = true;
        let sync = self.data.memory.sync;
        for &s in self.data.memory.queues.values() {
            // SAFETY: streams of this device; as `join`.
            unsafe {
                let Ok(ev) = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
                else {
                    continue;
                };
                if result::event::record(ev, s).is_ok() {
                    let _ = result::stream::wait_event(
                        sync,
                        ev,
                        sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                    );
                }
                let _ = result::event::destroy(ev);
            }
        }
    }

    /// The end of a run (its queues waited for or abandoned). Without abandoned kernels, a
    /// stop sent in the run is taken back now; with them, by `settle`, once they are done.
    pub(crate) fn end_run(&mut self) {
        if self.abandoned {
            self.unsettled = true;
        } else if self.stop_sent.is_some() {
            self.set_stop_words(crate::abi::INTERRUPT_NONE);
        }
        self.stop_sent = None;
        self.abandoned = false;
        self.data.memory.downloads_dropped = false;
        self.unload_idle_modules();
    }

    /// Before a launch or a wait after a run that abandoned kernels: waits for them (an
    /// interrupt stops this wait too), then clears what they left: an error, output, the stop
    /// words.
    ///
    /// # Safety
    /// `ctx` is a live context.
    unsafe fn settle(&mut self, ctx: *mut Ctx) -> Result<(), RunErrorKind> {
        if !self.unsettled {
            return Ok(());
        }
        let memory = &self.data.memory;
        let streams: Vec<sys::CUstream> = std::iter::once(memory.sync)
            .chain(memory.queues.values().copied())
            .collect();
        for s in streams {
            self.await_stream(ctx, s)?;
        }
        self.error.set_slots(0, &[0; ERROR_RECORD / 8]);
        self.output.discard();
        self.set_stop_words(crate::abi::INTERRUPT_NONE);
        self.unsettled = false;
        self.unload_idle_modules();
        Ok(())
    }

    /// The device address of `a`'s copy, if present.
    ///
    /// # Safety
    /// `a` is a live array.
    pub(crate) unsafe fn device_address(&self, a: *mut ArrayHeader) -> Option<sys::CUdeviceptr> {
        self.data.copy_of(a).map(|c| c.data)
    }

    /// This GPU's context and synchronous stream, for a copy between GPUs.
    pub(crate) fn endpoint(&self) -> Endpoint {
        Endpoint {
            context: self.context,
            stream: self.data.memory.sync,
        }
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
        finalize: bool,
        if_present: bool,
        q: QueueArg,
    ) -> Result<(), RunError> {
        self.data.data_op(phase, op, finalize, if_present, q)
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

    /// The function of a kernel, loading its module on first use.
    fn function(&mut self, k: &GpuKernel) -> Result<&mut Loaded, RunErrorKind> {
        let text = Arc::as_ptr(&k.ptx) as *const u8 as usize;
        let known = self
            .functions
            .get(&text)
            .is_some_and(|m| m.contains_key(k.name.as_str()));
        if !known {
            let f = self.load_function(k)?;
            let loaded = Loaded {
                f,
                _ptx: k.ptx.clone(),
                resident: Vec::new(),
            };
            let of_text = self.functions.entry(text).or_default();
            of_text.insert(k.name.clone(), loaded);
        }
        Ok(self
            .functions
            .get_mut(&text)
            .and_then(|m| m.get_mut(k.name.as_str()))
            .expect("inserted above"))
    }

    /// Finds a kernel's function in its module, loading the module (once per PTX text: the
    /// same text compiled twice shares it).
    fn load_function(&mut self, k: &GpuKernel) -> Result<sys::CUfunction, RunErrorKind> {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        k.ptx.hash(&mut h);
        let key = h.finish();
        let module = match self.modules.get(&key) {
            Some(&(m, _)) => m,
            None => {
                let start = Instant::now();
                let m = load_module(&k.ptx)?;
                let what = format!("nvidia:{} PTX JIT", self.data.memory.num);
                self.data
                    .memory
                    .profiler
                    .note_startup(what, start.elapsed());
                self.modules.insert(key, (m, 0));
                // SAFETY: a loaded module; modules without `while` loops have no stop word.
                if let Ok((at, 4)) = unsafe { result::module::get_global(m, STOP_WORD.to_owned()) }
                {
                    self.stop_words.insert(key, at);
                }
                m
            }
        };
        let text = Arc::as_ptr(&k.ptx) as *const u8 as usize;
        if let std::collections::hash_map::Entry::Vacant(v) = self.text_modules.entry(text) {
            v.insert(key);
            if let Some((_, users)) = self.modules.get_mut(&key) {
                *users += 1;
            }
        }
        let name = CString::new(k.name.clone()).map_err(|_| RunErrorKind::Internal {
            message: "a kernel name with a NUL".into(),
        })?;
        // SAFETY: a loaded module.
        unsafe { result::module::get_function(module, name) }
            .map_err(|e| driver_error(&format!("finding kernel `{}`", k.name), e))
    }

    /// A compute construct on this GPU.
    ///
    /// # Safety
    /// As `Devices::launch`.
    pub(crate) unsafe fn launch(
        &mut self,
        ctx: *mut Ctx,
        l: &mut Launch<'_>,
        q: QueueArg,
    ) -> Result<(), RunError> {
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
        let kernel = match desc.gpu.kernel.get() {
            Some(Ok(k)) => k,
            Some(Err(why)) => {
                let message = format!("this `{}` cannot run on a GPU yet: {why}", desc.name);
                return Err(at(RunErrorKind::Device { message }));
            }
            None => {
                let message = format!("no GPU code was made for this `{}`", desc.name);
                return Err(at(RunErrorKind::Device { message }));
            }
        };
        let sms = self.multiprocessors;
        let loaded = self.function(kernel).map_err(at)?;
        let f = loaded.f;
        // SAFETY: the launch's array slots hold live headers.
        let trip = desc
            .gang_loop
            .as_ref()
            .and_then(|g| unsafe { g.trip_count(args, &desc.params) });
        // A split kernel's vector loop (every gang's), for sharing each gang among blocks.
        // SAFETY: as `trip`.
        let inner = (desc.gang_loop.as_ref())
            .and_then(|g| g.inner.as_ref().filter(|_| kernel.split))
            .and_then(|c| unsafe { c.trip_count(args, &desc.params) });
        let mut parts = 1;
        let (grid, block) = Self::shape(desc, sizes, |workers, vector| {
            let shared = kernel.shared_bytes(workers, vector);
            let wave = sms * loaded.resident_blocks(workers * vector, shared);
            let per_gang = desc
                .gang_loop
                .as_ref()
                .map_or(1, |g| g.per_gang(workers, vector));
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
        self.strings = kernel.strings.clone();
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
            desc,
            ref mut args,
            ops,
            site,
            ..
        } = *l;
        let place = self.data.memory.place(site, q);
        let launched = EventKind::Launch {
            gangs: grid.0,
            workers: block.1,
            vector: block.0,
        };
        if q == QueueArg::Sync || desc.has_results() {
            // The kernel first, then the copies out: a copy to pageable host memory blocks
            // until the kernel is done, where an interrupt could not reach the wait.
            let done = self.await_stream(ctx, stream).map_err(at);
            self.data.exit_ops(ops, q)?;
            done?;
            self.data
                .memory
                .profiler
                .record(place, launched, start, Instant::now());
            self.output.drain(ctx, stream);
            self.check_error(ctx);
            scratch.results(desc, args, grid.0, &self.scratch);
        } else {
            self.data.exit_ops(ops, q)?;
            self.data
                .memory
                .profiler
                .record(place, launched, start, start);
        }
        Ok(())
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
        // The data pointers and extents of `kernel.arrays`, passed after the private arrays.
        let mut array_values = Vec::new();
        // `kernel.arrays` is in parameter order: one pass over both.
        let mut arrays = kernel.arrays.iter().peekable();
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
        if kernel.one_gang {
            grid = (1, 1, 1);
        }
        let stream = self.data.memory.stream(q).map_err(at)?;
        let private = private_layout(kernel, args, block);
        if private.per_block > 0 {
            let free = result::mem_get_info().map_or(0, |(free, _)| free as u64);
            let explicit = sizes[0] != super::SECTION_ABSENT && !kernel.one_gang;
            grid.0 = fit_grid(private.per_block, grid.0, explicit, free).map_err(at)?;
        }
        let scratch = Scratch::new(desc, args, grid.0, &mut self.scratch).map_err(at)?;
        let out = match &kernel.prints {
            Some(prints) => self.output.buffer(stream, prints).map_err(at)?,
            None => 0,
        };
        values.extend([scratch.results, scratch.partials, self.error.dev, out]);
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
        if kernel.split {
            values.push(u64::from(parts));
        }
        let mut params: Vec<*mut c_void> = values
            .iter_mut()
            .map(|v| v as *mut u64 as *mut c_void)
            .collect();
        let start = Instant::now();
        let shared = kernel.shared_bytes(block.1, block.0);
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
    /// blocks (kernels loop over their iterations, so any grid is correct).
    fn shape(
        desc: &RegionDesc,
        sizes: &[i64; 9],
        default_gangs: impl FnOnce(u32, u32) -> u32,
    ) -> ((u32, u32, u32), (u32, u32, u32)) {
        if desc.kind == ComputeKind::Serial {
            return ((1, 1, 1), (1, 1, 1));
        }
        let given = |v: i64, max: u32| {
            (v != super::SECTION_ABSENT).then(|| v.clamp(1, i64::from(max)) as u32)
        };
        let workers = given(sizes[1], 32).unwrap_or(1);
        let vector = given(sizes[2], 1024 / workers).unwrap_or(128);
        let gangs = given(sizes[0], i32::MAX as u32)
            .unwrap_or_else(|| default_gangs(workers, vector).max(1));
        ((gangs, 1, 1), (vector, workers, 1))
    }

    /// Reads the shared error record; a recorded error is reported in `ctx` and the record
    /// cleared. (Call after a synchronization.)
    ///
    /// # Safety
    /// `ctx` is a live context.
    pub(crate) unsafe fn check_error(&mut self, ctx: *mut Ctx) {
        let rec = self.error.slots(0, ERROR_RECORD / 8);
        if rec[0] as u32 == 0 {
            return;
        }
        let long = |at: usize| rec[at / 8] as i64;
        let (site, kind, dim) = ((rec[0] >> 32) as u32, rec[1] as u32, (rec[1] >> 32) as u32);
        let kind = match kind {
            2 => RunErrorKind::DivZero,
            3 => RunErrorKind::AssertFailed {
                message: usize::try_from(long(16))
                    .ok()
                    .and_then(|i| self.strings.get(i).cloned()),
            },
            4 => RunErrorKind::BadDimension {
                dim: long(16),
                rank: dim,
            },
            5 => RunErrorKind::ZeroStep,
            6 => crate::abi::stop_error(
                (*(*ctx).interrupt).load(std::sync::atomic::Ordering::Relaxed),
            ),
            _ => {
                let shape: Vec<i64> = (0..MAX_RANK)
                    .map(|d| long(24 + d * 8))
                    .take_while(|&e| e != -1)
                    .collect();
                RunErrorKind::Bounds {
                    index: long(16),
                    dim,
                    shape,
                }
            }
        };
        let site = (site != u32::MAX).then_some(site);
        crate::host::fail(ctx, kind, site);
        self.error.set_slots(0, &[0; ERROR_RECORD / 8]);
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

/// How a wait for the GPU passes the time between two polls: spinning at first (a short
/// kernel's wait costs what `cuStreamSynchronize`'s spinning costs), then yielding, then
/// sleeping (a long kernel's wait leaves the core to others, for at most 50 µs late).
fn pause(polls: u32) {
    match polls {
        0..2000 => std::hint::spin_loop(),
        2000..4000 => std::thread::yield_now(),
        _ => std::thread::sleep(std::time::Duration::from_micros(50)),
    }
}

/// Page-locked host memory the GPU reads and writes directly (mapped into its address
/// space): the error record and the launches' results come back without a copy, so a
/// synchronous launch costs its kernel and one stream synchronization.
struct Pinned {
    host: *mut u8,
    dev: sys::CUdeviceptr,
    bytes: usize,
}

impl Pinned {
    /// Page-locked memory the GPU can address, zeroed.
    fn new(bytes: usize) -> Result<Pinned, RunErrorKind> {
        let p = Pinned::staging(bytes)?;
        // SAFETY: `bytes` bytes were allocated.
        unsafe { std::ptr::write_bytes(p.host, 0, bytes) };
        Ok(p)
    }

    /// Page-locked memory the GPU can address, as the allocator left it (staging buffers
    /// are written before they are read).
    fn staging(bytes: usize) -> Result<Pinned, RunErrorKind> {
        let what = "allocating page-locked memory";
        // SAFETY: a fresh allocation; its device address comes from the driver.
        unsafe {
            let host = result::malloc_host(bytes, sys::CU_MEMHOSTALLOC_DEVICEMAP)
                .map_err(|e| driver_error(what, e))? as *mut u8;
            let mut dev = 0;
            let r = sys::cuMemHostGetDevicePointer_v2(&mut dev, host as *mut c_void, 0);
            if r != sys::CUresult::CUDA_SUCCESS {
                let _ = result::free_host(host as *mut c_void);
                return Err(driver_error(what, result::DriverError(r)));
            }
            Ok(Pinned { host, dev, bytes })
        }
    }

    /// The 8-byte slots at `at` (in slots), as the GPU left them. Call after synchronizing.
    fn slots(&self, at: usize, n: usize) -> Vec<u64> {
        (0..n)
            // SAFETY: in bounds (the callers size the buffer); volatile because the GPU wrote
            // it behind the compiler's back.
            .map(|i| unsafe { std::ptr::read_volatile((self.host as *const u64).add(at + i)) })
            .collect()
    }

    /// The `n` slots at `at`, as the GPU left them, in place. Call after synchronizing (an
    /// opaque call, so the reads cannot move before it); nothing writes them while the
    /// slice lives (the next launch needs `&mut self`).
    fn written(&self, at: usize, n: usize) -> &[u64] {
        // SAFETY: in bounds (the callers size the buffer), 8-byte aligned (page-locked
        // memory is page aligned).
        unsafe { std::slice::from_raw_parts((self.host as *const u64).add(at), n) }
    }

    fn set_slots(&mut self, at: usize, values: &[u64]) {
        for (i, &v) in values.iter().enumerate() {
            // SAFETY: as `slots`.
            unsafe { std::ptr::write_volatile((self.host as *mut u64).add(at + i), v) };
        }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: allocated by `malloc_host`, freed once.
        unsafe {
            let _ = result::free_host(self.host as *mut c_void);
        }
    }
}

/// Where a launch's results go in the scratch buffer: `args.len()` result slots (starting as
/// the arguments), then `reductions * grid` partial results.
struct Scratch {
    results: sys::CUdeviceptr,
    partials: sys::CUdeviceptr,
}

impl Scratch {
    /// Lays out a launch's results in `pinned` (grown when too small).
    fn new(
        desc: &RegionDesc,
        args: &[u64],
        grid: u32,
        pinned: &mut Pinned,
    ) -> Result<Scratch, RunErrorKind> {
        let partials = desc.reductions.len() * grid as usize;
        let slots = args.len() + partials;
        if slots * 8 > pinned.bytes {
            *pinned = Pinned::new((slots * 8).next_power_of_two())?;
        }
        let mut s = Scratch {
            results: 0,
            partials: 0,
        };
        if desc.has_results() {
            pinned.set_slots(0, args);
            s.results = pinned.dev;
        }
        if partials > 0 {
            s.partials = pinned.dev + args.len() as u64 * 8;
        }
        Ok(s)
    }

    /// Copies the results back into `args` (after the stream is synchronized): `copy` scalars
    /// from their slots, reductions combined in block order with the value before.
    fn results(&self, desc: &RegionDesc, args: &mut [u64], grid: u32, pinned: &Pinned) {
        if self.results != 0 {
            let after = pinned.slots(0, args.len());
            for (i, p) in desc.params.iter().enumerate() {
                if p.pass == ParamPass::Shared {
                    args[i] = after[i];
                }
            }
        }
        if self.partials != 0 {
            let grid = grid as usize;
            let partials = pinned.written(args.len(), desc.reductions.len() * grid);
            for (red, blocks) in desc.reductions.iter().zip(partials.chunks(grid.max(1))) {
                let v = &mut args[red.param];
                *v = launch::combine_all(red.op, red.elem, *v, blocks);
            }
        }
    }
}

/// Most device memory a launch's private arrays may take when the grid is the runtime's
/// choice (it launches fewer blocks rather than more memory).
const PRIVATE_DEFAULT_LIMIT: u64 = 1 << 30;

/// Where a launch's private arrays' copies go (jit-ptx's kernel ABI): array `j` of
/// `kernel.private_arrays` has `per_block[j]` bytes per block (its copies per block times
/// its copy stride), the arrays one after another in one allocation of `per_block * grid`.
struct PrivateLayout {
    /// Bytes per block of all the arrays.
    per_block: u64,
    /// Per array: bytes per block and the original's extents.
    arrays: Vec<(u64, Vec<u64>)>,
}

impl PrivateLayout {
    /// The kernel's values for the arrays, after the globals: each one's copies' base and
    /// its extents.
    fn values(&self, base: sys::CUdeviceptr, grid: u32, values: &mut Vec<u64>) {
        let mut at = base;
        for (bytes, dims) in &self.arrays {
            values.push(at);
            values.extend(dims);
            at += bytes * u64::from(grid);
        }
    }
}

/// The copy stride of a private array: its bytes rounded up to 16 (jit-ptx's
/// `private_copy_stride`).
fn private_stride(len: u64, elem_bytes: u64) -> u64 {
    len.saturating_mul(elem_bytes).saturating_add(15) & !15
}

/// # Safety
/// The private arrays' slots of `args` hold live headers.
unsafe fn private_layout(
    kernel: &GpuKernel,
    args: &[u64],
    block: (u32, u32, u32),
) -> PrivateLayout {
    let mut layout = PrivateLayout {
        per_block: 0,
        arrays: Vec::with_capacity(kernel.private_arrays.len()),
    };
    for p in &kernel.private_arrays {
        let host = args[p.param] as usize as *const ArrayHeader;
        let size = array::elem_size((*host).elem).unwrap_or(1) as u64;
        let stride = private_stride((*host).len.max(0) as u64, size);
        let bytes = stride.saturating_mul(p.level.per_block(block.0, block.1));
        let all = (*host).dims;
        let dims = all[..(p.rank as usize).min(MAX_RANK)]
            .iter()
            .map(|&d| d as u64)
            .collect();
        layout.per_block = layout.per_block.saturating_add(bytes);
        layout.arrays.push((bytes, dims));
    }
    layout
}

/// The grid for private arrays of `per_block` bytes per block, with `free` bytes of device
/// memory: the given `num_gangs` (`explicit`) when its copies fit in half the free memory,
/// else an error; the runtime's grid, fewer blocks where the copies would take more than
/// half the free memory or `PRIVATE_DEFAULT_LIMIT` (any grid is correct); an error when even
/// one block's copies do not fit.
fn fit_grid(per_block: u64, grid: u32, explicit: bool, free: u64) -> Result<u32, RunErrorKind> {
    let half = free / 2;
    let fail =
        |blocks: u64| {
            let message =
                format!(
            "the private arrays of {blocks} gang(s) need {} bytes of GPU memory, more than \
             half of the {free} bytes free{}",
            per_block.saturating_mul(blocks),
            if blocks > 1 { "; try fewer gangs (`num_gangs`)" } else { "" }
        );
            RunErrorKind::Device { message }
        };
    if per_block > half {
        return Err(fail(1));
    }
    if explicit {
        return match per_block.checked_mul(u64::from(grid)) {
            Some(total) if total <= half => Ok(grid),
            _ => Err(fail(u64::from(grid))),
        };
    }
    let limit = half.min(PRIVATE_DEFAULT_LIMIT);
    let fits = (limit / per_block.max(1)).clamp(1, u64::from(u32::MAX)) as u32;
    Ok(grid.min(fits))
}

/// Loads a PTX module; the driver's JIT log is the error when it rejects the text.
fn load_module(ptx: &str) -> Result<sys::CUmodule, RunErrorKind> {
    let text = CString::new(ptx).map_err(|_| RunErrorKind::Internal {
        message: "PTX with a NUL byte".into(),
    })?;
    let mut log = vec![0u8; 16 * 1024];
    let mut options = [
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values = [log.as_mut_ptr() as *mut c_void, log.len() as *mut c_void];
    let mut module = std::mem::MaybeUninit::uninit();
    // SAFETY: a NUL-terminated image; the option arrays match and outlive the call.
    let r = unsafe {
        sys::cuModuleLoadDataEx(
            module.as_mut_ptr(),
            text.as_ptr() as *const c_void,
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if r != sys::CUresult::CUDA_SUCCESS {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        let message = format!(
            "the GPU driver rejected the generated PTX ({r:?}):\n{}",
            String::from_utf8_lossy(&log[..end])
        );
        return Err(RunErrorKind::Internal { message });
    }
    // SAFETY: the call succeeded.
    Ok(unsafe { module.assume_init() })
}

#[cfg(test)]
mod grid_tests {
    use super::{default_gangs, fit_grid, private_stride, split_grid, MAX_GRID};

    #[test]
    fn private_arrays_shrink_the_default_grid_and_refuse_what_cannot_fit() {
        let gib = 1u64 << 30;
        // Copies of 1 KiB per block, 8 GiB free: the runtime's 1000 blocks fit.
        assert_eq!(fit_grid(1024, 1000, false, 8 * gib).unwrap(), 1000);
        // 1 MiB per block: at most 1 GiB of copies, so 1024 blocks of 5000.
        assert_eq!(fit_grid(1 << 20, 5000, false, 8 * gib).unwrap(), 1024);
        // With 1 GiB free, half of it.
        assert_eq!(fit_grid(1 << 20, 5000, false, gib).unwrap(), 512);
        // An explicit `num_gangs` is kept when it fits, refused when it does not.
        assert_eq!(fit_grid(1 << 20, 5000, true, 16 * gib).unwrap(), 5000);
        assert!(fit_grid(1 << 20, 5000, true, gib).is_err());
        // One block's copies larger than half the free memory: an error.
        assert!(fit_grid(gib, 1, false, gib).is_err());
        assert!(fit_grid(gib, 1, false, 3 * gib).is_ok());
        // The copy stride: bytes rounded up to 16.
        assert_eq!(private_stride(3, 8), 32);
        assert_eq!(private_stride(4, 4), 16);
        assert_eq!(private_stride(0, 8), 0);
        assert_eq!(private_stride(5, 1), 16);
    }

    #[test]
    fn the_default_grid_fits_the_gang_loop() {
        // No known loop: one wave.
        assert_eq!(default_gangs(1584, None, 128), 1584);
        // A one-iteration loop: one block; an empty one: still one.
        assert_eq!(default_gangs(1584, Some(1), 128), 1);
        assert_eq!(default_gangs(1584, Some(0), 128), 1);
        // A thousand rows of a gang-only loop: a block each.
        assert_eq!(default_gangs(1584, Some(1000), 1), 1000);
        // A million iterations over 128-thread blocks: a full wave.
        assert_eq!(default_gangs(1584, Some(1 << 20), 128), 1584);
        // 2^28 iterations: 16 per thread.
        assert_eq!(default_gangs(1584, Some(1 << 28), 128), 131072);
    }

    #[test]
    fn a_split_grid_gives_each_thread_a_few_vector_iterations() {
        // Jacobi's copy: 4094 rows of 4094, 128 threads: 8 blocks a row, 4 iterations each.
        assert_eq!(split_grid(4094, 4094, 128), Some((4094, 8)));
        // Two long rows: many blocks each.
        assert_eq!(split_grid(2, 1 << 20, 128), Some((2, 2048)));
        // Rows a block covers in a few turns, or no rows: a block per gang.
        assert_eq!(split_grid(4094, 512, 128), None);
        assert_eq!(split_grid(0, 4094, 128), None);
        // Never past the grid's limit.
        let (gangs, split) = split_grid(u64::MAX, 1 << 40, 32).unwrap();
        assert!(u64::from(gangs) * u64::from(split) <= MAX_GRID && gangs >= 1);
    }
}
