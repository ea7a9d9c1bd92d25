//! The data rules of a discrete device (one with memory of its own), written once for every
//! such device: present-or entry, reference-counted exit, `update`, `present`, and their
//! errors (LANGUAGE.md 7.3, 7.4; OpenACC 3.3, 2.6.7 and 2.7). A device supplies only the
//! primitives (`Memory`): make a device copy of an array, free it, copy a section either way,
//! now or on a queue.
//!
//! Presence changes when a directive is issued (data entered asynchronously counts as present
//! at once); the transfers are queued. The table holds a reference on every present host
//! array, so that its identity stays valid until its data leaves the device.

use super::ops::{
    DataOpArg, DataPhase, QueueArg, ACTION_COPY, ACTION_COPYIN, ACTION_COPYOUT, ACTION_CREATE,
    ACTION_DELETE, ACTION_NO_CREATE, ACTION_PRESENT, ACTION_UPDATE_DEVICE, ACTION_UPDATE_HOST,
    NO_SECTION,
};
use crate::abi::ArrayHeader;
use crate::array;
use crate::error::{RunError, RunErrorKind};
use crate::presence::{EnterError, Lookup, PresenceError, PresenceTable, RefKind, Section};

/// An array handle that crosses threads. The runtime keeps a reference on the array for as
/// long as a job holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Handle(pub *mut ArrayHeader);

// SAFETY: array headers and data are plain memory; reference counts are atomic; the
// runtime's queue discipline (or the program's `wait`s, as in OpenACC) orders the accesses.
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

/// What a discrete device provides to `Discrete`.
pub(crate) trait Memory {
    /// A device copy of one array (the whole array's shape; sections are parts of it).
    type Copy;

    /// `emulated:0`, `nvidia:1`: how errors name the device.
    fn name(&self) -> String;

    /// A device copy of `host`'s shape (contents unspecified).
    ///
    /// # Safety
    /// `host` is a live array.
    unsafe fn alloc(&mut self, host: *mut ArrayHeader) -> Result<Self::Copy, RunErrorKind>;

    /// Frees a copy once the work queued on `q` before now is done (work on other queues
    /// that uses it is the program's to wait for, as in OpenACC).
    fn free(&mut self, copy: Self::Copy, q: QueueArg);

    /// Copies `section` of `host` to (`upload`) or from the copy, now or on `q`; `site` names
    /// the variable for the profile.
    ///
    /// # Safety
    /// `host` is a live array of the copy's shape.
    unsafe fn transfer(
        &mut self,
        host: *mut ArrayHeader,
        copy: &Self::Copy,
        section: &Section,
        upload: bool,
        site: u32,
        q: QueueArg,
    ) -> Result<(), RunErrorKind>;
}

/// A present array: its device copy, and the host array (referenced by the table).
pub(crate) struct Present<C> {
    pub copy: C,
    pub host: Handle,
}

/// A discrete device's memory with its presence table.
pub(crate) struct Discrete<M: Memory> {
    presence: PresenceTable<Present<M::Copy>>,
    pub memory: M,
}

impl<M: Memory> Discrete<M> {
    pub fn new(memory: M) -> Discrete<M> {
        Discrete {
            presence: PresenceTable::new(),
            memory,
        }
    }

    /// Arrays with data on the device.
    pub fn present_arrays(&self) -> usize {
        self.presence.len()
    }

    /// The device copy of host array `a`, when any part of it is present.
    ///
    /// # Safety
    /// `a` is a live array.
    pub unsafe fn copy_of(&self, a: *mut ArrayHeader) -> Option<&M::Copy> {
        self.presence.device((*a).id).map(|p| &p.copy)
    }

    /// `acc_is_present`.
    ///
    /// # Safety
    /// `op.array` is a live array.
    pub unsafe fn is_present(&self, op: &DataOpArg) -> Result<bool, RunErrorKind> {
        let section = op.section()?;
        Ok(matches!(
            self.presence.lookup((*op.array).id, &section),
            Lookup::Present(_)
        ))
    }

    /// One op of a data directive or of a compute construct's entry or exit.
    ///
    /// # Safety
    /// `op.array` is a live array.
    pub unsafe fn data_op(
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
            Lookup::Partial { present } => Err(self.partly_present(op, section, present)),
            Lookup::Absent => Err(self.not_present(op, section)),
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
        let memory = &mut self.memory;
        let entered = self.presence.try_enter((*host).id, section, kind, || {
            let copy = memory.alloc(host)?;
            array::retain(host);
            Ok(Present {
                copy,
                host: Handle(host),
            })
        });
        let fresh = match entered {
            Ok(e) => e.fresh(),
            Err(EnterError::Make(e)) => return Err(e),
            Err(EnterError::Presence(e)) => return Err(self.presence_error(op, &section, e)),
        };
        if fresh && upload {
            if let Some(p) = self.presence.device((*host).id) {
                self.memory
                    .transfer(host, &p.copy, &section, true, op.site, q)?;
            }
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
        let removed = exited.removed();
        let freed = exited.into_freed();
        if removed && download {
            let copy = match &freed {
                Some(p) => Some(&p.copy),
                None => self.presence.device((*host).id).map(|p| &p.copy),
            };
            if let Some(copy) = copy {
                self.memory
                    .transfer(host, copy, section, false, op.site, q)?;
            }
        }
        if let Some(p) = freed {
            self.memory.free(p.copy, q);
            array::release(p.host.0);
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
        let copy = match self.presence.lookup((*op.array).id, section) {
            Lookup::Present(p) => &p.copy,
            Lookup::Absent if if_present => return Ok(()),
            Lookup::Absent => {
                return Err(RunErrorKind::UpdateAbsent {
                    section: section_text(op, section),
                    device: self.memory.name(),
                })
            }
            Lookup::Partial { present } => return Err(self.partly_present(op, section, present)),
        };
        self.memory
            .transfer(op.array, copy, section, !to_host, op.site, q)
    }

    unsafe fn presence_error(
        &self,
        op: &DataOpArg,
        section: &Section,
        e: PresenceError,
    ) -> RunErrorKind {
        match e {
            PresenceError::Partial { present } => self.partly_present(op, section, present),
            PresenceError::Absent => self.not_present(op, section),
        }
    }

    unsafe fn not_present(&self, op: &DataOpArg, section: &Section) -> RunErrorKind {
        RunErrorKind::NotPresent {
            section: section_text(op, section),
            device: self.memory.name(),
        }
    }

    unsafe fn partly_present(
        &self,
        op: &DataOpArg,
        section: &Section,
        present: Section,
    ) -> RunErrorKind {
        RunErrorKind::PartlyPresent {
            section: section_text(op, section),
            present: present.display("", array::shape(op.array)),
            device: self.memory.name(),
        }
    }

    /// Frees everything (the device is going away; its queues are drained).
    pub fn free_all(&mut self) {
        for (_, p) in self.presence.drain() {
            self.memory.free(p.copy, QueueArg::Sync);
            // SAFETY: the table's reference.
            unsafe { array::release(p.host.0) };
        }
    }
}

/// The section as the clause wrote it, after the variable's name (`[0:10]`; empty for a
/// whole array): the name is the op's site text, which the engine adds to the message.
unsafe fn section_text(op: &DataOpArg, section: &Section) -> String {
    if op.nranges == NO_SECTION {
        String::new()
    } else {
        section.display("", array::shape(op.array))
    }
}
