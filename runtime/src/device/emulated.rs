//! The `emulated` device: a discrete device made of host memory. Each device has its own
//! memory (a device copy of an array is a separate array of the same shape), presence table
//! and async queues (worker threads), so data clauses, transfers, queues and presence behave
//! as on a GPU: a region reads and writes only the device copies, and a missing `update`
//! shows.
//!
//! Presence changes when a directive is issued (data entered asynchronously counts as present
//! at once); transfers and kernels run when their queue reaches them. Every queued job holds
//! a reference on the arrays it touches, so nothing is freed while a queued operation may use
//! it. Output and errors of queued kernels wait in a mailbox until the host synchronizes
//! (`drain`), as a GPU's printf buffer does.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::ops::{
    DataOpArg, DataPhase, QueueArg, ACTION_COPY, ACTION_COPYIN, ACTION_COPYOUT, ACTION_CREATE,
    ACTION_DELETE, ACTION_NO_CREATE, ACTION_PRESENT, ACTION_UPDATE_DEVICE, ACTION_UPDATE_HOST,
};
use crate::abi::{ArrayHeader, Ctx};
use crate::array;
use crate::error::{RunError, RunErrorKind};
use crate::host::host_state;
use crate::presence::{EnterError, Lookup, PresenceError, PresenceTable, RefKind, Section};
use crate::profile::{DeviceRef, EventKind, Place, Profiler};
use crate::queue::{QueueId, Queues};

/// An array handle that crosses threads. The runtime keeps a reference on the array for as
/// long as a job holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Handle(pub *mut ArrayHeader);

// SAFETY: array headers and data are plain memory; reference counts are atomic; the
// runtime's queue discipline (or the program's `wait`s, as in OpenACC) orders the accesses.
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

/// A present array: its device copy, and the host array (on which the entry holds a
/// reference, so that its identity stays valid until the data leaves the device).
pub(crate) struct DeviceCopy {
    pub dev: Handle,
    pub host: Handle,
}

/// What a queued kernel left for the host.
pub(crate) struct Completion {
    pub output: Vec<u8>,
    pub error: Option<RunError>,
}

pub struct Emulated {
    num: usize,
    presence: PresenceTable<DeviceCopy>,
    queues: Queues,
    mailbox: Arc<Mutex<Vec<Completion>>>,
    profiler: Arc<Profiler>,
}

impl Emulated {
    pub(crate) fn new(num: usize, synchronous: bool, profiler: Arc<Profiler>) -> Emulated {
        Emulated {
            num,
            presence: PresenceTable::new(),
            queues: Queues::new(synchronous),
            mailbox: Arc::new(Mutex::new(Vec::new())),
            profiler,
        }
    }

    pub fn name(&self) -> String {
        format!("emulated:{}", self.num)
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

    pub(crate) fn present_arrays(&self) -> usize {
        self.presence.len()
    }

    pub(crate) fn queues(&self) -> &Queues {
        &self.queues
    }

    pub(crate) fn mailbox(&self) -> Arc<Mutex<Vec<Completion>>> {
        self.mailbox.clone()
    }

    // ---- data ------------------------------------------------------------------------------

    /// One op of a data directive or of a compute construct's entry or exit.
    ///
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
        let at = |kind| RunError {
            kind,
            site: Some(op.site),
        };
        let section = op.section().map_err(at)?;
        let kind = if phase.structured() {
            RefKind::Structured
        } else {
            RefKind::Dynamic
        };
        let entering = matches!(phase, DataPhase::RegionEntry | DataPhase::Enter);
        let exiting = matches!(phase, DataPhase::RegionExit | DataPhase::Exit);
        match op.action {
            ACTION_PRESENT if entering => self.require(op, &section).map_err(at),
            ACTION_NO_CREATE | ACTION_PRESENT => Ok(()),
            ACTION_COPY | ACTION_COPYIN | ACTION_COPYOUT | ACTION_CREATE if entering => {
                let upload = matches!(op.action, ACTION_COPY | ACTION_COPYIN);
                self.enter(op, section, kind, upload, q).map_err(at)
            }
            ACTION_COPY | ACTION_COPYIN | ACTION_COPYOUT | ACTION_CREATE | ACTION_DELETE
                if exiting =>
            {
                let download = matches!(op.action, ACTION_COPY | ACTION_COPYOUT);
                self.exit(op, &section, kind, finalize, download, q)
                    .map_err(at)
            }
            ACTION_UPDATE_HOST | ACTION_UPDATE_DEVICE => self
                .update(op, &section, op.action == ACTION_UPDATE_HOST, if_present, q)
                .map_err(at),
            _ => Ok(()),
        }
    }

    /// `present(a)`: the section must lie inside present data.
    unsafe fn require(&self, op: &DataOpArg, section: &Section) -> Result<(), RunErrorKind> {
        match self.presence.lookup((*op.array).id, section) {
            Lookup::Present(_) => Ok(()),
            other => Err(self.absence_error(op, section, other)),
        }
    }

    unsafe fn absence_error(
        &self,
        op: &DataOpArg,
        section: &Section,
        found: Lookup<'_, DeviceCopy>,
    ) -> RunErrorKind {
        let dims = array::shape(op.array);
        let name = section_name(op, section);
        match found {
            Lookup::Partial { present } => RunErrorKind::PartlyPresent {
                section: name,
                present: present.display("", dims),
                device: self.name(),
            },
            _ => RunErrorKind::NotPresent {
                section: name,
                device: self.name(),
            },
        }
    }

    unsafe fn enter(
        &mut self,
        op: &DataOpArg,
        section: Section,
        kind: RefKind,
        upload: bool,
        q: QueueArg,
    ) -> Result<(), RunErrorKind> {
        let host = op.array;
        let entered = self.presence.try_enter((*host).id, section, kind, || {
            let dev = array::new_array((*host).elem, array::shape(host))?;
            array::retain(host);
            Ok(DeviceCopy {
                dev: Handle(dev),
                host: Handle(host),
            })
        });
        let dev = match entered {
            Ok(e) if e.fresh() => e.device().map(|d| d.dev),
            Ok(_) => None,
            Err(EnterError::Make(e)) => return Err(e),
            Err(EnterError::Presence(e)) => return Err(self.presence_error(op, &section, e)),
        };
        if let (Some(dev), true) = (dev, upload) {
            self.transfer(Handle(host), dev, section, true, op.site, q);
        }
        Ok(())
    }

    unsafe fn exit(
        &mut self,
        op: &DataOpArg,
        section: &Section,
        kind: RefKind,
        finalize: bool,
        download: bool,
        q: QueueArg,
    ) -> Result<(), RunErrorKind> {
        let host = op.array;
        let exited = match self.presence.exit((*host).id, section, kind, finalize) {
            Ok(x) => x,
            // Exiting data that is not present does nothing (OpenACC 3.3, 2.7.11).
            Err(PresenceError::Absent) => return Ok(()),
            Err(e) => return Err(self.presence_error(op, section, e)),
        };
        let dev = exited.device().map(|copy| copy.dev);
        let freed = exited.into_freed();
        if let (Some(dev), true) = (dev, download) {
            self.transfer(dev, Handle(host), *section, false, op.site, q);
        }
        if let Some(copy) = freed {
            // Queued jobs hold their own references: this frees the copy once they are done.
            array::release(copy.dev.0);
            array::release(copy.host.0);
        }
        Ok(())
    }

    unsafe fn update(
        &mut self,
        op: &DataOpArg,
        section: &Section,
        to_host: bool,
        if_present: bool,
        q: QueueArg,
    ) -> Result<(), RunErrorKind> {
        let host = Handle(op.array);
        let dev = match self.presence.lookup((*op.array).id, section) {
            Lookup::Present(d) => d.dev,
            Lookup::Absent if if_present => return Ok(()),
            Lookup::Absent => {
                return Err(RunErrorKind::UpdateAbsent {
                    section: section_name(op, section),
                    device: self.name(),
                })
            }
            found @ Lookup::Partial { .. } => return Err(self.absence_error(op, section, found)),
        };
        if to_host {
            self.transfer(dev, host, *section, false, op.site, q);
        } else {
            self.transfer(host, dev, *section, true, op.site, q);
        }
        Ok(())
    }

    unsafe fn presence_error(
        &self,
        op: &DataOpArg,
        section: &Section,
        e: PresenceError,
    ) -> RunErrorKind {
        match e {
            PresenceError::Partial { present } => {
                self.absence_error(op, section, Lookup::Partial { present })
            }
            PresenceError::Absent => self.absence_error(op, section, Lookup::Absent),
        }
    }

    /// Copies `section` from one array to the other (same shape), now or on the queue.
    unsafe fn transfer(
        &self,
        from: Handle,
        to: Handle,
        section: Section,
        upload: bool,
        site: u32,
        q: QueueArg,
    ) {
        let profiler = self.profiler.clone();
        let place = self.place(site, q);
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
    }

    /// Runs a job now (`Sync`) or queues it.
    pub(crate) fn run(&self, q: QueueArg, job: Box<dyn FnOnce() + Send>) {
        match q {
            QueueArg::Sync => job(),
            QueueArg::Async(id) => self.queues.submit(id, job),
        }
    }

    /// The device copy a region receives for host array `a`: its device copy when present,
    /// else `a` itself (`no_create` of absent data, and private arrays, which only lend
    /// their shape).
    ///
    /// # Safety
    /// `a` is null or a live array.
    pub(crate) unsafe fn device_array(&self, a: *mut ArrayHeader) -> *mut ArrayHeader {
        if a.is_null() {
            return a;
        }
        self.presence.device((*a).id).map_or(a, |d| d.dev.0)
    }

    /// `acc_is_present`.
    ///
    /// # Safety
    /// `op.array` is a live array.
    pub(crate) unsafe fn is_present(&self, op: &DataOpArg) -> Result<bool, RunErrorKind> {
        let section = op.section()?;
        Ok(matches!(
            self.presence.lookup((*op.array).id, &section),
            Lookup::Present(_)
        ))
    }

    // ---- queues ----------------------------------------------------------------------------

    pub(crate) fn wait(&self, q: QueueId) {
        self.queues.wait(q);
    }

    pub(crate) fn wait_all(&self) {
        self.queues.wait_all();
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
        for message in self.queues.take_panics() {
            crate::host::fail(ctx, RunErrorKind::Internal { message }, None);
        }
    }

    /// Frees every device copy (the device is going away; queues are drained).
    pub(crate) fn free_all(&mut self) {
        for (_, copy) in self.presence.drain() {
            // SAFETY: the table's references.
            unsafe {
                array::release(copy.dev.0);
                array::release(copy.host.0);
            }
        }
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

/// The section as the clause wrote it, after the variable's name (`[0:10]`; empty for a
/// whole array): the name is the op's site text, which the engine adds to the message.
unsafe fn section_name(op: &DataOpArg, section: &Section) -> String {
    if op.nranges == super::ops::NO_SECTION {
        String::new()
    } else {
        section.display("", array::shape(op.array))
    }
}

/// Copies the elements of `section` from `from` to `to`; returns the bytes copied.
///
/// # Safety
/// Both are live arrays of the same element type and shape, not written elsewhere meanwhile.
unsafe fn copy_section(from: *mut ArrayHeader, to: *mut ArrayHeader, section: &Section) -> u64 {
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
