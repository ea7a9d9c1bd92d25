//! `acc_memcpy_d2d(dst, src, dst_num, src_num)` (OpenACC 3.3's device-to-device copy): the
//! whole of `src`'s copy on device `src_num` into `dst`'s copy on device `dst_num`, both of
//! the current device type, both present there, synchronous. GPUs copy peer to peer (directly
//! over NVLink or PCIe where the driver grants the two access to each other, staged by the
//! driver otherwise); emulated devices copy between their memories; `host` and `multicore`
//! (one device each, host memory) copy between the arrays themselves.

use cudarc::driver::{result, sys};

use super::nvidia::driver_error;
use crate::abi::ArrayHeader;
use crate::array;
use crate::error::RunErrorKind;

use super::{DeviceKind, Devices, Nvidia};

fn failure(message: String) -> RunErrorKind {
    RunErrorKind::Device {
        message: format!("`acc_memcpy_d2d`: {message}"),
    }
}

impl Devices {
    /// # Safety
    /// `dst` and `src` are live arrays.
    pub unsafe fn memcpy_d2d(
        &mut self,
        dst: *mut ArrayHeader,
        src: *mut ArrayHeader,
        dst_num: i32,
        src_num: i32,
    ) -> Result<(), RunErrorKind> {
        let kind = self.current().0;
        let count = self.count(kind.code());
        let num = |n: i32| {
            usize::try_from(n)
                .ok()
                .filter(|&n| n < count)
                .ok_or_else(|| {
                    failure(format!(
                        "there is no {} device {n} (there are {count})",
                        kind.name()
                    ))
                })
        };
        let (dn, sn) = (num(dst_num)?, num(src_num)?);
        if (*dst).len != (*src).len || (*dst).elem != (*src).elem {
            return Err(failure(format!(
                "the arrays differ in length ({} and {})",
                (*dst).len,
                (*src).len
            )));
        }
        let bytes = (*src).len as usize * array::elem_size((*src).elem).unwrap_or(1);
        let absent = |which: &str, n: usize| {
            failure(format!(
                "the {which} array is not present on {}:{n}",
                kind.name()
            ))
        };
        match kind {
            DeviceKind::Host | DeviceKind::Multicore => {
                std::ptr::copy((*src).data, (*dst).data, bytes);
            }
            DeviceKind::Emulated => {
                let from = self
                    .emulated(sn)
                    .copy_of(src)
                    .ok_or_else(|| absent("source", sn))?;
                let to = self
                    .emulated(dn)
                    .copy_of(dst)
                    .ok_or_else(|| absent("destination", dn))?;
                std::ptr::copy((*from).data, (*to).data, bytes);
            }
            DeviceKind::Nvidia => {
                let from = self.gpu(sn)?;
                let (from_end, from) = (from.endpoint(), from.device_address(src));
                let to = self.gpu(dn)?;
                let (to_end, to) = (to.endpoint(), to.device_address(dst));
                let from = from.ok_or_else(|| absent("source", sn))?;
                let to = to.ok_or_else(|| absent("destination", dn))?;
                let copied = peer_copy(to_end, to, from_end, from, bytes);
                // Leave the current device's context current.
                let current = self.current().1;
                self.gpu(current)?;
                copied?;
            }
        }
        Ok(())
    }

    /// GPU `num`, opened on first use and made current.
    pub(super) fn gpu(&mut self, num: usize) -> Result<&mut Nvidia, RunErrorKind> {
        while self.nvidia.len() <= num {
            self.nvidia.push(None);
        }
        if self.nvidia[num].is_none() {
            self.nvidia[num] = Some(Nvidia::new(num, self.profiler.clone())?);
        }
        match self.nvidia[num].as_mut() {
            Some(g) => {
                g.make_current()?;
                Ok(g)
            }
            None => Err(failure(format!("nvidia:{num} could not be opened"))),
        }
    }
}

// ---- between GPUs ---------------------------------------------------------------------------

/// A GPU's side of a copy between GPUs.
#[derive(Clone, Copy)]
pub(crate) struct Endpoint {
    pub(crate) context: sys::CUcontext,
    /// Its stream of synchronous work.
    pub(crate) stream: sys::CUstream,
    /// Its event for ordering copies between GPUs after work on `stream` (`push_after`).
    pub(crate) mark: sys::CUevent,
    /// Rows sent early (`push_after`'s `early`): the stream the copies run on, the event
    /// after the edge kernels that wrote them, and the event after the copies.
    pub(crate) push: sys::CUstream,
    pub(crate) edges: sys::CUevent,
    pub(crate) sent: sys::CUevent,
}

/// Copies `bytes` from `from` on one GPU to `to` on another (or the same), after the work
/// each has been given synchronously, and waits for it.
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
            grant_access(to_end, from_end).map_err(fail)?;
            result::ctx::set_current(from_end.context).map_err(fail)?;
            copy_peer_async(to_end, to, from_end, from, bytes, from_end.stream).map_err(fail)?;
        }
        result::stream::synchronize(from_end.stream).map_err(fail)
    }
}

/// `peer_copy` without waiting: the copy is queued on `to_end`'s synchronous stream, so the
/// next work there (the next launch of a split loop) sees the rows, and the host goes on at
/// once; the source's later work waits for the copy (an event), so it cannot overwrite the
/// rows first. The caller makes sure the rows are written (the work that wrote them is
/// finished).
pub(crate) fn peer_copy_queued(
    to_end: Endpoint,
    to: sys::CUdeviceptr,
    from_end: Endpoint,
    from: sys::CUdeviceptr,
    bytes: usize,
) -> Result<(), RunErrorKind> {
    let fail = |e| driver_error("copying between GPUs", e);
    // SAFETY: as `peer_copy`'s; the stream is the destination context's, made current.
    unsafe {
        grant_access(to_end, from_end).map_err(fail)?;
        result::ctx::set_current(to_end.context).map_err(fail)?;
        copy_peer_async(to_end, to, from_end, from, bytes, to_end.stream).map_err(fail)?;
        result::event::record(to_end.mark, to_end.stream).map_err(fail)?;
        result::ctx::set_current(from_end.context).map_err(fail)?;
        let wait = sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT;
        result::stream::wait_event(from_end.stream, to_end.mark, wait).map_err(fail)
    }
}

/// One copy of rows from one GPU's copy of an array to another GPU's.
#[derive(Clone, Copy)]
pub(crate) struct PeerCopy {
    pub(crate) from_end: Endpoint,
    pub(crate) from: sys::CUdeviceptr,
    pub(crate) to_end: Endpoint,
    pub(crate) to: sys::CUdeviceptr,
    pub(crate) bytes: usize,
}

/// Queues `copies` between GPUs behind work already queued on the GPUs, without waiting for
/// anything: each copy runs once the destination's work so far is done (which may still read
/// the rows' old contents), and the destination's later work waits for it (events, not host
/// waits). The host goes on while the GPUs finish the launch that wrote the rows, and the
/// copies follow it on the GPUs, or follow its edge launches only (`early`, below). The
/// copies of one call are independent: none reads rows another writes.
///
/// A source's copies run on its synchronous stream, after the launch that wrote the rows;
/// a source in `early` ran the iterations that wrote them first (`edges.rs`) and marked the
/// point after them (`Nvidia::mark_edges`): its copies run on its push stream from that
/// point, beside the rest of its launch, and its own later work waits for them too (they
/// read rows it may write next).
///
/// The destinations in `marked` had their marks recorded before the launch that wrote the
/// rows (`Nvidia::mark_work`), whose part there does not touch the rows: their copies wait
/// for that point only, not for the destination's own part, so a halo row leaves as soon as
/// its writer is done.
///
/// # Safety
/// The addresses hold `bytes` bytes in their contexts' memory; every endpoint's context is a
/// primary context held for the process.
pub(crate) unsafe fn push_after(
    copies: &[PeerCopy],
    marked: &[sys::CUcontext],
    early: &[sys::CUcontext],
) -> Result<(), RunErrorKind> {
    let fail = |e| driver_error("copying between GPUs", e);
    let wait = sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT;
    let distinct = |ends: &mut dyn Iterator<Item = Endpoint>| {
        let mut seen: Vec<Endpoint> = Vec::new();
        for e in ends {
            if !seen.iter().any(|s| s.context == e.context) {
                seen.push(e);
            }
        }
        seen
    };
    let sources = distinct(&mut copies.iter().map(|c| c.from_end));
    let destinations = distinct(&mut copies.iter().map(|c| c.to_end));
    let is_early = |e: &Endpoint| early.contains(&e.context);
    let queue_copies = || -> Result<(), RunErrorKind> {
        for c in copies {
            grant_access(c.to_end, c.from_end).map_err(fail)?;
        }
        // Each destination's work so far, then the copies on their sources' streams: a
        // source's mark may be recorded here too, before it waits for anything, so there is
        // no cycle.
        for d in destinations.iter().filter(|d| !marked.contains(&d.context)) {
            result::ctx::set_current(d.context).map_err(fail)?;
            result::event::record(d.mark, d.stream).map_err(fail)?;
        }
        for s in sources.iter().filter(|s| is_early(s)) {
            result::ctx::set_current(s.context).map_err(fail)?;
            result::stream::wait_event(s.push, s.edges, wait).map_err(fail)?;
        }
        for c in copies {
            let from = c.from_end;
            let stream = if is_early(&from) {
                from.push
            } else {
                from.stream
            };
            result::ctx::set_current(from.context).map_err(fail)?;
            result::stream::wait_event(stream, c.to_end.mark, wait).map_err(fail)?;
            copy_peer_async(c.to_end, c.to, from, c.from, c.bytes, stream).map_err(fail)?;
        }
        Ok(())
    };
    let queued = queue_copies();
    // The point after each source's copies (its mark again, or `sent` after early copies),
    // for the destinations, and an early source's own later work, to wait on. An early
    // source's stream waits for its push stream even after a failure above, so that nothing
    // it runs later (a free, a write of the rows) overtakes a copy that was queued.
    let after = |s: &Endpoint| if is_early(s) { s.sent } else { s.mark };
    let mut ordered = Ok(());
    for s in &sources {
        let step = || -> Result<(), result::DriverError> {
            result::ctx::set_current(s.context)?;
            if is_early(s) {
                result::event::record(s.sent, s.push)?;
                result::stream::wait_event(s.stream, s.sent, wait)
            } else {
                result::event::record(s.mark, s.stream)
            }
        };
        if queued.is_ok() || is_early(s) {
            ordered = ordered.and(step().map_err(fail));
        }
    }
    queued?;
    ordered?;
    for d in &destinations {
        result::ctx::set_current(d.context).map_err(fail)?;
        for s in &sources {
            let feeds = copies
                .iter()
                .any(|c| c.from_end.context == s.context && c.to_end.context == d.context);
            if feeds {
                result::stream::wait_event(d.stream, after(s), wait).map_err(fail)?;
            }
        }
    }
    Ok(())
}

/// Asks for peer access between two GPUs' contexts and memory pools, once per pair (refused
/// or already granted: the driver copies anyway, through the host where it must).
///
/// # Safety
/// Both contexts are primary contexts held for the process.
unsafe fn grant_access(to_end: Endpoint, from_end: Endpoint) -> Result<(), result::DriverError> {
    static READY: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());
    let pair = (to_end.context as usize, from_end.context as usize);
    let mut ready = READY.lock().unwrap_or_else(|e| e.into_inner());
    if to_end.context == from_end.context || ready.contains(&pair) {
        return Ok(());
    }
    result::ctx::set_current(from_end.context)?;
    let _ = sys::cuCtxEnablePeerAccess(to_end.context, 0);
    let from_device = current_device()?;
    result::ctx::set_current(to_end.context)?;
    let _ = sys::cuCtxEnablePeerAccess(from_end.context, 0);
    let to_device = current_device()?;
    grant_pool_access(from_device, to_device);
    grant_pool_access(to_device, from_device);
    ready.push(pair);
    Ok(())
}

/// `cuMemcpyPeerAsync` of `bytes` from `from` (in `from_end`'s context) to `to` (in `to_end`'s)
/// on `stream`, whose context is current.
///
/// # Safety
/// The addresses hold `bytes` bytes in their contexts' memory.
unsafe fn copy_peer_async(
    to_end: Endpoint,
    to: sys::CUdeviceptr,
    from_end: Endpoint,
    from: sys::CUdeviceptr,
    bytes: usize,
    stream: sys::CUstream,
) -> Result<(), result::DriverError> {
    result_of(sys::cuMemcpyPeerAsync(
        to,
        to_end.context,
        from,
        from_end.context,
        bytes,
        stream,
    ))
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
