//! Page-locked host memory mapped into a GPU's address space.

use std::ffi::c_void;

use cudarc::driver::{result, sys};

use super::driver_error;
use crate::error::RunErrorKind;

/// Page-locked host memory the GPU reads and writes directly (mapped into its address
/// space): the error record and the launches' results come back without a copy, so a
/// synchronous launch costs its kernel and one stream synchronization.
pub(super) struct Pinned {
    pub(super) host: *mut u8,
    pub(super) dev: sys::CUdeviceptr,
    pub(super) bytes: usize,
}

impl Pinned {
    /// Page-locked memory the GPU can address, zeroed.
    pub(super) fn new(bytes: usize) -> Result<Pinned, RunErrorKind> {
        let p = Pinned::staging(bytes)?;
        // SAFETY: `bytes` bytes were allocated.
        unsafe { std::ptr::write_bytes(p.host, 0, bytes) };
        Ok(p)
    }

    /// Page-locked memory the GPU can address, as the allocator left it (staging buffers
    /// are written before they are read).
    pub(super) fn staging(bytes: usize) -> Result<Pinned, RunErrorKind> {
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
    pub(super) fn slots(&self, at: usize, n: usize) -> Vec<u64> {
        (0..n)
            // SAFETY: in bounds (the callers size the buffer); volatile because the GPU wrote
            // it behind the compiler's back.
            .map(|i| unsafe { std::ptr::read_volatile((self.host as *const u64).add(at + i)) })
            .collect()
    }

    /// The `n` slots at `at`, as the GPU left them, in place. Call after synchronizing (an
    /// opaque call, so the reads cannot move before it); nothing writes them while the
    /// slice lives (the next launch needs `&mut self`).
    pub(super) fn written(&self, at: usize, n: usize) -> &[u64] {
        // SAFETY: in bounds (the callers size the buffer), 8-byte aligned (page-locked
        // memory is page aligned).
        unsafe { std::slice::from_raw_parts((self.host as *const u64).add(at), n) }
    }

    /// The record at the start of the buffer (the kernels' error record, an output buffer's
    /// header: `#[repr(C)]` types of `acc_abi`), as the GPU left it. Call after synchronizing.
    pub(super) fn read<T: Copy>(&self) -> T {
        debug_assert!(self.bytes >= std::mem::size_of::<T>());
        // SAFETY: the buffer holds a `T` (the callers allocate it with room for one) and is
        // page aligned; volatile because the GPU wrote it behind the compiler's back.
        unsafe { std::ptr::read_volatile(self.host as *const T) }
    }

    /// Writes `value` at the start of the buffer, as `read` reads it.
    pub(super) fn write<T: Copy>(&mut self, value: T) {
        debug_assert!(self.bytes >= std::mem::size_of::<T>());
        // SAFETY: as `read`.
        unsafe { std::ptr::write_volatile(self.host as *mut T, value) }
    }

    /// Writes the `u32` at byte `at` (4-aligned, inside the buffer) with a store the GPU sees
    /// while kernels run (the stop word: `acc_abi::STOP_WORD_OFFSET`).
    pub(super) fn set_word(&mut self, at: usize, value: u32) {
        assert!(at.is_multiple_of(4) && at + 4 <= self.bytes);
        // SAFETY: inside the buffer, aligned; volatile because kernels read it behind the
        // compiler's back.
        unsafe { std::ptr::write_volatile(self.host.add(at) as *mut u32, value) };
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    }

    pub(super) fn set_slots(&mut self, at: usize, values: &[u64]) {
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
