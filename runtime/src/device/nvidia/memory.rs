//! A GPU's memory for `Discrete` (which owns the data rules): device copies, streams, and
//! transfers: small synchronous ones through one page-locked buffer, large ones through two
//! page-locked staging buffers used in turn.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{result, sys};

use super::{driver_error, Pinned};
use crate::abi::{ArrayHeader, MAX_RANK};
use crate::array;
use crate::device::discrete::Memory;
use crate::device::ops::QueueArg;
use crate::error::RunErrorKind;
use crate::presence::Section;
use crate::profile::{DeviceRef, EventKind, Place, Profiler};
use crate::queue::QueueId;

/// A device copy: the data and its header.
pub(crate) struct CudaCopy {
    pub data: sys::CUdeviceptr,
    pub header: sys::CUdeviceptr,
    /// The header's extents, which kernels also take as parameters.
    pub dims: [u64; MAX_RANK],
}

/// One GPU's memory, streams and transfers.
pub(crate) struct CudaMemory {
    pub(super) num: usize,
    /// The stream of synchronous work.
    pub(super) sync: sys::CUstream,
    /// The async queues' streams, made on first use.
    pub(super) queues: HashMap<QueueId, sys::CUstream>,
    pub(super) profiler: Arc<Profiler>,
    /// Page-locked staging buffers for large transfers (made on first use).
    pub(super) staging: Option<Staging>,
    /// A page-locked buffer for small synchronous transfers (made on first use).
    pub(super) small: Option<Pinned>,
    /// Set for the rest of a run whose wait for a kernel was abandoned (`Nvidia::abandon`):
    /// copies to the host are left out, so that nothing waits for that kernel and no copy
    /// lands in host memory after the run has returned.
    pub(super) downloads_dropped: bool,
}

impl Drop for CudaMemory {
    fn drop(&mut self) {
        // After `Nvidia::drop`, with the context current: the streams go once their work is
        // done (`Nvidia`'s drop says why that is enough).
        for &s in std::iter::once(&self.sync).chain(self.queues.values()) {
            // SAFETY: this device's streams, destroyed once.
            unsafe {
                let _ = result::stream::destroy(s);
            }
        }
    }
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

/// Synchronous transfers of at most this many bytes in all go through one page-locked buffer:
/// a copy to or from page-locked memory is faster than the driver's own staging of pageable
/// memory (a 64 KB halo row, as `mpi_sendrecv` stages it, and the small sections of `update`).
const SMALL_STAGED: usize = 1 << 20;

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
pub(super) struct Staging {
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
    pub(super) fn stream(&mut self, q: QueueArg) -> Result<sys::CUstream, RunErrorKind> {
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

    pub(super) fn place(&self, site: u32, q: QueueArg) -> Place {
        Place {
            site,
            device: DeviceRef {
                kind: "nvidia",
                num: self.num as u32,
            },
            queue: crate::device::emulated::queue_number(q),
        }
    }

    /// Waits for a synchronous operation's stream.
    pub(super) fn finish_sync(&self, q: QueueArg) -> Result<(), RunErrorKind> {
        if q == QueueArg::Sync {
            // SAFETY: a stream of this device.
            unsafe { result::stream::synchronize(self.sync) }
                .map_err(|e| driver_error("synchronizing", e))?;
        }
        Ok(())
    }
}

impl CudaMemory {
    /// A synchronous transfer of `runs` (element offsets and lengths, `SMALL_STAGED` bytes at
    /// most in all) through the small page-locked buffer, waited for.
    ///
    /// # Safety
    /// As `Memory::transfer`'s.
    unsafe fn transfer_small(
        &mut self,
        host: *mut ArrayHeader,
        copy: &CudaCopy,
        runs: &[(i64, i64)],
        upload: bool,
        stream: sys::CUstream,
    ) -> Result<(), RunErrorKind> {
        let fail = |e| driver_error("copying data", e);
        if self.small.is_none() {
            self.small = Some(Pinned::staging(SMALL_STAGED)?);
        }
        let Some(small) = self.small.as_ref() else {
            return Ok(());
        };
        let size = array::elem_size((*host).elem).unwrap_or(1);
        let pieces = || {
            let mut at = 0usize;
            runs.iter().map(move |&(offset, len)| {
                let (o, n) = (offset as usize * size, len as usize * size);
                let piece = (o, n, at);
                at += n;
                piece
            })
        };
        for (o, n, at) in pieces() {
            let h = std::slice::from_raw_parts_mut((*host).data.add(o), n);
            let buf = std::slice::from_raw_parts_mut(small.host.add(at), n);
            let d = copy.data + o as u64;
            if upload {
                buf.copy_from_slice(h);
                result::memcpy_htod_async(d, buf, stream).map_err(fail)?;
            } else {
                result::memcpy_dtoh_async(buf, d, stream).map_err(fail)?;
            }
        }
        result::stream::synchronize(stream).map_err(fail)?;
        if !upload {
            for (o, n, at) in pieces() {
                let h = std::slice::from_raw_parts_mut((*host).data.add(o), n);
                h.copy_from_slice(std::slice::from_raw_parts(small.host.add(at), n));
            }
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
        let runs: Vec<_> = section.runs(array::shape(host)).collect();
        let total: usize = runs.iter().map(|&(_, len)| len as usize * size).sum();
        let small = q == QueueArg::Sync && total <= SMALL_STAGED;
        if small {
            self.transfer_small(host, copy, &runs, upload, stream)?;
            bytes = total as u64;
        }
        for (offset, len) in runs.into_iter().filter(|_| !small) {
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
        if !small {
            self.finish_sync(q)?;
        }
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
