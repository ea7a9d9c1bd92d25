//! The `emulated` device: a discrete device made of host memory. Each device has its own
//! memory (a device copy of an array is a separate array of the same shape), presence table
//! and async queues (worker threads), so data clauses, transfers, queues and presence behave
//! as on a GPU: a region reads and writes only the device copies, and a missing `update`
//! shows.
//!
//! The data rules are `Discrete`'s; this file gives it the memory (`HostMemory`) and runs the
//! kernels. Transfers and kernels run when their queue reaches them. Every queued job holds
//! a reference on the arrays it touches, so nothing is freed while a queued operation may use
//! it. Output and errors of queued kernels wait in a mailbox until the host synchronizes
//! (`drain`), as a GPU's printf buffer does.

use acc_abi::DataModifiers;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::discrete::{Discrete, Handle, Memory};
use super::ops::{DataOpArg, DataPhase, QueueArg};
use crate::abi::{ArrayHeader, Ctx};
use crate::array;
use crate::error::{RunError, RunErrorKind};
use crate::host::host_state;
use crate::presence::Section;
use crate::profile::{DeviceRef, EventKind, Place, Profiler};
use crate::queue::{QueueId, Queues};

/// What a queued kernel left for the host.
pub(crate) struct Completion {
    pub output: Vec<u8>,
    pub error: Option<RunError>,
}

/// The emulated device's memory: device copies are arrays of host memory; transfers are
/// jobs on the device's queues.
pub(crate) struct HostMemory {
    num: usize,
    queues: Queues,
    profiler: Arc<Profiler>,
}

impl HostMemory {
    /// Runs a job now (`Sync`) or queues it.
    fn run(&self, q: QueueArg, job: Box<dyn FnOnce() + Send>) {
        match q {
            QueueArg::Sync => job(),
            QueueArg::Async(id) => self.queues.submit(id, job),
        }
    }

    fn place(&self, site: u32, q: QueueArg) -> Place {
        Place {
            site,
            device: DeviceRef {
                kind: "emulated",
                num: self.num as u32,
            },
            queue: queue_number(q),
        }
    }
}

impl Memory for HostMemory {
    type Copy = Handle;

    fn name(&self) -> String {
        format!("emulated:{}", self.num)
    }

    unsafe fn alloc(&mut self, host: *mut ArrayHeader) -> Result<Handle, RunErrorKind> {
        array::new_array((*host).elem, array::shape(host)).map(Handle)
    }

    fn free(&mut self, copy: Handle, _q: QueueArg) {
        // Queued jobs hold their own references: this frees the copy once they are done.
        // SAFETY: the presence table's reference.
        unsafe { array::release(copy.0) };
    }

    unsafe fn transfer(
        &mut self,
        host: *mut ArrayHeader,
        copy: &Handle,
        section: &Section,
        upload: bool,
        site: u32,
        q: QueueArg,
    ) -> Result<(), RunErrorKind> {
        let (from, to) = if upload {
            (Handle(host), *copy)
        } else {
            (*copy, Handle(host))
        };
        let profiler = self.profiler.clone();
        let place = self.place(site, q);
        let section = *section;
        array::retain(from.0);
        array::retain(to.0);
        let job = move || {
            let (from, to) = (from, to);
            let start = Instant::now();
            // SAFETY: the job holds references on both arrays, which have the same shape.
            let bytes = unsafe { copy_section(from.0, to.0, &section) };
            let kind = if upload {
                EventKind::Upload { bytes }
            } else {
                EventKind::Download { bytes }
            };
            profiler.record(place, kind, start, Instant::now());
            // SAFETY: the references taken above.
            unsafe {
                array::release(from.0);
                array::release(to.0);
            }
        };
        self.run(q, Box::new(job));
        Ok(())
    }
}

pub struct Emulated {
    data: Discrete<HostMemory>,
    mailbox: Arc<Mutex<Vec<Completion>>>,
}

impl Emulated {
    pub(crate) fn new(num: usize, synchronous: bool, profiler: Arc<Profiler>) -> Emulated {
        let memory = HostMemory {
            num,
            queues: Queues::new(synchronous),
            profiler,
        };
        Emulated {
            data: Discrete::new(memory),
            mailbox: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// The device copy of `a`, if present.
    ///
    /// # Safety
    /// `a` is a live array.
    pub(crate) unsafe fn copy_of(&self, a: *mut ArrayHeader) -> Option<*mut ArrayHeader> {
        self.data.copy_of(a).map(|h| h.0)
    }

    pub(crate) fn present_arrays(&self) -> usize {
        self.data.present_arrays()
    }

    /// # Safety
    /// `a` is a live array.
    pub(crate) unsafe fn references(&self, a: *mut ArrayHeader) -> u32 {
        self.data.references(a)
    }

    /// Copies `section` of host array `host` to or from its copy here, now
    /// (`Discrete::transfer_present`).
    ///
    /// # Safety
    /// `host` is a live array.
    pub(crate) unsafe fn transfer_present(
        &mut self,
        host: *mut ArrayHeader,
        section: &Section,
        upload: bool,
        site: u32,
    ) -> Result<(), RunErrorKind> {
        self.data.transfer_present(host, section, upload, site)
    }

    pub(crate) fn queues(&self) -> &Queues {
        &self.data.memory.queues
    }

    pub(crate) fn mailbox(&self) -> Arc<Mutex<Vec<Completion>>> {
        self.mailbox.clone()
    }

    /// One op of a data directive or of a compute construct's entry or exit.
    ///
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

    /// Runs a job now (`Sync`) or queues it.
    pub(crate) fn run(&self, q: QueueArg, job: Box<dyn FnOnce() + Send>) {
        self.data.memory.run(q, job);
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

    /// The device copy a region receives for host array `a`, with a reference for the caller:
    /// its device copy when present (for a `reshape` view, the copy of the data it shares in
    /// the view's shape), else `a` itself (`no_create` of absent data, and private arrays,
    /// which only lend their shape). Null stays null.
    ///
    /// # Safety
    /// `a` is null or a live array.
    pub(crate) unsafe fn device_array(
        &self,
        a: *mut ArrayHeader,
    ) -> Result<*mut ArrayHeader, RunErrorKind> {
        if a.is_null() {
            return Ok(a);
        }
        match self.data.copy_of(a) {
            None => {
                array::retain(a);
                Ok(a)
            }
            Some(c) if array::shape(c.0) == array::shape(a) => {
                array::retain(c.0);
                Ok(c.0)
            }
            Some(c) => array::new_view(c.0, array::shape(a)),
        }
    }

    /// `acc_is_present`.
    ///
    /// # Safety
    /// `op.array` is a live array.
    pub(crate) unsafe fn is_present(&self, op: &DataOpArg) -> Result<bool, RunErrorKind> {
        self.data.is_present(op)
    }

    // ---- queues ----------------------------------------------------------------------------

    pub(crate) fn wait(&self, q: QueueId) {
        self.queues().wait(q);
    }

    pub(crate) fn wait_all(&self) {
        self.queues().wait_all();
    }

    /// Output and errors of finished queued work, into the host context (in completion
    /// order), and any job that panicked as an internal error.
    ///
    /// # Safety
    /// `ctx` is a live context.
    pub(crate) unsafe fn drain(&self, ctx: *mut Ctx) {
        let done = std::mem::take(&mut *self.mailbox.lock().unwrap_or_else(|e| e.into_inner()));
        for c in done {
            host_state(ctx).write(&c.output);
            if let Some(e) = c.error {
                super::report(ctx, e);
            }
        }
        for message in self.queues().take_panics() {
            crate::host::fail(ctx, RunErrorKind::Internal { message }, None);
        }
    }

    /// Frees every device copy (the device is going away; queues are drained).
    pub(crate) fn free_all(&mut self) {
        self.data.free_all();
    }
}

/// The queue number a profile place shows: `None` for synchronous work, -1 for the default
/// queue.
pub(crate) fn queue_number(q: QueueArg) -> Option<i32> {
    match q {
        QueueArg::Sync => None,
        QueueArg::Async(QueueId::Default) => Some(-1),
        QueueArg::Async(QueueId::Numbered(n)) => Some(n),
    }
}

/// Copies the elements of `section` from `from` to `to` (a transfer, or a copy between two
/// emulated devices' memories); returns the bytes copied.
///
/// # Safety
/// Both are live arrays of the same element type and shape, not written elsewhere meanwhile.
pub(crate) unsafe fn copy_section(
    from: *mut ArrayHeader,
    to: *mut ArrayHeader,
    section: &Section,
) -> u64 {
    let size = array::elem_size((*from).elem).unwrap_or(1);
    let dims = array::shape(from);
    let mut bytes = 0u64;
    for (offset, len) in section.runs(dims) {
        let (o, n) = (offset as usize * size, len as usize * size);
        std::ptr::copy_nonoverlapping((*from).data.add(o), (*to).data.add(o), n);
        bytes += n as u64;
    }
    bytes
}
