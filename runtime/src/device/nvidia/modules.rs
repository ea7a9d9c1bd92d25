//! Kernels' code on a GPU: modules loaded once per PTX text (cached by content), their
//! functions, occupancy per launch shape, and unloading when no code uses them.

use std::ffi::{c_void, CString};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{result, sys};

use super::{driver_error, Nvidia};
use crate::error::RunErrorKind;
use crate::kernels::GpuKernel;

/// A kernel's function, and how many of its blocks fit on a multiprocessor at once.
pub(super) struct Loaded {
    pub(super) f: sys::CUfunction,
    _ptx: Arc<str>,
    /// `((threads per block, dynamic shared bytes), resident blocks)` pairs asked so far.
    resident: Vec<((u32, u32), u32)>,
}

impl Loaded {
    /// How many blocks of `threads` threads with `shared_bytes` of dynamic shared memory fit
    /// on one multiprocessor (16 if the driver cannot say).
    pub(super) fn resident_blocks(&mut self, threads: u32, shared_bytes: u32) -> u32 {
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

impl Nvidia {
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
            self.unload_later.push(module);
            self.unload_idle_modules();
        }
    }

    /// Unloads the modules in `unload_later`, unless kernels abandoned after a stop are still
    /// running (then a later call does): unloading waits for the whole device, and a wait
    /// for a kernel that may never end would block the host.
    pub(super) fn unload_idle_modules(&mut self) {
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

    /// The function of a kernel, loading its module on first use.
    pub(super) fn function(&mut self, k: &GpuKernel) -> Result<&mut Loaded, RunErrorKind> {
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
